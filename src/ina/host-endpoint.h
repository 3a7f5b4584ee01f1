// A kernel-bypass UDP endpoint on a host NIC: what SwitchML's DPDK worker,
// an RDMA NIC or P4SGD's and PANAMA's FPGAs do. The agent hands it a payload;
// it writes the Ethernet, IPv4 and UDP headers itself and queues the frame on
// the host's InaNetDevice; frames for its port come straight back from the
// device, with no ns-3 IPv4/UDP on the way (that stack stays for TCP).
//
// The headers are the ones the host's ns-3 stack wrote before (issue 28: the
// wire stays byte-identical): IPv4 without options, identification counted
// per (source, destination, protocol) as Ipv4L3Protocol does
// (ns-3.37 ipv4-l3-protocol.h:469, m_identification), no DF (UDP sockets do
// not discover the path MTU), TTL 64 unless set, no IPv4 or UDP checksum
// (ns-3 computes them only with ChecksumEnabled, which INA-Sim never sets).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ns3/packet.h"

namespace ns3 {
class Node;
}

namespace inasim {

class InaNetDevice;

/// The host's one InaNetDevice (fabric.cc gives every host exactly one).
InaNetDevice& HostNic(ns3::Node& host);

/// What a received datagram's headers said, besides its payload.
struct DatagramInfo {
  uint32_t src_ip = 0;
  uint32_t dst_ip = 0;
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  uint8_t tos = 0;  ///< the IPv4 TOS byte, ECN bits included
};

class HostEndpoint {
 public:
  using Handler = std::function<void(const uint8_t* payload, uint32_t len, const DatagramInfo& info)>;

  HostEndpoint() = default;
  HostEndpoint(const HostEndpoint&) = delete;
  HostEndpoint& operator=(const HostEndpoint&) = delete;
  ~HostEndpoint() { Close(); }

  /// Binds UDP `port` on the host NIC `nic`; throws std::runtime_error if an
  /// endpoint there holds it already.
  void Open(InaNetDevice& nic, uint16_t port, Handler handler);
  /// Unbinds: frames for the port go to the host's ns-3 stack again.
  void Close();
  bool is_open() const { return nic_ != nullptr; }

  /// TTL of the datagrams it sends (ns-3's socket attribute IpTtl; default 64).
  void set_ttl(uint8_t ttl) { ttl_ = ttl; }
  /// Sends `payload[0..len)` to dst_ip:dst_port. Returns false if the NIC
  /// dropped the frame (its buffer full or its link down). A datagram to the
  /// host's own address is delivered locally (loopback), without the NIC.
  bool SendTo(uint32_t dst_ip, uint16_t dst_port, const uint8_t* payload, uint32_t len, uint8_t tos = 0);

  /// The device's side: a frame for this endpoint's port arrived (`frame`:
  /// the whole frame, headers parsed by the device).
  void Deliver(const uint8_t* frame, uint32_t frame_bytes) const;

 private:
  static ns3::Ptr<ns3::Packet> MakeFrame(const uint8_t* frame, uint32_t bytes);

  InaNetDevice* nic_ = nullptr;
  uint16_t port_ = 0;
  uint16_t tx_queue_ = 0;  ///< its transmit queue on the NIC (InaNetDevice::OpenTxQueue)
  uint8_t ttl_ = 64;
  Handler handler_;
  std::vector<uint8_t> tx_;  ///< the frame being built, reused
};

}  // namespace inasim
