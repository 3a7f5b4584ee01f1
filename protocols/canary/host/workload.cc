// The canary entry in the protocol registry (protocols/canary/protocol.json): the
// host agents and switch programs of ina/canary-jobs.h in mode InaTreeMode::kCanary.
#include "protocols/canary/host/canary-jobs.h"
#include "ina/scenario.h"
#include "ina/workload.h"

#include <fmt/format.h>

#include <stdexcept>

namespace inasim::protocols::canary {
namespace {

class TreeWorkload final : public Workload {
 public:
  explicit TreeWorkload(const WorkloadContext& c) : s_(c.scenario) {
    try {
      jobs_ = std::make_unique<CanaryJobSet>(c.fabric, c.hosts, InaTreeMode::kCanary, s_.workload.data, s_.seed,
                                             s_.workload, s_.workload.jobs);
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(fmt::format("workload: {}", e.what()));
    }
  }
  void Start(std::function<void()> on_finished) override {
    jobs_->on_finished = std::move(on_finished);
    jobs_->Start(s_.workload.start_ps);
  }
  double Progress() const override { return jobs_->progress(); }
  void Report(bool finished, WorkloadReport& out) const override { jobs_->Report(s_, finished, out); }

 private:
  const Scenario& s_;
  std::unique_ptr<CanaryJobSet> jobs_;
};

}  // namespace

std::unique_ptr<Workload> MakeWorkload(const WorkloadContext& context) {
  return std::make_unique<TreeWorkload>(context);
}

}  // namespace inasim::protocols::canary
