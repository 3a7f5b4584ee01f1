// What each rank contributes to a collective, and what the exact sum is.
//
// Values are generated from (seed, rank, element) on demand, so a run at
// 1,024 hosts x 4 MiB never holds 4 GiB of tensors, and the expected sum has a
// closed form, so every host checks every element it ends with in O(1).
//
// The data must make every wrong aggregate visible, not only a wrong count:
// a rank's values replaced by another rank's, one rank's values left out, a
// stale result from the previous iteration, an element shifted by one. So
// each rank weighs the element's pseudo-random coefficients with weights of
// its own, one per element class c = e mod kWeightClasses:
//   int32 "hashed":   v_r(e) = a(e) + h_r[c] b(e)  (mod 2^32), h_r[c] 32-bit;
//                     sum = n a(e) + H[c] b(e) with H[c] = sum_r h_r[c].
//   float32 "hashed": v_r(e) = q(e) + w_r[c] d(e) with small integers q, d in
//                     [-2^k, 2^k) and w in [0, 2^wb), n 2^(wb+k) <= 2^24: every
//                     partial sum is an integer below 2^24 in magnitude, so IEEE
//                     fp32 addition is exact in any order and so is the sum.
// Two ranks' weights collide in every class with probability 2^-256 (int32)
// or 2^-(8 wb) (float32: wb = 8 up to 256 ranks, 7 up to 1,024). The weights
// belong to a job (its seed); a(e), b(e), q(e), d(e) are fresh in every
// iteration (IterationSeed), so a result left from the previous iteration is
// wrong data, not the right sum.
//   "ones": every value 1 (SwitchML's verification tensors). It checks counts
//     only: any substitution of one rank's values by another's passes.
//   "uniform" (float32 only): v = s / 2^23 with s a signed 24-bit integer from
//     (seed, rank, e), i.e. gradients in (-1, 1) with full mantissas. Float sums
//     are then inexact; ExactSum() gives the real sum (exact in double, O(n)).
#pragma once

#include "congestion/load_balancer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace inasim {

enum class DType : uint8_t { kInt32 = 0, kFloat32 = 1 };
enum class DataPattern : uint8_t { kHashed, kOnes, kUniform };

/// What a verdict over this data checked, for results.json's `check` and the
/// summary line: a verdict says exactly what it checked.
inline const char* DataCheckDescription(DataPattern p) {
  switch (p) {
    case DataPattern::kHashed: return "values: exact sum of per-rank weighted data, fresh per iteration and job";
    case DataPattern::kOnes: return "count only: all-ones data shows how many contributions an element got, not whose";
    case DataPattern::kUniform: return "values: against the real sum of per-rank random float32 data";
  }
  return "";
}

/// The summary's verdict: CORRECT only where the values were checked.
inline const char* VerdictWord(bool correct, DataPattern p) {
  if (!correct) return "WRONG";
  return p == DataPattern::kOnes ? "COUNTS CORRECT (ones data: values not checked)" : "CORRECT";
}

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

namespace testing_hooks {
/// Faults a contribution on its way to the wire, to prove that every
/// protocol's check catches a wrong aggregate (tests/integration/
/// test_exactness.cc). Test code only: no scenario key, flag or binding sets
/// it. Every contribution point (TensorData::Contribution / FillBe32, the
/// P4SGD worker's frame) applies it; the oracles (Value, Expected, ExactSum)
/// never do.
enum class ContributionFault : uint8_t {
  kNone,
  kOtherRank,          ///< rank 0 sends rank 1's values, rank n-1 rank n-2's (the sum of rank ids kept)
  kStaleIteration,     ///< every rank sends the previous iteration's values (iterations >= 1)
  kShiftedElement,     ///< rank 0 sends element 2's value as element 1
  kLostContribution,   ///< rank 0 sends zeros (its contribution is lost)
};
inline ContributionFault& InjectedFault() {
  static ContributionFault fault = ContributionFault::kNone;
  return fault;
}
}  // namespace testing_hooks

class TensorData {
 public:
  static constexpr uint32_t kWeightClasses = 8;

  /// Iteration `it`'s data seed of a job whose data seed is `job_seed`
  /// (iteration 0 keeps it).
  static uint64_t IterationSeed(uint64_t job_seed, uint32_t it) {
    return it == 0 ? job_seed : job_seed ^ congestion::Mix64(0x6974657261746eull + it);
  }

  /// Iteration 0 of a job's data; ForIteration() gives the others.
  TensorData(DType dtype, DataPattern pattern, uint64_t seed, uint32_t ranks)
      : dtype_(dtype), pattern_(pattern), job_seed_(seed), seed_(seed), n_(ranks),
        fault_(testing_hooks::InjectedFault()) {
    if (ranks == 0) throw std::invalid_argument("a collective needs at least one rank");
    if (pattern == DataPattern::kUniform && dtype != DType::kFloat32)
      throw std::invalid_argument("data \"uniform\" is a float32 pattern");
    if (pattern == DataPattern::kHashed) weights_ = MakeWeights();
  }

  /// The same job's data in iteration `it`: same rank weights, fresh element
  /// coefficients.
  TensorData ForIteration(uint32_t it) const {
    TensorData d = *this;
    d.iteration_ = it;
    d.seed_ = IterationSeed(job_seed_, it);
    return d;
  }

  /// Most ranks float32 "hashed" data keeps exact (n 2^(wb+k) <= 2^24, wb, k >= 1).
  static constexpr uint32_t kMaxFloatHashedRanks = 1u << 22;

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
    for (uint32_t r = 0; r < n_; ++r) s += UniformValue(seed_, r, e);
    return s;
  }

  /// Bit pattern of rank `rank`'s element `e` (what the oracles use).
  uint32_t Value(uint32_t rank, uint64_t e) const { return ValueAt(seed_, rank, e); }

  /// What rank `rank` contributes as element `e`: Value() unless a test
  /// injected a fault.
  uint32_t Contribution(uint32_t rank, uint64_t e) const {
    if (fault_ == testing_hooks::ContributionFault::kNone) return ValueAt(seed_, rank, e);
    return FaultedContribution(rank, e);
  }

  /// Rank `rank`'s contributions [first, first + count) as big-endian words
  /// at `out` (what a worker puts on the wire). The pattern is decided once
  /// per call, not per element: this is a per-packet hot path.
  void FillBe32(uint32_t rank, uint64_t first, uint64_t count, uint8_t* out) const {
    if (fault_ != testing_hooks::ContributionFault::kNone) {
      for (uint64_t i = 0; i < count; ++i) StoreWord(out + 4 * i, FaultedContribution(rank, first + i));
      return;
    }
    if (pattern_ == DataPattern::kOnes) {
      const uint32_t v = Bswap(Value(rank, 0));
      for (uint64_t i = 0; i < count; ++i) std::memcpy(out + 4 * i, &v, 4);
      return;
    }
    if (pattern_ == DataPattern::kHashed && dtype_ == DType::kInt32) {
      const uint32_t* h = &weights_->per_rank[size_t{rank} * kWeightClasses];
      for (uint64_t i = 0; i < count; ++i) {
        const uint64_t e = first + i, m = Mix(seed_, e);
        StoreWord(out + 4 * i, Lo(m) + h[e % kWeightClasses] * Hi(m));
      }
      return;
    }
    for (uint64_t i = 0; i < count; ++i) StoreWord(out + 4 * i, Value(rank, first + i));
  }

  /// How many of the big-endian words at `in` differ from the exact sums of
  /// elements [first, first + count) (the receive-side check, per packet).
  uint64_t CountMismatchesBe32(uint64_t first, uint64_t count, const uint8_t* in) const {
    uint64_t bad = 0;
    if (pattern_ == DataPattern::kOnes) {
      const uint32_t v = Bswap(Expected(0));
      for (uint64_t i = 0; i < count; ++i) bad += LoadWordRaw(in + 4 * i) != v;
      return bad;
    }
    if (pattern_ == DataPattern::kHashed && dtype_ == DType::kInt32) {
      const uint32_t* sum = weights_->sum_int;
      for (uint64_t i = 0; i < count; ++i) {
        const uint64_t e = first + i, m = Mix(seed_, e);
        bad += Bswap(LoadWordRaw(in + 4 * i)) != n_ * Lo(m) + sum[e % kWeightClasses] * Hi(m);
      }
      return bad;
    }
    for (uint64_t i = 0; i < count; ++i) bad += LoadWordRaw(in + 4 * i) != Bswap(Expected(first + i));
    return bad;
  }

  /// Bit pattern of the exact element-wise sum over all ranks.
  uint32_t Expected(uint64_t e) const {
    if (pattern_ == DataPattern::kOnes)
      return dtype_ == DType::kInt32 ? n_ : FloatBits(static_cast<float>(n_));
    if (pattern_ == DataPattern::kUniform) return FloatBits(static_cast<float>(ExactSum(e)));
    const uint64_t m = Mix(seed_, e);
    const uint32_t c = static_cast<uint32_t>(e % kWeightClasses);
    if (dtype_ == DType::kInt32) return n_ * Lo(m) + weights_->sum_int[c] * Hi(m);
    return FloatBits(static_cast<float>(int64_t{n_} * Small(Lo(m)) + weights_->sum_float[c] * Small(Hi(m))));
  }

 private:
  struct Weights {
    std::vector<uint32_t> per_rank;          ///< rank r's weight of class c at [r * kWeightClasses + c]
    uint32_t sum_int[kWeightClasses] = {};   ///< int32: sum over ranks mod 2^32
    int64_t sum_float[kWeightClasses] = {};  ///< float32: exact sum over ranks
  };

  std::shared_ptr<const Weights> MakeWeights() {
    if (dtype_ == DType::kFloat32) {
      if (n_ > kMaxFloatHashedRanks)
        throw std::invalid_argument("float32 hashed data supports at most " + std::to_string(kMaxFloatHashedRanks) +
                                    " ranks");
      uint32_t log_n = 0;
      while ((1ull << log_n) < n_) ++log_n;
      weight_bits_ = std::min<uint32_t>(8, (24 - log_n) / 2);  // >= 1
      float_bits_ = static_cast<int>(24 - log_n - weight_bits_);
    }
    auto w = std::make_shared<Weights>();
    w->per_rank.resize(size_t{n_} * kWeightClasses);
    const uint64_t stream = congestion::Mix64(job_seed_ ^ 0x7765696768747321ull);  // "weights!"
    for (uint32_t r = 0; r < n_; ++r)
      for (uint32_t c = 0; c < kWeightClasses; ++c) {
        const uint64_t m = congestion::Mix64(stream ^ (uint64_t{r} * kWeightClasses + c + 1) * 0x9e3779b97f4a7c15ull);
        const uint32_t h = dtype_ == DType::kInt32 ? Lo(m) : Lo(m) & ((1u << weight_bits_) - 1);
        w->per_rank[size_t{r} * kWeightClasses + c] = h;
        w->sum_int[c] += h;
        w->sum_float[c] += h;
      }
    return w;
  }

  uint32_t ValueAt(uint64_t seed, uint32_t rank, uint64_t e) const {
    if (pattern_ == DataPattern::kOnes) return dtype_ == DType::kInt32 ? 1u : FloatBits(1.0f);
    if (pattern_ == DataPattern::kUniform) return FloatBits(static_cast<float>(UniformValue(seed, rank, e)));
    const uint64_t m = Mix(seed, e);
    const uint32_t h = weights_->per_rank[size_t{rank} * kWeightClasses + e % kWeightClasses];
    if (dtype_ == DType::kInt32) return Lo(m) + h * Hi(m);
    return FloatBits(static_cast<float>(Small(Lo(m)) + int64_t{h} * Small(Hi(m))));
  }

  uint32_t FaultedContribution(uint32_t rank, uint64_t e) const {
    using F = testing_hooks::ContributionFault;
    switch (fault_) {
      case F::kOtherRank:
        if (rank == 0 && n_ > 1) return ValueAt(seed_, 1, e);
        if (rank == n_ - 1 && n_ > 2) return ValueAt(seed_, n_ - 2, e);
        break;
      case F::kStaleIteration:
        if (iteration_ > 0) return ValueAt(IterationSeed(job_seed_, iteration_ - 1), rank, e);
        break;
      case F::kShiftedElement:
        if (rank == 0 && e == 1) return ValueAt(seed_, rank, 2);
        break;
      case F::kLostContribution:
        if (rank == 0) return 0;  // int32 0 and float32 +0.0 alike
        break;
      case F::kNone: break;
    }
    return ValueAt(seed_, rank, e);
  }

  static uint32_t Bswap(uint32_t v) { return __builtin_bswap32(v); }
  static void StoreWord(uint8_t* out, uint32_t v) {
    const uint32_t be = Bswap(v);
    std::memcpy(out, &be, 4);
  }
  static uint32_t LoadWordRaw(const uint8_t* in) {
    uint32_t w;
    std::memcpy(&w, in, 4);
    return w;
  }
  static uint32_t FloatBits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
  }
  double UniformValue(uint64_t seed, uint32_t rank, uint64_t e) const {
    const uint64_t m = congestion::Mix64(Mix(seed, e) ^ (uint64_t{rank} * 0xd1b54a32d192ed03ULL));
    const int32_t s = static_cast<int32_t>(static_cast<uint32_t>(m) & 0xffffffu) - (1 << 23);
    return std::ldexp(static_cast<double>(s), -23);
  }
  // One mix per element gives both coefficients: a = low word, b = high word.
  static uint64_t Mix(uint64_t seed, uint64_t e) { return congestion::Mix64(seed ^ (e * 0x9e3779b97f4a7c15ULL)); }
  static uint32_t Lo(uint64_t m) { return static_cast<uint32_t>(m); }
  static uint32_t Hi(uint64_t m) { return static_cast<uint32_t>(m >> 32); }
  // Integers in [-2^k, 2^k).
  int64_t Small(uint32_t w) const { return static_cast<int64_t>(w >> (31 - float_bits_)) - (int64_t{1} << float_bits_); }

  DType dtype_;
  DataPattern pattern_;
  uint64_t job_seed_, seed_;  // seed_ = IterationSeed(job_seed_, iteration_), kept: every value needs it
  uint32_t n_;
  uint32_t iteration_ = 0;
  testing_hooks::ContributionFault fault_;
  uint32_t weight_bits_ = 0;
  int float_bits_ = 0;
  std::shared_ptr<const Weights> weights_;  // "hashed" only; shared by a job's iterations
};

}  // namespace inasim
