// TcpTrace: the congestion state of chosen TCP senders over time, as
// tcp_trace.csv (outputs.tcp_trace). One row per change of the congestion
// window, slow-start threshold, congestion-avoidance state or DCTCP estimate,
// and per RTT sample, each carrying the sender's whole current state, so a
// row alone answers "what was this flow's window, RTT and alpha then".
// It reads ns-3's own trace sources (TcpSocketBase: CongestionWindow,
// SlowStartThreshold, BytesInFlight, RTT, CongState; TcpDctcp:
// CongestionEstimate), the same ones ns-3's examples plot.
#pragma once

#include "congestion/tcp_config.h"

#include "ns3/ptr.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-socket-base.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace inasim::congestion {

class TcpTrace {
 public:
  explicit TcpTrace(const TcpTraceSpec& spec);

  /// Whether flow `flow`'s sender is traced.
  bool Wants(uint64_t flow) const;
  /// Connects to the sender of flow `flow` (its congestion control `cc`, for
  /// DCTCP's estimate; another variant has none).
  void Attach(uint64_t flow, ns3::Ptr<ns3::TcpSocketBase> socket, ns3::Ptr<ns3::TcpCongestionOps> cc);

  std::string Csv() const { return kHeader + rows_; }
  nlohmann::json Report() const;

 private:
  enum Event : uint8_t { kCwnd, kSsthresh, kRtt, kState, kAlpha, kNumEvents };
  /// A sender's current state, updated by every trace source.
  struct Sender {
    TcpTrace* trace = nullptr;
    uint64_t flow = 0;
    uint32_t cwnd = 0, ssthresh = 0, in_flight = 0;
    uint64_t rtt_ps = 0;
    uint8_t state = 0;
    double alpha = -1;  ///< -1 until DCTCP's first estimate (or never, for another variant)
    uint32_t acked = 0, marked = 0;
  };
  static constexpr const char* kHeader =
      "time_ps,flow,event,cwnd_bytes,ssthresh_bytes,in_flight_bytes,rtt_ps,state,alpha,window_acked_bytes,"
      "window_marked_bytes\n";

  static void OnCwnd(Sender* s, uint32_t, uint32_t v);
  static void OnSsthresh(Sender* s, uint32_t, uint32_t v);
  static void OnInFlight(Sender* s, uint32_t, uint32_t v) { s->in_flight = v; }
  static void OnRtt(Sender* s, ns3::Time, ns3::Time v);
  static void OnState(Sender* s, ns3::TcpSocketState::TcpCongState_t, ns3::TcpSocketState::TcpCongState_t v);
  static void OnEstimate(Sender* s, uint32_t marked, uint32_t acked, double alpha);
  void Row(const Sender& s, Event e);

  TcpTraceSpec spec_;
  bool keep_[kNumEvents];
  std::vector<std::unique_ptr<Sender>> senders_;  // stable addresses: the callbacks hold them
  std::string rows_;
  uint64_t kept_ = 0, left_out_ = 0;
};

}  // namespace inasim::congestion
