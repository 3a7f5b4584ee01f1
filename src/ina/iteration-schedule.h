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
// after = the gap. A collective may instead wait for the rank's compute to
// end, or for an earlier collective of the iteration to end there, and
// `ready` after that (`after`: a dependency, e.g. a gradient-norm allreduce
// once the backward pass is done, or a step that uses a result). Ranks need
// not compute alike: `jitter_cv` draws each
// rank's compute per iteration around the mean, and `stragglers` are ranks
// that always compute `factor` x slower; a rank's ready times stretch with its
// compute (its backward pass is slower alike). Pure C++ (no ns-3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace inasim {

/// What a collective's ready time counts from (ScheduleSpec::after): the
/// iteration's start, the end of the rank's compute, or (>= 0) the end at
/// the rank of that earlier collective of the iteration.
constexpr int64_t kAfterStart = -1, kAfterCompute = -2;

/// What a collective of a schedule does with a tensor of `bytes` per rank
/// (the whole tensor: each rank's input of a reduce-scatter, each rank's
/// output of an all-gather, the root's tensor of a broadcast). Only
/// allreduce runs everywhere; a protocol lists the others it runs in its
/// protocol.json ("schedule_kinds").
enum class CollectiveKind : uint8_t { kAllreduce, kReduceScatter, kAllGather, kBroadcast };
/// "allreduce", "reduce_scatter", "all_gather", "broadcast".
const char* CollectiveKindName(CollectiveKind k);
/// The elements the n ranks of a group check together at the end of a
/// collective of `kind` over a tensor of `elements`: n E (allreduce), E
/// (reduce-scatter: each rank its 1/n), (n-1) E (all-gather: each rank the
/// others' parts; broadcast: every rank but the root).
uint64_t CollectiveChecks(CollectiveKind kind, uint32_t n, uint64_t elements);
/// The bytes a ring rank sends in a collective of `kind` on n ranks, as a
/// factor of the tensor: 2(n-1)/n (allreduce), (n-1)/n (reduce-scatter,
/// all-gather), 1 (broadcast: every rank of the chain but the last sends it);
/// the analytic bound is this x S / B, written as BoundFormula(kind) ("S / B";
/// CompactBoundFormula: "S/B", for a summary line).
double TrafficFactor(CollectiveKind kind, uint32_t n);
const char* BoundFormula(CollectiveKind kind);
std::string CompactBoundFormula(CollectiveKind kind);

/// workload.schedule as parsed.
struct ScheduleSpec {
  bool given = false;
  uint64_t compute_ps = 0;          ///< per iteration and rank: forward + backward
  uint64_t after_ps = 0;            ///< after the compute and the last collective: the optimizer step
  std::vector<uint64_t> bytes;      ///< per collective, in the order they run
  std::vector<uint64_t> ready_ps;   ///< per collective, after what `after` names
  std::vector<int64_t> after;       ///< per collective: kAfterStart, kAfterCompute or an earlier index
  std::vector<CollectiveKind> kinds;  ///< per collective
  std::vector<uint32_t> roots;        ///< per collective: a broadcast's root (its place in its group), else 0
  /// Named partitions of a job's ranks into groups (`communicators`): each
  /// collective runs in every group of its communicator at once, the groups
  /// apart (e.g. tensor-parallel groups inside racks, data-parallel across).
  std::vector<std::string> communicator_names;
  std::vector<std::vector<std::vector<uint32_t>>> communicator_groups;
  /// Per collective: its communicator's index, or kWorld (every rank, one group).
  std::vector<int32_t> communicator;
  static constexpr int32_t kWorld = -1;
  /// Whether some collective runs in a communicator other than the world.
  bool has_communicators() const;
  /// Each rank's compute per iteration x max(0.1, 1 + jitter_cv z), z ~ N(0, 1)
  /// drawn from (seed, rank, iteration); 0: every rank computes `compute`.
  double jitter_cv = 0;
  std::vector<uint32_t> straggler_ranks;  ///< ranks (of each job) whose compute is x straggler_factor
  double straggler_factor = 1;
};

/// The elements of each collective of an iteration: the schedule's sizes, or
/// (no schedule) one collective of `bytes`.
std::vector<uint64_t> CollectiveElements(const ScheduleSpec& schedule, uint64_t bytes);
/// The groups collective `c` of an iteration runs in (each a list of ranks,
/// together every rank once): its communicator's, or one group of all `ranks`.
std::vector<std::vector<uint32_t>> GroupsOf(const ScheduleSpec& schedule, size_t c, uint32_t ranks);
/// The set of ranks' groups collective `c` of an iteration runs in: 0 the
/// world, k + 1 communicator k (the host rings keep connections per set).
uint32_t CommunicatorSet(const ScheduleSpec& schedule, size_t c);
/// std::invalid_argument, naming the key, unless every communicator is a
/// partition of ranks 0 .. ranks-1 and every broadcast's root is a place in
/// each group it runs in.
void CheckCommunicators(const ScheduleSpec& schedule, uint32_t ranks);

/// The kind of each collective of an iteration (no schedule: one allreduce).
std::vector<CollectiveKind> CollectiveKinds(const ScheduleSpec& schedule);
/// The largest collective's bytes (what a rank holds at once).
uint64_t LargestCollectiveBytes(const ScheduleSpec& schedule, uint64_t bytes);

/// How long `rank` computes in `iteration`, as a factor of the schedule's
/// compute (ScheduleSpec's jitter and stragglers; `seed`: the job's).
double ComputeFactor(const ScheduleSpec& spec, uint64_t seed, uint32_t rank, uint32_t iteration);

/// One rank's iteration, for iterations.csv (the runner joins it with the
/// rank's collective ends).
struct IterationStart {
  uint32_t job = 0, iteration = 0, rank = 0;
  uint32_t host = 0;
  uint64_t start_ps = 0, compute_ps = 0, after_ps = 0;
};

class IterationSchedule {
 public:
  /// `ready_ps`: one entry per collective of an iteration; `factor(rank,
  /// iteration)` scales a rank's compute and ready times (default 1).
  /// `after`: per collective what its ready time counts from (empty: the
  /// iteration's start for all).
  IterationSchedule(uint32_t ranks, uint64_t compute_ps, uint64_t after_ps, std::vector<uint64_t> ready_ps,
                    std::function<double(uint32_t, uint32_t)> factor = {}, std::vector<int64_t> after = {});
  /// The schedule of `spec` (its jitter drawn from `seed`), or (not given)
  /// `collectives` back to back with `gap_ps` between iterations.
  /// std::invalid_argument when a straggler rank is not one of `ranks`.
  static IterationSchedule Of(const ScheduleSpec& spec, uint32_t ranks, size_t collectives, uint64_t gap_ps,
                              uint64_t seed = 0);

  uint32_t per_iteration() const { return static_cast<uint32_t>(ready_ps_.size()); }
  /// When `rank` may start collective `next` (iteration next / per_iteration()),
  /// `now` being when it finished collective next - 1 there (for next = 0: the
  /// workload's start). Call it once per collective, in order, per rank.
  uint64_t StartOf(uint32_t rank, uint64_t next, uint64_t now);
  /// Every iteration a rank began, in the order begun; `hosts` by rank.
  std::vector<IterationStart> Starts(uint32_t job, const std::vector<uint32_t>& hosts) const;

 private:
  /// `rank`'s compute in the iteration it begins now, and its scaled ready times.
  uint64_t Scaled(uint64_t ps, uint32_t rank, uint32_t iteration) const;

  uint64_t compute_ps_, after_ps_;
  std::vector<uint64_t> ready_ps_;
  std::vector<int64_t> after_;                 ///< per collective (ScheduleSpec::after)
  std::vector<std::vector<uint64_t>> ends_;    ///< [rank][collective]: its ends in the current iteration
  std::function<double(uint32_t, uint32_t)> factor_;
  std::vector<std::vector<uint64_t>> starts_;  ///< [rank][iteration]
};

}  // namespace inasim
