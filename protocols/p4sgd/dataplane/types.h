// P4SGD switch frame and constants, as plain C++.
//
// Upstream: RC4ML/P4FPGA@6dfbdf2 (commit 6dfbdf224f37ab71aef0a9a7455ff6e82d3331f3),
// p4/p4fpga.p4 (the Tofino program) and hw/rtl/new/sgd_work_send.sv (the FPGA
// worker that builds the frame). Our own code; every element cites the upstream
// line it models. The paper (/work/shared/papers/p4sgd.txt) is cited as
// `p4sgd §x.y`.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace inasim::p4::p4sgd {

// --- program constants -------------------------------------------------------

// RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:19 `#define NODE_SIZE 1`: the number of
// contributions that "fulfils" an aggregation, hard-coded to one.
inline constexpr uint32_t kNodeSize = 1;
// RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:21 INDEX_WIDTH 16 and :23 INDEX_SIZE 65536:
// every per-slot register array has 64K cells, indexed by the 16-bit index.
inline constexpr uint32_t kIndexSize = 65536;
// RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:456 `Register<bit<SEQ_WIDTH>, PortId_t>(256) seq_reg`.
inline constexpr uint32_t kSeqRegSize = 256;
// RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:4 `#define SEQ_SUP`: the sequence check is
// compiled in (P4SGDConfig::seq_sup false builds the program without it).
inline constexpr bool kSeqSup = true;
// RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:714-723 `Pipeline(...) pipe; Switch(pipe) main`:
// the one pipeline is loaded into every pipe of the Tofino, so each pipe has
// its own copy of every register. A Tofino has at most four pipes.
inline constexpr uint32_t kPipes = 4;
/// The pipe of a 9-bit Tofino device port: bits 8..7 (ports 0-127 pipe 0,
/// 128-255 pipe 1, ...), the numbering p4lang/p4app-switchML@b5c74a0:
/// dev_root/p4/parsers.p4:54-56 matches on (`0x080 &&& 0x180`: "all pipe 1 ports").
inline constexpr uint32_t PipeOfDevPort(uint16_t dev_port) { return (dev_port >> 7) & (kPipes - 1); }
// RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:513 `multicast(1)`: the PRE group id is hard-coded.
inline constexpr uint16_t kMulticastGroup = 1;
// RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:522 `send(192)`: a not-yet-fulfilled
// aggregation goes to Tofino device port 192 (the PCIe CPU port of a two-pipe
// Tofino such as the Wedge100BF-32X the paper used, p4sgd §5.1).
inline constexpr uint16_t kPartialDevPort = 192;
/// int32 values per packet: value1..value8 (p4fpga.p4:117-124; p4sgd §5.2
/// "an array of 8 32-bit elements"; sgd_work_send.sv:177 eight bank results).
inline constexpr uint32_t kValues = 8;
/// Paper slots: p4sgd §4.2 "the size of the register arrays is set to 64K (16
/// bits indices), permitting a maximum of 64K outstanding aggregation operations".
inline constexpr uint32_t kPaperSlots = 65536;
/// Bitmaps are 32 bits (p4fpga.p4:29 BITMAP_WIDTH 32): at most 32 workers.
inline constexpr uint32_t kMaxWorkers = 32;

// --- the frame -----------------------------------------------------------------
// RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:185-196: the ingress parser goes start ->
// meta_init -> parse_load; parse_ethernet (:198) is unreachable. The whole frame
// *is* the 64-byte `payload_t` header (no Ethernet, no IPv4, no UDP), and
// hw/rtl/new/sgd_work_send.sv:177,192 builds exactly 64 bytes of it, handed
// straight to the CMAC (hw/rtl/new/sgd_top.sv:278,534; the TCP/IP stack is
// commented out). Big-endian, MSB first, as the P4 header declares it:
//
//   byte  0      __pad0[14:7]                          (paper mode: bit 7 ack, bit 6 ack_complete)
//   byte  1      bit 0 slot, bits 7..1 __pad0[6:0]
//   byte  2..3   index           slot index (register cell)
//   byte  4..7   seq_no
//   byte  8..11  bitmap          sender's worker bit (0: derive from the port)
//   byte 12..15  map_state       written on the port-192 path
//   byte 16..19  counter_state   written on the port-192 path
//   byte 20      bit 7 slot_state, bits 6..0 __pad1
//   byte 21..31  __pad1
//   byte 32..63  value1..value8  int32, two's complement
//
// Bytes 12..13 sit where an Ethernet II EtherType would be; the FPGA sends 0
// there (map_state), which is how the simulator tells these frames apart.

// RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:103
struct payload_t {
  uint16_t pad0 = 0;           // p4fpga.p4:105 bit<15> __pad0
  uint8_t slot = 0;            // p4fpga.p4:106 bit<1> slot
  uint16_t index = 0;          // p4fpga.p4:107 bit<16> index
  uint32_t seq_no = 0;         // p4fpga.p4:108 bit<32> seq_no
  uint32_t bitmap = 0;         // p4fpga.p4:109 bit<32> bitmap
  uint32_t map_state = 0;      // p4fpga.p4:111 bit<32> map_state
  uint32_t counter_state = 0;  // p4fpga.p4:112 bit<32> counter_state
  uint8_t slot_state = 0;      // p4fpga.p4:113 bit<1> slot_state
  // p4fpga.p4:115 bit<95> __pad1: carried untouched in the frame bytes.
  std::array<uint32_t, kValues> value{};  // p4fpga.p4:117-124 bit<32> value1..value8
};
/// 15+1+16+32+32+32+32+1+95 bits of header + 8 x 32 bits of values = 64 bytes.
inline constexpr size_t kPayloadBytes = 64;

inline constexpr size_t kOffPad0 = 0;
inline constexpr size_t kOffSlot = 1;  ///< bit 0 of byte 1
inline constexpr size_t kOffIndex = 2;
inline constexpr size_t kOffSeqNo = 4;
inline constexpr size_t kOffBitmap = 8;
inline constexpr size_t kOffMapState = 12;
inline constexpr size_t kOffCounterState = 16;
inline constexpr size_t kOffSlotState = 20;  ///< bit 7 of byte 20
inline constexpr size_t kOffValues = 32;

// --- paper mode header fields (p4sgd §3.3, Figure 4) --------------------------
// The paper adds four fields: the bitmap, the slot index, "whether the packet is
// for aggregation or acknowledgement" and "a placeholder for the switch to
// signal that it has received all acknowledgement". The first two are the
// public header's `bitmap` and `index`; the two flags (the paper gives no
// offsets) take the top bits of __pad0, which the FPGA sends as zero, so an
// FPGA frame is an aggregation packet.
// p4sgd §3.3 "indicates whether the packet is for aggregation or acknowledgement"
inline constexpr uint8_t kAckFlag = 0x80;  ///< byte 0 bit 7: 0 aggregation, 1 acknowledgement
// p4sgd §3.3 "a placeholder for the switch to signal that it has received all acknowledgement"
inline constexpr uint8_t kAckCompleteFlag = 0x40;  ///< byte 0 bit 6

/// Tofino device ports of the 32 `bitmap_mapping` entries, in bit order
/// (RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:419-450: port 4k -> bit k for k < 16,
/// port 128 + 4(k-16) -> bit k for k >= 16), then the partial/CPU port 192.
/// The default simulator-port -> device-port map: simulator port i is the
/// i-th front-panel 100G port, simulator port 32 is device port 192.
inline constexpr std::array<uint16_t, 33> kFrontPanelDevPorts = {
    0,   4,   8,   12,  16,  20,  24,  28,  32,  36,  40,  44,  48,  52,  56,  60,  128,
    132, 136, 140, 144, 148, 152, 156, 160, 164, 168, 172, 176, 180, 184, 188, 192};

using mac_addr_t = std::array<uint8_t, 6>;

}  // namespace inasim::p4::p4sgd
