#include "ina/rank-collectives.h"

#include "ina/workload.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace inasim {

NS_LOG_COMPONENT_DEFINE("InaRankCollectives");

namespace {
uint64_t NowPs() { return static_cast<uint64_t>(ns3::Simulator::Now().GetPicoSeconds()); }
}  // namespace

RankCollectives::RankCollectives(uint32_t ranks, std::vector<uint64_t> elements, DType dtype, DataPattern pattern,
                                 uint64_t seed, uint32_t iterations, uint64_t compute_gap_ps,
                                 const ScheduleSpec& schedule)
    : ranks_(ranks),
      elements_(std::move(elements)),
      scheduled_(schedule.given),
      schedule_(IterationSchedule::Of(schedule, ranks, elements_.size(), compute_gap_ps, seed)) {
  records_ = IterationRecords(ranks, iterations, elements_);
  // Fresh values for every collective: a stale result is wrong data.
  const TensorData run_data(dtype, pattern, seed, ranks);
  for (uint32_t c = 0; c < records_.size(); ++c) data_.push_back(run_data.ForIteration(c));
  SetGroups(schedule, dtype, pattern, seed);
}

void RankCollectives::SetGroups(const ScheduleSpec& schedule, DType dtype, DataPattern pattern, uint64_t seed) {
  for (size_t k = 0; k < elements_.size(); ++k) {
    groups_.push_back(GroupsOf(schedule, k, ranks_));
    group_of_.emplace_back(ranks_);
    place_.emplace_back(ranks_);
    for (uint32_t g = 0; g < groups_[k].size(); ++g)
      for (uint32_t i = 0; i < groups_[k][g].size(); ++i) {
        group_of_[k][groups_[k][g][i]] = g;
        place_[k][groups_[k][g][i]] = i;
      }
  }
  if (!scheduled_ || !schedule.has_communicators()) return;
  // Each group's own values: its sum is over its ranks only.
  for (uint32_t c = 0; c < records_.size(); ++c) {
    std::vector<TensorData> per_group;
    for (uint32_t g = 0; g < groups(c).size(); ++g) {
      const uint64_t group_seed = seed ^ (0x9e3779b97f4a7c15ull * (uint64_t{g} + 1 + (uint64_t{kind(c)} << 20)));
      const auto size = static_cast<uint32_t>(groups(c)[g].size());
      per_group.push_back(TensorData(dtype, pattern, group_seed, size).ForIteration(c));
    }
    group_data_.push_back(std::move(per_group));
    launched_.emplace_back(groups(c).size(), 0);
  }
  ended_.assign(records_.size(), 0);
}

const TensorData& RankCollectives::data(uint32_t c, uint32_t g) const {
  return grouped() ? group_data_[c][g] : data_[c];
}

void RankCollectives::Start() {
  if (records_.empty()) return;
  if (!grouped()) return Launch(0, NowPs());
  for (uint32_t r = 0; r < ranks_; ++r) LaunchRank(r, 0, NowPs());
}

void RankCollectives::LaunchRank(uint32_t r, uint32_t c, uint64_t ended) {
  CollectiveRecord& rec = records_[c];
  rec.start_ps[r] = schedule_.StartOf(r, c, ended);
  const uint32_t g = group_of(c, r);
  const std::vector<uint32_t>& group = groups(c)[g];
  if (++launched_[c][g] < group.size()) return;
  uint64_t last = NowPs();
  for (uint32_t member : group) last = std::max(last, rec.start_ps[member]);
  ns3::Simulator::Schedule(ns3::PicoSeconds(last - NowPs()), &RankCollectives::BeginGroup, this, c, g);
}

void RankCollectives::BeginGroup(uint32_t c, uint32_t g) {
  NS_LOG_INFO("collective " << c << " (iteration " << records_[c].iteration << ") begins in group " << g);
  begin_group(c, g);
}

void RankCollectives::Launch(uint32_t c, uint64_t now) {
  CollectiveRecord& rec = records_[c];
  uint64_t last = now;
  for (uint32_t r = 0; r < ranks_; ++r) {
    // Without a schedule every rank starts together (the barrier after the
    // gap); with one, each rank from the end of its own previous collective.
    const uint64_t ended = c == 0 || !scheduled_ ? now : records_[c - 1].end_ps[r];
    rec.start_ps[r] = schedule_.StartOf(r, c, ended);
    last = std::max(last, rec.start_ps[r]);
  }
  // The first collective, due now, begins in Start's own event.
  if (c == 0 && last == NowPs()) Begin(c);
  else ns3::Simulator::Schedule(ns3::PicoSeconds(last - NowPs()), &RankCollectives::Begin, this, c);
}

void RankCollectives::Begin(uint32_t c) {
  NS_LOG_INFO("collective " << c << " (iteration " << records_[c].iteration << ") begins at every rank");
  begin(c);
}

void RankCollectives::RankDone(uint32_t rank, uint32_t c, uint64_t checked, uint64_t mismatches) {
  CollectiveRecord& rec = records_[c];
  rec.end_ps[rank] = NowPs();
  NS_LOG_LOGIC("rank " << rank << " holds collective " << c << "'s result");
  rec.elements_checked += checked;
  rec.mismatches += mismatches;
  if (grouped()) {
    if (c + 1 < records_.size()) LaunchRank(rank, c + 1, NowPs());
    if (++ended_[c] < ranks_) return;
    if (++collectives_done_ == records_.size() && on_finished) on_finished();
    return;
  }
  if (++ranks_done_ < ranks_) return;
  ranks_done_ = 0;
  if (++collectives_done_ == records_.size()) {
    if (on_finished) on_finished();
    return;
  }
  Launch(c + 1, NowPs());
}

std::vector<IterationStart> RankCollectives::IterationStarts(uint32_t job) const {
  return scheduled_ ? schedule_.Starts(job, hosts) : std::vector<IterationStart>{};
}

double RankCollectives::progress() const {
  return records_.empty() ? 1.0 : static_cast<double>(collectives_done_) / records_.size();
}

CollectiveTable RankCollectives::Report(std::string_view protocol, bool finished, bool ok, WorkloadReport& out,
                                        const std::vector<uint64_t>& checks) const {
  CollectiveTable table;
  table.AddJobRecords(ranks_, records_, hosts, checks);
  for (const CollectiveRecord& r : records_)
    if (r.finished()) out.payload_delivered += r.bytes * ranks_;
  out.rank_spans = table.rank_spans();
  out.iteration_starts = IterationStarts(0);
  out.correct = finished && table.correct() && ok;
  out.workload = table.CoreJson({protocol, scheduled_ ? "collective" : "iteration", elements_[0] * 4,
                                 records_.size(), table.completed()},
                                out.correct);
  out.AddCsv("collectives.csv", table.Csv());
  return table;
}

}  // namespace inasim
