// What the Canary control plane installs on one switch, as one struct.
#pragma once

#include "protocols/canary/dataplane/types.h"

#include <cstdint>
#include <string>
#include <vector>

namespace inasim::p4::canary {

/// How the descriptor table index is computed from the block id.
enum class IndexHash : uint8_t {
  /// CRC-32 of the id, low bits (a Tofino Hash<> unit; canary-fgcs24 §3.2
  /// "by using a hash function").
  kCrc32,
  /// id modulo the table size: canary-fgcs24 §3.2.1 "statically mapping ids to
  /// descriptor array entries" (no collisions while ids stay in one window).
  kDirect,
};

/// How a descriptor's timeout is detected (canary-fgcs24 §4.3).
enum class TimeoutMode : uint8_t {
  /// One timer per descriptor at allocation time + timeout ("programmable
  /// switches that support timer-based events").
  kExactTimer,
  /// The prototype: a packet generator sends clock packets every
  /// clock_period; each checks the next scan_entries_per_clock entries in
  /// round-robin order and sends the expired ones.
  kClockScan,
};

/// One tenant's share of the descriptor table: the application id's blocks
/// index only descriptors base .. base+size-1. canary-fgcs24 §5.2.4: "because
/// most existing in-network allreduce algorithms statically partition the
/// switch resources across the tenants [4,16,34], to have a fair comparison,
/// we adopt a similar approach also in CANARY".
struct TablePartition {
  uint8_t application_id = 0;  ///< the id's high 8 bits (§3.4, our id layout)
  uint32_t base = 0;           ///< first descriptor of the share
  uint32_t size = 0;           ///< descriptors; a power of two (hash low bits)
};

struct CanaryConfig {
  /// This switch's address, written into collided packets and matched by
  /// restoration packets (canary-fgcs24 §3.2.1, §4.1 "Switch Address").
  uint16_t switch_address = 0;
  /// Source addresses of the aggregate packets this switch originates (our
  /// choice; the paper's raw-Ethernet header has none). Host order.
  uint32_t switch_ip = 0;
  mac_addr_t switch_mac{};

  /// Switch ports (simulator port numbers 0..num_ports-1); <= 64. Sizes the
  /// port-to-one-hot table (canary-fgcs24 §4.2) and the multicast shards.
  uint32_t num_ports = 64;
  /// UDP destination port that marks a Canary packet (our encapsulation).
  uint16_t udp_port = kCanaryUdpPort;
  /// k: int32 elements per packet (32 on the prototype, 256 in the paper's
  /// simulations; canary-fgcs24 §5.1).
  uint32_t num_elements = kSimulationElements;

  /// Descriptor array entries; a power of two (Tofino register sizes; the
  /// index is the low log2(size) bits of the hash). canary-fgcs24 §5.1: 32K.
  uint32_t table_size = kPrototypeDescriptors;
  IndexHash index_hash = IndexHash::kCrc32;
  /// Static per-tenant shares (§5.2.4); an application id without one
  /// indexes the whole table. Shares may not overlap.
  std::vector<TablePartition> partitions;

  /// canary-fgcs24 §3.1.1 timeout t; §3.2.2 and §5.2.5 use 1..3 us.
  uint64_t timeout_ps = 1'000'000;
  TimeoutMode timeout_mode = TimeoutMode::kExactTimer;
  /// kClockScan: packet-generator period and entries checked per clock packet
  /// (canary-fgcs24 §4.3 "check an entry of the table": 1). table_size must be
  /// a multiple of scan_entries_per_clock. Clock packets start at time 0.
  uint64_t clock_period_ps = 10'000;
  uint32_t scan_entries_per_clock = 1;

  /// Ports per children-bitmap shard (canary-fgcs24 §4.2). With 64 ports, 16
  /// gives the paper's four shards and 4 * 2^16 = 262,144 multicast groups.
  /// shard bits + bits of the shard index must fit the 32-bit children field.
  uint32_t multicast_shard_ports = 16;
  /// Multicast groups one pipeline pass can replicate to (Tofino's
  /// mcast_grp_a and mcast_grp_b: 2); more shards recirculate.
  uint32_t multicast_groups_per_pass = 2;

  /// Pipeline time per pass, picoseconds (paper silent; SwitchML's 520 ns).
  uint64_t pass_latency_ps = 520'000;

  /// Throws std::invalid_argument naming the problem.
  void Validate() const;
  /// Throws std::invalid_argument if `p` is malformed or collides with a share
  /// already in `partitions` (same application id, or overlapping descriptors).
  void ValidatePartition(const TablePartition& p) const;

  /// Parses JSON like (the keys a scenario's workload.canary has too keep
  /// its names and units: protocols/canary/dataplane/keys.h):
  /// {"switch_address":7,"switch_ip":"10.255.0.7","switch_mac":"02:00:00:00:ff:07",
  ///  "num_ports":64,"udp_port":45501,"elements_per_packet":256,"table_size":32768,
  ///  "index_hash":"crc32"|"direct",
  ///  "partitions":[{"application_id":1,"base":0,"size":1024}],"timeout_us":1,
  ///  "timeout_mode":"exact"|"clock_scan","clock_period_ns":10,
  ///  "scan_entries_per_clock":1,"multicast_shard_ports":16,
  ///  "multicast_groups_per_pass":2,"pass_latency_ns":520}
  /// Every key is optional (defaults above; "{}" is a valid config). Throws
  /// std::invalid_argument "canary config: <key>: <problem>" on malformed
  /// input or unknown keys.
  static CanaryConfig FromJson(const std::string& text);
};

}  // namespace inasim::p4::canary
