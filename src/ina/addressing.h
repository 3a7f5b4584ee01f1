// Host addressing: host id h owns 10.0.0.0/8 + (h + 1). The switch turns a
// destination address back into a host id with one subtraction, which indexes
// its forwarding table directly (no longest-prefix match, no map).
#pragma once

#include <array>
#include <cstdint>

namespace inasim {

inline constexpr uint32_t kHostNetwork = 0x0A000000u;  // 10.0.0.0/8
inline constexpr uint32_t kMaxHosts = (1u << 24) - 2;
inline constexpr uint32_t kNotAHost = 0xffffffffu;

inline uint32_t HostIpv4(uint32_t host) { return kHostNetwork + host + 1; }
/// A switch's own address, for programs that talk to it (SwitchML workers send
/// to their ToR's): 10.255.0.0 + id + 1, beyond any host a scenario can build.
inline uint32_t SwitchIpv4(uint32_t switch_id) { return 0x0AFF0000u + switch_id + 1; }
/// The MAC address that goes with an IPv4 address (02:00 + the address): hosts
/// and switches never need ARP.
inline std::array<uint8_t, 6> MacBytesOfIpv4(uint32_t ip) {
  return {0x02, 0x00, uint8_t(ip >> 24), uint8_t(ip >> 16), uint8_t(ip >> 8), uint8_t(ip)};
}
inline uint32_t HostOfIpv4(uint32_t ip) {
  const uint32_t off = ip - kHostNetwork - 1;
  return off < kMaxHosts ? off : kNotAHost;
}

}  // namespace inasim
