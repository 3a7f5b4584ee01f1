// TsqTcpSocket: ns-3's TcpSocketBase with the two Linux sender rules that keep
// a bulk flow's backlog in its socket instead of in its host's NIC queue.
//
// 1. TCP Small Queues (Linux tcp_output.c, tcp_small_queue_check(); knob
//    net.ipv4.tcp_limit_output_bytes): a socket stops handing segments to the
//    NIC while `limit` bytes of its own are still queued there, and resumes
//    when they drain. ns-3 has no such rule, so a flow's window grows into the
//    NIC queue: a lone 10 Gb/s flow's megabytes sit there unmarked, its RTT
//    reaches milliseconds, and it ignores the switches' ECN marks for as long
//    (scenarios/panama/README.md, Fig. 10).
// 2. Congestion window validation (Linux tcp_is_cwnd_limited(), RFC 7661): the
//    window only grows on ACKs while the window, not TSQ, was what stopped the
//    sender. Without it a TSQ-throttled flow's cwnd grows without bound.
//
// The NIC side is HostTxBacklog (host_tx_backlog.h): it
// counts a port's bytes in the transmit queue and schedules Wake() when they
// fall below the limit. Only senders need this; the receiving side's sockets
// (forked from a listener) send ACKs only and stay plain TcpSocketBase.
#pragma once

#include "congestion/host_tx_backlog.h"

#include "ns3/tcp-socket-base.h"

#include <cstdint>

namespace inasim::congestion {

class TsqTcpSocket : public ns3::TcpSocketBase {
 public:
  static ns3::TypeId GetTypeId();
  TsqTcpSocket() = default;
  TsqTcpSocket(const TsqTcpSocket&) = default;

  /// Turns the two rules on for this (bound) socket on NIC `nic`.
  void SetSmallQueue(HostTxBacklog* nic, uint16_t local_port, uint32_t limit_bytes);

  /// Times the sender stopped because of TSQ (with window left).
  uint64_t tsq_throttles() const { return tsq_throttles_; }
  /// ACKs whose window increase was withheld (the flow was not cwnd-limited).
  uint64_t cwnd_growth_withheld() const { return growth_withheld_; }
  /// Counts each retransmission timeout that sends data again into *counter
  /// (shared by a set of sockets; it must outlive them).
  void CountTimeoutsInto(uint64_t* counter) { timeouts_ = counter; }

 protected:
  uint32_t AvailableWindow() const override;
  void ReceivedAck(ns3::Ptr<ns3::Packet> packet, const ns3::TcpHeader& header) override;
  ns3::Ptr<ns3::TcpSocketBase> Fork() override;
  void EstimateRtt(const ns3::TcpHeader& header) override;
  void ReTxTimeout() override;

 private:
  void Wake();

  const uint32_t* nic_queued_ = nullptr;  ///< this socket's frame bytes in the NIC queue (null: off)
  uint32_t limit_ = 0;
  // What stopped the last send attempt since the last ACK (AvailableWindow is
  // const in ns-3; these are observations, not state of the connection).
  mutable bool stopped_by_tsq_ = false;
  mutable bool stopped_by_cwnd_ = false;
  mutable uint64_t tsq_throttles_ = 0;
  uint64_t growth_withheld_ = 0;
  uint64_t* timeouts_ = nullptr;
};

}  // namespace inasim::congestion
