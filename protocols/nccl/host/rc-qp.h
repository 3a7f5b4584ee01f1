// A RoCE v2 reliable-connection queue pair as a NIC runs it on a lossless
// (PFC) fabric, for NCCL's IB transport (docs/research/baselines.md §5):
//
//   - a message is cut into packets of at most the path MTU, each with the
//     next PSN; the first carries the RETH (the message's length);
//   - the responder takes only the expected PSN: in order, it appends and
//     ACKs every `ack_every` packets and a message's last; out of order, it
//     drops the packet and sends one NAK (sequence error) per gap; a
//     duplicate is re-ACKed;
//   - the requester goes back to the NAK's PSN (go-back-N), and to its oldest
//     unacknowledged PSN when the local ACK timer (4.096 us x 2^ib_timeout)
//     expires without progress; after `retry_count` expiries in a row the QP
//     fails (NCCL then fails the collective);
//   - the NIC sends at line rate: the QP keeps `nic_queue_bytes` of its
//     frames queued at the host NIC and hands it more as they leave.
// Frames are Ethernet/IPv4/UDP (port 4791) with the BTH's 12 bytes, the
// RETH's 16 on a first packet, the AETH's 4 on an ACK and the 4-byte ICRC,
// sent and received through kernel-bypass endpoints (ina/host-endpoint.h).
#pragma once

#include "ina/host-endpoint.h"

#include "ns3/event-id.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

namespace inasim {

class InaNetDevice;

struct RcConfig {
  uint32_t mtu_payload = 1024;
  uint32_t ack_every = 16;
  uint64_t timeout_ps = 67'108'864'000;  ///< 4.096 us x 2^14
  uint32_t retry_count = 7;
  uint32_t nic_queue_bytes = 16384;
  uint16_t port = 4791;
};

struct RcCounters {
  uint64_t packets_sent = 0, retransmitted = 0, naks_sent = 0, go_backs = 0, timeouts = 0, dropped_out_of_order = 0;
  RcCounters& operator+=(const RcCounters& x) {
    packets_sent += x.packets_sent;
    retransmitted += x.retransmitted;
    naks_sent += x.naks_sent;
    go_backs += x.go_backs;
    timeouts += x.timeouts;
    dropped_out_of_order += x.dropped_out_of_order;
    return *this;
  }
};

class RcQp {
 public:
  using OnMessage = std::function<void(std::vector<uint8_t>&& message)>;
  /// Messages the peer acknowledged whole, in posting order (the work
  /// completions a requester polls): how many, since the last call.
  using OnAcknowledged = std::function<void(uint32_t messages)>;

  /// `source_port`: this QP's UDP source port (its own, so the NIC can hold
  /// its frames apart). Messages from the peer come through Deliver().
  void Setup(const RcConfig& config, InaNetDevice& nic, uint16_t source_port, uint32_t qpn, uint32_t peer_ip,
             uint32_t peer_qpn, OnMessage on_message, std::function<void()> on_fail,
             OnAcknowledged on_acknowledged = nullptr);
  /// Queues a message: delivered to the peer once, whole and in order.
  void Post(std::vector<uint8_t> message);
  /// A packet for this QP (BTH onwards).
  void Deliver(const uint8_t* p, uint32_t len);
  const RcCounters& counters() const { return counters_; }
  void Cancel() { timer_.Cancel(); }

  static constexpr uint32_t kBth = 12, kReth = 16, kAeth = 4, kIcrc = 4;
  /// The destination QPN of a packet (BTH bytes 5..7).
  static uint32_t DestQpn(const uint8_t* p) { return uint32_t{p[5]} << 16 | uint32_t{p[6]} << 8 | p[7]; }

 private:
  struct Outgoing {
    uint32_t first_psn = 0, packets = 0;
    std::vector<uint8_t> bytes;
  };
  void Pump();
  void SendPacket(uint32_t psn);
  void SendAck(uint8_t syndrome, uint32_t psn);
  void OnAck(uint32_t psn);
  uint32_t Acknowledge(uint32_t psn);
  void Completed(uint32_t messages);
  void OnNak(uint32_t epsn);
  void OnData(const uint8_t* p, uint32_t len, uint8_t opcode, uint32_t psn);
  void ArmTimer();
  void OnTimeout();
  void WriteBth(uint8_t* b, uint8_t opcode, uint32_t psn) const;

  RcConfig config_;
  HostEndpoint endpoint_;
  uint32_t qpn_ = 0, peer_ip_ = 0, peer_qpn_ = 0;
  const uint32_t* nic_queued_ = nullptr;
  OnMessage on_message_;
  std::function<void()> on_fail_;
  OnAcknowledged on_acknowledged_;
  // Requester.
  std::deque<Outgoing> out_;
  uint32_t end_psn_ = 0, next_psn_ = 0, una_ = 0;
  uint32_t retries_ = 0;
  ns3::EventId timer_;
  bool failed_ = false;
  // Responder.
  uint32_t epsn_ = 0;
  bool nak_sent_ = false;
  uint32_t since_ack_ = 0;
  std::vector<uint8_t> assembling_;
  uint32_t expected_length_ = 0;
  std::vector<uint8_t> tx_;
  RcCounters counters_;
};

}  // namespace inasim
