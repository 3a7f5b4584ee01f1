// Poisson background arrivals: offered load, uniform endpoints, time window,
// determinism.
#include "congestion/flow_generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

using namespace inasim::congestion;

namespace {

PoissonFlowParams Params(double load, uint64_t stop_ps) {
  PoissonFlowParams p;
  for (uint32_t h = 0; h < 16; ++h) p.hosts.push_back(3 * h);  // ids need not be dense
  p.load = load;
  p.host_rate_bps = 100e9;
  p.start_ps = 1'000'000;
  p.stop_ps = stop_ps;
  p.seed = 7;
  return p;
}

TEST(PoissonFlows, RealizedLoadIsWithinFivePercentOfTarget) {
  // Heavy tails need many flows: 1 % of data-mining flows (97-973 MB) carry 72 %
  // of its bytes, so the window is sized for ~4,000 of those (428,000 flows);
  // web search needs ~100,000 flows (2 s). Both put 5 % at 4 sigma or more.
  for (const auto& [dist, seconds] : {std::pair{"web_search", 2ULL}, std::pair{"data_mining", 40ULL}}) {
    const FlowSizeCdf cdf = FlowSizeCdf::Builtin(dist);
    const PoissonFlowParams p = Params(0.4, seconds * 1'000'000'000'000ULL);
    const auto flows = GeneratePoissonFlows(p, cdf);
    const double expected_flows = PoissonArrivalRate(p, cdf) * static_cast<double>(seconds);
    EXPECT_NEAR(static_cast<double>(flows.size()), expected_flows, 4 * std::sqrt(expected_flows)) << dist;
    EXPECT_NEAR(RealizedLoad(flows, p), 0.4, 0.4 * 0.05) << dist;
  }
}

TEST(PoissonFlows, EndpointsAreUniformDistinctHostsOfTheSet) {
  const PoissonFlowParams p = Params(0.4, 200'000'000'000ULL);
  const auto flows = GeneratePoissonFlows(p, FlowSizeCdf::Builtin("web_search"));
  ASSERT_GT(flows.size(), 5000u);
  std::map<uint32_t, uint64_t> src, dst;
  for (const FlowSpec& f : flows) {
    ASSERT_NE(f.src, f.dst);
    ASSERT_EQ(f.src % 3, 0u);
    ASSERT_LT(f.src, 48u);
    ++src[f.src];
    ++dst[f.dst];
  }
  ASSERT_EQ(src.size(), 16u);
  ASSERT_EQ(dst.size(), 16u);
  const double mean = static_cast<double>(flows.size()) / 16;
  for (const auto& [h, n] : src) EXPECT_NEAR(static_cast<double>(n), mean, 5 * std::sqrt(mean)) << h;
  for (const auto& [h, n] : dst) EXPECT_NEAR(static_cast<double>(n), mean, 5 * std::sqrt(mean)) << h;
}

TEST(PoissonFlows, ArrivalsAreOrderedInsideTheWindowWithExponentialGaps) {
  const PoissonFlowParams p = Params(0.2, 500'000'000'000ULL);
  const FlowSizeCdf cdf = FlowSizeCdf::Builtin("web_search");
  const auto flows = GeneratePoissonFlows(p, cdf);
  ASSERT_GT(flows.size(), 1000u);
  EXPECT_TRUE(std::is_sorted(flows.begin(), flows.end(),
                             [](const FlowSpec& a, const FlowSpec& b) { return a.start_ps < b.start_ps; }));
  EXPECT_GE(flows.front().start_ps, p.start_ps);
  EXPECT_LT(flows.back().start_ps, p.stop_ps);
  // Exponential gaps: mean 1/lambda and coefficient of variation 1.
  double sum = 0, sq = 0;
  for (size_t i = 1; i < flows.size(); ++i) {
    const double g = static_cast<double>(flows[i].start_ps - flows[i - 1].start_ps) * 1e-12;
    sum += g;
    sq += g * g;
  }
  const double n = static_cast<double>(flows.size() - 1), mean = sum / n;
  EXPECT_NEAR(mean, 1 / PoissonArrivalRate(p, cdf), 0.05 / PoissonArrivalRate(p, cdf));
  EXPECT_NEAR(std::sqrt(sq / n - mean * mean) / mean, 1.0, 0.05);
}

TEST(PoissonFlows, SameSeedSameFlowsOtherSeedOtherFlows) {
  const FlowSizeCdf cdf = FlowSizeCdf::Builtin("data_mining");
  PoissonFlowParams p = Params(0.4, 10'000'000'000ULL);
  const auto a = GeneratePoissonFlows(p, cdf), b = GeneratePoissonFlows(p, cdf);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].start_ps, b[i].start_ps);
    EXPECT_EQ(a[i].bytes, b[i].bytes);
    EXPECT_EQ(a[i].src, b[i].src);
  }
  p.seed = 8;
  const auto c = GeneratePoissonFlows(p, cdf);
  EXPECT_FALSE(c.size() == a.size() && c.front().start_ps == a.front().start_ps);
}

TEST(PoissonFlows, RejectsFewerThanTwoHosts) {
  PoissonFlowParams p = Params(0.4, 1'000'000'000);
  p.hosts = {4};
  EXPECT_THROW(GeneratePoissonFlows(p, FlowSizeCdf::Builtin("web_search")), std::invalid_argument);
}

}  // namespace
