// TCP settings of background flows, kept free of ns-3 so the scenario parser
// and its tests can use them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace inasim::congestion {

/// TCP settings of every background socket (scenario `background.flows.tcp`).
struct TcpConfig {
  std::string variant = "dctcp";       ///< "dctcp", "cubic" or "newreno"
  bool ecn = true;                     ///< ECN for cubic/newreno (DCTCP always uses it)
  uint32_t initial_cwnd_segments = 10;
  uint32_t segment_bytes = 1448;       ///< MSS: 1500 - IP 20 - TCP 20 - timestamps 12
  uint64_t min_rto_ps = 1'000'000'000;       ///< 1 ms
  uint32_t buffer_bytes = 4u << 20;    ///< socket send and receive buffers
  uint32_t del_ack_count = 2;          ///< ACK every this many segments
  uint64_t del_ack_timeout_ps = 10'000'000;  ///< 10 us
  /// MSL: a closed connection's endpoint stays 2 MSL in TIME_WAIT (see the key's help).
  uint64_t max_segment_lifetime_ps = 500'000'000;  ///< 500 us
  uint16_t port = 5001;
  /// TCP Small Queues (Linux net.ipv4.tcp_limit_output_bytes, 1 MiB since
  /// Linux 5.3): a sender keeps at most about this many bytes waiting in its
  /// host's NIC queue, the rest in its socket, and its window grows only while
  /// the window is what limits it. 0: off (ns-3's own TCP: the whole window
  /// may wait in the NIC queue, unmarked, and inflate the RTT).
  uint32_t small_queue_bytes = 1u << 20;
};

/// Per-segment bytes on the wire beyond the payload: IPv4 20, TCP 20 + 12 of
/// timestamp option, Ethernet 14 (the wire overhead is added by the caller).
inline constexpr uint32_t kTcpSegmentHeaderBytes = 20 + 20 + 12 + 14;

/// What outputs.tcp_trace asks for.
struct TcpTraceSpec {
  bool enabled = false;
  std::vector<uint64_t> flows;      ///< flows.csv's `flow` numbers; empty: every flow
  std::vector<std::string> events;  ///< TcpTraceEventNames(); empty: all
  uint64_t from_ps = 0;             ///< rows in [from, until)
  uint64_t until_ps = UINT64_MAX;
  uint64_t max_rows = 1'000'000;    ///< rows kept; the rest counted
};

/// tcp_trace.csv's `event` values, in TcpTrace::Event order.
inline const std::vector<std::string>& TcpTraceEventNames() {
  static const std::vector<std::string> names{"cwnd", "ssthresh", "rtt", "state", "alpha"};
  return names;
}

}  // namespace inasim::congestion
