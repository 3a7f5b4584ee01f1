// SwitchML's entry in the protocol registry (protocols/switchml/protocol.json).
#include "ina/scenario.h"
#include "protocols/switchml/host/switchml-job.h"
#include "ina/workload.h"

#include <fmt/format.h>

#include <stdexcept>

namespace inasim::protocols::switchml {
namespace {

class SwitchMLWorkload final : public Workload {
 public:
  explicit SwitchMLWorkload(const WorkloadContext& c) : s_(c.scenario) {
    std::vector<uint64_t> tensors = s_.workload.switchml.tensors;
    if (tensors.empty()) tensors.push_back(s_.workload.bytes);
    try {
      job_ = std::make_unique<SwitchMLJob>(c.fabric, c.hosts, s_.workload.dtype, s_.workload.data, s_.seed,
                                           s_.workload.switchml, tensors, s_.workload.iterations,
                                           s_.workload.compute_gap_ps);
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(fmt::format("workload: {}", e.what()));
    }
  }
  void Start(std::function<void()> on_finished) override {
    job_->on_finished = std::move(on_finished);
    job_->Start(s_.workload.start_ps);
  }
  double Progress() const override { return job_->progress(); }
  void Report(bool finished, WorkloadReport& out) const override { job_->Report(s_, finished, out); }

 private:
  const Scenario& s_;
  std::unique_ptr<SwitchMLJob> job_;
};

}  // namespace

std::unique_ptr<Workload> MakeWorkload(const WorkloadContext& context) {
  return std::make_unique<SwitchMLWorkload>(context);
}

}  // namespace inasim::protocols::switchml
