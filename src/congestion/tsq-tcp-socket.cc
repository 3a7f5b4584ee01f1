#include "congestion/tsq-tcp-socket.h"

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

Ptr<TcpSocketBase> TsqTcpSocket::Fork() { return CopyObject<TsqTcpSocket>(this); }

void TsqTcpSocket::Wake() {
  // Linux's TSQ tasklet: resume sending once our bytes have left the NIC.
  if (m_state == TcpSocket::ESTABLISHED || m_state == TcpSocket::CLOSE_WAIT) SendPendingData(m_connected);
}

}  // namespace inasim::congestion
