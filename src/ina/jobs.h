// Several concurrent jobs of one protocol on one fabric (scenario
// `workload.jobs`, canary-fgcs24 §5.2.4 / Fig. 10: "we equally partitioned the
// system between multiple co-running allreduce operations"): how the selected
// hosts are split between the jobs, each job's seed, and the jobs run as one.
// Every protocol that runs several jobs takes its split and seeds from here,
// so the same scenario gives every protocol the same groups and data.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace inasim {

/// The hosts of each job: `jobs` consecutive groups (sizes differ by at most
/// one), each sorted by id, of a seeded shuffle of `hosts` or, with
/// `contiguous`, of `hosts` in their order (job j on a range of racks).
/// std::invalid_argument when a job would get fewer than 2 hosts.
std::vector<std::vector<uint32_t>> SplitHosts(const std::vector<uint32_t>& hosts, uint32_t jobs, uint64_t seed,
                                              bool contiguous = false);

/// Job j's seed: job 0 keeps the scenario's seed, so one job is the plain
/// run; job j > 0 a stream of its own.
uint64_t JobSeed(uint64_t seed, uint32_t j);

/// Job j's seed where each job declares its own hosts and size (not a split of
/// workload.hosts): the scenario's seed + j, as those runs have always drawn.
inline uint64_t ConsecutiveJobSeed(uint64_t seed, uint64_t j) { return seed + j; }

/// One job of a split: its hosts and its seed.
struct JobPlacement {
  std::vector<uint32_t> hosts;
  uint64_t seed;
};
/// SplitHosts and JobSeed together; one job is `hosts` as selected (in their
/// order, not sorted) with the scenario's seed.
std::vector<JobPlacement> PlaceJobs(const std::vector<uint32_t>& hosts, uint32_t jobs, uint64_t seed,
                                    bool contiguous);

/// Concurrent jobs of one kind run as one: `on_finished` once every job has
/// finished, progress the mean of theirs. `Job` has `std::function<void()>
/// on_finished`, `Start(uint64_t at_ps)` and `progress()`. Not movable once a
/// job is added (the jobs call back into it).
template <typename Job>
class ConcurrentJobs {
 public:
  ConcurrentJobs() = default;
  ConcurrentJobs(const ConcurrentJobs&) = delete;
  ConcurrentJobs& operator=(const ConcurrentJobs&) = delete;

  void Add(std::unique_ptr<Job> job) {
    job->on_finished = [this] {
      if (++jobs_done_ == jobs_.size() && on_finished) on_finished();
    };
    jobs_.push_back(std::move(job));
  }
  void Start(uint64_t at_ps) {
    for (auto& job : jobs_) job->Start(at_ps);
  }
  double progress() const {
    double sum = 0;
    for (const auto& job : jobs_) sum += job->progress();
    return sum / static_cast<double>(jobs_.size());
  }
  /// Called once, when every job has finished.
  std::function<void()> on_finished;

  size_t size() const { return jobs_.size(); }
  Job& job(size_t j) const { return *jobs_[j]; }
  const std::vector<std::unique_ptr<Job>>& jobs() const { return jobs_; }

 protected:
  std::vector<std::unique_ptr<Job>> jobs_;

 private:
  size_t jobs_done_ = 0;
};

}  // namespace inasim
