// Addresses as the control-plane configs write them ("02:00:00:00:00:fe",
// "10.0.0.1"), parsed strictly: exactly six hex bytes / four decimal bytes,
// nothing after. Configs declare address keys with config_reader.h's MacKey
// and Ipv4Key; the *OrThrow forms serve addresses inside hand-read lists.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace inasim::p4 {

inline bool ParseMacText(const std::string& s, std::array<uint8_t, 6>& mac) {
  unsigned b[6];
  char tail = 0;
  if (std::sscanf(s.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6)
    return false;
  for (int i = 0; i < 6; ++i) mac[i] = static_cast<uint8_t>(b[i]);
  return true;
}

/// Host-order result.
inline bool ParseIpv4Text(const std::string& s, uint32_t& ip) {
  unsigned a, b, c, d;
  char tail = 0;
  if (std::sscanf(s.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) != 4 || a > 255 || b > 255 || c > 255 ||
      d > 255)
    return false;
  ip = a << 24 | b << 16 | c << 8 | d;
  return true;
}

/// The same, throwing std::invalid_argument "<who>: bad MAC address '<s>'".
inline std::array<uint8_t, 6> MacOrThrow(const std::string& s, const std::string& who) {
  std::array<uint8_t, 6> mac{};
  if (!ParseMacText(s, mac)) throw std::invalid_argument(who + ": bad MAC address '" + s + "'");
  return mac;
}

/// The same, throwing std::invalid_argument "<who>: bad IPv4 address '<s>'".
inline uint32_t Ipv4OrThrow(const std::string& s, const std::string& who) {
  uint32_t ip = 0;
  if (!ParseIpv4Text(s, ip)) throw std::invalid_argument(who + ": bad IPv4 address '" + s + "'");
  return ip;
}

}  // namespace inasim::p4
