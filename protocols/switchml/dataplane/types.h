// SwitchML (p4lang/p4app-switchML) types, headers and bridged metadata, as plain
// C++ structs. Field widths follow the P4 declarations; wider C++ integers hold
// narrower P4 fields and every writer masks to the P4 width.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace inasim::p4::switchml {

// --- configuration.p4 -------------------------------------------------------
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/configuration.p4:23
inline constexpr uint32_t kRegisterSize = 16384;
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/configuration.p4:26
inline constexpr uint32_t kNumSlots = kRegisterSize / 2;
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/configuration.p4:29
inline constexpr uint32_t kMaxNumWorkers = 32;
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/configuration.p4:30
inline constexpr uint32_t kMaxNumWorkersLog2 = 5;
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/configuration.p4:36
inline constexpr uint32_t kMaxNumQueuePairsPerWorker = 512;
inline constexpr uint32_t kMaxNumQueuePairsPerWorkerLog2 = 9;
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/configuration.p4:40
inline constexpr uint32_t kMaxNumQueuePairs = kMaxNumQueuePairsPerWorker * kMaxNumWorkers;
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/configuration.p4:45
inline constexpr uint16_t kNullLevel1ExclusionId = 0xffff;

// --- types.p4 ---------------------------------------------------------------
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:58
inline constexpr uint16_t kUdpPortRocev2 = 4791;
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:59
inline constexpr uint16_t kUdpPortSwitchmlBase = 0xbee0;
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:60
inline constexpr uint16_t kUdpPortSwitchmlMask = 0xfff0;

/// Number of pipes in the (4-pipe, folded) Tofino the 1024 B mode needs.
inline constexpr int kNumPipes = 4;
/// Pipe-0 ports the ingress parser takes for recirculated passes (with every
/// port of pipes 1-3): a worker cannot sit there.
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:50-57
inline constexpr uint16_t kRecirculationPort64 = 64;
inline constexpr uint16_t kRecirculationPort68 = 68;
/// Number of Processor instances (value00..value31) per pipe.
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:63
inline constexpr int kNumProcessors = 32;

// UC opcodes.
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:70
enum class IbOpcode : uint8_t {
  UC_SEND_FIRST = 0x20,
  UC_SEND_MIDDLE = 0x21,
  UC_SEND_LAST = 0x22,
  UC_SEND_LAST_IMMEDIATE = 0x23,
  UC_SEND_ONLY = 0x24,
  UC_SEND_ONLY_IMMEDIATE = 0x25,
  UC_RDMA_WRITE_FIRST = 0x26,
  UC_RDMA_WRITE_MIDDLE = 0x27,
  UC_RDMA_WRITE_LAST = 0x28,
  UC_RDMA_WRITE_LAST_IMMEDIATE = 0x29,
  UC_RDMA_WRITE_ONLY = 0x2a,
  UC_RDMA_WRITE_ONLY_IMMEDIATE = 0x2b,
};

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:88
enum class WorkerType : uint8_t { FORWARD_ONLY = 0, SWITCHML_UDP = 1, ROCEv2 = 2 };

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:96
struct worker_bitmap_pair_t {
  uint32_t first = 0;
  uint32_t second = 0;
};

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:103
struct num_workers_pair_t {
  uint8_t first = 0;
  uint8_t second = 0;
};

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:114
struct value_pair_t {
  uint32_t first = 0;
  uint32_t second = 0;
};

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:120
struct exponent_pair_t {
  int8_t first = 0;
  int8_t second = 0;
};

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:128
enum class PacketSize : uint8_t { IBV_MTU_128 = 0, IBV_MTU_256 = 1, IBV_MTU_512 = 2, IBV_MTU_1024 = 3 };

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:142
enum class PacketType : uint8_t {
  MIRROR = 0x0,
  BROADCAST = 0x1,
  RETRANSMIT = 0x2,
  IGNORE = 0x3,
  CONSUME0 = 0x4,
  CONSUME1 = 0x5,
  CONSUME2 = 0x6,
  CONSUME3 = 0x7,
  HARVEST0 = 0x8,
  HARVEST1 = 0x9,
  HARVEST2 = 0xa,
  HARVEST3 = 0xb,
  HARVEST4 = 0xc,
  HARVEST5 = 0xd,
  HARVEST6 = 0xe,
  HARVEST7 = 0xf,
};
inline bool IsConsume(PacketType t) {
  return t == PacketType::CONSUME0 || t == PacketType::CONSUME1 || t == PacketType::CONSUME2 ||
         t == PacketType::CONSUME3;
}
const char* PacketTypeName(PacketType t);

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:162
struct port_metadata_t {
  uint16_t ingress_drop_probability = 0;
  uint16_t egress_drop_probability = 0;
};

// Bridged SwitchML metadata (carried across recirculation and to egress).
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:170
struct switchml_md_h {
  bool valid = false;
  uint16_t mgid = 0;
  uint16_t recirc_port_selector = 0;  ///< queue_pair_index_t, 14 bits (RoCE: the QP index)
  PacketSize packet_size = PacketSize::IBV_MTU_128;
  WorkerType worker_type = WorkerType::FORWARD_ONLY;
  uint16_t worker_id = 0;
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  PacketType packet_type = PacketType::MIRROR;
  uint16_t pool_index = 0;  ///< 15 bits: slot << 1 | set
  uint8_t first_last_flag = 0;
  uint32_t map_result = 0;
  uint32_t worker_bitmap_before = 0;
  uint32_t tsi = 0;
  uint8_t job_number = 0;
  uint16_t ingress_port = 0;  ///< simulator port of the first pass (used by retransmit)
  bool simulate_egress_drop = false;
  uint8_t num_workers = 0;
  int8_t e0 = 0;
  int8_t e1 = 0;
  uint16_t msg_id = 0;
  bool first_packet = false;
  bool last_packet = false;
};

// Bridged RDMA metadata: the worker's buffer address from the first packet's RETH.
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:229
struct switchml_rdma_md_h {
  uint64_t rdma_addr = 0;
};

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/types.p4:235
struct ingress_metadata_t {
  switchml_md_h switchml_md;
  switchml_rdma_md_h switchml_rdma_md;
  uint32_t worker_bitmap = 0;
  bool checksum_err_ipv4 = false;
  bool update_ipv4_checksum = false;
  port_metadata_t port_metadata;
};

// --- headers.p4 -------------------------------------------------------------
using mac_addr_t = std::array<uint8_t, 6>;

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/headers.p4:22
struct ethernet_h {
  bool valid = false;
  mac_addr_t dst_addr{};
  mac_addr_t src_addr{};
  uint16_t ether_type = 0;
};
inline constexpr size_t kEthernetHBytes = 14;

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/headers.p4:28
struct ipv4_h {
  bool valid = false;
  uint8_t version = 0;
  uint8_t ihl = 0;
  uint8_t diffserv = 0;
  uint16_t total_len = 0;
  uint16_t identification = 0;
  uint8_t flags = 0;
  uint16_t frag_offset = 0;
  uint8_t ttl = 0;
  uint8_t protocol = 0;
  uint16_t hdr_checksum = 0;
  uint32_t src_addr = 0;
  uint32_t dst_addr = 0;
};
inline constexpr size_t kIpv4HBytes = 20;

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/headers.p4:64
struct udp_h {
  bool valid = false;
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  uint16_t length = 0;
  uint16_t checksum = 0;
};
inline constexpr size_t kUdpHBytes = 8;

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/headers.p4:72
struct switchml_h {
  bool valid = false;
  uint8_t msg_type = 0;  ///< 4 bits
  uint8_t unused = 0;    ///< 1 bit
  uint8_t size = 0;      ///< packet_size_t, 3 bits
  uint8_t job_number = 0;
  uint32_t tsi = 0;
  uint16_t pool_index = 0;  ///< bit 15: set; bits 13..0: slot
};
inline constexpr size_t kSwitchmlHBytes = 8;

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/headers.p4:118
struct exponents_h {
  bool valid = false;
  int8_t e0 = 0;
  int8_t e1 = 0;
};
inline constexpr size_t kExponentsHBytes = 2;

// InfiniBand base transport header (RoCEv2).
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/headers.p4:82
struct ib_bth_h {
  bool valid = false;
  uint8_t opcode = 0;
  uint8_t se = 0;                 ///< 1 bit
  uint8_t migration_req = 0;      ///< 1 bit
  uint8_t pad_count = 0;          ///< 2 bits
  uint8_t transport_version = 0;  ///< 4 bits
  uint16_t partition_key = 0;
  uint8_t f_res1 = 0;     ///< 1 bit
  uint8_t b_res1 = 0;     ///< 1 bit
  uint8_t reserved = 0;   ///< 6 bits
  uint32_t dst_qp = 0;    ///< 24 bits
  uint8_t ack_req = 0;    ///< 1 bit
  uint8_t reserved2 = 0;  ///< 7 bits
  uint32_t psn = 0;       ///< 24 bits
};
inline constexpr size_t kIbBthHBytes = 12;

// RDMA extended transport header.
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/headers.p4:101
struct ib_reth_h {
  bool valid = false;
  uint64_t addr = 0;
  uint32_t r_key = 0;
  uint32_t len = 0;
};
inline constexpr size_t kIbRethHBytes = 16;

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/headers.p4:108
struct ib_immediate_h {
  bool valid = false;
  uint32_t immediate = 0;
};
inline constexpr size_t kIbImmediateHBytes = 4;
// The ICRC trails the payload; the parser never extracts it (parsers.p4:179).
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/headers.p4:113
inline constexpr size_t kIbIcrcHBytes = 4;

// 128-byte data header: 32 big-endian 32-bit values.
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/headers.p4:124
struct data_h {
  bool valid = false;
  std::array<uint32_t, 32> d{};
};
inline constexpr size_t kDataHBytes = 128;

// The header stack without ARP and ICMP (not modeled) and the ICRC (never
// extracted or emitted as a header: it stays in the payload).
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/headers.p4:160
struct header_t {
  ethernet_h ethernet;
  ipv4_h ipv4;
  udp_h udp;
  switchml_h switchml;
  exponents_h exponents;
  ib_bth_h ib_bth;
  ib_reth_h ib_reth;
  ib_immediate_h ib_immediate;
  data_h d0;
  data_h d1;
};

}  // namespace inasim::p4::switchml
