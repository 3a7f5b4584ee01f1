// The Linux-like TCP the host baselines run on (Gloo's ring, NCCL over
// TCP): the scenario keys their sections share and the TcpConfig they make.
// A spec using these has the members tcp_variant, min_rto_ps, mss_bytes and
// initial_cwnd_segments (docs/research/baselines.md §7a).
#pragma once

#include "common/spec_fields.h"
#include "congestion/tcp_config.h"

#include <cstdint>
#include <string>

namespace inasim::congestion {

/// tcp_variant, min_rto_us, mss_bytes and initial_cwnd_segments of section `s`.
template <class Section>
Section& LinuxTcpKeys(Section& s) {
  using Spec = typename Section::Struct;
  return s
      .template EnumOf<std::string>("tcp_variant", &Spec::tcp_variant, "cubic", {"cubic", "newreno", "dctcp"},
                                    {"cubic", "newreno", "dctcp"}, "TCP congestion control (Linux's default: CUBIC).")
      .TimePs("min_rto_us", &Spec::min_rto_ps, 200000, 1, 1e9, spec::TimeUnit::kUs,
              "Minimum retransmission timeout (Linux `TCP_RTO_MIN` = HZ/5 = 200 ms).")
      .U32("mss_bytes", &Spec::mss_bytes, 1448, 100, 9000, "bytes",
           "TCP segment payload (1500 B MTU - 20 IPv4 - 20 TCP - 12 timestamps).")
      .U32("initial_cwnd_segments", &Spec::initial_cwnd_segments, 10, 1, 1000, "segments",
           "Initial congestion window (Linux, RFC 6928).");
}

/// The TcpConfig of a host with `spec`'s TCP: no ECN, no TCP small queues (a
/// Linux host's defaults for these flows), `buffer_bytes` socket buffers.
template <class Spec>
TcpConfig LinuxTcpOf(const Spec& spec, uint32_t buffer_bytes) {
  TcpConfig c;
  c.variant = spec.tcp_variant;
  c.ecn = false;
  c.initial_cwnd_segments = spec.initial_cwnd_segments;
  c.segment_bytes = spec.mss_bytes;
  c.min_rto_ps = spec.min_rto_ps;
  c.buffer_bytes = buffer_bytes;
  c.small_queue_bytes = 0;
  return c;
}

}  // namespace inasim::congestion
