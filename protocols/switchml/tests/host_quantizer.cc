// SwitchML's host quantizer, against values worked out by hand from the
// library's arithmetic (cpu_exponent_quantizer_ppp.cc at p4app-switchML@b5c74a04).
#include "protocols/switchml/host/switchml-quantizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace inasim::switchml_host;

TEST(SwitchMLQuantizer, BlockExponentIsTheBiasedExponentOfTheMaximumMinus126) {
  const float one[] = {1.0f};
  EXPECT_EQ(BlockExponent(one, 1), 1);  // 2^1 >= 1: biased 127 - 126
  const float half[] = {0.5f, -0.25f};
  EXPECT_EQ(BlockExponent(half, 2), 0);
  const float mixed[] = {3.0f, -7.5f, 0.0f};
  EXPECT_EQ(BlockExponent(mixed, 3), 3);  // |-7.5|: biased 129
  const float zeros[] = {0.0f, -0.0f};
  EXPECT_EQ(BlockExponent(zeros, 2), -126);
  const float tiny[] = {1e-40f};  // subnormal: exponent field 0
  EXPECT_EQ(BlockExponent(tiny, 1), -126);
  const float inf[] = {std::numeric_limits<float>::infinity()};
  EXPECT_EQ(BlockExponent(inf, 1), -127);  // 255 - 126 = 129 wraps in the int8 store
  EXPECT_EQ(BlockExponent(one, 0), -126);
}

TEST(SwitchMLQuantizer, ScalingFactorIsComputedInDoubleAndStoredAsFloat) {
  // INT32_MAX / (4 * 2^1) = 268435455.875, nearest float 268435456.
  EXPECT_EQ(ScalingFactor(4, 1), 268435456.0f);
  EXPECT_EQ(ScalingFactor(3, -1), static_cast<float>(2147483647.0 / 1.5));
  // An all-zero block (e = -126) overflows the float: f = inf, every x*f is
  // NaN (0*inf), the sum INT32_MIN*n, and the result 0 again after /inf.
  EXPECT_TRUE(std::isinf(ScalingFactor(2, -126)));
  EXPECT_EQ(Dequantize(Quantize(0.0f, ScalingFactor(2, -126), 0, 16, true) * 2u, ScalingFactor(2, -126)), 0.0f);
  EXPECT_EQ(ScalingFactor(1, 0), 2147483648.0f);
}

TEST(SwitchMLQuantizer, VectorPathRoundsHalfToEvenScalarRemainderHalfAway) {
  // 32 elements: all through the VCL path; 17: the 17th is the scalar remainder.
  EXPECT_EQ(Quantize(2.5f, 1.0f, 0, 32, true), 2u);
  EXPECT_EQ(Quantize(3.5f, 1.0f, 0, 32, true), 4u);
  EXPECT_EQ(Quantize(2.5f, 1.0f, 16, 17, true), 3u);
  EXPECT_EQ(Quantize(-2.5f, 1.0f, 0, 32, true), 0xfffffffeu);
  EXPECT_EQ(Quantize(-2.5f, 1.0f, 16, 17, true), 0xfffffffdu);
  EXPECT_EQ(Quantize(2.5f, 1.0f, 0, 32, false), 3u);  // VCL=0 build: std::round everywhere
}

TEST(SwitchMLQuantizer, OutOfRangeAndNaNConvertAsX86Does) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(Quantize(3e9f, 1.0f, 0, 16, true), 0x80000000u);  // cvtps2dq: integer indefinite
  EXPECT_EQ(Quantize(3e9f, 1.0f, 0, 1, true), 3000000000u);   // cvttss2si 64-bit, low word
  EXPECT_EQ(Quantize(nan, 1.0f, 0, 16, true), 0x80000000u);
  EXPECT_EQ(Quantize(nan, 1.0f, 0, 1, true), 0u);
  EXPECT_EQ(Quantize(1e30f, 1.0f, 0, 1, true), 0u);  // beyond int64
}

TEST(SwitchMLQuantizer, DequantizeConvertsToFloatThenDivides) {
  EXPECT_EQ(Dequantize(0xfffffffeu, 2.0f), -1.0f);
  EXPECT_EQ(Dequantize(0x7fffffffu, 1.0f), 2147483648.0f);  // int -> float rounds first
}

// Three workers, one block: the sum comes back within the library
// arithmetic's bound, while the paper's n/f is finer than a float's ulp at
// the result (so float32 output rounding alone can exceed it).
TEST(SwitchMLQuantizer, ThreeWorkerBlockIsWithinTheImplementationBound) {
  const std::vector<std::vector<float>> x = {{0.1f, -0.3f, 0.2f}, {0.2f, 0.25f, -0.05f}, {0.3f, 0.01f, 0.125f}};
  int8_t e = -128;
  for (const auto& w : x) e = std::max(e, BlockExponent(w.data(), 3));
  EXPECT_EQ(e, -1);  // max |x| = 0.3 < 2^-1
  const float f = ScalingFactor(3, e);
  for (int i = 0; i < 3; ++i) {
    uint32_t sum = 0;
    double exact = 0;
    for (const auto& w : x) {
      sum += Quantize(w[i], f, i, 3, true);
      exact += w[i];
    }
    const float result = Dequantize(sum, f);
    const double err = std::fabs(result - exact);
    const double bound = ImplementationErrorBound(3, 3 * HalfUlp(static_cast<float>(2147483647.0 / 3)), f,
                                                  std::fabs(exact));
    EXPECT_LE(err, bound) << i;
    EXPECT_LT(err, 1e-7) << i;
  }
}
