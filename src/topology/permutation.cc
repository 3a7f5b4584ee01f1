// Single-cycle random permutations for permutation traffic.
//
// Everything is spelled out (no std::uniform_int_distribution, whose algorithm
// is implementation-defined) so a seed gives the same pattern on every platform
// and standard library, and experiments are reproducible.
#include "topology/topology.h"
#include "topology/split_mix64.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace inasim::topo {

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
