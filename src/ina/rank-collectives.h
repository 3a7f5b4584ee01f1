// The collectives of one job whose ranks each end an iteration on their own
// and start the next together after the compute gap (the host rings: Gloo,
// NCCL): each iteration's data and record, the barrier between iterations,
// progress and the core report (collective-table.h). The job starts an
// iteration at its ranks through `begin`.
#pragma once

#include "ina/collective-table.h"
#include "ina/tensor-data.h"

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace inasim {

struct WorkloadReport;

class RankCollectives {
 public:
  RankCollectives(uint32_t ranks, uint64_t elements, DType dtype, DataPattern pattern, uint64_t seed,
                  uint32_t iterations, uint64_t compute_gap_ps);

  /// Starts iteration `it` at every rank (set by the job).
  std::function<void(uint32_t it)> begin;
  std::function<void()> on_finished;
  /// The job's hosts by rank (set by the job): hosts.csv's host column.
  std::vector<uint32_t> hosts;

  /// Iteration `it` starts now at every rank: its record, then `begin`.
  void BeginIteration(uint32_t it);
  /// Rank `rank` holds iteration `it`'s result, `checked` elements of it
  /// checked; the last rank's starts the next iteration after the gap.
  void RankDone(uint32_t rank, uint32_t it, uint64_t checked, uint64_t mismatches);
  bool done() const { return iterations_done_ == records_.size(); }
  bool empty() const { return records_.empty(); }
  double progress() const;
  const TensorData& data(uint32_t it) const { return data_[it]; }
  const std::vector<CollectiveRecord>& records() const { return records_; }

  /// The core keys of results.json's "workload" (protocol `protocol`, one
  /// collective per iteration), collectives.csv and the payload delivered;
  /// `ok`: the protocol's own condition for correct. Returns the table.
  CollectiveTable Report(std::string_view protocol, bool finished, bool ok, WorkloadReport& out) const;

 private:
  uint32_t ranks_;
  uint64_t elements_;
  uint64_t compute_gap_ps_;
  std::vector<TensorData> data_;
  std::vector<CollectiveRecord> records_;
  uint32_t ranks_done_ = 0, iterations_done_ = 0;
};

}  // namespace inasim
