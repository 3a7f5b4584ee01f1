// SwitchML's host-side float32 <-> int32 block quantizer, bit for bit as the
// client library computes it (cpu_exponent_quantizer_ppp.cc), so that the
// simulated error is the error the real system makes, not an idealised one.
//
// Per packet-sized block ("LTU") of k elements:
//   exponent e_i = biased exponent of max|x| - 126      (int8, per worker)
//   the switch returns E = max_i e_i                      (Exponents control)
//   f = float(double(INT32_MAX) / float(n * powf(2, E)))  scaling factor
//   q = round(x * f)  (float multiply, then rounding: VCL roundi = half-even for
//       the multiple-of-16 prefix, std::round = half-away for the remainder)
//   result = float(sum q) / f
// The exponent of block b travels one batch ahead of its data (the "extra
// batch"), which is why float32 jobs send one batch of packets more.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace inasim::switchml_host {

// p4lang/p4app-switchML@b5c74a04:dev_root/client_lib/src/prepostprocessors/cpu_exponent_quantizer_ppp.cc:141
/// Exponent e with 2^e >= max|x| over the block, as the library computes it:
/// the IEEE biased exponent field of the maximum minus 126, truncated to int8
/// (so an all-zero block gives -126 and an infinite maximum wraps to -127).
inline int8_t BlockExponent(const float* x, uint32_t count) {
  float current_max = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const float v = std::fabs(x[i]);
    if (v > current_max) current_max = v;
  }
  uint32_t bits;
  std::memcpy(&bits, &current_max, 4);
  // cpu_exponent_quantizer_ppp.cc:154
  const int32_t e = static_cast<int32_t>((bits & 0x7f800000u) >> 23) - 126;
  return static_cast<int8_t>(e);  // modulo 2^8, as the int8_t store does on x86
}

// p4lang/p4app-switchML@b5c74a04:dev_root/client_lib/src/prepostprocessors/cpu_exponent_quantizer_ppp.cc:257
/// Scaling factor for a block whose global exponent is `e`, stored as float.
/// `num_workers` is uint16_t in the library's config (config.h:40), promoted
/// to float in the product with powf; the quotient is computed in double.
inline float ScalingFactor(uint16_t num_workers, int8_t e) {
  const float denominator = static_cast<float>(num_workers) * powf(2.0f, static_cast<float>(e));
  return static_cast<float>(static_cast<double>(std::numeric_limits<int32_t>::max()) /
                            static_cast<double>(denominator));
}

/// The x86-64 conversion GCC emits for an implicit float -> uint32_t (as in
/// `htonl(std::round(...))`): cvttss2si into a 64-bit register, low 32 bits
/// kept. NaN and values outside int64 give 0x8000000000000000, so 0.
inline uint32_t X86FloatToUint32(float r) {
  if (std::isnan(r) || r >= 9223372036854775808.0f || r < -9223372036854775808.0f) return 0;
  return static_cast<uint32_t>(static_cast<uint64_t>(static_cast<int64_t>(r)));
}

/// VCL `roundi` (cvtps2dq under the default MXCSR): round half to even; NaN
/// and results outside int32 give the "integer indefinite" 0x80000000.
inline uint32_t VclRoundi(float v) {
  if (std::isnan(v) || v >= 2147483648.0f || v < -2147483648.0f) return 0x80000000u;
  return static_cast<uint32_t>(static_cast<int32_t>(std::nearbyint(v)));  // default mode: to nearest even
}

// p4lang/p4app-switchML@b5c74a04:dev_root/client_lib/src/prepostprocessors/cpu_exponent_quantizer_ppp.cc:93
/// Quantizes element `i` of a block of `count` elements (host order result).
/// With `vcl` (the library's default build, Makefile VCL=1) the first
/// count - count % 16 elements go through the vector path.
inline uint32_t Quantize(float x, float f, uint32_t i, uint32_t count, bool vcl) {
  const float product = x * f;  // float multiply, one rounding
  if (vcl && i < count - count % 16) return VclRoundi(product);
  // cpu_exponent_quantizer_ppp.cc:103
  return X86FloatToUint32(std::round(product));
}

// p4lang/p4app-switchML@b5c74a04:dev_root/client_lib/src/prepostprocessors/cpu_exponent_quantizer_ppp.cc:240
/// int32 sum -> float: converted to float, divided by the scaling factor in float.
inline float Dequantize(uint32_t sum, float f) {
  return static_cast<float>(static_cast<int32_t>(sum)) / f;
}

/// The bound on |result - exact sum| for one element that the library's
/// arithmetic guarantees (absent int32 overflow), which is looser than the
/// paper's n/f (appendix E, Theorem 1 assumes exact x*f): each worker's float
/// product is off by up to half an ulp of |x_i f| before rounding adds 1/2,
/// and the int->float conversion and division add two roundings of the result.
///   |err| <= (n/2 + sum_i ulp(|x_i f|)/2) / f + 2 * 2^-24 * (|exact| + that)
inline double ImplementationErrorBound(uint16_t n, double sum_half_ulps_scaled, double f, double exact_abs) {
  const double rounding = (n * 0.5 + sum_half_ulps_scaled) / f;
  return rounding + 2.0 * std::ldexp(1.0, -24) * (exact_abs + rounding);
}

/// Half an ulp of float |v| (for the bound above).
inline double HalfUlp(float v) {
  const float a = std::fabs(v);
  if (a == 0 || !std::isfinite(a)) return 0;
  int exp;
  std::frexp(a, &exp);  // a = m * 2^exp, m in [0.5, 1)
  return std::ldexp(1.0, exp - 24 - 1);
}

}  // namespace inasim::switchml_host
