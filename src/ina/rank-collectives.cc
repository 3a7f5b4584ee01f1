#include "ina/rank-collectives.h"

#include "ina/workload.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

namespace inasim {

NS_LOG_COMPONENT_DEFINE("InaRankCollectives");

namespace {
uint64_t NowPs() { return static_cast<uint64_t>(ns3::Simulator::Now().GetPicoSeconds()); }
}  // namespace

RankCollectives::RankCollectives(uint32_t ranks, uint64_t elements, DType dtype, DataPattern pattern, uint64_t seed,
                                 uint32_t iterations, uint64_t compute_gap_ps)
    : ranks_(ranks), elements_(elements), compute_gap_ps_(compute_gap_ps) {
  const TensorData run_data(dtype, pattern, seed, ranks);
  for (uint32_t it = 0; it < iterations; ++it) {
    data_.push_back(run_data.ForIteration(it));
    CollectiveRecord r;
    r.iteration = it;
    r.bytes = elements * 4;
    r.Reset(ranks);
    records_.push_back(std::move(r));
  }
}

void RankCollectives::BeginIteration(uint32_t it) {
  NS_LOG_INFO("iteration " << it << " begins at every rank");
  for (uint32_t r = 0; r < ranks_; ++r) records_[it].start_ps[r] = NowPs();
  begin(it);
}

void RankCollectives::RankDone(uint32_t rank, uint32_t it, uint64_t checked, uint64_t mismatches) {
  CollectiveRecord& rec = records_[it];
  rec.end_ps[rank] = NowPs();
  NS_LOG_LOGIC("rank " << rank << " holds iteration " << it << "'s result");
  rec.elements_checked += checked;
  rec.mismatches += mismatches;
  if (++ranks_done_ < ranks_) return;
  ranks_done_ = 0;
  if (++iterations_done_ == records_.size()) {
    if (on_finished) on_finished();
    return;
  }
  ns3::Simulator::Schedule(ns3::PicoSeconds(compute_gap_ps_), &RankCollectives::BeginIteration, this, it + 1);
}

double RankCollectives::progress() const {
  return records_.empty() ? 1.0 : static_cast<double>(iterations_done_) / records_.size();
}

CollectiveTable RankCollectives::Report(std::string_view protocol, bool finished, bool ok, WorkloadReport& out) const {
  CollectiveTable table;
  table.AddJobRecords(ranks_, records_, uint64_t{ranks_} * elements_, hosts);
  out.rank_spans = table.rank_spans();
  for (const CollectiveRecord& r : records_)
    if (r.finished()) out.payload_delivered += r.bytes * ranks_;
  out.correct = finished && table.correct() && ok;
  out.workload = table.CoreJson({protocol, "iteration", elements_ * 4, records_.size(), table.completed()},
                                out.correct);
  out.AddCsv("collectives.csv", table.Csv());
  return table;
}

}  // namespace inasim
