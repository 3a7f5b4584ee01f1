// FCT statistics: numpy-style percentiles, the size buckets at their exact
// boundaries, slowdown and long-flow throughput, and the utilisation histogram.
#include "congestion/flow_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace inasim::congestion;
using nlohmann::ordered_json;

namespace {

std::vector<double> OneToTen() { return {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; }

// ---------------------------------------------------------------- Percentile

TEST(Percentile, LinearBetweenClosestRanksLikeNumpy) {
  const std::vector<double> x = OneToTen();
  EXPECT_DOUBLE_EQ(Percentile(x, 0.5), 5.5);     // h = 4.5
  EXPECT_DOUBLE_EQ(Percentile(x, 0.99), 9.91);   // h = 8.91
  EXPECT_DOUBLE_EQ(Percentile(x, 0.999), 9.991); // h = 8.991
  EXPECT_DOUBLE_EQ(Percentile(x, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(Percentile(x, 1.0), 10.0);
  // Uneven gaps: h = 1.2 -> 2 + 0.2 * 2; h = 3.6 -> 8 + 0.6 * 8.
  const std::vector<double> y = {1, 2, 4, 8, 16};
  EXPECT_DOUBLE_EQ(Percentile(y, 0.3), 2.4);
  EXPECT_DOUBLE_EQ(Percentile(y, 0.9), 12.8);
}

TEST(Percentile, SingleEmptyAndOutOfRange) {
  EXPECT_EQ(Percentile({42}, 0.99), 42.0);
  EXPECT_EQ(Percentile({}, 0.5), 0.0);
  EXPECT_THROW(Percentile(OneToTen(), 1.01), std::invalid_argument);
  EXPECT_THROW(Percentile(OneToTen(), -0.01), std::invalid_argument);
  EXPECT_THROW(Percentile(OneToTen(), std::nan("")), std::invalid_argument);
}

// ---------------------------------------------------------------- Summarize

TEST(Summarize, SortsItsCopyAndComputesEveryField) {
  const Summary s = Summarize({7, 3, 10, 1, 5, 9, 2, 8, 6, 4});
  EXPECT_EQ(s.count, 10u);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_DOUBLE_EQ(s.median, 5.5);
  EXPECT_DOUBLE_EQ(s.p99, 9.91);
  EXPECT_DOUBLE_EQ(s.p999, 9.991);
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, 10.0);
  const Summary odd = Summarize({0.3, 0.1, 0.2});
  EXPECT_DOUBLE_EQ(odd.median, 0.2);
  EXPECT_DOUBLE_EQ(odd.mean, 0.2);
}

TEST(Summarize, EmptyIsCountZeroAndZerosNaNThrows) {
  const Summary s = Summarize({});
  EXPECT_EQ(s.count, 0u);
  for (double v : {s.mean, s.median, s.p99, s.p999, s.min, s.max}) EXPECT_EQ(v, 0.0);
  EXPECT_THROW(Summarize({1, std::nan(""), 2}), std::invalid_argument);
}

// ---------------------------------------------------------------- FctReport

// One flow exactly on each side of every bucket boundary. fct_s is the flow's
// index + 1, so a bucket's min and max say which flows it got.
std::vector<FlowRecord> BoundaryFlows() {
  const uint64_t sizes[] = {99'999, 100'000, 9'999'999, 10'000'000, 39'999'999, 40'000'000};
  std::vector<FlowRecord> flows;
  for (size_t i = 0; i < std::size(sizes); ++i) flows.push_back({sizes[i], static_cast<double>(i + 1), 0.5});
  return flows;
}

void ExpectBucket(const ordered_json& report, const char* bucket, uint64_t count, double min_fct, double max_fct) {
  SCOPED_TRACE(bucket);
  const ordered_json& b = report.at(bucket);
  EXPECT_EQ(b.at("count").get<uint64_t>(), count);
  EXPECT_EQ(b.at("fct_s").at("min").get<double>(), min_fct);
  EXPECT_EQ(b.at("fct_s").at("max").get<double>(), max_fct);
}

TEST(FctReport, BoundaryFlowsLandInTheRightBuckets) {
  const ordered_json r = FctReport(BoundaryFlows());
  ExpectBucket(r, "all", 6, 1, 6);
  ExpectBucket(r, "short", 5, 1, 5);       // < 40,000,000
  ExpectBucket(r, "long", 1, 6, 6);        // 40,000,000
  ExpectBucket(r, "lt_100KB", 1, 1, 1);    // 99,999
  ExpectBucket(r, "100KB_10MB", 2, 2, 3);  // 100,000 and 9,999,999
  ExpectBucket(r, "ge_10MB", 3, 4, 6);     // 10,000,000, 39,999,999, 40,000,000
}

TEST(FctReport, AScaledShortLongSplitMovesOnlyThoseBuckets) {
  // A scenario scaling its flow sizes by 0.25 splits short/long at 10 MB.
  const ordered_json r = FctReport(BoundaryFlows(), 10'000'000);
  ExpectBucket(r, "short", 3, 1, 3);  // below 10,000,000
  ExpectBucket(r, "long", 3, 4, 6);
  ExpectBucket(r, "ge_10MB", 3, 4, 6);  // the fixed buckets do not move
  EXPECT_EQ(r.at("long_flow_throughput_gbps").at("count").get<uint64_t>(), 3u);
  EXPECT_DOUBLE_EQ(r.at("long_flow_throughput_gbps").at("min").get<double>(), 10'000'000 * 8.0 / 4 / 1e9);
  EXPECT_DOUBLE_EQ(r.at("long_flow_throughput_gbps").at("max").get<double>(), 39'999'999 * 8.0 / 5 / 1e9);
}

TEST(FctReport, KeysInFixedOrderAndStatsFields) {
  const ordered_json r = FctReport(BoundaryFlows());
  std::vector<std::string> keys;
  for (const auto& [k, v] : r.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"all", "short", "long", "lt_100KB", "100KB_10MB", "ge_10MB",
                                            "long_flow_throughput_gbps"}));
  keys.clear();
  for (const auto& [k, v] : r.at("all").at("slowdown").items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"mean", "median", "p99", "p999", "min", "max"}));
  keys.clear();
  for (const auto& [k, v] : r.at("long_flow_throughput_gbps").items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"mean", "median", "min", "max", "count"}));
}

TEST(FctReport, SlowdownIsFctOverIdeal) {
  const std::vector<FlowRecord> flows = {{1000, 2.0, 0.5}, {2000, 3.0, 3.0}, {3000, 1.0, 0.1}};  // 4, 1, 10
  const ordered_json s = FctReport(flows).at("all").at("slowdown");
  EXPECT_DOUBLE_EQ(s.at("min").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(s.at("median").get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(s.at("max").get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(s.at("mean").get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(s.at("p99").get<double>(), 4.0 + 0.98 * 6.0);  // h = 1.98
  const ordered_json f = FctReport(flows).at("all").at("fct_s");
  EXPECT_DOUBLE_EQ(f.at("mean").get<double>(), 2.0);
}

TEST(FctReport, LongFlowThroughput) {
  // 40 MB in 32 ms is 10 Gb/s; 80 MB in 32 ms is 20 Gb/s; short flows do not count.
  const std::vector<FlowRecord> flows = {
      {40'000'000, 0.032, 0.0032}, {80'000'000, 0.032, 0.0064}, {39'999'999, 0.001, 0.001}};
  const ordered_json t = FctReport(flows).at("long_flow_throughput_gbps");
  EXPECT_EQ(t.at("count").get<uint64_t>(), 2u);
  EXPECT_NEAR(t.at("min").get<double>(), 10.0, 1e-12);
  EXPECT_NEAR(t.at("max").get<double>(), 20.0, 1e-12);
  EXPECT_NEAR(t.at("mean").get<double>(), 15.0, 1e-12);
  EXPECT_NEAR(t.at("median").get<double>(), 15.0, 1e-12);
}

TEST(FctReport, EmptyBucketsHaveCountZeroAndNullStats) {
  const ordered_json r = FctReport({{1000, 1e-5, 1e-6}});
  for (const char* b : {"short", "lt_100KB", "all"}) EXPECT_EQ(r.at(b).at("count").get<uint64_t>(), 1u) << b;
  for (const char* b : {"long", "100KB_10MB", "ge_10MB"}) {
    EXPECT_EQ(r.at(b).at("count").get<uint64_t>(), 0u) << b;
    EXPECT_TRUE(r.at(b).at("fct_s").is_null()) << b;
    EXPECT_TRUE(r.at(b).at("slowdown").is_null()) << b;
  }
  const ordered_json& t = r.at("long_flow_throughput_gbps");
  EXPECT_EQ(t.at("count").get<uint64_t>(), 0u);
  for (const char* k : {"mean", "median", "min", "max"}) EXPECT_TRUE(t.at(k).is_null()) << k;

  const ordered_json none = FctReport({});
  EXPECT_EQ(none.at("all").at("count").get<uint64_t>(), 0u);
  EXPECT_TRUE(none.at("all").at("fct_s").is_null());
}

TEST(FctReport, NonPositiveTimesThrowNamingTheFlow) {
  for (double ideal : {0.0, -1.0, std::nan("")}) {
    try {
      FctReport({{1000, 1.0, 1.0}, {1000, 1.0, ideal}});
      ADD_FAILURE() << "no error for ideal " << ideal;
    } catch (const std::invalid_argument& e) {
      EXPECT_PRED_FORMAT2(::testing::IsSubstring, "flow 1: ideal_fct_s", e.what());
    }
  }
  EXPECT_THROW(FctReport({{1000, 0.0, 1.0}}), std::invalid_argument);
}

// ---------------------------------------------------------------- utilisation

std::vector<uint64_t> Links(const ordered_json& h) {
  std::vector<uint64_t> n;
  for (const auto& b : h.at("bins")) n.push_back(b.at("links").get<uint64_t>());
  return n;
}

TEST(UtilizationHistogram, BoundariesGoToTheBinTheyStartAndOneToTheLast) {
  const std::vector<double> u = {0.0, 0.05, 0.1, 0.35, 0.999, 1.0, 1.0000001};
  const ordered_json h = UtilizationHistogram(u);
  EXPECT_EQ(Links(h), (std::vector<uint64_t>{2, 1, 0, 1, 0, 0, 0, 0, 0, 3}));
  EXPECT_EQ(h.at("count").get<uint64_t>(), 7u);
  EXPECT_DOUBLE_EQ(h.at("mean").get<double>(), (0.05 + 0.1 + 0.35 + 0.999 + 1.0 + 1.0000001) / 7);
  EXPECT_EQ(h.at("bins").at(0).at("from").get<double>(), 0.0);
  EXPECT_EQ(h.at("bins").at(0).at("to").get<double>(), 0.1);
  EXPECT_EQ(h.at("bins").at(1).at("from").get<double>(), 0.1);
  EXPECT_EQ(h.at("bins").at(9).at("to").get<double>(), 1.0);
}

TEST(UtilizationHistogram, EveryPrintedLowerEdgeIsCountedInItsOwnBin) {
  for (int bins : {3, 7, 10, 49, 100}) {
    std::vector<double> edges;
    for (int i = 0; i < bins; ++i) edges.push_back(static_cast<double>(i) / bins);
    const ordered_json h = UtilizationHistogram(edges, bins);
    ASSERT_EQ(h.at("bins").size(), static_cast<size_t>(bins));
    for (int i = 0; i < bins; ++i) {
      EXPECT_EQ(h.at("bins").at(i).at("from").get<double>(), edges[i]) << bins << " " << i;
      EXPECT_EQ(h.at("bins").at(i).at("links").get<uint64_t>(), 1u) << bins << " bins, edge " << i;
    }
  }
}

TEST(UtilizationHistogram, EmptyAndInvalid) {
  const ordered_json h = UtilizationHistogram({}, 4);
  EXPECT_EQ(Links(h), (std::vector<uint64_t>{0, 0, 0, 0}));
  EXPECT_EQ(h.at("bins").at(1).at("from").get<double>(), 0.25);
  EXPECT_EQ(h.at("count").get<uint64_t>(), 0u);
  EXPECT_EQ(h.at("mean").get<double>(), 0.0);
  EXPECT_THROW(UtilizationHistogram({0.5, -0.01}), std::invalid_argument);
  EXPECT_THROW(UtilizationHistogram({std::nan("")}), std::invalid_argument);
  EXPECT_THROW(UtilizationHistogram({0.5}, 0), std::invalid_argument);
}

}  // namespace
