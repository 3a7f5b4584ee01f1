// Canary (De Sensi et al., FGCS 2024) header and constants, as plain C++.
// There is no public code: the paper is the specification, and every element
// cites `canary-fgcs24 §x.y` (sections of /work/shared/papers/canary-fgcs24.txt).
// Field widths follow §4.1; wider C++ integers hold narrower fields and every
// writer masks to the field width.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace inasim::p4::canary {

// --- encapsulation (our choice; see README "Encapsulation") -----------------
// The paper sends Canary directly over Ethernet (canary-fgcs24 §4.1) but allows
// "IP or UDP". The simulator's hosts use ns-3 UDP sockets and its switches
// route by IPv4 destination, so our Canary packets are Ethernet/IPv4/UDP to
// this well-known destination port, with the Canary header as the first bytes
// of the UDP payload. 0xB1BD ("bird") is below the ephemeral range (49152+),
// so no ns-3 socket picks it as a source port, and it is outside SwitchML's
// 0xbee0/0xfff0.
inline constexpr uint16_t kCanaryUdpPort = 0xB1BD;  // 45501

/// Elements per packet on the Tofino prototype (canary-fgcs24 §5.1: "we can
/// store up to 32 4-bytes elements") and in the paper's simulations (§5.1:
/// "we run simulations with 256 elements per packet").
inline constexpr uint32_t kPrototypeElements = 32;
inline constexpr uint32_t kSimulationElements = 256;

/// Descriptors the prototype fits (canary-fgcs24 §5.1: "up to 32K descriptors").
inline constexpr uint32_t kPrototypeDescriptors = 32768;

/// The children bitmap is one bit per switch port; we hold it in 64 bits, the
/// size of the paper's example switch (canary-fgcs24 §4.2, §5.2: 64 ports).
inline constexpr uint32_t kMaxPorts = 64;

// --- the Canary header -------------------------------------------------------
// canary-fgcs24 §4.1, fields in the paper's order, big-endian on the wire:
//
//   byte  0..3   destination     IPv4 address of the leader host
//   byte  4..7   id              reduction block id
//   byte  8..9   counter         packets already reduced into this one
//   byte 10..11  hosts           hosts taking part in the reduction
//   byte 12..15  children        collision: ingress port; restoration: port group
//   byte 16..17  switch_address  collision/restoration: the switch's address
//   byte 18      bit 7 bypass, bit 6 multicast, bits 5..0 padding
//
// then k int32 elements (big-endian two's complement).
struct canary_h {
  // canary-fgcs24 §4.1 "Destination (4 bytes)"
  uint32_t destination = 0;
  // canary-fgcs24 §4.1 "Id (4 bytes)"
  uint32_t id = 0;
  // canary-fgcs24 §4.1 "Counter (2 bytes)"
  uint16_t counter = 0;
  // canary-fgcs24 §4.1 "Hosts (2 bytes)"
  uint16_t hosts = 0;
  // canary-fgcs24 §4.1 "Children (4 bytes)"; §3.2.1 (port of a collision;
  // restoration's port list, here a §4.2 shard group id, see MulticastShards)
  uint32_t children = 0;
  // canary-fgcs24 §4.1 "Switch Address (2 bytes)"
  uint16_t switch_address = 0;
  // canary-fgcs24 §4.1 "Bypass (1 bit)"
  bool bypass = false;
  // canary-fgcs24 §4.1 "Multicast (1 bit)"
  bool multicast = false;
  // canary-fgcs24 §4.1 "Padding (6 bits)": carried, never interpreted.
  uint8_t padding = 0;
};
/// canary-fgcs24 §5.1: "19 bytes of CANARY header".
inline constexpr size_t kCanaryHBytes = 19;
inline constexpr uint8_t kBypassBit = 0x80;
inline constexpr uint8_t kMulticastBit = 0x40;
inline constexpr uint8_t kPaddingMask = 0x3f;

/// Byte offsets inside the Canary header (for in-place rewrites).
inline constexpr size_t kOffDestination = 0;
inline constexpr size_t kOffId = 4;
inline constexpr size_t kOffCounter = 8;
inline constexpr size_t kOffHosts = 10;
inline constexpr size_t kOffChildren = 12;
inline constexpr size_t kOffSwitchAddress = 16;
inline constexpr size_t kOffFlags = 18;

using mac_addr_t = std::array<uint8_t, 6>;

/// IPv4 limited broadcast: the destination restoration copies carry so that
/// every host stack below accepts them (see README "Restoration").
inline constexpr uint32_t kIpv4LimitedBroadcast = 0xffffffffu;

}  // namespace inasim::p4::canary
