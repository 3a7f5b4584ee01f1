// PANAMA's entry in the protocol registry (protocols/panama/protocol.json):
// one job, concurrent jobs (workload.panama.jobs) or a cluster of arriving
// jobs (workload.panama.cluster), all in ina/panama-job.h's PanamaJobSet.
#include "protocols/panama/host/panama-job.h"
#include "ina/scenario.h"
#include "ina/workload.h"

namespace inasim::protocols::panama {
namespace {

class PanamaWorkload final : public Workload {
 public:
  explicit PanamaWorkload(const WorkloadContext& c)
      : s_(c.scenario), jobs_(std::make_unique<PanamaJobSet>(c.fabric, c.scenario, c.hosts)) {}
  void Start(std::function<void()> on_finished) override {
    jobs_->on_finished = std::move(on_finished);
    jobs_->Start();
  }
  double Progress() const override { return jobs_->progress(); }
  void Report(bool finished, WorkloadReport& out) const override { jobs_->Report(s_, finished, out); }

 private:
  const Scenario& s_;
  std::unique_ptr<PanamaJobSet> jobs_;
};

}  // namespace

std::unique_ptr<Workload> MakeWorkload(const WorkloadContext& context) {
  return std::make_unique<PanamaWorkload>(context);
}

}  // namespace inasim::protocols::panama
