// Addresses as the control-plane configs write them ("02:00:00:00:00:fe",
// "10.0.0.1"), parsed strictly: exactly six hex bytes / four decimal bytes,
// nothing after. Configs declare address keys with config_reader.h's MacKey
// and Ipv4Key; the *OrThrow forms serve addresses inside hand-read lists.
#pragma once

#include <array>
#include <cstdint>
#include <cctype>
#include <stdexcept>
#include <string>

namespace inasim::p4 {

/// Six groups of one or two hex digits joined by ':' (nothing else: no sign,
/// no blanks, no "0x"), as the schemas' pattern says.
inline bool ParseMacText(const std::string& s, std::array<uint8_t, 6>& mac) {
  size_t i = 0;
  for (int b = 0; b < 6; ++b) {
    if (b > 0 && (i >= s.size() || s[i++] != ':')) return false;
    unsigned v = 0;
    int digits = 0;
    for (; i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i])) && digits < 2; ++i, ++digits)
      v = v * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(s[i])) ? s[i] - '0'
                                                                                      : std::tolower(s[i]) - 'a' + 10);
    if (digits == 0) return false;
    mac[b] = static_cast<uint8_t>(v);
  }
  return i == s.size();
}

/// Four groups of one to three decimal digits, each at most 255, joined by
/// '.' (nothing else). Host-order result.
inline bool ParseIpv4Text(const std::string& s, uint32_t& ip) {
  size_t i = 0;
  uint32_t out = 0;
  for (int b = 0; b < 4; ++b) {
    if (b > 0 && (i >= s.size() || s[i++] != '.')) return false;
    unsigned v = 0;
    int digits = 0;
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && digits < 3; ++i, ++digits)
      v = v * 10 + static_cast<unsigned>(s[i] - '0');
    if (digits == 0 || v > 255) return false;
    out = out << 8 | v;
  }
  if (i != s.size()) return false;
  ip = out;
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
