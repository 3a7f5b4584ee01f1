// When each collective of a training iteration may start at each rank
// (scenario `workload.schedule`, docs/SCENARIO.md): a data-parallel step
// computes for `compute` (forward and backward), its gradient buckets become
// ready during the backward pass (`ready` after the iteration's start) and
// are allreduced in order, each as soon as it is ready and the one before it
// has finished at this rank (PyTorch DDP's buckets on one communication
// stream); the step ends when both its compute and its last collective are
// done, and the next starts `after` later (the optimizer step). Without a
// schedule a protocol's tensors of one iteration run back to back and
// `workload.compute_gap_us` separates iterations: compute 0, every ready 0,
// after = the gap. Pure C++ (no ns-3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace inasim {

/// workload.schedule as parsed.
struct ScheduleSpec {
  bool given = false;
  uint64_t compute_ps = 0;          ///< per iteration and rank: forward + backward
  uint64_t after_ps = 0;            ///< after the compute and the last collective: the optimizer step
  std::vector<uint64_t> bytes;      ///< per collective, in the order they run
  std::vector<uint64_t> ready_ps;   ///< per collective, after the iteration's start
};

/// One rank's iteration, for iterations.csv (the runner joins it with the
/// rank's collective ends).
struct IterationStart {
  uint32_t job = 0, iteration = 0, rank = 0;
  uint32_t host = 0;
  uint64_t start_ps = 0, compute_ps = 0, after_ps = 0;
};

class IterationSchedule {
 public:
  /// `ready_ps`: one entry per collective of an iteration.
  IterationSchedule(uint32_t ranks, uint64_t compute_ps, uint64_t after_ps, std::vector<uint64_t> ready_ps);
  /// The schedule of `spec`, or (not given) `collectives` back to back with `gap_ps` between iterations.
  static IterationSchedule Of(const ScheduleSpec& spec, uint32_t ranks, size_t collectives, uint64_t gap_ps);

  uint32_t per_iteration() const { return static_cast<uint32_t>(ready_ps_.size()); }
  /// When `rank` may start collective `next` (iteration next / per_iteration()),
  /// `now` being when it finished collective next - 1 there (for next = 0: the
  /// workload's start). Call it once per collective, in order, per rank.
  uint64_t StartOf(uint32_t rank, uint64_t next, uint64_t now);
  /// Every iteration a rank began, in the order begun; `hosts` by rank.
  std::vector<IterationStart> Starts(uint32_t job, const std::vector<uint32_t>& hosts) const;

 private:
  uint64_t compute_ps_, after_ps_;
  std::vector<uint64_t> ready_ps_;
  std::vector<std::vector<uint64_t>> starts_;  ///< [rank][iteration]
};

}  // namespace inasim
