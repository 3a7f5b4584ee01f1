#include "protocols/switchml/dataplane/forwarder.h"

#include "p4model/common/frame.h"

#include <algorithm>
#include <cstring>

namespace inasim::p4::switchml {

namespace {

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:33 ETHERTYPE_ARP
constexpr uint16_t kEtherTypeArp = 0x0806;
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:39 ip_protocol_t.ICMP
constexpr uint8_t kIpProtoIcmp = 1;
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:44-52
constexpr uint16_t kArpRequest = 1, kArpReply = 2;
constexpr uint8_t kIcmpEchoReply = 0, kIcmpEchoRequest = 8;
// Byte offsets: arp_h (8 bytes, headers.p4:49) after Ethernet, arp_ipv4_h
// (20 bytes, :57) after it; icmp_h (4 bytes, :43) after a 20-byte IPv4 header.
constexpr size_t kArp = kEthernetHBytes, kArpIpv4 = kArp + 8, kArpEnd = kArpIpv4 + 20;
constexpr size_t kIp = kEthernetHBytes, kIcmp = kIp + kIpv4HBytes, kIcmpEnd = kIcmp + 4;

}  // namespace

RegularHeaders ParseRegular(const uint8_t* b, size_t len) {
  RegularHeaders h;
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:90-96 parse_ethernet
  if (len < kEthernetHBytes) {
    h.truncated = true;
    return h;
  }
  const uint16_t ether_type = LoadBe16(b + 12);
  if (ether_type == kEtherTypeArp) {
    // :99-110 parse_arp, then parse_arp_ipv4 for (hw_type 1, proto_type IPv4).
    if (len < kArpIpv4) {
      h.truncated = true;
      return h;
    }
    h.arp_opcode = LoadBe16(b + kArp + 6);
    if (LoadBe16(b + kArp) != 0x0001 || LoadBe16(b + kArp + 2) != kEtherTypeIpv4) return h;
    if (len < kArpEnd) {
      h.truncated = true;
      return h;
    }
    h.arp_ipv4 = true;
    h.arp_dst_proto_addr = LoadBe32(b + kArpIpv4 + 16);
    return h;
  }
  if (ether_type != kEtherTypeIpv4) return h;
  // :112-124 parse_ipv4, then parse_icmp for (IHL 5, fragment offset 0, ICMP).
  if (len < kIcmp) {
    h.truncated = true;
    return h;
  }
  h.ipv4 = true;
  h.ipv4_dst_addr = LoadBe32(b + kIp + 16);
  const bool no_options = (b[kIp] & 0xf) == 5, whole = (LoadBe16(b + kIp + 6) & 0x1fff) == 0;
  if (!(no_options && whole && b[kIp + 9] == kIpProtoIcmp)) return h;
  if (len < kIcmpEnd) {
    h.truncated = true;
    return h;
  }
  h.icmp = true;
  h.icmp_msg_type = b[kIcmp];
  return h;
}

int ArpIcmpResponder::apply(uint8_t* frame, const RegularHeaders& h, uint16_t ingress_port, L2Decision& d) const {
  // :66-80 table arp_icmp with the controller's two entries
  // (arp_icmp_responder.py:61-97 ARP, :100-134 ICMP): keys arp_ipv4 valid,
  // icmp valid, then ternary opcode, ARP target, ICMP type, IPv4 destination.
  if (h.arp_ipv4 && !h.icmp && h.arp_opcode == kArpRequest && h.arp_dst_proto_addr == switch_ip_) {
    send_arp_reply(frame);
    send_back(ingress_port, d);
    return 1;
  }
  if (!h.arp_ipv4 && h.icmp && h.icmp_msg_type == kIcmpEchoRequest && h.ipv4_dst_addr == switch_ip_) {
    send_icmp_echo_reply(frame);
    send_back(ingress_port, d);
    return 2;
  }
  return 0;
}

void ArpIcmpResponder::send_arp_reply(uint8_t* f) const {
  // :40-51, in order: Ethernet to the asker from the switch, opcode REPLY,
  // target <- the asker, sender <- the switch.
  uint8_t asker_mac[6];
  std::memcpy(asker_mac, f + kArpIpv4, 6);
  const uint32_t asker_ip = LoadBe32(f + kArpIpv4 + 6);
  std::memcpy(f, asker_mac, 6);
  std::memcpy(f + 6, switch_mac_.data(), 6);
  StoreBe16(f + kArp + 6, kArpReply);
  std::memcpy(f + kArpIpv4 + 10, asker_mac, 6);
  StoreBe32(f + kArpIpv4 + 16, asker_ip);
  std::memcpy(f + kArpIpv4, switch_mac_.data(), 6);
  StoreBe32(f + kArpIpv4 + 6, switch_ip_);
}

void ArpIcmpResponder::send_icmp_echo_reply(uint8_t* f) const {
  // :53-64: Ethernet back to the sender from the switch, IPv4 back from the
  // switch, type ECHO_REPLY, ICMP checksum 0 (not recomputed; the IPv4
  // checksum is left as it was: update_ipv4_checksum stays false).
  std::memcpy(f, f + 6, 6);
  std::memcpy(f + 6, switch_mac_.data(), 6);
  StoreBe32(f + kIp + 16, LoadBe32(f + kIp + 12));
  StoreBe32(f + kIp + 12, switch_ip_);
  f[kIcmp] = kIcmpEchoReply;
  StoreBe16(f + kIcmp + 2, 0);
}

Forwarder::Forwarder(const std::vector<std::pair<mac_addr_t, uint16_t>>& entries) {
  for (const auto& [mac, port] : entries) forward_[Key(mac.data())] = port;
}

uint64_t Forwarder::Key(const uint8_t* mac) {
  uint64_t k = 0;
  for (int i = 0; i < 6; ++i) k = k << 8 | mac[i];
  return k;
}

void Forwarder::apply(const uint8_t* frame, L2Decision& d) const {
  // :51-60 table forward on the (possibly rewritten) destination MAC.
  const auto it = forward_.find(Key(frame));
  if (it != forward_.end()) {
    // :31 set_egress_port: the unicast port (a send_back's is overwritten).
    d.unicast = true;
    d.port = it->second;
    return;
  }
  // :40 flood(0x8000) with the ingress port's node excluded (level1_exclusion_id).
  d.flood = true;
}

}  // namespace inasim::p4::switchml
