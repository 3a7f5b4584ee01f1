// Parse-once view of an Ethernet/IPv4/UDP frame, shared by the ns-3 switch and
// every dataplane model. Plain struct, no allocation: the switch fills it from
// the first bytes of a frame and hands it to whoever needs the fields.
#pragma once

#include <cstddef>
#include <cstdint>

namespace inasim::p4 {

inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr uint8_t kIpProtoTcp = 6;
inline constexpr uint8_t kIpProtoUdp = 17;
inline constexpr size_t kEthernetBytes = 14;
inline constexpr size_t kIpv4MinBytes = 20;
inline constexpr size_t kUdpBytes = 8;
/// Bytes the switch needs to see to parse every header it uses.
inline constexpr size_t kParseBytes = 64;

inline uint16_t LoadBe16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t LoadBe32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
inline void StoreBe16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v >> 8); p[1] = uint8_t(v); }
inline void StoreBe32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24); p[1] = uint8_t(v >> 16); p[2] = uint8_t(v >> 8); p[3] = uint8_t(v);
}
inline uint64_t LoadBe64(const uint8_t* p) { return uint64_t{LoadBe32(p)} << 32 | LoadBe32(p + 4); }
inline void StoreBe64(uint8_t* p, uint64_t v) {
  StoreBe32(p, static_cast<uint32_t>(v >> 32));
  StoreBe32(p + 4, static_cast<uint32_t>(v));
}

struct FrameView {
  uint32_t frame_bytes = 0;  ///< whole frame length (not just the parsed prefix)
  uint16_t ether_type = 0;
  bool ipv4 = false;         ///< a well-formed IPv4 header is present
  bool l4 = false;           ///< TCP or UDP ports are present
  uint8_t ip_header_bytes = 0;
  uint8_t dscp = 0;
  uint8_t ecn = 0;           ///< 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE
  uint8_t protocol = 0;
  uint32_t src_ip = 0, dst_ip = 0;
  uint16_t src_port = 0, dst_port = 0;
  /// Offset of the first byte after the UDP/TCP ports' header (UDP payload).
  uint16_t l4_payload_offset = 0;
};

/// Parses the headers in `data[0..len)`; `frame_bytes` is the full frame size.
/// Never reads past len; anything malformed leaves the later flags false.
inline FrameView ParseFrame(const uint8_t* data, size_t len, uint32_t frame_bytes) {
  FrameView f;
  f.frame_bytes = frame_bytes;
  if (len < kEthernetBytes) return f;
  f.ether_type = LoadBe16(data + 12);
  if (f.ether_type != kEtherTypeIpv4 || len < kEthernetBytes + kIpv4MinBytes) return f;
  const uint8_t* ip = data + kEthernetBytes;
  const uint8_t ihl = ip[0] & 0x0f;
  if ((ip[0] >> 4) != 4 || ihl < 5) return f;
  f.ip_header_bytes = static_cast<uint8_t>(ihl * 4);
  f.dscp = ip[1] >> 2;
  f.ecn = ip[1] & 0x3;
  f.protocol = ip[9];
  f.src_ip = LoadBe32(ip + 12);
  f.dst_ip = LoadBe32(ip + 16);
  f.ipv4 = true;
  const size_t l4 = kEthernetBytes + f.ip_header_bytes;
  if ((f.protocol == kIpProtoUdp || f.protocol == kIpProtoTcp) && len >= l4 + 4) {
    f.src_port = LoadBe16(data + l4);
    f.dst_port = LoadBe16(data + l4 + 2);
    f.l4 = true;
    f.l4_payload_offset = static_cast<uint16_t>(l4 + (f.protocol == kIpProtoUdp ? kUdpBytes : 20));
  }
  return f;
}

/// RFC 1071 one's-complement checksum of an IPv4 header (checksum field included
/// as stored; store 0 there first when computing).
inline uint16_t Ipv4HeaderChecksum(const uint8_t* ip, size_t bytes) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < bytes; i += 2) sum += LoadBe16(ip + i);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

/// Writes the IPv4 and UDP headers of a datagram a switch program sends
/// itself, at `ip`, carrying `payload` bytes: 20-byte IPv4 header (no options,
/// identification 0, no fragments, TTL 64, UDP, its checksum) and a UDP header
/// without checksum (allowed over IPv4, RFC 768). Stores only, no allocation
/// (per packet).
inline void WriteIpv4Udp(uint8_t* ip, uint8_t tos, uint32_t src_ip, uint32_t dst_ip, uint16_t src_port,
                         uint16_t dst_port, size_t payload) {
  ip[0] = 0x45;
  ip[1] = tos;
  StoreBe16(ip + 2, static_cast<uint16_t>(kIpv4MinBytes + kUdpBytes + payload));
  StoreBe32(ip + 4, 0);
  ip[8] = 64;
  ip[9] = kIpProtoUdp;
  StoreBe16(ip + 10, 0);
  StoreBe32(ip + 12, src_ip);
  StoreBe32(ip + 16, dst_ip);
  StoreBe16(ip + 10, Ipv4HeaderChecksum(ip, kIpv4MinBytes));
  uint8_t* udp = ip + kIpv4MinBytes;
  StoreBe16(udp, src_port);
  StoreBe16(udp + 2, dst_port);
  StoreBe16(udp + 4, static_cast<uint16_t>(kUdpBytes + payload));
  StoreBe16(udp + 6, 0);
}

}  // namespace inasim::p4
