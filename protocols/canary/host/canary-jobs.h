// Several concurrent Canary or static-tree allreduces on one fabric
// (scenario `workload.jobs`; canary-fgcs24 §5.2.4, Fig. 10: "we equally
// partitioned the system between multiple co-running allreduce operations").
// The selected hosts are shuffled with the seed and dealt into `jobs` groups
// of equal size (+-1); job j is a CanaryJob over group j with application id
// base + j (Canary, §3.4) or tree ids after job j-1's (static trees). With
// one job this is exactly that job (same results, byte for byte). The ring
// runs concurrent jobs with the same split (runner.cc, MakeRingJobs).
#pragma once

#include "ina/workload.h"
#include "protocols/canary/host/canary-job.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace inasim {

class CanaryJobSet {
 public:
  CanaryJobSet(Fabric& fabric, const std::vector<uint32_t>& hosts, InaTreeMode mode, DataPattern pattern,
               uint64_t seed, const WorkloadSpec& spec, uint32_t jobs);

  /// The hosts of each job: `jobs` consecutive groups (sizes differ by at
  /// most one), each sorted by id, of a seeded shuffle of `hosts` or, with
  /// `contiguous`, of `hosts` in their order (job j on a range of racks).
  static std::vector<std::vector<uint32_t>> SplitHosts(const std::vector<uint32_t>& hosts, uint32_t jobs,
                                                       uint64_t seed, bool contiguous = false);
  /// The constructor's checks without ns-3 (CanaryJob::CheckPlacement per
  /// job), for ParseScenario; throws ScenarioError naming the key.
  static void CheckPlacement(const topo::Topology& t, const std::vector<uint32_t>& hosts, InaTreeMode mode,
                             uint64_t seed, const WorkloadSpec& spec, uint32_t jobs);

  void Start(uint64_t at_ps);
  double progress() const;
  /// Called once, when every job has finished.
  std::function<void()> on_finished;

  /// results.json "workload": the core keys of every job's collectives
  /// (CollectiveTable: with several jobs per_job and the mean goodput over
  /// them) and workload.<protocol> (CanaryJob::Details, the hosts' counters
  /// summed over the jobs); collectives.csv, <protocol>_switches.csv.
  void Report(const Scenario& s, bool finished, WorkloadReport& out) const;

  size_t size() const { return jobs_.size(); }
  CanaryJob& job(size_t j) const { return *jobs_[j]; }

 private:
  std::vector<std::unique_ptr<CanaryJob>> jobs_;
  size_t jobs_done_ = 0;
};

}  // namespace inasim
