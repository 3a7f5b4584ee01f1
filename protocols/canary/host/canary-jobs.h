// Several concurrent Canary or static-tree allreduces on one fabric
// (scenario `workload.jobs`; canary-fgcs24 §5.2.4, Fig. 10: "we equally
// partitioned the system between multiple co-running allreduce operations").
// The selected hosts are shuffled with the seed and dealt into `jobs` groups
// of equal size (+-1) (ina/jobs.h, as every protocol's concurrent jobs); job
// j is a CanaryJob over group j with application id base + j (Canary, §3.4)
// or tree ids after job j-1's (static trees). With one job this is exactly
// that job (same results, byte for byte).
#pragma once

#include "ina/jobs.h"
#include "ina/workload.h"
#include "protocols/canary/host/canary-job.h"

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace inasim {

/// The jobs (ConcurrentJobs: Start, progress, on_finished once all are done).
class CanaryJobSet : public ConcurrentJobs<CanaryJob> {
 public:
  CanaryJobSet(Fabric& fabric, const std::vector<uint32_t>& hosts, InaTreeMode mode, DataPattern pattern,
               uint64_t seed, const WorkloadSpec& spec, uint32_t jobs);
  /// The canary and static_tree registry entries' MakeWorkload: the jobs of
  /// the scenario's workload in `mode` (ina/job-workload.h).
  static std::unique_ptr<Workload> MakeWorkload(const WorkloadContext& context, InaTreeMode mode);
  /// The constructor's checks without ns-3 (CanaryJob::CheckPlacement per
  /// job), for ParseScenario; throws ScenarioError naming the key.
  static void CheckPlacement(const topo::Topology& t, const std::vector<uint32_t>& hosts, InaTreeMode mode,
                             uint64_t seed, const WorkloadSpec& spec, uint32_t jobs);
  /// The blocks (packets per host) of the scenario's collectives, for the
  /// memory estimate (ProtocolChecks::state_bytes).
  template <typename Spec>
  static double Blocks(const Scenario& s) {
    const WorkloadSpec& w = s.workload;
    return static_cast<double>(
        CollectiveLayout(CollectiveElements(w.schedule, w.bytes), w.spec<Spec>().elements_per_packet, w.iterations)
            .total_units());
  }
  /// The same as the registry entries' ProtocolChecks::check_placement.
  template <InaTreeMode kMode>
  static void CheckScenarioPlacement(const Scenario& s, const topo::Topology& t, const std::vector<uint32_t>& hosts) {
    CheckPlacement(t, hosts, kMode, s.seed, s.workload, s.workload.jobs);
  }

  /// results.json "workload": the core keys of every job's collectives
  /// (CollectiveTable: with several jobs per_job and the mean goodput over
  /// them) and workload.<protocol> (CanaryJob::Details, the hosts' counters
  /// summed over the jobs); collectives.csv, <protocol>_switches.csv.
  void Report(const Scenario& s, bool finished, WorkloadReport& out) const;
  /// results.json diagnosis.protocol from the summed details over `blocks` blocks.
  static nlohmann::json Diagnosis(const nlohmann::json& details, uint64_t blocks);
  /// The event trace's key of a frame (ina/frame-key.h): the first job that
  /// knows it (CanaryJob::KeyFrame), with its number.
  bool KeyFrame(const p4::FrameView& view, inasim::Span<const uint8_t> frame, FrameKey& key) const {
    for (size_t j = 0; j < jobs_.size(); ++j)
      if (jobs_[j]->KeyFrame(view, frame, key)) {
        key.job = static_cast<uint32_t>(j);
        return true;
      }
    return false;
  }
};

}  // namespace inasim
