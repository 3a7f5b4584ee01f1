#include "protocols/nccl/host/rc-qp.h"

#include "ina/ina-net-device.h"
#include "p4model/common/frame.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace inasim {

NS_LOG_COMPONENT_DEFINE("NcclRcQp");

namespace {
// IBTA opcodes of an RC RDMA WRITE (first, middle, last, only) and its ACK.
constexpr uint8_t kFirst = 0x06, kMiddle = 0x07, kLast = 0x08, kOnly = 0x0a, kAck = 0x11;
constexpr uint8_t kAckSyndrome = 0x00, kNakSequence = 0x60;
}  // namespace

void RcQp::Setup(const RcConfig& config, InaNetDevice& nic, uint16_t source_port, uint32_t qpn, uint32_t peer_ip,
                 uint32_t peer_qpn, OnMessage on_message, std::function<void()> on_fail,
                 OnAcknowledged on_acknowledged) {
  config_ = config;
  qpn_ = qpn;
  peer_ip_ = peer_ip;
  peer_qpn_ = peer_qpn;
  on_message_ = std::move(on_message);
  on_fail_ = std::move(on_fail);
  on_acknowledged_ = std::move(on_acknowledged);
  // Sends only: the responder side's packets come to port 4791 (Deliver).
  endpoint_.Open(nic, source_port, [](const uint8_t*, uint32_t, const DatagramInfo&) {});
  nic_queued_ = nic.TrackSourcePort(p4::kIpProtoUdp, source_port, config_.nic_queue_bytes, config_.nic_queue_bytes / 2,
                                    [this] { Pump(); });
  tx_.resize(kBth + kReth + config_.mtu_payload + kIcrc);
}

void RcQp::WriteBth(uint8_t* b, uint8_t opcode, uint32_t psn) const {
  std::fill(b, b + kBth, 0);
  b[0] = opcode;
  b[1] = 0x40;  // migration state, pad 0, version 0
  p4::StoreBe16(b + 2, 0xffff);  // default P_Key
  b[5] = static_cast<uint8_t>(peer_qpn_ >> 16);
  b[6] = static_cast<uint8_t>(peer_qpn_ >> 8);
  b[7] = static_cast<uint8_t>(peer_qpn_);
  p4::StoreBe32(b + 8, psn & 0xffffff);
}

void RcQp::Post(std::vector<uint8_t> message) {
  Outgoing m;
  m.first_psn = end_psn_;
  m.packets = std::max<uint32_t>(1, static_cast<uint32_t>((message.size() + config_.mtu_payload - 1) / config_.mtu_payload));
  m.bytes = std::move(message);
  end_psn_ += m.packets;
  out_.push_back(std::move(m));
  Pump();
}

void RcQp::Pump() {
  if (failed_) return;
  while (next_psn_ < end_psn_ && *nic_queued_ < config_.nic_queue_bytes) SendPacket(next_psn_++);
  ArmTimer();
}

void RcQp::SendPacket(uint32_t psn) {
  // The message holding psn (out_ holds the unacknowledged ones, in order).
  auto it = std::upper_bound(out_.begin(), out_.end(), psn,
                             [](uint32_t v, const Outgoing& m) { return v < m.first_psn; });
  const Outgoing& m = *(it - 1);
  const uint32_t k = psn - m.first_psn;
  const uint32_t off = k * config_.mtu_payload;
  const auto n = static_cast<uint32_t>(std::min<size_t>(config_.mtu_payload, m.bytes.size() - std::min<size_t>(off, m.bytes.size())));
  const uint8_t op = m.packets == 1 ? kOnly : k == 0 ? kFirst : k + 1 == m.packets ? kLast : kMiddle;
  uint8_t* b = tx_.data();
  WriteBth(b, op, psn);
  uint32_t len = kBth;
  if (k == 0) {  // RETH: virtual address, rkey, DMA length
    std::fill(b + len, b + len + kReth, 0);
    p4::StoreBe32(b + len + 12, static_cast<uint32_t>(m.bytes.size()));
    len += kReth;
  }
  std::copy(m.bytes.begin() + off, m.bytes.begin() + off + n, b + len);
  len += n;
  std::fill(b + len, b + len + kIcrc, 0);
  len += kIcrc;
  ++counters_.packets_sent;
  endpoint_.SendTo(peer_ip_, config_.port, b, len);
}

void RcQp::SendAck(uint8_t syndrome, uint32_t psn) {
  uint8_t b[kBth + kAeth + kIcrc] = {};
  WriteBth(b, kAck, psn);
  b[kBth] = syndrome;
  endpoint_.SendTo(peer_ip_, config_.port, b, sizeof b);
}

void RcQp::Deliver(const uint8_t* p, uint32_t len) {
  if (failed_ || len < kBth + kIcrc) return;
  const uint8_t op = p[0];
  const uint32_t psn = p4::LoadBe32(p + 8) & 0xffffff;
  if (op == kAck) {
    if (len < kBth + kAeth) return;
    if (p[kBth] == kNakSequence) OnNak(psn);
    else OnAck(psn);
    return;
  }
  OnData(p, len, op, psn);
}

// Cumulative: every PSN up to `psn` arrived.
void RcQp::OnAck(uint32_t psn) { Completed(Acknowledge(psn)); }

// Returns how many messages this ACK completed.
uint32_t RcQp::Acknowledge(uint32_t psn) {
  if (psn + 1 <= una_) return 0;
  una_ = std::min(psn + 1, end_psn_);
  retries_ = 0;
  uint32_t whole = 0;
  for (; !out_.empty() && out_.front().first_psn + out_.front().packets <= una_; ++whole) out_.pop_front();
  timer_.Cancel();
  ArmTimer();
  return whole;
}

// Told last, once this QP's state is settled: the owner may post more.
void RcQp::Completed(uint32_t messages) {
  if (messages > 0 && on_acknowledged_) on_acknowledged_(messages);
}

// Sequence error: the responder expects `epsn` (and has everything before it).
void RcQp::OnNak(uint32_t epsn) {
  const uint32_t whole = epsn > 0 ? Acknowledge(epsn - 1) : 0;
  if (epsn >= una_ && epsn < end_psn_) {
    ++counters_.go_backs;
    counters_.retransmitted += next_psn_ > epsn ? next_psn_ - epsn : 0;
    next_psn_ = epsn;
    Pump();
  }
  Completed(whole);
}

void RcQp::ArmTimer() {
  if (failed_ || una_ >= next_psn_ || timer_.IsRunning()) return;
  timer_ = ns3::Simulator::Schedule(ns3::PicoSeconds(config_.timeout_ps), &RcQp::OnTimeout, this);
}

void RcQp::OnTimeout() {
  if (una_ >= next_psn_) return;
  ++counters_.timeouts;
  if (++retries_ > config_.retry_count) {
    failed_ = true;  // IBV_WC_RETRY_EXC_ERR: NCCL aborts the collective
    if (on_fail_) on_fail_();
    return;
  }
  counters_.retransmitted += next_psn_ - una_;
  NS_LOG_LOGIC("QP " << qpn_ << ": timeout, PSNs " << una_ << ".." << next_psn_ - 1 << " sent again (go-back-N)");
  next_psn_ = una_;
  Pump();
}

void RcQp::OnData(const uint8_t* p, uint32_t len, uint8_t op, uint32_t psn) {
  if (psn != epsn_) {
    if (psn > epsn_) {
      ++counters_.dropped_out_of_order;
      if (!nak_sent_) {  // one NAK per gap
        nak_sent_ = true;
        ++counters_.naks_sent;
        SendAck(kNakSequence, epsn_);
      }
    } else if (epsn_ > 0) {
      SendAck(kAckSyndrome, epsn_ - 1);  // a duplicate: the requester missed an ACK
    }
    return;
  }
  uint32_t off = kBth;
  if (op == kFirst || op == kOnly) {
    if (len < kBth + kReth + kIcrc) return;
    expected_length_ = p4::LoadBe32(p + kBth + 12);
    assembling_.clear();
    assembling_.reserve(expected_length_);
    off += kReth;
  }
  assembling_.insert(assembling_.end(), p + off, p + len - kIcrc);
  ++epsn_;
  nak_sent_ = false;
  const bool last = op == kLast || op == kOnly;
  if (last || ++since_ack_ >= config_.ack_every) {
    since_ack_ = 0;
    SendAck(kAckSyndrome, psn);
  }
  if (last) {
    assembling_.resize(expected_length_);
    on_message_(std::move(assembling_));
    assembling_ = {};
  }
}

}  // namespace inasim
