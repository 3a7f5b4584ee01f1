// What every dataplane test writes its expected frames and sums with:
// big-endian stores and loads, the RFC 1071 checksum and the wrapping int32
// sum, written here, independently of p4model/common/frame.h, so that an
// expectation never comes from the code under test. Header-only, no ns-3.
#pragma once

#include "p4model/common/dataplane.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace inasim::testing {

using Bytes = std::vector<uint8_t>;
using p4::Picoseconds;
constexpr Picoseconds kNs = 1000;

/// Appends `v` big-endian.
inline void Put16(Bytes& b, uint16_t v) {
  b.push_back(uint8_t(v >> 8));
  b.push_back(uint8_t(v));
}
inline void Put32(Bytes& b, uint32_t v) {
  Put16(b, uint16_t(v >> 16));
  Put16(b, uint16_t(v));
}
inline void PutMac(Bytes& b, const std::array<uint8_t, 6>& m) { b.insert(b.end(), m.begin(), m.end()); }

/// Stores `v` big-endian at `b`.
inline void Put16(uint8_t* b, uint16_t v) {
  b[0] = uint8_t(v >> 8);
  b[1] = uint8_t(v);
}
inline void Put32(uint8_t* b, uint32_t v) {
  Put16(b, uint16_t(v >> 16));
  Put16(b + 2, uint16_t(v));
}

inline uint16_t Get16(const Bytes& b, size_t at) { return uint16_t(b[at] << 8 | b[at + 1]); }
inline uint32_t Get32(const Bytes& b, size_t at) { return uint32_t(Get16(b, at)) << 16 | Get16(b, at + 2); }

/// RFC 1071 over `n` bytes (n even): the checksum to store, or 0 when `p`
/// already holds a valid one.
inline uint16_t Checksum(const uint8_t* p, size_t n) {
  uint32_t s = 0;
  for (size_t i = 0; i + 1 < n; i += 2) s += uint32_t(p[i]) << 8 | p[i + 1];
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return uint16_t(~s);
}

/// An IPv4 header without options and the UDP header after it, field by field.
/// Grouped as written in a test: addresses; the UDP fields; the IPv4 id and
/// flags/fragment (0x4000: DF); TTL, TOS and protocol (17, UDP; another to
/// test that a program ignores the frame).
struct Ipv4Udp {
  uint32_t src_ip = 0, dst_ip = 0;
  uint16_t src_port = 0, dst_port = 0, udp_checksum = 0;
  uint16_t id = 0, flags_fragment = 0;
  uint8_t ttl = 64, tos = 0, protocol = 17;
};

/// Appends `h` for a UDP payload of `payload` bytes, the IPv4 checksum
/// computed here.
inline void PutIpv4Udp(Bytes& b, const Ipv4Udp& h, size_t payload) {
  const size_t ip_at = b.size();
  b.push_back(0x45);
  b.push_back(h.tos);
  Put16(b, uint16_t(20 + 8 + payload));
  Put16(b, h.id);
  Put16(b, h.flags_fragment);
  b.push_back(h.ttl);
  b.push_back(h.protocol);
  Put16(b, 0);
  Put32(b, h.src_ip);
  Put32(b, h.dst_ip);
  Put16(&b[ip_at + 10], Checksum(&b[ip_at], 20));
  Put16(b, h.src_port);
  Put16(b, h.dst_port);
  Put16(b, uint16_t(8 + payload));
  Put16(b, h.udp_checksum);
}

/// The exact element-wise sum of int32 vectors as the switches compute it:
/// two's complement, wrapping modulo 2^32.
inline std::vector<uint32_t> Sum(const std::vector<std::vector<int32_t>>& vs) {
  std::vector<uint32_t> s(vs[0].size(), 0);
  for (const auto& v : vs)
    for (size_t i = 0; i < v.size(); ++i) s[i] += uint32_t(v[i]);
  return s;
}

}  // namespace inasim::testing
