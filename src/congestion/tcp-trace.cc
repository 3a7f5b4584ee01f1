#include "congestion/tcp-trace.h"

#include "ns3/callback.h"
#include "ns3/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace inasim::congestion {

using namespace ns3;

TcpTrace::TcpTrace(const TcpTraceSpec& spec) : spec_(spec) {
  const auto& names = TcpTraceEventNames();
  for (size_t e = 0; e < kNumEvents; ++e)
    keep_[e] = spec_.events.empty() || std::find(spec_.events.begin(), spec_.events.end(), names[e]) != spec_.events.end();
}

bool TcpTrace::Wants(uint64_t flow) const {
  return spec_.flows.empty() || std::find(spec_.flows.begin(), spec_.flows.end(), flow) != spec_.flows.end();
}

void TcpTrace::Attach(uint64_t flow, Ptr<TcpSocketBase> socket, Ptr<TcpCongestionOps> cc) {
  senders_.push_back(std::make_unique<Sender>());
  Sender* s = senders_.back().get();
  s->trace = this;
  s->flow = flow;
  socket->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&TcpTrace::OnCwnd, s));
  socket->TraceConnectWithoutContext("SlowStartThreshold", MakeBoundCallback(&TcpTrace::OnSsthresh, s));
  socket->TraceConnectWithoutContext("BytesInFlight", MakeBoundCallback(&TcpTrace::OnInFlight, s));
  socket->TraceConnectWithoutContext("RTT", MakeBoundCallback(&TcpTrace::OnRtt, s));
  socket->TraceConnectWithoutContext("CongState", MakeBoundCallback(&TcpTrace::OnState, s));
  // Only DCTCP has an estimate; TraceConnect is false for a variant without it.
  if (cc) cc->TraceConnectWithoutContext("CongestionEstimate", MakeBoundCallback(&TcpTrace::OnEstimate, s));
}

void TcpTrace::OnCwnd(Sender* s, uint32_t, uint32_t v) {
  s->cwnd = v;
  s->trace->Row(*s, kCwnd);
}

void TcpTrace::OnSsthresh(Sender* s, uint32_t, uint32_t v) {
  s->ssthresh = v;
  s->trace->Row(*s, kSsthresh);
}

void TcpTrace::OnRtt(Sender* s, Time, Time v) {
  s->rtt_ps = static_cast<uint64_t>(v.GetPicoSeconds());
  s->trace->Row(*s, kRtt);
}

void TcpTrace::OnState(Sender* s, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t v) {
  s->state = static_cast<uint8_t>(v);
  s->trace->Row(*s, kState);
}

// ns-3.37 TcpDctcp::PktsAcked fires CongestionEstimate(m_ackedBytesEcn,
// m_ackedBytesTotal, m_alpha): marked bytes first, whatever the typedef's
// parameter names say (the rows' marked <= acked and alpha's recursion, checked
// by tests/python/test_tcp_trace.py, confirm the order).
void TcpTrace::OnEstimate(Sender* s, uint32_t marked, uint32_t acked, double alpha) {
  s->acked = acked;
  s->marked = marked;
  s->alpha = alpha;
  s->trace->Row(*s, kAlpha);
}

void TcpTrace::Row(const Sender& s, Event e) {
  if (!keep_[e]) return;
  const auto now = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
  if (now < spec_.from_ps || now >= spec_.until_ps) return;
  if (kept_ >= spec_.max_rows) {
    ++left_out_;
    return;
  }
  ++kept_;
  auto out = std::back_inserter(rows_);
  fmt::format_to(out, "{},{},{},{},{},{},{},{},", now, s.flow, TcpTraceEventNames()[e], s.cwnd, s.ssthresh,
                 s.in_flight, s.rtt_ps, TcpSocketState::TcpCongStateName[s.state]);
  if (s.alpha >= 0)
    fmt::format_to(out, "{:.6g},{},{}\n", s.alpha, s.acked, s.marked);
  else
    rows_ += ",,\n";
}

nlohmann::json TcpTrace::Report() const {
  return {{"senders", senders_.size()}, {"rows", kept_}, {"left_out_max_rows", left_out_}};
}

}  // namespace inasim::congestion
