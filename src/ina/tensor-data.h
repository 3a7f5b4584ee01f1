// What each rank contributes to a collective, and what the exact sum is.
//
// Values are generated from (seed, rank, element index) on demand, so a run at
// 1,024 hosts x 4 MiB never holds 4 GiB of tensors, and the expected sum has a
// closed form, so every host checks every element it ends with in O(1).
//   int32 "hashed":  v = a(e) + rank * b(e)   (mod 2^32), sum = n a + b n(n-1)/2
//   float32 "hashed": v = q(e) + rank * d(e) with small integers q, d whose
//     every partial sum stays below 2^24 in magnitude, so IEEE fp32 addition is
//     exact in any order and the expected sum is exact too.
//   "ones": every value 1 (SwitchML's verification tensors).
//   "uniform" (float32 only): v = s / 2^23 with s a signed 24-bit integer from
//     (seed, rank, e), i.e. gradients in (-1, 1) with full mantissas. Float sums
//     are then inexact; ExactSum() gives the real sum (exact in double, O(n)).
#pragma once

#include "congestion/load_balancer.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace inasim {

enum class DType : uint8_t { kInt32 = 0, kFloat32 = 1 };
enum class DataPattern : uint8_t { kHashed, kOnes, kUniform };

inline uint32_t AddElements(DType t, uint32_t a, uint32_t b) {
  if (t == DType::kInt32) return a + b;  // two's complement wrap, as switch ALUs do
  float x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  const float z = x + y;
  uint32_t r;
  std::memcpy(&r, &z, 4);
  return r;
}

class TensorData {
 public:
  TensorData(DType dtype, DataPattern pattern, uint64_t seed, uint32_t ranks)
      : dtype_(dtype), pattern_(pattern), seed_(seed), n_(ranks) {
    if (ranks == 0) throw std::invalid_argument("a collective needs at least one rank");
    if (pattern == DataPattern::kUniform && dtype != DType::kFloat32)
      throw std::invalid_argument("data \"uniform\" is a float32 pattern");
    half_n_n1_ = uint64_t{ranks} * (ranks - 1) / 2;
    if (dtype == DType::kFloat32 && pattern == DataPattern::kHashed) {
      const uint64_t weight = uint64_t{ranks} + half_n_n1_;  // max |sum| per unit of q, d
      int k = -1;
      while (k < 24 && (weight << (k + 1)) <= (1ull << 24)) ++k;
      if (k < 0) throw std::invalid_argument("float32 hashed data supports at most 5792 ranks");
      float_bits_ = k;
    }
  }

  DType dtype() const { return dtype_; }
  DataPattern pattern() const { return pattern_; }
  /// True when Expected() is the exact sum (every pattern but "uniform").
  bool exact_in_float() const { return pattern_ != DataPattern::kUniform; }

  /// The real-number sum of element e over all ranks (exact in double).
  double ExactSum(uint64_t e) const {
    if (pattern_ != DataPattern::kUniform) {
      const uint32_t b = Expected(e);
      if (dtype_ == DType::kInt32) return static_cast<int32_t>(b);
      float f;
      std::memcpy(&f, &b, 4);
      return f;
    }
    double s = 0;
    for (uint32_t r = 0; r < n_; ++r) s += UniformValue(r, e);
    return s;
  }

  /// Bit pattern of rank `rank`'s element `e`.
  uint32_t Value(uint32_t rank, uint64_t e) const {
    if (pattern_ == DataPattern::kOnes) return dtype_ == DType::kInt32 ? 1u : FloatBits(1.0f);
    if (pattern_ == DataPattern::kUniform) return FloatBits(static_cast<float>(UniformValue(rank, e)));
    const uint64_t m = Mix(e);
    if (dtype_ == DType::kInt32) return Lo(m) + rank * Hi(m);
    return FloatBits(static_cast<float>(Small(Lo(m)) + int64_t{rank} * Small(Hi(m))));
  }

  /// Rank `rank`'s elements [first, first + count) as big-endian words at
  /// `out` (what a worker puts on the wire). The pattern is decided once per
  /// call, not per element: this is a per-packet hot path.
  void FillBe32(uint32_t rank, uint64_t first, uint64_t count, uint8_t* out) const {
    if (pattern_ == DataPattern::kOnes) {
      const uint32_t v = Bswap(Value(rank, 0));
      for (uint64_t i = 0; i < count; ++i) std::memcpy(out + 4 * i, &v, 4);
      return;
    }
    if (pattern_ == DataPattern::kHashed && dtype_ == DType::kInt32) {
      for (uint64_t i = 0; i < count; ++i) {
        const uint64_t m = Mix(first + i);
        const uint32_t v = Bswap(Lo(m) + rank * Hi(m));
        std::memcpy(out + 4 * i, &v, 4);
      }
      return;
    }
    for (uint64_t i = 0; i < count; ++i) {
      const uint32_t v = Bswap(Value(rank, first + i));
      std::memcpy(out + 4 * i, &v, 4);
    }
  }

  /// How many of the big-endian words at `in` differ from the exact sums of
  /// elements [first, first + count) (the receive-side check, per packet).
  uint64_t CountMismatchesBe32(uint64_t first, uint64_t count, const uint8_t* in) const {
    uint64_t bad = 0;
    if (pattern_ == DataPattern::kOnes) {
      const uint32_t v = Bswap(Expected(0));
      for (uint64_t i = 0; i < count; ++i) {
        uint32_t w;
        std::memcpy(&w, in + 4 * i, 4);
        bad += w != v;
      }
      return bad;
    }
    if (pattern_ == DataPattern::kHashed && dtype_ == DType::kInt32) {
      const uint64_t n = n_, half = static_cast<uint32_t>(half_n_n1_);
      for (uint64_t i = 0; i < count; ++i) {
        const uint64_t m = Mix(first + i);
        uint32_t w;
        std::memcpy(&w, in + 4 * i, 4);
        bad += Bswap(w) != static_cast<uint32_t>(n * Lo(m) + half * Hi(m));
      }
      return bad;
    }
    for (uint64_t i = 0; i < count; ++i) {
      uint32_t w;
      std::memcpy(&w, in + 4 * i, 4);
      bad += w != Bswap(Expected(first + i));
    }
    return bad;
  }

  /// Bit pattern of the exact element-wise sum over all ranks.
  uint32_t Expected(uint64_t e) const {
    if (pattern_ == DataPattern::kOnes)
      return dtype_ == DType::kInt32 ? n_ : FloatBits(static_cast<float>(n_));
    if (pattern_ == DataPattern::kUniform) return FloatBits(static_cast<float>(ExactSum(e)));
    const uint64_t m = Mix(e);
    if (dtype_ == DType::kInt32)
      return static_cast<uint32_t>(uint64_t{n_} * Lo(m) + static_cast<uint32_t>(half_n_n1_) * uint64_t{Hi(m)});
    return FloatBits(static_cast<float>(int64_t{n_} * Small(Lo(m)) + static_cast<int64_t>(half_n_n1_) * Small(Hi(m))));
  }

 private:
  static uint32_t Bswap(uint32_t v) { return __builtin_bswap32(v); }
  static uint32_t FloatBits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
  }
  double UniformValue(uint32_t rank, uint64_t e) const {
    const uint64_t m = congestion::Mix64(Mix(e) ^ (uint64_t{rank} * 0xd1b54a32d192ed03ULL));
    const int32_t s = static_cast<int32_t>(static_cast<uint32_t>(m) & 0xffffffu) - (1 << 23);
    return std::ldexp(static_cast<double>(s), -23);
  }
  // One mix per element gives both coefficients: a = low word, b = high word.
  uint64_t Mix(uint64_t e) const { return congestion::Mix64(seed_ ^ (e * 0x9e3779b97f4a7c15ULL)); }
  static uint32_t Lo(uint64_t m) { return static_cast<uint32_t>(m); }
  static uint32_t Hi(uint64_t m) { return static_cast<uint32_t>(m >> 32); }
  // Integers in [-2^k, 2^k).
  int64_t Small(uint32_t w) const { return static_cast<int64_t>(w >> (31 - float_bits_)) - (int64_t{1} << float_bits_); }

  DType dtype_;
  DataPattern pattern_;
  uint64_t seed_;
  uint32_t n_;
  uint64_t half_n_n1_ = 0;
  int float_bits_ = 0;
};

}  // namespace inasim
