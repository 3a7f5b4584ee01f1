// Flow-size CDFs: the file format and every rule it enforces, inversion
// sampling at hand-computed points, the exact mean, and a Kolmogorov-Smirnov
// check that samples of the shipped distributions follow their CDF.
#include "congestion/flow_size_cdf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace inasim::congestion;

namespace {

using Points = std::vector<std::pair<double, double>>;

// The message of the std::invalid_argument that parsing `text` throws, or a
// test failure if it parses.
std::string ParseError(std::string_view text, std::string_view origin = "bad.cdf") {
  try {
    FlowSizeCdf::Parse(text, origin);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "parsed without error:\n" << text;
  return "";
}

// ---------------------------------------------------------------- format

TEST(FlowSizeCdfParse, CommentsBlankLinesWhitespaceAndUnit) {
  const FlowSizeCdf cdf = FlowSizeCdf::Parse(
      "# header comment\n"
      "\n"
      "   \t\n"
      "unit 1000   # kilobytes\n"
      "# size cdf\n"
      "100\t0\r\n"
      "  200 0.5  # half the flows are up to 200 kB\n"
      "1000 1",  // no final newline
      "t.cdf");
  EXPECT_EQ(cdf.points(), (Points{{100'000, 0}, {200'000, 0.5}, {1'000'000, 1}}));
  EXPECT_EQ(cdf.max_bytes(), 1'000'000u);
}

TEST(FlowSizeCdfParse, DefaultUnitIsOneByteAndSizesMayBeFractional) {
  const FlowSizeCdf cdf = FlowSizeCdf::Parse("0.5 0\n2.5e1 1\n", "t.cdf");
  EXPECT_EQ(cdf.points(), (Points{{0.5, 0}, {25, 1}}));
}

TEST(FlowSizeCdfParse, FractionalSizesAreScaledByTheUnit) {
  const FlowSizeCdf cdf = FlowSizeCdf::Parse("unit 1460\n0.5 0.2\n2 1\n", "t.cdf");
  EXPECT_EQ(cdf.points(), (Points{{730, 0.2}, {2920, 1}}));
}

TEST(FlowSizeCdfParse, LastProbabilityWithinToleranceIsStoredAsExactlyOne) {
  const FlowSizeCdf cdf = FlowSizeCdf::Parse("1 0\n10 0.9999999999\n", "t.cdf");
  EXPECT_EQ(cdf.points().back().second, 1.0);
  EXPECT_EQ(cdf.Sample(0.99999999999), 10u);
  const std::string e = ParseError("1 0\n10 0.999999\n");  // 1e-6 short: beyond the 1e-9 tolerance
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, "bad.cdf:2: last cumulative probability 0.999999 is not 1", e);
}

TEST(FlowSizeCdfParse, LastSizeOfExactlyOneByteAfterScalingIsAccepted) {
  EXPECT_EQ(FlowSizeCdf::Parse("unit 2\n0 0\n0.5 1\n", "t.cdf").max_bytes(), 1u);
}

// Each rule of the format, with the origin:line prefix and the problem.
struct BadInput {
  const char* name;
  const char* text;
  const char* expected;  // how the message starts: origin:line: problem
};

// gtest prints the case name instead of raw bytes when a case fails.
void PrintTo(const BadInput& b, std::ostream* os) { *os << b.name; }

class FlowSizeCdfParseError : public ::testing::TestWithParam<BadInput> {};

TEST_P(FlowSizeCdfParseError, NamesOriginLineAndProblem) {
  const std::string e = ParseError(GetParam().text);
  EXPECT_EQ(e.rfind(GetParam().expected, 0), 0u) << "expected: " << GetParam().expected << "\nactual:   " << e;
}

const BadInput kBadInputs[] = {
    {"EmptyFile", "", "bad.cdf:1: no points"},
    {"OnlyCommentsAndBlankLines", "# nothing here\n\n# still nothing\n", "bad.cdf:3: no points"},
    {"OnePoint", "# one\n5 1\n", "bad.cdf:2: only one point"},
    {"SizeDecreases", "10 0\n# c\n5 1\n", "bad.cdf:3: size 5 is below the previous point's 10"},
    {"ProbabilityDecreases", "1 0\n2 0.5\n3 0.4\n4 1\n",
     "bad.cdf:3: cumulative probability 0.4 is below the previous point's 0.5"},
    {"LastProbabilityNotOne", "1 0\n2 0.5\n3 0.99\n", "bad.cdf:3: last cumulative probability 0.99 is not 1"},
    {"LastSizeBelowOneByte", "0 0\n0.5 1\n", "bad.cdf:2: largest size 0.5 x unit 1 is below 1 byte"},
    {"LastSizeBelowOneByteAfterUnit", "unit 2\n0 0\n0.4 1\n", "bad.cdf:3: largest size 0.4 x unit 2 is below 1 byte"},
    {"LastSizeAbove2To53Bytes", "1 0\n1e17 1\n", "bad.cdf:2: largest size 1e17 x unit 1 is above 2^53 bytes"},
    {"ExtraToken", "1 0\n2 1 3\n", "bad.cdf:2: unexpected '3' after the cumulative probability"},
    {"MissingProbability", "1 0\n2\n3 1\n",
     "bad.cdf:2: expected '<size> <cumulative probability>', found one value '2'"},
    {"SizeWithTrailingGarbage", "12abc 0\n20 1\n", "bad.cdf:1: size '12abc' is not a number"},
    {"ProbabilityWithTrailingGarbage", "1 0\n2 1x\n", "bad.cdf:2: cumulative probability '1x' is not a number"},
    {"SizeNotFinite", "1 0\ninf 1\n", "bad.cdf:2: size 'inf' is not finite"},
    {"SizeNegative", "-1 0\n2 1\n", "bad.cdf:1: size -1 is negative"},
    {"ProbabilityAboveOne", "1 0\n2 1.5\n", "bad.cdf:2: cumulative probability 1.5 is outside [0, 1]"},
    {"ProbabilityNegative", "1 -0.1\n2 1\n", "bad.cdf:1: cumulative probability -0.1 is outside [0, 1]"},
    {"UnitAfterFirstPoint", "1 0\nunit 10\n2 1\n", "bad.cdf:2: 'unit' must come before the first point"},
    {"UnitTwice", "unit 10\nunit 10\n1 0\n2 1\n", "bad.cdf:2: 'unit' given twice"},
    {"UnitWithoutValue", "unit\n1 0\n2 1\n", "bad.cdf:1: expected 'unit <N>'"},
    {"UnitExtraToken", "unit 10 bytes\n1 0\n2 1\n", "bad.cdf:1: expected 'unit <N>'"},
    {"UnitZero", "unit 0\n1 0\n2 1\n", "bad.cdf:1: unit '0' is not a positive integer"},
    {"UnitNegative", "unit -3\n1 0\n2 1\n", "bad.cdf:1: unit '-3' is not a positive integer"},
    {"UnitFractional", "unit 1.5\n1 0\n2 1\n", "bad.cdf:1: unit '1.5' is not a positive integer"},
};

INSTANTIATE_TEST_SUITE_P(Rules, FlowSizeCdfParseError, ::testing::ValuesIn(kBadInputs),
                         [](const ::testing::TestParamInfo<BadInput>& info) { return std::string(info.param.name); });

TEST(FlowSizeCdfLoad, ReadsAFileAndUsesItsPathAsOrigin) {
  const std::string path = ::testing::TempDir() + "inasim_flow_size_load.cdf";
  {
    std::ofstream(path) << "unit 10\n1 0\n2 1\n";
  }
  EXPECT_EQ(FlowSizeCdf::Load(path).points(), (Points{{10, 0}, {20, 1}}));
  {
    std::ofstream(path) << "1 0\n2 0.5x\n";
  }
  try {
    FlowSizeCdf::Load(path);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ":2: cumulative probability '0.5x'", 0), 0u) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(FlowSizeCdfLoad, MissingFileOrDirectoryIsAnErrorNamingThePath) {
  const std::string missing = ::testing::TempDir() + "inasim_no_such_dir/sizes.cdf";
  try {
    FlowSizeCdf::Load(missing);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_PRED_FORMAT2(::testing::IsSubstring, missing + ": cannot open flow-size CDF file", e.what());
  }
  try {
    FlowSizeCdf::Load(::testing::TempDir());
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_PRED_FORMAT2(::testing::IsSubstring, "is a directory", e.what());
  }
}

// ---------------------------------------------------------------- built-ins

TEST(FlowSizeCdfBuiltin, NamesAndUnknownName) {
  EXPECT_EQ(BuiltinFlowSizeNames(), (std::vector<std::string>{"web_search", "data_mining"}));
  EXPECT_FALSE(BuiltinFlowSizeText("websearch").has_value());
  try {
    FlowSizeCdf::Builtin("websearch");
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_PRED_FORMAT2(::testing::IsSubstring, "unknown flow-size distribution 'websearch'", e.what());
    EXPECT_PRED_FORMAT2(::testing::IsSubstring, "web_search, data_mining", e.what());
  }
}

// The embedded text must be the published points, in 1460-byte packets.
Points InPackets(const Points& packets) {
  Points bytes;
  for (const auto& [size, cdf] : packets) bytes.emplace_back(size * 1460, cdf);
  return bytes;
}

TEST(FlowSizeCdfScaled, EverySizeAndTheMeanScaleTheProbabilitiesStay) {
  const FlowSizeCdf d = FlowSizeCdf::Builtin("data_mining");
  const FlowSizeCdf s = d.Scaled(0.1);
  ASSERT_EQ(s.points().size(), d.points().size());
  for (size_t i = 0; i < d.points().size(); ++i) {
    EXPECT_DOUBLE_EQ(s.points()[i].first, d.points()[i].first * 0.1);
    EXPECT_EQ(s.points()[i].second, d.points()[i].second);
  }
  EXPECT_NEAR(s.Mean(), d.Mean() * 0.1, 1e-6 * d.Mean());
  EXPECT_EQ(s.max_bytes(), static_cast<uint64_t>(std::llround(d.points().back().first * 0.1)));
  EXPECT_EQ(s.Sample(0.5), static_cast<uint64_t>(std::max<long long>(1, std::llround(0.1 * d.Sample(0.5)))));
  EXPECT_THROW(d.Scaled(0), std::invalid_argument);
  EXPECT_THROW(d.Scaled(-1), std::invalid_argument);
}

TEST(FlowSizeCdfBuiltin, WebSearchIsTheDctcpDistributionInPackets) {
  EXPECT_EQ(FlowSizeCdf::Builtin("web_search").points(),
            InPackets({{6, 0}, {6, 0.15}, {13, 0.2}, {19, 0.3}, {33, 0.4}, {53, 0.53}, {133, 0.6}, {667, 0.7},
                       {1333, 0.8}, {3333, 0.9}, {6667, 0.97}, {20000, 1}}));
  EXPECT_EQ(FlowSizeCdf::Builtin("web_search").max_bytes(), 20000u * 1460);
}

TEST(FlowSizeCdfBuiltin, DataMiningIsTheVl2DistributionInPackets) {
  EXPECT_EQ(FlowSizeCdf::Builtin("data_mining").points(),
            InPackets({{1, 0}, {1, 0.5}, {2, 0.6}, {3, 0.7}, {7, 0.8}, {267, 0.9}, {2107, 0.95}, {66667, 0.99},
                       {666667, 1}}));
  EXPECT_EQ(FlowSizeCdf::Builtin("data_mining").max_bytes(), 666667u * 1460);
}

// ---------------------------------------------------------------- Sample, Cdf

const char* const kSmall = "100 0\n200 0.5\n1000 1\n";

TEST(FlowSizeCdfSample, InterpolatesInsideSegments) {
  const FlowSizeCdf cdf = FlowSizeCdf::Parse(kSmall, "small");
  EXPECT_EQ(cdf.Sample(0.0), 100u);
  EXPECT_EQ(cdf.Sample(0.25), 150u);   // 100 + (0.25 / 0.5) * 100
  EXPECT_EQ(cdf.Sample(0.5), 200u);    // end of the first segment, not the start of the second
  EXPECT_EQ(cdf.Sample(0.75), 600u);   // 200 + (0.25 / 0.5) * 800
  EXPECT_EQ(cdf.Sample(0.9), 840u);    // 200 + 0.8 * 800
  EXPECT_EQ(cdf.Sample(std::nextafter(1.0, 0.0)), 1000u);
  // Outside [0, 1) is clamped rather than read out of bounds.
  EXPECT_EQ(cdf.Sample(1.0), 1000u);
  EXPECT_EQ(cdf.Sample(7.0), 1000u);
  EXPECT_EQ(cdf.Sample(-0.5), 100u);
  EXPECT_EQ(cdf.Sample(std::numeric_limits<double>::quiet_NaN()), 100u);
}

TEST(FlowSizeCdfSample, RoundsHalfUpToWholeBytesAndNeverReturnsZero) {
  const FlowSizeCdf cdf = FlowSizeCdf::Parse("0 0\n10 1\n", "t");
  EXPECT_EQ(cdf.Sample(0.0), 1u);    // 0 bytes -> 1
  EXPECT_EQ(cdf.Sample(0.04), 1u);   // 0.4 bytes -> 0 -> 1
  EXPECT_EQ(cdf.Sample(0.24), 2u);   // 2.4
  EXPECT_EQ(cdf.Sample(0.25), 3u);   // 2.5, half up
  EXPECT_EQ(cdf.Sample(0.26), 3u);   // 2.6
}

TEST(FlowSizeCdfSample, FirstPointWithPositiveProbabilityIsAMass) {
  const FlowSizeCdf cdf = FlowSizeCdf::Parse("50 0.3\n150 1\n", "t");
  for (double u : {0.0, 0.1, 0.2999, 0.3}) EXPECT_EQ(cdf.Sample(u), 50u) << u;
  EXPECT_EQ(cdf.Sample(0.65), 100u);  // 50 + (0.35 / 0.7) * 100
  EXPECT_EQ(cdf.Cdf(49.999), 0.0);
  EXPECT_EQ(cdf.Cdf(50), 0.3);  // right-continuous: the mass is included
  EXPECT_DOUBLE_EQ(cdf.Cdf(100), 0.65);
  EXPECT_EQ(cdf.Cdf(150), 1.0);
  EXPECT_EQ(cdf.Cdf(1e12), 1.0);
}

TEST(FlowSizeCdfSample, VerticalStepIsAMassAndFlatStretchIsNeverSampled) {
  // 20 % of flows are exactly 20 bytes; no flow is between 20 and 30 bytes.
  const FlowSizeCdf cdf = FlowSizeCdf::Parse("10 0\n20 0.4\n20 0.6\n30 0.6\n40 1\n", "t");
  EXPECT_EQ(cdf.Sample(0.2), 15u);
  EXPECT_EQ(cdf.Sample(0.45), 20u);
  EXPECT_EQ(cdf.Sample(0.6), 20u);
  EXPECT_EQ(cdf.Sample(std::nextafter(0.6, 1.0)), 30u);
  EXPECT_EQ(cdf.Sample(0.8), 35u);
  EXPECT_DOUBLE_EQ(cdf.Cdf(19.5), 0.38);
  EXPECT_EQ(cdf.Cdf(20), 0.6);
  EXPECT_EQ(cdf.Cdf(25), 0.6);
  EXPECT_DOUBLE_EQ(cdf.Cdf(35), 0.8);
}

TEST(FlowSizeCdfSample, MonotoneInUAndWithinOneToMaxBytes) {
  for (const std::string& name : BuiltinFlowSizeNames()) {
    const FlowSizeCdf cdf = FlowSizeCdf::Builtin(name);
    uint64_t prev = 0;
    for (int k = 0; k < 200'000; ++k) {
      const uint64_t s = cdf.Sample(k / 200'000.0);
      ASSERT_GE(s, prev) << name << " u=" << k / 200'000.0;
      ASSERT_GE(s, 1u);
      ASSERT_LE(s, cdf.max_bytes());
      prev = s;
    }
    EXPECT_EQ(cdf.Sample(0), static_cast<uint64_t>(cdf.points().front().first)) << name;
    EXPECT_EQ(cdf.Sample(std::nextafter(1.0, 0.0)), cdf.max_bytes()) << name;
  }
}

// ---------------------------------------------------------------- Mean

TEST(FlowSizeCdfMean, HandComputed) {
  // Two uniform halves: 0.5 * 150 + 0.5 * 600.
  EXPECT_DOUBLE_EQ(FlowSizeCdf::Parse(kSmall, "t").Mean(), 375.0);
  // Mass 0.3 at 50, then 0.7 uniform over [50, 150].
  EXPECT_DOUBLE_EQ(FlowSizeCdf::Parse("50 0.3\n150 1\n", "t").Mean(), 0.3 * 50 + 0.7 * 100);
  // A mass in the middle (vertical step) and a flat stretch.
  EXPECT_DOUBLE_EQ(FlowSizeCdf::Parse("10 0\n20 0.4\n20 0.6\n30 0.6\n40 1\n", "t").Mean(),
                   0.4 * 15 + 0.2 * 20 + 0.4 * 35);
}

// E[X] = integral over x >= 0 of (1 - F(x)): trapezoids on a geometric grid,
// using only Cdf(), so this does not share Mean()'s segment arithmetic.
double MeanByIntegratingSurvival(const FlowSizeCdf& cdf) {
  double integral = 1.0 - 0.5 * (cdf.Cdf(0) + cdf.Cdf(1));  // [0, 1]
  const int steps = 2'000'000;
  const double top = static_cast<double>(cdf.max_bytes()) * 1.01;
  const double ratio = std::pow(top, 1.0 / steps);
  double x = 1, survival = 1 - cdf.Cdf(1);
  for (int k = 1; k <= steps; ++k) {
    const double next = k == steps ? top : x * ratio;
    const double next_survival = 1 - cdf.Cdf(next);
    integral += 0.5 * (survival + next_survival) * (next - x);
    x = next;
    survival = next_survival;
  }
  return integral;
}

TEST(FlowSizeCdfMean, BuiltinsMatchIntegratedSurvivalAndTheirProvenanceComments) {
  const FlowSizeCdf web = FlowSizeCdf::Builtin("web_search");
  const FlowSizeCdf mining = FlowSizeCdf::Builtin("data_mining");
  EXPECT_NEAR(web.Mean(), MeanByIntegratingSurvival(web), 1e-6 * web.Mean());
  EXPECT_NEAR(mining.Mean(), MeanByIntegratingSurvival(mining), 1e-6 * mining.Mean());
  // The figures quoted at the top of web-search.cdf and data-mining.cdf.
  EXPECT_NEAR(web.Mean(), 1'665'830.8, 1e-6);
  EXPECT_NEAR(mining.Mean(), 7'470'236.0, 1e-6);
}

// ---------------------------------------------------------------- KS

// sup_x |F_n(x) - G(x)| for the rounded samples. Sample() returns round(X) with
// X ~ Cdf, so the law it draws from is G(k) = P(round(X) <= k) = Cdf(k + 0.5)
// at integers k (half-up rounding; every mass of the shipped CDFs sits on a
// whole byte, so none lies on a half). Comparing with Cdf(k) instead would add
// a bias of up to half a byte of density, which is tiny here but is not noise.
// F_n and G are both step functions on the integers, so the supremum is reached
// at a sample value v, either at v (both right limits) or just below it (F_n
// counts samples < v, G is Cdf(v - 0.5)).
double KolmogorovSmirnov(std::vector<uint64_t> samples, const FlowSizeCdf& cdf) {
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  double d = 0;
  for (size_t i = 0; i < samples.size();) {
    size_t j = i;
    while (j < samples.size() && samples[j] == samples[i]) ++j;  // ties: samples[i..j) equal v
    const double v = static_cast<double>(samples[i]);
    d = std::max(d, std::abs(static_cast<double>(i) / n - cdf.Cdf(v - 0.5)));
    d = std::max(d, std::abs(static_cast<double>(j) / n - cdf.Cdf(v + 0.5)));
    i = j;
  }
  return d;
}

std::vector<uint64_t> Draw(const FlowSizeCdf& cdf, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::vector<uint64_t> out(n);
  for (uint64_t& s : out) s = cdf.Sample(uniform(rng));
  return out;
}

constexpr size_t kKsSamples = 100'000;
const double kKsCritical1Percent = 1.63 / std::sqrt(static_cast<double>(kKsSamples));

TEST(FlowSizeCdfKs, WebSearchSamplesFollowTheCdf) {
  const FlowSizeCdf cdf = FlowSizeCdf::Builtin("web_search");
  const double d = KolmogorovSmirnov(Draw(cdf, kKsSamples, 20240601), cdf);
  RecordProperty("ks_d", std::to_string(d));
  std::cout << "web_search KS D = " << d << " (1 % critical " << kKsCritical1Percent << ")\n";
  EXPECT_LT(d, kKsCritical1Percent);
}

TEST(FlowSizeCdfKs, DataMiningSamplesFollowTheCdf) {
  const FlowSizeCdf cdf = FlowSizeCdf::Builtin("data_mining");
  const double d = KolmogorovSmirnov(Draw(cdf, kKsSamples, 20240601), cdf);
  RecordProperty("ks_d", std::to_string(d));
  std::cout << "data_mining KS D = " << d << " (1 % critical " << kKsCritical1Percent << ")\n";
  EXPECT_LT(d, kKsCritical1Percent);
}

// The statistic must be able to tell distributions apart, or the two tests
// above would pass for any sampler.
TEST(FlowSizeCdfKs, RejectsSamplesOfTheOtherDistribution) {
  const FlowSizeCdf web = FlowSizeCdf::Builtin("web_search");
  const FlowSizeCdf mining = FlowSizeCdf::Builtin("data_mining");
  EXPECT_GT(KolmogorovSmirnov(Draw(web, kKsSamples, 1), mining), 10 * kKsCritical1Percent);
  // So is a sampler off by 1 % (every flow 1 % larger): the 15 % mass at
  // 8,760 bytes moves, and a right sampler must keep it exactly in place.
  std::vector<uint64_t> scaled = Draw(web, kKsSamples, 1);
  for (uint64_t& s : scaled) s = static_cast<uint64_t>(std::llround(static_cast<double>(s) * 1.01));
  EXPECT_GT(KolmogorovSmirnov(scaled, web), kKsCritical1Percent);
}

}  // namespace
