// The one results schema's per-collective part: every allreduce protocol
// keeps a CollectiveRecord per collective while it runs and feeds one row per
// collective into a CollectiveTable, which writes the core keys of
// results.json's "workload" (docs/SCENARIO.md, "results.json"), its
// `collectives` array and collectives.csv, the same for every protocol; the
// protocol adds its own columns after the core ones and its own keys under
// `workload.<protocol>`. Pure C++ (no ns-3).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace inasim {

/// One collective of one job while it runs: when each rank started and ended
/// it, and the exact-sum checks of what the ranks ended with. A protocol that
/// times the collective as a whole keeps one entry in start_ps / end_ps.
struct CollectiveRecord;
/// The records of `iterations` iterations of the collectives of `elements`
/// (one per collective of an iteration), in run order, for job `job`.
std::vector<CollectiveRecord> IterationRecords(uint32_t ranks, uint32_t iterations,
                                               const std::vector<uint64_t>& elements, uint32_t job = 0);

struct CollectiveRecord {
  uint32_t job = 0;        ///< concurrent job (workload.jobs), 0 with one
  uint32_t iteration = 0;  ///< the iteration it belongs to
  uint64_t bytes = 0;      ///< payload per rank
  /// An end not reached yet (a rank can end at 0: a broadcast's root with nothing to wait for).
  static constexpr uint64_t kNotEnded = UINT64_MAX;
  std::vector<uint64_t> start_ps, end_ps;  ///< per rank; end kNotEnded = not finished there
  uint64_t elements_checked = 0, mismatches = 0;

  /// `ranks` entries of start (0) and end (kNotEnded).
  void Reset(uint32_t ranks);
  /// Every rank ended it (and it has ranks).
  bool finished() const;
  uint64_t first_start_ps() const;  ///< the earliest start
  uint64_t last_end_ps() const;     ///< the latest end (of a finished record)
};

/// One rank's part of one listed collective (hosts.csv; the runner adds the
/// host's timeouts in it).
struct RankSpan {
  uint32_t job = 0, iteration = 0;
  uint32_t collective = 0;  ///< its position among the job's finished collectives
  uint32_t rank = 0;
  uint32_t host = 0;  ///< the topology's host id (node "h<host>")
  uint64_t start_ps = 0, end_ps = 0;
};

/// One finished collective: the core columns.
struct CollectiveRow {
  uint32_t job = 0, iteration = 0;
  uint64_t start_ps = 0, end_ps = 0;
  uint64_t bytes = 0;  ///< payload per rank (goodput = bytes x 8 / duration)
  uint64_t elements_checked = 0, mismatches = 0;
  bool correct = false;  ///< every rank ended with every element exact
  bool warmup = false;   ///< listed, but left out of the means (SwitchML's warm-up tensors)
  /// Each rank's start and end (Of() sets them from a record timed per rank;
  /// they point into it, so Add the row before the record changes).
  const std::vector<uint64_t>* rank_start_ps = nullptr;
  const std::vector<uint64_t>* rank_end_ps = nullptr;

  /// A finished record's row; correct when nothing mismatched and
  /// `expected_checks` elements were checked.
  static CollectiveRow Of(const CollectiveRecord& r, uint64_t expected_checks);
  double duration_s() const;
  double goodput_gbps() const;
};

/// A protocol's own columns of one row, in the order the table declared
/// them: each value goes to the row's `collectives` object and its CSV line,
/// unless added with JsonOnly.
class RowExtras {
 public:
  RowExtras& Add(std::string_view key, uint64_t v);
  RowExtras& Add(std::string_view key, bool v);  ///< JSON true/false, CSV 1/0
  RowExtras& Add(std::string_view key, double v, std::string_view csv_format);  ///< e.g. "{:.6f}"
  RowExtras& JsonOnly(std::string_view key, nlohmann::json v);

 private:
  friend class CollectiveTable;
  nlohmann::json json_ = nlohmann::json::object();
  std::string csv_;  ///< ",a,b,..."
  size_t csv_cells_ = 0;
};

/// What one workload's core keys say beside the table's numbers.
struct CollectiveCore {
  std::string_view protocol;
  std::string_view unit = "iteration";  ///< what one collective is: "iteration", "tensor", "op"
  uint64_t bytes = 0;                   ///< payload per rank of one collective
  uint64_t iterations_requested = 0, iterations_completed = 0;
};

class CollectiveTable {
 public:
  /// The names of the protocol's own CSV columns, after the core ones.
  explicit CollectiveTable(std::vector<std::string> extra_columns = {});

  /// A job taking part: its ranks and the collectives asked of it. Returns its index.
  uint32_t AddJob(uint64_t ranks, uint64_t collectives_requested);
  /// A finished collective. Throws std::logic_error when `extras` has not
  /// one CSV cell per declared column or row.job is not a job.
  void Add(const CollectiveRow& row, RowExtras extras = {});
  /// Checks of collectives that did not finish (or that no collective owns):
  /// in the totals, not listed.
  void AddUnfinished(uint32_t job, uint64_t elements_checked, uint64_t mismatches);
  /// Add for a finished record, AddUnfinished for another.
  void AddRecord(const CollectiveRecord& r, uint64_t expected_checks, RowExtras extras = {});
  /// A new job of `ranks` whose collectives are `records` (AddRecord each,
  /// as this job), every rank expected to check every element of each:
  /// ranks x bytes / 4 checks, unless `checks` gives them per collective of
  /// an iteration (record i's: checks[i % size]). `hosts` (by rank,
  /// optional): SetJobHosts for it first. Returns its index.
  uint32_t AddJobRecords(uint64_t ranks, const std::vector<CollectiveRecord>& records,
                         std::vector<uint32_t> hosts = {}, const std::vector<uint64_t>& checks = {});
  /// Lists at most `rows` collectives (the first ones); later ones count in
  /// every total and mean but are not listed (`collectives_listed`).
  void set_max_listed(size_t rows) { max_listed_ = rows; }
  /// No more rows are listed: Add takes no extras (the caller may skip making them).
  bool full() const { return listed_.size() >= max_listed_; }
  /// Keys of job j's `per_job` entry beside the core ones.
  void SetJobExtras(uint32_t j, nlohmann::json extras);
  /// Job j's hosts, by rank: rows added after this (with per-rank times)
  /// keep each rank's span for hosts.csv (rank_spans()).
  void SetJobHosts(uint32_t j, std::vector<uint32_t> hosts);
  /// Every listed collective's per-rank spans, in the order added.
  const std::vector<RankSpan>& rank_spans() const { return rank_spans_; }

  /// One job's numbers.
  struct JobTotals {
    uint64_t ranks = 0, requested = 0, completed = 0;
    uint64_t measured = 0, measured_bytes = 0;  ///< completed and not warm-up
    double duration_sum_s = 0;                  ///< over the measured, summed in order
    uint64_t elements_checked = 0, mismatches = 0;
    bool rows_correct = true;
    double mean_duration_s() const;
    double goodput_gbps() const;
    /// Every collective asked for finished, each exact.
    bool correct() const { return rows_correct && completed == requested; }
  };
  size_t jobs() const { return jobs_.size(); }
  const JobTotals& job(uint32_t j) const { return jobs_.at(j); }
  uint64_t ranks() const { return Sum(&JobTotals::ranks); }
  uint64_t completed() const { return Sum(&JobTotals::completed); }
  uint64_t elements_checked() const { return Sum(&JobTotals::elements_checked); }
  uint64_t mismatches() const { return Sum(&JobTotals::mismatches); }
  /// One job: its mean over its measured collectives. Several: the mean over
  /// the jobs of their means (each job weighs the same).
  double mean_duration_s() const { return MeanOverJobs(&JobTotals::mean_duration_s); }
  /// One job: measured bytes x 8 / their summed durations (= bytes x 8 /
  /// mean_duration_s with equal sizes). Several: the mean of the jobs' (Canary Fig. 10a).
  double goodput_gbps() const { return MeanOverJobs(&JobTotals::goodput_gbps); }
  /// The lowest and the highest of the jobs' goodputs.
  std::pair<double, double> goodput_range_gbps() const;
  /// Every job correct().
  bool correct() const;

  /// results.json's core "workload" keys (docs/SCENARIO.md): the protocol
  /// adds `check` if it says more than the data pattern, and its own
  /// sub-object. `correct`: the workload's verdict.
  nlohmann::json CoreJson(const CollectiveCore& core, bool correct) const;
  /// collectives.csv: the core columns, then the protocol's.
  std::string Csv() const;
  /// Several jobs: "N jobs of <what> over R hosts in all: mean goodput ..." and the result line.
  std::string JobsSummary(std::string_view what, std::string_view verdict) const;

  /// The core columns of collectives.csv, in order.
  static constexpr const char* kCoreColumns =
      "job,iteration,start_s,end_s,duration_s,goodput_gbps,correct,elements_checked,mismatches";

 private:
  struct Listed {
    CollectiveRow row;
    nlohmann::json extras;
    std::string extra_csv;
  };
  nlohmann::json PerJobJson() const;
  void AddRankSpans(const CollectiveRow& row);
  uint64_t Sum(uint64_t JobTotals::*field) const;  ///< over the jobs
  double MeanOverJobs(double (JobTotals::*metric)() const) const;
  std::vector<std::string> extra_columns_;
  std::vector<JobTotals> jobs_;
  std::vector<nlohmann::json> job_extras_;
  std::vector<Listed> listed_;
  std::vector<std::vector<uint32_t>> job_hosts_;
  std::vector<RankSpan> rank_spans_;
  size_t max_listed_ = std::numeric_limits<size_t>::max();
};

}  // namespace inasim
