// CollectiveTable (src/ina/collective-table.h): the core keys, collectives.csv,
// per_job, warm-up rows, unfinished collectives and the listing cap.
#include "ina/collective-table.h"
#include "ina/program-counters.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

namespace inasim {
namespace {

CollectiveRow Row(uint32_t job, uint32_t it, uint64_t start_ps, uint64_t end_ps, uint64_t bytes, bool ok = true) {
  CollectiveRow r;
  r.job = job;
  r.iteration = it;
  r.start_ps = start_ps;
  r.end_ps = end_ps;
  r.bytes = bytes;
  r.elements_checked = ok ? 8 : 7;
  r.mismatches = ok ? 0 : 1;
  r.correct = ok;
  return r;
}

TEST(CollectiveRecord, StartsFirstEndsLastFinishesWhenEveryRankEnded) {
  CollectiveRecord r;
  EXPECT_FALSE(r.finished());  // no ranks
  r.Reset(3);
  r.start_ps = {30, 10, 20};
  r.end_ps[0] = 70;
  r.end_ps[2] = 90;
  EXPECT_FALSE(r.finished());  // rank 1 has not ended
  r.end_ps[1] = 0;             // a rank may end at 0 (a broadcast's root with nothing to wait for)
  EXPECT_TRUE(r.finished());
  r.end_ps[1] = 50;
  EXPECT_EQ(r.first_start_ps(), 10u);
  EXPECT_EQ(r.last_end_ps(), 90u);
  r.elements_checked = 12;
  const CollectiveRow row = CollectiveRow::Of(r, 12);
  EXPECT_EQ(row.start_ps, 10u);
  EXPECT_EQ(row.end_ps, 90u);
  EXPECT_TRUE(row.correct);
  EXPECT_FALSE(CollectiveRow::Of(r, 13).correct);  // a check missing
  r.mismatches = 1;
  EXPECT_FALSE(CollectiveRow::Of(r, 12).correct);
}

TEST(CollectiveTable, OneJobCoreKeysAndCsv) {
  CollectiveTable t({"retransmissions", "ratio"});
  t.AddJob(4, 2);
  RowExtras a, b;
  a.Add("retransmissions", uint64_t{3}).Add("ratio", 0.5, "{:.3f}").JsonOnly("note", "x");
  b.Add("retransmissions", uint64_t{0}).Add("ratio", 0.25, "{:.3f}");
  t.Add(Row(0, 0, 0, 1'000'000, 1000), a);    // 1 us: 8 Gb/s
  t.Add(Row(0, 1, 2'000'000, 5'000'000, 1000), b);  // 3 us
  EXPECT_EQ(t.Csv(),
            "job,iteration,start_s,end_s,duration_s,goodput_gbps,correct,elements_checked,mismatches,retransmissions,"
            "ratio\n"
            "0,0,0.000000000000,0.000001000000,0.000001000000,8.000000,1,8,0,3,0.500\n"
            "0,1,0.000002000000,0.000005000000,0.000003000000,2.666667,1,8,0,0,0.250\n");
  const nlohmann::json w = t.CoreJson({"toy", "iteration", 1000, 2, 2}, true);
  EXPECT_EQ(w["type"], "allreduce");
  EXPECT_EQ(w["protocol"], "toy");
  EXPECT_EQ(w["collective_unit"], "iteration");
  EXPECT_EQ(w["ranks"], 4);
  EXPECT_EQ(w["jobs"], 1);
  EXPECT_EQ(w["collectives_requested"], 2);
  EXPECT_EQ(w["collectives_completed"], 2);
  EXPECT_EQ(w["collectives_listed"], 2);
  EXPECT_DOUBLE_EQ(w["mean_duration_s"].get<double>(), 2e-6);
  EXPECT_DOUBLE_EQ(w["goodput_gbps"].get<double>(), 1000 * 8 / 2e-6 / 1e9);
  EXPECT_EQ(w["elements_checked"], 16);
  EXPECT_EQ(w["mismatches"], 0);
  EXPECT_FALSE(w.contains("per_job"));
  ASSERT_EQ(w["collectives"].size(), 2u);
  EXPECT_EQ(w["collectives"][0]["retransmissions"], 3);
  EXPECT_EQ(w["collectives"][0]["note"], "x");
  EXPECT_DOUBLE_EQ(w["collectives"][1]["duration_s"].get<double>(), 3e-6);
  EXPECT_TRUE(t.correct());
}

TEST(CollectiveTable, ExtrasMustMatchTheDeclaredColumns) {
  CollectiveTable t({"a"});
  t.AddJob(2, 1);
  EXPECT_THROW(t.Add(Row(0, 0, 0, 10, 4)), std::logic_error);
  RowExtras two;
  two.Add("a", uint64_t{1}).Add("b", uint64_t{2});
  EXPECT_THROW(t.Add(Row(0, 0, 0, 10, 4), two), std::logic_error);
  RowExtras one;
  one.Add("a", uint64_t{1});
  EXPECT_THROW(t.Add(Row(1, 0, 0, 10, 4), one), std::logic_error);  // no job 1
}

TEST(CollectiveTable, WarmupRowsAreListedButNotMeasured) {
  CollectiveTable t;
  t.AddJob(2, 3);
  CollectiveRow warm = Row(0, 0, 0, 10'000'000, 4000);
  warm.warmup = true;
  t.Add(warm);
  t.Add(Row(0, 1, 0, 1'000'000, 1000));
  t.Add(Row(0, 2, 0, 3'000'000, 3000));
  // Measured: 4000 bytes over 4 us.
  EXPECT_DOUBLE_EQ(t.mean_duration_s(), 2e-6);
  EXPECT_DOUBLE_EQ(t.goodput_gbps(), 2000 * 8 / 2e-6 / 1e9);
  EXPECT_EQ(t.CoreJson({"toy"}, true)["collectives_listed"], 3);
  EXPECT_EQ(t.elements_checked(), 24u);
}

TEST(CollectiveTable, UnfinishedCollectivesCountInTheTotalsAndTheVerdict) {
  CollectiveTable t;
  t.AddJob(2, 2);
  t.Add(Row(0, 0, 0, 1'000'000, 1000));
  CollectiveRecord open;
  open.Reset(2);
  open.iteration = 1;
  open.end_ps[0] = 5;
  open.elements_checked = 3;
  open.mismatches = 1;
  t.AddRecord(open, 8);
  EXPECT_EQ(t.completed(), 1u);
  EXPECT_EQ(t.elements_checked(), 11u);
  EXPECT_EQ(t.mismatches(), 1u);
  EXPECT_FALSE(t.correct());  // one of two finished
  const std::string csv = t.Csv();
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 2);  // the header and iteration 0
}

TEST(CollectiveTable, SeveralJobsPerJobMinMaxAndTheMeanOverJobs) {
  CollectiveTable t;
  t.AddJob(3, 1);
  t.AddJob(2, 1);
  t.SetJobExtras(1, {{"jid", 7}});
  t.Add(Row(0, 0, 0, 1'000'000, 1000));       // 8 Gb/s
  t.Add(Row(1, 0, 0, 4'000'000, 1000, false));  // 2 Gb/s, a mismatch
  EXPECT_DOUBLE_EQ(t.mean_duration_s(), 2.5e-6);
  EXPECT_DOUBLE_EQ(t.goodput_gbps(), 5.0);
  const nlohmann::json w = t.CoreJson({"toy"}, false);
  EXPECT_EQ(w["jobs"], 2);
  EXPECT_EQ(w["ranks"], 5);
  EXPECT_DOUBLE_EQ(w["min_goodput_gbps"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(w["max_goodput_gbps"].get<double>(), 8.0);
  ASSERT_EQ(w["per_job"].size(), 2u);
  EXPECT_EQ(w["per_job"][0]["ranks"], 3);
  EXPECT_EQ(w["per_job"][0]["correct"], true);
  EXPECT_EQ(w["per_job"][1]["correct"], false);
  EXPECT_EQ(w["per_job"][1]["mismatches"], 1);
  EXPECT_EQ(w["per_job"][1]["jid"], 7);
  EXPECT_EQ(t.JobsSummary("toy allreduce of 1000 B", "WRONG"),
            "2 jobs of toy allreduce of 1000 B over 5 hosts in all: mean goodput 5.00 Gb/s per job (min 2.00, max "
            "8.00)\n  result: WRONG - 15 elements checked against the exact sums, 1 mismatches\n");
}

TEST(CollectiveTable, ListsAtMostTheCapButCountsEveryCollective) {
  CollectiveTable t;
  t.set_max_listed(2);
  t.AddJob(2, 5);
  for (uint32_t i = 0; i < 5; ++i) t.Add(Row(0, i, 0, (i + 1) * 1'000'000ull, 1000));
  const nlohmann::json w = t.CoreJson({"toy", "op"}, true);
  EXPECT_EQ(w["collectives_completed"], 5);
  EXPECT_EQ(w["collectives_listed"], 2);
  EXPECT_EQ(w["collectives"].size(), 2u);
  EXPECT_DOUBLE_EQ(w["mean_duration_s"].get<double>(), 3e-6);  // all five
  EXPECT_EQ(w["elements_checked"], 40);
}

/// A program's counters as a dataplane declares them (p4model/common/counters.h).
struct ToyStats {
  uint64_t a = 0, peak = 0, dumped = 0, hidden = 0, b = 0;
  static constexpr p4::StatCounter<ToyStats> kCounters[] = {
      {"a", &ToyStats::a, p4::Shown::kEverywhere},
      {"peak", &ToyStats::peak, p4::Shown::kDump | p4::Shown::kCsv},
      {"dumped", &ToyStats::dumped},
      {"hidden", &ToyStats::hidden, p4::Shown::kSums},
      {"b", &ToyStats::b, p4::Shown::kCsv | p4::Shown::kSums}};
};

TEST(ProgramCounters, CsvRowsInDeclaredOrderAndSumsOfTheSummedOnes) {
  ProgramCounters c = ProgramCounters::Of(ToyStats::kCounters, {{"left", ProgramCounters::Shown::kCsv}});
  EXPECT_EQ(c.csv(), "switch,tier,a,peak,b,left\n");
  EXPECT_EQ(c.Sums(), nlohmann::json({{"a", 0}, {"hidden", 0}, {"b", 0}}));
  c.Add("leaf0", 1, ToyStats{1, 7, 55, 100, 2}, ToyStats::kCounters, {11});
  c.Add("spine0", 2, ToyStats{3, 9, 66, 200, 4}, ToyStats::kCounters, {12});
  EXPECT_EQ(c.csv(), "switch,tier,a,peak,b,left\nleaf0,1,1,7,2,11\nspine0,2,3,9,4,12\n");
  EXPECT_EQ(c.Sums(), nlohmann::json({{"a", 4}, {"hidden", 300}, {"b", 6}}));
  EXPECT_EQ(c.switches(), 2u);
  EXPECT_THROW(c.Add("x", 1, ToyStats{}, ToyStats::kCounters), std::logic_error);  // no value for "left"
}

TEST(StatCounters, TheDumpShowsWhatIsDeclaredForIt) {
  EXPECT_EQ(p4::DumpedCounters(ToyStats{1, 7, 55, 100, 2}, ToyStats::kCounters),
            nlohmann::json({{"a", 1}, {"peak", 7}, {"dumped", 55}}));
  // A program's own selection: the counters with every bit asked for.
  EXPECT_EQ(p4::DumpedCounters(ToyStats{1, 7, 55, 100, 2}, ToyStats::kCounters, p4::Shown::kDump | p4::Shown::kCsv),
            nlohmann::json({{"a", 1}, {"peak", 7}}));
}

}  // namespace
}  // namespace inasim
