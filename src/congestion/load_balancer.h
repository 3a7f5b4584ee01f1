// How a switch picks one port among equal-cost next hops.
#pragma once

#include "p4model/common/frame.h"

#include <cstdint>
#include <string_view>

namespace inasim::congestion {

enum class ForwardingPolicy : uint8_t {
  kEcmp,      ///< 5-tuple hash: one path per flow
  kSpray,     ///< per-packet uniform random choice (random packet spraying)
  kAdaptive,  ///< hash-chosen default port unless its queue is over a threshold
              ///< fraction of the buffer, then the least-queued port (Canary, sec. 5.2)
};

inline const char* ToString(ForwardingPolicy p) {
  switch (p) {
    case ForwardingPolicy::kEcmp: return "ecmp";
    case ForwardingPolicy::kSpray: return "spray";
    case ForwardingPolicy::kAdaptive: return "adaptive";
  }
  return "?";
}

/// SplitMix64 finaliser: cheap, well mixed, and the same on every platform.
inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/// ECMP hash of the 5-tuple, salted per switch so that consecutive tiers do not
/// make correlated choices (the classic ECMP polarisation problem).
inline uint64_t FlowHash(const p4::FrameView& f, uint64_t salt) {
  uint64_t h = Mix64(salt ^ (uint64_t{f.src_ip} << 32 | f.dst_ip));
  h = Mix64(h ^ (uint64_t{f.protocol} << 32 | uint64_t{f.src_port} << 16 | f.dst_port));
  return h;
}

/// d-mod-k up/down routing (the fat-tree default): a switch of `tier` (1 =
/// leaf/edge) with `n` equal-cost up ports sends destination host `host` on
/// port (host / n^(tier-1)) mod n. Every switch of a tier makes the same choice
/// for a destination, and a leaf's n hosts get n different spines.
inline uint32_t DestinationModK(uint32_t host, uint16_t tier, uint32_t n) {
  for (uint16_t t = 1; t < tier && host != 0; ++t) host /= n;
  return host % n;
}

}  // namespace inasim::congestion
