// P4SGD's entry in the protocol registry (protocols/p4sgd/protocol.json).
#include "protocols/p4sgd/host/p4sgd-job.h"
#include "ina/scenario.h"
#include "ina/workload.h"

#include <fmt/format.h>

#include <stdexcept>

namespace inasim::protocols::p4sgd {
namespace {

class P4SGDWorkload final : public Workload {
 public:
  explicit P4SGDWorkload(const WorkloadContext& c) : s_(c.scenario) {
    try {
      job_ = std::make_unique<P4SGDJob>(c.fabric, c.hosts, s_.workload.p4sgd, s_.seed);
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
  std::unique_ptr<P4SGDJob> job_;
};

}  // namespace

std::unique_ptr<Workload> MakeWorkload(const WorkloadContext& context) {
  return std::make_unique<P4SGDWorkload>(context);
}

}  // namespace inasim::protocols::p4sgd
