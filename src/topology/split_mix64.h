// SplitMix64 (Steele, Lea, Flood 2014): the project's seeded, platform-
// independent random stream (derangements, random tree roots, the PANAMA
// cluster's arrivals, P4SGD's synthetic data). Header-only, no dependencies.
#pragma once

#include <cstdint>

namespace inasim::topo {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1), 53 bits.
  double NextUnit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

/// A hash of `x`: the first draw of the stream seeded with it.
inline uint64_t SplitMix64Hash(uint64_t x) { return SplitMix64(x).Next(); }

// Uniform value in [0, bound) by rejection: 2^64 mod bound of the lowest raw
// values would make small results slightly more likely, so those are redrawn.
// The threshold is (2^64 - bound) mod bound, computed in unsigned arithmetic.
// Plain modulo rather than Lemire's multiply-shift avoids 128-bit integers,
// which not every compiler has; with bound < 2^32 a redraw happens with
// probability below 2^-32, so the cost is one division per draw.
inline uint64_t UniformBelow(SplitMix64& rng, uint64_t bound) {
  const uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const uint64_t x = rng.Next();
    if (x >= threshold) return x % bound;
  }
}

}  // namespace inasim::topo
