#include "congestion/tsq-tcp-socket.h"

#include "ns3/rtt-estimator.h"
#include "ns3/simulator.h"
#include "ns3/tcp-tx-buffer.h"

namespace inasim::congestion {

using namespace ns3;

namespace {
constexpr uint8_t kTcp = 6;
}  // namespace

// Registered at load time, so `inasim trace-sources` lists it before any run.
NS_OBJECT_ENSURE_REGISTERED(TsqTcpSocket);

TypeId TsqTcpSocket::GetTypeId() {
  static TypeId tid = TypeId("inasim::TsqTcpSocket")
                          .SetParent<TcpSocketBase>()
                          .SetGroupName("Ina")
                          .AddConstructor<TsqTcpSocket>();
  return tid;
}

void TsqTcpSocket::SetSmallQueue(HostTxBacklog* nic, uint16_t local_port, uint32_t limit_bytes) {
  limit_ = limit_bytes;
  Ptr<TsqTcpSocket> self(this);
  nic_queued_ = nic->TrackSourcePort(kTcp, local_port, limit_, limit_, [self]() { self->Wake(); });
}

uint32_t TsqTcpSocket::AvailableWindow() const {
  const uint32_t window = TcpSocketBase::AvailableWindow();
  if (!nic_queued_) return window;
  if (window < m_tcb->m_segmentSize) {
    // SendPendingData stops here unless what is left fits: the window binds.
    if (m_txBuffer->SizeFromSequence(m_tcb->m_nextTxSequence) > window) stopped_by_cwnd_ = true;
    return window;
  }
  // Linux tcp_small_queue_check(): throttled once the limit is reached (the
  // segment that crosses it still goes, as in Linux).
  if (*nic_queued_ >= limit_) {
    stopped_by_tsq_ = true;
    ++tsq_throttles_;
    return 0;
  }
  return window;
}

void TsqTcpSocket::ReceivedAck(Ptr<Packet> packet, const TcpHeader& header) {
  if (!nic_queued_) {
    TcpSocketBase::ReceivedAck(packet, header);
    return;
  }
  // Linux tcp_is_cwnd_limited(): no growth on this ACK if, since the last one,
  // TSQ (and never the window) held the sender back.
  const bool tsq_limited = stopped_by_tsq_ && !stopped_by_cwnd_;
  stopped_by_tsq_ = stopped_by_cwnd_ = false;
  const uint32_t before = m_tcb->m_cWnd;
  const bool open_before = m_tcb->m_congState == TcpSocketState::CA_OPEN;
  TcpSocketBase::ReceivedAck(packet, header);
  if (tsq_limited && open_before && m_tcb->m_congState == TcpSocketState::CA_OPEN && m_tcb->m_cWnd > before) {
    m_tcb->m_cWnd = before;
    m_tcb->m_cWndInfl = before;
    ++growth_withheld_;
  }
}

// ns-3.37's TcpSocketBase::EstimateRtt takes the sample from the echoed
// timestamp when the option is on, and its timestamps count milliseconds
// (TcpOptionTS::NowToTsValue): every microsecond RTT comes out 0 and is
// taken as 1 us, so the RTO is the minimum RTO whatever the queues hold.
// Linux measures the RTT from the segment's send time in microseconds
// (tcp_ack_update_rtt's seq_rtt_us, net/ipv4/tcp_input.c) and keeps the
// timestamp for segments sent again. Here: the send time of the oldest
// segment this ACK covers, skipped if it was sent again (Karn), as
// TcpSocketBase does with timestamps off; the timestamps stay on the wire.
void TsqTcpSocket::EstimateRtt(const TcpHeader& header) {
  const SequenceNumber32 ack = header.GetAckNumber();
  Time sample;
  if (!m_history.empty()) {
    const RttHistory& h = m_history.front();
    if (!h.retx && ack >= h.seq + SequenceNumber32(h.count)) sample = Simulator::Now() - h.time;
  }
  while (!m_history.empty() && m_history.front().seq + SequenceNumber32(m_history.front().count) <= ack)
    m_history.pop_front();
  if (sample.IsZero()) return;
  m_rtt->Measurement(sample);
  // RFC 6298 (2.4), as TcpSocketBase::EstimateRtt.
  m_rto = Max(m_rtt->GetEstimate() + Max(m_clockGranularity, m_rtt->GetVariation() * 4), m_minRto);
  m_tcb->m_lastRtt = m_rtt->GetEstimate();
  m_tcb->m_minRtt = std::min(m_tcb->m_lastRtt.Get(), m_tcb->m_minRtt);
}

// TcpSocketBase::ReTxTimeout spends one of m_dataRetrCount exactly when it
// sends data again (it returns early when nothing is outstanding).
void TsqTcpSocket::ReTxTimeout() {
  const uint32_t left = m_dataRetrCount;
  TcpSocketBase::ReTxTimeout();
  if (timeouts_ && m_dataRetrCount < left) ++*timeouts_;
}

Ptr<TcpSocketBase> TsqTcpSocket::Fork() { return CopyObject<TsqTcpSocket>(this); }

void TsqTcpSocket::Wake() {
  // Linux's TSQ tasklet: resume sending once our bytes have left the NIC.
  if (m_state == TcpSocket::ESTABLISHED || m_state == TcpSocket::CLOSE_WAIT) SendPendingData(m_connected);
}

}  // namespace inasim::congestion
