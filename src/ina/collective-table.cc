#include "ina/collective-table.h"

#include "ina/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace inasim {

using nlohmann::json;

void CollectiveRecord::Reset(uint32_t ranks) {
  start_ps.assign(ranks, 0);
  end_ps.assign(ranks, kNotEnded);
}

bool CollectiveRecord::finished() const {
  return !end_ps.empty() && std::all_of(end_ps.begin(), end_ps.end(), [](uint64_t e) { return e != kNotEnded; });
}

uint64_t CollectiveRecord::first_start_ps() const {
  return start_ps.empty() ? 0 : *std::min_element(start_ps.begin(), start_ps.end());
}

uint64_t CollectiveRecord::last_end_ps() const {
  return end_ps.empty() ? 0 : *std::max_element(end_ps.begin(), end_ps.end());
}

CollectiveRow CollectiveRow::Of(const CollectiveRecord& r, uint64_t expected_checks) {
  CollectiveRow row;
  row.job = r.job;
  row.iteration = r.iteration;
  row.start_ps = r.first_start_ps();
  row.end_ps = r.last_end_ps();
  row.bytes = r.bytes;
  row.elements_checked = r.elements_checked;
  row.mismatches = r.mismatches;
  row.correct = r.mismatches == 0 && r.elements_checked == expected_checks;
  if (r.start_ps.size() > 1 && r.end_ps.size() == r.start_ps.size()) {
    row.rank_start_ps = &r.start_ps;
    row.rank_end_ps = &r.end_ps;
  }
  return row;
}

double CollectiveRow::duration_s() const { return PsToS(end_ps - start_ps); }

double CollectiveRow::goodput_gbps() const { return static_cast<double>(bytes) * 8.0 / duration_s() / 1e9; }

RowExtras& RowExtras::Add(std::string_view key, uint64_t v) {
  json_[std::string(key)] = v;
  csv_ += fmt::format(",{}", v);
  ++csv_cells_;
  return *this;
}

RowExtras& RowExtras::Add(std::string_view key, bool v) {
  json_[std::string(key)] = v;
  csv_ += v ? ",1" : ",0";
  ++csv_cells_;
  return *this;
}

RowExtras& RowExtras::Add(std::string_view key, double v, std::string_view csv_format) {
  json_[std::string(key)] = v;
  csv_ += ',';
  csv_ += fmt::format(fmt::runtime(csv_format), v);
  ++csv_cells_;
  return *this;
}

RowExtras& RowExtras::JsonOnly(std::string_view key, json v) {
  json_[std::string(key)] = std::move(v);
  return *this;
}

CollectiveTable::CollectiveTable(std::vector<std::string> extra_columns) : extra_columns_(std::move(extra_columns)) {}

uint32_t CollectiveTable::AddJob(uint64_t ranks, uint64_t collectives_requested) {
  JobTotals t;
  t.ranks = ranks;
  t.requested = collectives_requested;
  jobs_.push_back(t);
  job_extras_.push_back(json::object());
  job_hosts_.emplace_back();
  return static_cast<uint32_t>(jobs_.size() - 1);
}

void CollectiveTable::Add(const CollectiveRow& row, RowExtras extras) {
  if (row.job >= jobs_.size()) throw std::logic_error(fmt::format("collective of job {}: no such job", row.job));
  if (!full() && extras.csv_cells_ != extra_columns_.size())
    throw std::logic_error(fmt::format("collective row with {} extra CSV cells, {} columns declared",
                                       extras.csv_cells_, extra_columns_.size()));
  JobTotals& t = jobs_[row.job];
  ++t.completed;
  t.elements_checked += row.elements_checked;
  t.mismatches += row.mismatches;
  t.rows_correct &= row.correct;
  if (!row.warmup) {
    ++t.measured;
    t.measured_bytes += row.bytes;
    t.duration_sum_s += row.duration_s();
  }
  if (!full()) {
    AddRankSpans(row);
    listed_.push_back({row, std::move(extras.json_), std::move(extras.csv_)});
    listed_.back().row.rank_start_ps = listed_.back().row.rank_end_ps = nullptr;  // the record may go
  }
}

void CollectiveTable::AddUnfinished(uint32_t job, uint64_t elements_checked, uint64_t mismatches) {
  JobTotals& t = jobs_.at(job);
  t.elements_checked += elements_checked;
  t.mismatches += mismatches;
}

void CollectiveTable::SetJobHosts(uint32_t j, std::vector<uint32_t> hosts) { job_hosts_.at(j) = std::move(hosts); }

void CollectiveTable::AddRankSpans(const CollectiveRow& row) {
  const std::vector<uint32_t>& hosts = job_hosts_[row.job];
  if (!row.rank_start_ps || row.rank_start_ps->size() != hosts.size()) return;
  for (uint32_t rank = 0; rank < hosts.size(); ++rank)
    rank_spans_.push_back({row.job, row.iteration, static_cast<uint32_t>(jobs_[row.job].completed - 1), rank,
                           hosts[rank], (*row.rank_start_ps)[rank], (*row.rank_end_ps)[rank]});
}

void CollectiveTable::AddRecord(const CollectiveRecord& r, uint64_t expected_checks, RowExtras extras) {
  if (r.finished()) Add(CollectiveRow::Of(r, expected_checks), std::move(extras));
  else AddUnfinished(r.job, r.elements_checked, r.mismatches);
}

uint32_t CollectiveTable::AddJobRecords(uint64_t ranks, const std::vector<CollectiveRecord>& records,
                                       std::vector<uint32_t> hosts, const std::vector<uint64_t>& checks) {
  const uint32_t j = AddJob(ranks, records.size());
  SetJobHosts(j, std::move(hosts));
  for (size_t i = 0; i < records.size(); ++i) {
    const CollectiveRecord& r = records[i];
    if (!r.finished()) {
      AddUnfinished(j, r.elements_checked, r.mismatches);
      continue;
    }
    const uint64_t expected = checks.empty() ? ranks * (r.bytes / 4) : checks[i % checks.size()];
    CollectiveRow row = CollectiveRow::Of(r, expected);
    row.job = j;
    Add(row);
  }
  return j;
}

std::vector<CollectiveRecord> IterationRecords(uint32_t ranks, uint32_t iterations,
                                               const std::vector<uint64_t>& elements, uint32_t job) {
  std::vector<CollectiveRecord> out;
  for (uint32_t it = 0; it < iterations; ++it)
    for (uint64_t e : elements) {
      CollectiveRecord r;
      r.job = job;
      r.iteration = it;
      r.bytes = e * 4;
      r.Reset(ranks);
      out.push_back(std::move(r));
    }
  return out;
}

void CollectiveTable::SetJobExtras(uint32_t j, json extras) { job_extras_.at(j) = std::move(extras); }

double CollectiveTable::JobTotals::mean_duration_s() const {
  return measured ? duration_sum_s / static_cast<double>(measured) : 0.0;
}

double CollectiveTable::JobTotals::goodput_gbps() const {
  const double mean = mean_duration_s();
  if (!(mean > 0)) return 0.0;
  // The mean size: exact for equal sizes, so this is bytes * 8 / mean.
  return static_cast<double>(measured_bytes) / static_cast<double>(measured) * 8.0 / mean / 1e9;
}

uint64_t CollectiveTable::Sum(uint64_t JobTotals::*field) const {
  uint64_t n = 0;
  for (const JobTotals& t : jobs_) n += t.*field;
  return n;
}

double CollectiveTable::MeanOverJobs(double (JobTotals::*metric)() const) const {
  if (jobs_.empty()) return 0.0;
  double sum = 0;  // one job: its own value, exactly (0 + x, x / 1)
  for (const JobTotals& t : jobs_) sum += (t.*metric)();
  return sum / static_cast<double>(jobs_.size());
}

std::pair<double, double> CollectiveTable::goodput_range_gbps() const {
  std::pair<double, double> range{0.0, 0.0};
  for (size_t j = 0; j < jobs_.size(); ++j) {
    const double g = jobs_[j].goodput_gbps();
    range = j == 0 ? std::make_pair(g, g) : std::make_pair(std::min(range.first, g), std::max(range.second, g));
  }
  return range;
}

bool CollectiveTable::correct() const {
  return std::all_of(jobs_.begin(), jobs_.end(), [](const JobTotals& t) { return t.correct(); });
}

json CollectiveTable::PerJobJson() const {
  json per_job = json::array();
  for (uint32_t j = 0; j < jobs_.size(); ++j) {
    const JobTotals& t = jobs_[j];
    json e = {{"job", j},
              {"ranks", t.ranks},
              {"collectives_completed", t.completed},
              {"mean_duration_s", t.mean_duration_s()},
              {"goodput_gbps", t.goodput_gbps()},
              {"correct", t.correct()},
              {"elements_checked", t.elements_checked},
              {"mismatches", t.mismatches}};
    e.update(job_extras_[j]);
    per_job.push_back(std::move(e));
  }
  return per_job;
}

json CollectiveTable::CoreJson(const CollectiveCore& core, bool correct) const {
  uint64_t requested = 0;
  for (const JobTotals& t : jobs_) requested += t.requested;
  json rows = json::array();
  for (const Listed& l : listed_) {
    const CollectiveRow& r = l.row;
    json o = l.extras;
    o.update({{"job", r.job},
              {"iteration", r.iteration},
              {"start_s", PsToS(r.start_ps)},
              {"end_s", PsToS(r.end_ps)},
              {"duration_s", r.duration_s()},
              {"goodput_gbps", r.goodput_gbps()},
              {"correct", r.correct},
              {"elements_checked", r.elements_checked},
              {"mismatches", r.mismatches}});
    rows.push_back(std::move(o));
  }
  json w = {{"type", "allreduce"},
            {"protocol", core.protocol},
            {"collective_unit", core.unit},
            {"bytes", core.bytes},
            {"ranks", ranks()},
            {"jobs", jobs_.size()},
            {"iterations_requested", core.iterations_requested},
            {"iterations_completed", core.iterations_completed},
            {"collectives_requested", requested},
            {"collectives_completed", completed()},
            {"collectives_listed", listed_.size()},
            {"mean_duration_s", mean_duration_s()},
            {"goodput_gbps", goodput_gbps()},
            {"elements_checked", elements_checked()},
            {"mismatches", mismatches()},
            {"correct", correct},
            {"collectives", std::move(rows)}};
  if (jobs_.size() > 1) {
    w["per_job"] = PerJobJson();
    const auto [lo, hi] = goodput_range_gbps();
    w["min_goodput_gbps"] = lo;
    w["max_goodput_gbps"] = hi;
  }
  return w;
}

std::string CollectiveTable::Csv() const {
  std::string csv = kCoreColumns;
  for (const std::string& c : extra_columns_) csv += "," + c;
  csv += '\n';
  for (const Listed& l : listed_) {
    const CollectiveRow& r = l.row;
    csv += fmt::format("{},{},{:.12f},{:.12f},{:.12f},{:.6f},{},{},{}{}\n", r.job, r.iteration, PsToS(r.start_ps),
                       PsToS(r.end_ps), r.duration_s(), r.goodput_gbps(), r.correct ? 1 : 0, r.elements_checked,
                       r.mismatches, l.extra_csv);
  }
  return csv;
}

std::string CollectiveTable::JobsSummary(std::string_view what, std::string_view verdict) const {
  const auto [lo, hi] = goodput_range_gbps();
  return fmt::format("{} jobs of {} over {} hosts in all: mean goodput {:.2f} Gb/s per job (min {:.2f}, max {:.2f})\n"
                     "  result: {} - {} elements checked against the exact sums, {} mismatches\n",
                     jobs_.size(), what, ranks(), goodput_gbps(), lo, hi, verdict,
                     elements_checked(), mismatches());
}

}  // namespace inasim
