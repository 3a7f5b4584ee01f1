// Host addressing: host id h owns 10.0.0.0/8 + (h + 1). The switch turns a
// destination address back into a host id with one subtraction, which indexes
// its forwarding table directly (no longest-prefix match, no map).
#pragma once

#include <cstdint>

namespace inasim {

inline constexpr uint32_t kHostNetwork = 0x0A000000u;  // 10.0.0.0/8
inline constexpr uint32_t kMaxHosts = (1u << 24) - 2;
inline constexpr uint32_t kNotAHost = 0xffffffffu;

inline uint32_t HostIpv4(uint32_t host) { return kHostNetwork + host + 1; }
/// A switch's own address, for programs that talk to it (SwitchML workers send
/// to their ToR's): 10.255.0.0 + id + 1, beyond any host a scenario can build.
inline uint32_t SwitchIpv4(uint32_t switch_id) { return 0x0AFF0000u + switch_id + 1; }
inline uint32_t HostOfIpv4(uint32_t ip) {
  const uint32_t off = ip - kHostNetwork - 1;
  return off < kMaxHosts ? off : kNotAHost;
}

}  // namespace inasim
