// Single-cycle random permutations for permutation traffic.
//
// Everything is spelled out (no std::uniform_int_distribution, whose algorithm
// is implementation-defined) so a seed gives the same pattern on every platform
// and standard library, and experiments are reproducible.
#include "topology/topology.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace inasim::topo {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014): 64-bit state, full period, good enough
// for picking traffic partners and trivially portable.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

// Uniform value in [0, bound) by rejection: 2^64 mod bound of the lowest raw
// values would make small results slightly more likely, so those are redrawn.
// The threshold is (2^64 - bound) mod bound, computed in unsigned arithmetic.
// Plain modulo rather than Lemire's multiply-shift avoids 128-bit integers,
// which not every compiler has; with bound < 2^32 a redraw happens with
// probability below 2^-32, so the cost is one division per draw.
uint64_t UniformBelow(SplitMix64& rng, uint64_t bound) {
  const uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const uint64_t x = rng.Next();
    if (x >= threshold) return x % bound;
  }
}

}  // namespace

std::vector<uint32_t> RandomDerangement(uint32_t n, uint64_t seed) {
  if (n < 2) throw std::invalid_argument("RandomDerangement: n must be >= 2, got " + std::to_string(n));
  std::vector<uint32_t> perm(n);
  for (uint32_t i = 0; i < n; ++i) perm[i] = i;
  // Sattolo's algorithm: drawing j strictly below i (Fisher-Yates allows j == i)
  // yields a uniformly random n-cycle, which never maps i to itself.
  SplitMix64 rng(seed);
  for (uint32_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<uint32_t>(UniformBelow(rng, i));
    std::swap(perm[i], perm[j]);
  }
  return perm;
}

}  // namespace inasim::topo
