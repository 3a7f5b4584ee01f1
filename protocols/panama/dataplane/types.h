// PANAMA aggregation packet and accelerator constants, as plain C++.
//
// Upstream: nadeengebara/my_netfpga@92c98fe (commit
// 92c98fecec53eb292d0affea55f9b1908474245b), the NetFPGA-SUME prototype:
//   fp_datapath.v = lib/my_hw/std/cores/fp_datapath_v1_0_0/hdl/fp_datapath.v
//   fp_adder.v    = lib/my_hw/std/cores/fp_adder_v1_0_0/hdl/fp_adder.v
//   fp_adder_interface.tcl = projects/reference_switch_lite/hw/create_ip/fp_adder_interface.tcl
// and nadeengebara/Panama-MLSys-Hardware-Experiments@34c44f1
// (linerate_iperf_experiments/README.md:11, DSCP 0x38 over UDP). The paper
// (/work/shared/papers/panama-mlsys21.txt) is cited as `panama §x`. Our own
// code; every element cites the line or sentence it models.
#pragma once

#include <cstddef>
#include <cstdint>

namespace inasim::p4::panama {

// --- classification ------------------------------------------------------------

// panama §5 (1) "IPv4 packets with a DSCP field value equal to 56 are recognized
// as aggregation packets"; Panama-MLSys-Hardware-Experiments@34c44f1:
// linerate_iperf_experiments/README.md:11 "UDP packets ... dscp field set to 0x38".
inline constexpr uint8_t kAggregationDscp = 56;  // 0x38; TOS byte 0xE0 | ECN

// --- the PANAMA header -----------------------------------------------------------
// panama §3 and Fig. 4 list the fields (EtherType, DSCP and ECN in the IPv4
// header; JID, TID, VID, FIN, wnd_cap in the aggregation header); Fig. 4 is an
// image without offsets, so the layout below is ours. It follows the FPGA:
// fp_datapath.v:25-30 put a header between the IP header and the data
// (MY_HEADERS_POS 272 = byte 34, VECTOR_INDEX 32 bits at :27, FIN 1 bit at :28,
// DATA_POS 320 = byte 40) and the datapath reads whole 64-bit bus words of
// header (DATA_OFFSET_INDEX = DATA_POS / C_M_AXIS_DATA_WIDTH, :118) before the
// fp32 lanes start on a word boundary (:295-298). With the UDP header the
// experiments repo uses (8 bytes at 34..41), a 14-byte header puts the
// gradients at byte 56 = bus word 7. Offsets from the start of the UDP payload,
// big-endian (network order):
//
//   0..1   JID      job id (panama §5 (2) "Job ID (JID)")
//   2      TID      tree id within the job (panama §5 (2) "Tree ID (TID)")
//   3      flags    bit 7 FIN (panama §5 (2), fp_datapath.v:28 FIN_POS, 1 bit);
//                   bits 6..0 reserved, carried
//   4..7   VID      vector id (fp_datapath.v:27 VECTOR_INDEX_POS, 32 bits;
//                   panama §5 (2) "incremental VIDs")
//   8..9   wnd_cap  (panama §4.2.2 "We reserve 16 bits for wnd_cap")
//   10..13 reserved, carried (pads the header to the bus word)
//   14..   fp32 gradients, IEEE-754 binary32, big-endian (fp_datapath.v:295-298
//          byte-reverse each little-endian AXI lane `{<<8{...}}`: the first
//          wire byte is the value's most significant byte)
inline constexpr size_t kOffJid = 0;
inline constexpr size_t kOffTid = 2;
inline constexpr size_t kOffFlags = 3;
inline constexpr uint8_t kFinFlag = 0x80;
inline constexpr size_t kOffVid = 4;
inline constexpr size_t kOffWndCap = 8;
inline constexpr size_t kPanamaHeaderBytes = 14;
/// Ethernet 14 + IPv4 20 + UDP 8 + PANAMA 14: gradients start at byte 56 (IHL 5).
inline constexpr size_t kGradientOffsetIhl5 = 56;
inline constexpr size_t kValueBytes = 4;

// fp_datapath.v:20 NEW_DEST_MAC 48'hFFFFFFFFFFFF, written over the destination
// MAC (:385) of every header that passes the VID check.
inline constexpr uint8_t kNewDestMac[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

// --- the prototype --------------------------------------------------------------
// fp_datapath.v:11 NUM_QUEUES 4: four input ports (the four 10G SFP+ of the
// NetFPGA-SUME, panama §6); fp_adder.v:107-135 is a 4-input tree.
inline constexpr uint32_t kPrototypePorts = 4;
/// Port bitmaps are 64 bits here (the prototype's PORTS_BITMAP is 4 bits, fp_datapath.v:21).
inline constexpr uint32_t kMaxPorts = 64;
// fp_datapath.v:115 MAX_PKT_SIZE 1600: the largest frame one buffer entry holds.
inline constexpr uint32_t kMaxPacketBytes = 1600;
// panama §7 "limit the buffering capacity of aggregation accelerators to 64 MB".
inline constexpr uint64_t kPaperBufferBytes = 64ull << 20;
// panama §4.2.2: wnd_cap is 16 bits.
inline constexpr uint32_t kMaxWndCap = 0xffff;

// --- IEEE-754 binary32 -----------------------------------------------------------
inline constexpr uint32_t kSignBit = 0x80000000u;
inline constexpr uint32_t kExpMask = 0x7f800000u;
inline constexpr uint32_t kFracMask = 0x007fffffu;
inline constexpr uint32_t kQuietBit = 0x00400000u;
/// The NaN the model's fpga mode returns for every NaN result (see README).
inline constexpr uint32_t kDefaultNaN = 0x7fc00000u;

}  // namespace inasim::p4::panama
