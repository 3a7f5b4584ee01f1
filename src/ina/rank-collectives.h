// The collectives of one job whose ranks each end a collective on their own
// and start the next together (the host rings: Gloo, NCCL): each collective's
// data and record, when the next one starts, progress and the core report
// (collective-table.h). The job starts a collective at its ranks through
// `begin`.
//
// Without workload.schedule a collective is an iteration (workload.bytes),
// and the next begins at every rank `compute_gap_us` after the last rank
// ended the previous one. With it, an iteration is the schedule's list of
// collectives; each rank launches each collective when it is ready and its
// previous one has ended there (IterationSchedule), and a ring collective
// begins when its last rank has launched it: a ring step needs both
// neighbours, so a rank that launched early waits (the record keeps each
// rank's launch as its start, as a per-rank profile would; the few slots of
// NCCL's FIFO a rank could fill ahead of a late neighbour are not modelled).
//
// With communicators (ScheduleSpec::communicator), a collective runs in each
// group of its communicator at once, with the group's own data; a rank
// launches its next collective when it has ended its last, and a group
// begins when its own ranks have launched (`begin_group`), not waiting for
// the other groups.
#pragma once

#include "ina/collective-table.h"
#include "ina/iteration-schedule.h"
#include "ina/tensor-data.h"

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace inasim {

struct WorkloadReport;

class RankCollectives {
 public:
  /// `elements`: per collective of an iteration (one without a schedule).
  RankCollectives(uint32_t ranks, std::vector<uint64_t> elements, DType dtype, DataPattern pattern, uint64_t seed,
                  uint32_t iterations, uint64_t compute_gap_ps, const ScheduleSpec& schedule);

  /// Starts collective `c` at every rank (set by the job); c counts every
  /// collective of every iteration.
  std::function<void(uint32_t c)> begin;
  /// With communicators: starts collective `c` at the ranks of its group `g`.
  std::function<void(uint32_t c, uint32_t g)> begin_group;
  std::function<void()> on_finished;
  /// The job's hosts by rank (set by the job): hosts.csv's host column.
  std::vector<uint32_t> hosts;

  /// The first collective is launched now at every rank.
  void Start();
  /// Rank `rank` holds collective `c`'s result, `checked` elements of it
  /// checked; when every rank does, the next collective is launched.
  void RankDone(uint32_t rank, uint32_t c, uint64_t checked, uint64_t mismatches);
  bool done() const { return collectives_done_ == records_.size(); }
  uint32_t collectives_done() const { return collectives_done_; }
  /// With a schedule, every rank's iteration starts as job `job` of the table (iterations.csv); else none.
  std::vector<IterationStart> IterationStarts(uint32_t job) const;
  bool empty() const { return records_.empty(); }
  double progress() const;
  const TensorData& data(uint32_t c) const { return data_[c]; }
  /// Collective c's data in group g of its communicator (ranks by their
  /// place in the group); the world's data for a collective of every rank.
  const TensorData& data(uint32_t c, uint32_t g) const;
  /// Whether collectives run in groups (a communicator other than the world).
  bool grouped() const { return !group_data_.empty(); }
  /// The groups of collective c of an iteration (`kind(c)`'s), and where rank r is in them.
  const std::vector<std::vector<uint32_t>>& groups(uint32_t c) const { return groups_[kind(c)]; }
  uint32_t group_of(uint32_t c, uint32_t rank) const { return group_of_[kind(c)][rank]; }
  uint32_t place_in_group(uint32_t c, uint32_t rank) const { return place_[kind(c)][rank]; }
  /// Which of the iteration's collectives `c` is (its size's index).
  uint32_t kind(uint32_t c) const { return c % static_cast<uint32_t>(elements_.size()); }
  const std::vector<uint64_t>& elements() const { return elements_; }
  const std::vector<CollectiveRecord>& records() const { return records_; }

  /// The core keys of results.json's "workload" (protocol `protocol`),
  /// collectives.csv, the payload delivered and, with a schedule, the
  /// iterations' starts; `ok`: the protocol's own condition for correct;
  /// `checks`: the elements all ranks check per collective of an iteration
  /// (empty: every rank every element). Returns the table.
  CollectiveTable Report(std::string_view protocol, bool finished, bool ok, WorkloadReport& out,
                         const std::vector<uint64_t>& checks = {}) const;

 private:
  void Launch(uint32_t c, uint64_t now_of_every_rank);
  void Begin(uint32_t c);
  /// With communicators: rank r launches collective c, having ended its last at `ended`.
  void LaunchRank(uint32_t r, uint32_t c, uint64_t ended);
  void BeginGroup(uint32_t c, uint32_t g);
  void SetGroups(const ScheduleSpec& schedule, DType dtype, DataPattern pattern, uint64_t seed);

  uint32_t ranks_;
  std::vector<uint64_t> elements_;
  bool scheduled_;
  IterationSchedule schedule_;
  std::vector<TensorData> data_;
  std::vector<CollectiveRecord> records_;
  uint32_t ranks_done_ = 0, collectives_done_ = 0;
  // Communicators: per collective of an iteration its groups, each rank's
  // group and place; per collective of the run its groups' data, each
  // group's launched ranks and the ranks that ended it.
  std::vector<std::vector<std::vector<uint32_t>>> groups_;
  std::vector<std::vector<uint32_t>> group_of_, place_;
  std::vector<std::vector<TensorData>> group_data_;
  std::vector<std::vector<uint32_t>> launched_;
  std::vector<uint32_t> ended_;
};


}  // namespace inasim
