// Gloo's scenario section, workload.gloo (parsed by spec.cc).
#pragma once

#include <cstdint>
#include <string>

namespace inasim {

/// Gloo's ring allreduce over TCP (scenario `workload.gloo`); defaults are
/// Gloo's (facebookincubator/gloo@cc44198) and Linux's TCP.
struct GlooSpec {
  uint64_t max_segment_bytes = 1u << 20;  ///< allreduce.h kMaxSegmentSize
  std::string tcp_variant = "cubic";      ///< Linux's default congestion control
  uint64_t min_rto_ps = 200'000'000'000ULL;  ///< Linux TCP_RTO_MIN = HZ/5 = 200 ms
  uint32_t mss_bytes = 1448;              ///< 1500 B MTU - IPv4 20 - TCP 20 - timestamps 12
  uint32_t rcvbuf_bytes = 6u << 20;       ///< Linux tcp_rmem[2] (autotuning's ceiling)
  uint32_t initial_cwnd_segments = 10;    ///< Linux's initial window (RFC 6928)
  uint16_t port = 5200;                   ///< the ranks' listening port
};

}  // namespace inasim
