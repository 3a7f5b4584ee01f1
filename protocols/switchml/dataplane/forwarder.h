// The SwitchML program's regular-traffic path: ARPandICMPResponder
// (p4lang/p4app-switchML@b5c74a04:dev_root/p4/arp_icmp_responder.p4) then
// Forwarder (dev_root/p4/forwarder.p4), as Ingress.apply runs them for every
// packet that is not a SwitchML pass (switchml.p4:184-190), with the entries
// the controller installs (dev_root/controller/arp_icmp_responder.py:54-134,
// forwarder.py:54-98, switchml.py:311-337). Used with config `forwarding`
// "l2"; "routed" hands such frames to the simulator's own table instead.
#pragma once

#include "protocols/switchml/dataplane/types.h"

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace inasim::p4::switchml {

/// The regular-traffic headers the parser extracts (parsers.p4:90-129), as
/// offsets into the frame; a header whose bytes are missing is a parser error.
struct RegularHeaders {
  bool truncated = false;
  bool arp_ipv4 = false;  ///< parse_arp_ipv4 (hw_type 1, proto_type IPv4)
  bool ipv4 = false;
  bool icmp = false;      ///< parse_icmp (IHL 5, no fragment, protocol 1)
  uint16_t arp_opcode = 0;
  uint32_t arp_dst_proto_addr = 0;
  uint8_t icmp_msg_type = 0;
  uint32_t ipv4_dst_addr = 0;
};
RegularHeaders ParseRegular(const uint8_t* b, size_t len);

/// What ingress tells the traffic manager for a regular frame: a unicast
/// port, a flood group with the ingress port excluded, or both (send_back
/// then a forward miss).
struct L2Decision {
  bool unicast = false;
  uint16_t port = 0;
  bool flood = false;
};

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/arp_icmp_responder.p4:24
class ArpIcmpResponder {
 public:
  ArpIcmpResponder(const mac_addr_t& switch_mac, uint32_t switch_ip) : switch_mac_(switch_mac), switch_ip_(switch_ip) {}
  /// Table arp_icmp with the controller's two entries; rewrites the frame in
  /// place on a hit. Returns the action run: 0 none, 1 ARP reply, 2 ICMP reply.
  int apply(uint8_t* frame, const RegularHeaders& h, uint16_t ingress_port, L2Decision& d) const;

 private:
  // :33 send_back: back out of the ingress port.
  static void send_back(uint16_t ingress_port, L2Decision& d) {
    d.unicast = true;
    d.port = ingress_port;
  }
  void send_arp_reply(uint8_t* frame) const;        // :40
  void send_icmp_echo_reply(uint8_t* frame) const;  // :53
  mac_addr_t switch_mac_;
  uint32_t switch_ip_;
};

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/forwarder.p4:24
class Forwarder {
 public:
  /// forward's entries: destination MAC -> port (forwarder.py:73-98, one per
  /// listed port's MAC); every other MAC, broadcast included, floods
  /// (forwarder.py:54-71).
  explicit Forwarder(const std::vector<std::pair<mac_addr_t, uint16_t>>& entries);
  void apply(const uint8_t* frame, L2Decision& d) const;

 private:
  static uint64_t Key(const uint8_t* mac);
  std::unordered_map<uint64_t, uint16_t> forward_;
};

}  // namespace inasim::p4::switchml
