// One class per Canary switch control. The paper gives no P4, so the controls
// follow its description of the Tofino prototype (canary-fgcs24 §4): a hash
// unit for the descriptor index, a port -> one-hot table, the descriptor
// registers with one named register action per read-modify-write, the timeout
// unit, and the sharded multicast groups. Decision tables are data.
#pragma once

#include "protocols/canary/dataplane/config.h"
#include "protocols/canary/dataplane/types.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

namespace inasim::p4::canary {

// ============================================================================
// Hash unit: block id -> descriptor index
// ============================================================================

/// Byte-at-a-time table of the reflected CRC-32 (polynomial 0x04C11DB7 is
/// 0xEDB88320 bit-reversed).
constexpr std::array<uint32_t, 256> MakeCrc32Table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}

/// CRC-32 as a Tofino Hash<bit<32>>(HashAlgorithm_t.CRC32) computes it: the
/// IEEE 802.3 polynomial 0x04C11DB7, reflected input and output, init
/// 0xFFFFFFFF, final xor 0xFFFFFFFF (check value: "123456789" -> 0xCBF43926).
/// The key is the id's 4 bytes in wire (big-endian) order.
// canary-fgcs24 §3.2 "the switch maps the id to a specific array location
// (e.g., by using a hash function)"
class IdHash {
 public:
  static uint32_t Crc32(const uint8_t* data, size_t n) {
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; ++i) crc = kTable[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
    return crc ^ 0xffffffffu;
  }
  static uint32_t Crc32OfId(uint32_t id) {
    const uint8_t b[4] = {uint8_t(id >> 24), uint8_t(id >> 16), uint8_t(id >> 8), uint8_t(id)};
    return Crc32(b, 4);
  }
  explicit IdHash(IndexHash kind) : kind_(kind) {}
  /// The hash unit's 32-bit output (or the id itself for "direct").
  uint32_t Hash(uint32_t id) const { return kind_ == IndexHash::kCrc32 ? Crc32OfId(id) : id; }

 private:
  static constexpr std::array<uint32_t, 256> kTable = MakeCrc32Table();
  IndexHash kind_;
};

// ============================================================================
// Tenant partition: application id -> the descriptors its blocks may use
// ============================================================================

/// canary-fgcs24 §5.2.4 "statically partition the switch resources across the
/// tenants ... we adopt a similar approach also in CANARY": an exact-match
/// table on the id's application byte (§3.4) whose action sets the share's
/// base and mask; the index is base + (hash & mask). The default action is
/// the whole table (base 0, mask table_size - 1), so without entries the
/// index is the hash's low log2(table_size) bits.
//   table tenant_partition { key = { hdr.canary.id[31:24] : exact; }
//     actions = { set_partition; } default_action = set_partition(0, TABLE_SIZE - 1); }
class TenantPartition {
 public:
  struct Share {
    uint32_t base = 0;
    uint32_t mask = 0;
  };
  explicit TenantPartition(uint32_t table_size) { shares_.fill(Share{0, table_size - 1}); }
  /// Control plane: installs one entry (validated by CanaryConfig).
  void set_partition(const TablePartition& p) { shares_[p.application_id] = Share{p.base, p.size - 1}; }
  Share apply(uint32_t id) const { return shares_[id >> 24]; }

 private:
  std::array<Share, 256> shares_{};
};

// ============================================================================
// Port -> one-hot table
// ============================================================================

/// canary-fgcs24 §4.2 "The switch keeps a table associating to each port the
/// corresponding one-hot encoding ... retrieved through a TCAM (pre-configured
/// in the control plane)". One entry per switch port; a miss (a port the
/// control plane did not configure) returns 0 and the packet is dropped.
class PortToOneHot {
 public:
  explicit PortToOneHot(uint32_t num_ports) {
    for (uint32_t p = 0; p < num_ports; ++p) entries_.push_back(uint64_t{1} << p);
  }
  uint64_t apply(uint16_t port) const { return port < entries_.size() ? entries_[port] : 0; }

 private:
  std::vector<uint64_t> entries_;
};

// ============================================================================
// Packet classification (which phase a packet belongs to)
// ============================================================================

/// The first stages "determine if the packet is a reduce or a broadcast packet"
/// (canary-fgcs24 §4); the bypass and multicast bits (§4.1) and the switch
/// address (§3.2.1) select the action. Const entries, first match wins.
class Classify {
 public:
  enum class Action {
    kRestore,    ///< canary-fgcs24 §3.2.1: a restoration packet for this switch
    kBypass,     ///< canary-fgcs24 §4.1 "Bypass": forward, no processing
    kBroadcast,  ///< canary-fgcs24 §3.1.2
    kReduce,     ///< canary-fgcs24 §3.1.1
  };
  struct Entry {
    int bypass;       ///< 0, 1, or -1 (any)
    int multicast;    ///< 0, 1, or -1
    int for_me;       ///< switch_address == ours: 0, 1, or -1
    Action action;
  };
  static constexpr Entry kEntries[] = {
      {1, 1, 1, Action::kRestore},
      {1, -1, -1, Action::kBypass},
      {0, 1, -1, Action::kBroadcast},
      {0, 0, -1, Action::kReduce},
  };
  static Action apply(const canary_h& h, uint16_t switch_address) {
    auto match = [](int want, bool got) { return want < 0 || want == int(got); };
    for (const Entry& e : kEntries) {
      if (match(e.bypass, h.bypass) && match(e.multicast, h.multicast) &&
          match(e.for_me, h.switch_address == switch_address)) {
        return e.action;
      }
    }
    return Action::kBypass;  // unreachable: the entries cover every case
  }
};

// ============================================================================
// Descriptor table
// ============================================================================

/// One descriptor (canary-fgcs24 §3.1.1, §3.1.3, §3.2, §4.3). On a Tofino each
/// field is its own register array indexed by the hashed id; here one struct
/// per index plus the accumulator array.
struct Descriptor {
  bool valid = false;       ///< entry in use (allocated, not yet freed by the broadcast)
  uint32_t id = 0;          ///< canary-fgcs24 §3.1.3 "the descriptor also contains the block id"
  uint16_t counter = 0;     ///< canary-fgcs24 §3.1.1 counters "summed by the switches and stored in the descriptor"
  uint16_t hosts = 0;       ///< copied from the first packet (needed to rebuild the header on timeout)
  uint32_t leader = 0;      ///< canary-fgcs24 §3.1.1 "the root address (also carried by the packet)"
  uint64_t children = 0;    ///< canary-fgcs24 §4.2 bitmap: one-hot of each ingress port, ORed in
  uint64_t alloc_ps = 0;    ///< canary-fgcs24 §4.3 "stores in the descriptor the current timestamp"
  bool timed_out = false;   ///< canary-fgcs24 §3.1.1: the aggregate has gone up; later packets are stragglers
  uint32_t generation = 0;  ///< model only: allocations of this index, so stale timers are ignored
};

class DescriptorTable {
 public:
  enum class Lookup { kEmpty, kHit, kCollision };

  DescriptorTable(uint32_t size, uint32_t elements) : size_(size), elements_(elements) {}

  /// canary-fgcs24 §3.2: empty location, same id, or a different id (collision).
  Lookup apply(uint32_t index, uint32_t id) {
    const Descriptor& d = Peek(index);
    if (!d.valid) return Lookup::kEmpty;
    return d.id == id ? Lookup::kHit : Lookup::kCollision;
  }

  // --- register actions: one read-modify-write each -------------------------

  /// canary-fgcs24 §3.1.1 "The first time a switch receives a reduction packet,
  /// it creates a descriptor"; §4.3 stores the timestamp. Returns the generation.
  static uint32_t descriptor_allocate(Descriptor& d, const canary_h& h, uint64_t one_hot, uint64_t now_ps) {
    d.valid = true;
    d.id = h.id;
    d.counter = h.counter;
    d.hosts = h.hosts;
    d.leader = h.destination;
    d.children = one_hot;
    d.alloc_ps = now_ps;
    d.timed_out = false;
    return ++d.generation;
  }
  /// canary-fgcs24 §3.1.1 "Counters coming from multiple packets are summed"
  /// (bit<16>: wraps). Returns the new sum.
  static uint16_t counter_add(Descriptor& d, uint16_t counter) {
    d.counter = static_cast<uint16_t>(d.counter + counter);
    return d.counter;
  }
  /// canary-fgcs24 §4.2 "added to the bitmap storing the children".
  static void children_or(Descriptor& d, uint64_t one_hot) { d.children |= one_hot; }
  /// canary-fgcs24 §3.1.1: the partial aggregate went up; returns the old flag.
  static bool timed_out_set(Descriptor& d) {
    const bool was = d.timed_out;
    d.timed_out = true;
    return was;
  }
  /// canary-fgcs24 §3.1.2 "forwards the packet to its children and deallocates
  /// the descriptor".
  static void descriptor_free(Descriptor& d) {
    d.valid = false;
    d.timed_out = false;
  }
  /// canary-fgcs24 §3.1.1 "stores the data carried by the packet" (first packet).
  static void accumulator_write(uint32_t* acc, const uint8_t* data, uint32_t k);
  /// canary-fgcs24 §3.1.1 "aggregates the data carried in the packets with that
  /// stored in the accumulator": int32 addition modulo 2^32 (Tofino ALUs).
  static void accumulator_add(uint32_t* acc, const uint8_t* data, uint32_t k);

  // --- storage --------------------------------------------------------------

  Descriptor& At(uint32_t index) {
    if (entries_.empty()) entries_.resize(size_);
    return entries_[index];
  }
  const Descriptor& Peek(uint32_t index) const {
    static const Descriptor kEmptyDescriptor{};
    return entries_.empty() ? kEmptyDescriptor : entries_[index];
  }
  /// The accumulator of `index`: k cells. The P4 register array has one per
  /// entry; the model keeps cells only for entries in use (a pool of k-cell
  /// slots, taken by the first write after an allocation and returned by
  /// ReleaseAccumulator when the descriptor is freed), so memory follows the
  /// descriptors in use (§3.2.2) instead of the table size: hashed ids touch
  /// every entry of a 32K table over a long run, which with an array per
  /// entry grew to 32 MiB per switch (2 GiB on Canary's 64-switch network).
  /// No behaviour depends on this: an allocation always writes all k cells
  /// first, and no one reads a freed entry's cells.
  uint32_t* Accumulator(uint32_t index);
  const uint32_t* PeekAccumulator(uint32_t index) const {
    return index < slot_.size() && slot_[index] != kNoSlot ? pool_.data() + size_t{slot_[index]} * elements_
                                                           : nullptr;
  }
  void ReleaseAccumulator(uint32_t index) {
    if (index < slot_.size() && slot_[index] != kNoSlot) {
      free_slots_.push_back(slot_[index]);
      slot_[index] = kNoSlot;
    }
  }
  uint32_t size() const { return size_; }
  uint32_t elements() const { return elements_; }
  /// Valid entries, in index order (for DumpState).
  std::vector<uint32_t> ValidIndices() const;
  uint32_t occupied() const { return occupied_; }
  /// Most entries ever valid at once: the switch memory canary-fgcs24 §3.2.2
  /// sizes with b(2d(l+t)+r).
  uint32_t peak_occupied() const { return peak_occupied_; }
  void CountAllocate() { peak_occupied_ = std::max(peak_occupied_, ++occupied_); }
  void CountFree() { --occupied_; }

 private:
  static constexpr uint32_t kNoSlot = 0xffffffffu;
  uint32_t size_;
  uint32_t elements_;
  std::vector<Descriptor> entries_;
  std::vector<uint32_t> slot_;        ///< per entry: its pool slot, or kNoSlot
  std::vector<uint32_t> pool_;        ///< slots of k cells each
  std::vector<uint32_t> free_slots_;
  uint32_t occupied_ = 0;
  uint32_t peak_occupied_ = 0;
};

// ============================================================================
// Timeout unit
// ============================================================================

/// When a descriptor allocated at `alloc_ps` at `index` is found expired
/// (canary-fgcs24 §4.3). Expired means now >= alloc + timeout.
/// - kExactTimer: at alloc + timeout.
/// - kClockScan: clock packets arrive at t = n * period (n = 0, 1, ...); the
///   packet at tick n checks entries [(n mod S) * E, (n mod S) * E + E) where E
///   = scan_entries_per_clock and S = table_size / E. The entry is sent at the
///   first tick that checks it at or after alloc + timeout. We compute that tick
///   instead of simulating every clock packet: same result, one event per
///   descriptor instead of one per period.
class TimeoutUnit {
 public:
  explicit TimeoutUnit(const CanaryConfig& c)
      : mode_(c.timeout_mode),
        timeout_ps_(c.timeout_ps),
        period_ps_(c.clock_period_ps),
        per_clock_(c.scan_entries_per_clock),
        sweep_ticks_(c.table_size / c.scan_entries_per_clock) {}
  uint64_t FireTime(uint32_t index, uint64_t alloc_ps) const {
    const uint64_t deadline = alloc_ps + timeout_ps_;
    if (mode_ == TimeoutMode::kExactTimer) return deadline;
    const uint64_t first_tick = (deadline + period_ps_ - 1) / period_ps_;  // first tick at or after the deadline
    const uint64_t slot = index / per_clock_;                            // which tick of a sweep checks it
    const uint64_t wait = (slot + sweep_ticks_ - first_tick % sweep_ticks_) % sweep_ticks_;
    return (first_tick + wait) * period_ps_;
  }
  bool Expired(uint64_t alloc_ps, uint64_t now_ps) const { return now_ps >= alloc_ps + timeout_ps_; }
  TimeoutMode mode() const { return mode_; }

 private:
  TimeoutMode mode_;
  uint64_t timeout_ps_;
  uint64_t period_ps_;
  uint64_t per_clock_;
  uint64_t sweep_ticks_;
};

/// The timer cookie: the entry's generation and index, so a timer of a freed
/// (or freed and re-allocated) descriptor is recognised as stale.
inline uint64_t TimerCookie(uint32_t index, uint32_t generation) { return uint64_t{generation} << 32 | index; }
inline uint32_t CookieIndex(uint64_t cookie) { return static_cast<uint32_t>(cookie); }
inline uint32_t CookieGeneration(uint64_t cookie) { return static_cast<uint32_t>(cookie >> 32); }

// ============================================================================
// Multicast groups: the sharded children bitmap
// ============================================================================

/// canary-fgcs24 §4.2: the children bitmap is cut into s shards of w = ports/s
/// bits; each shard, with its index prepended, is a multicast group id:
/// group = shard << w | bits. The PRE holds one group per (shard, bit pattern):
/// s * 2^w entries instead of 2^ports. The groups are generated, not stored
/// (like a control plane that installs all of them); Ports() is the PRE lookup.
class MulticastShards {
 public:
  MulticastShards(uint32_t num_ports, uint32_t shard_ports)
      : num_ports_(num_ports), width_(shard_ports), shards_((num_ports + shard_ports - 1) / shard_ports) {}

  /// Group entries a switch with `ports` ports needs with `shard_ports`-bit
  /// shards: ceil(ports / shard_ports) * 2^shard_ports (the paper's 2^(p/s) * s).
  static uint64_t GroupEntries(uint32_t ports, uint32_t shard_ports) {
    const uint64_t shards = (ports + shard_ports - 1) / shard_ports;
    return shards << shard_ports;
  }
  uint64_t group_entries() const { return GroupEntries(num_ports_, width_); }
  uint32_t shards() const { return shards_; }
  uint32_t width() const { return width_; }

  /// The non-empty shards of `children` as group ids, lowest shard first.
  void Groups(uint64_t children, std::vector<uint32_t>& out) const {
    out.clear();
    const uint64_t mask = width_ >= 64 ? ~uint64_t{0} : (uint64_t{1} << width_) - 1;
    for (uint32_t s = 0; s < shards_; ++s) {
      const uint64_t bits = (children >> (s * width_)) & mask;
      if (bits != 0) out.push_back(static_cast<uint32_t>(uint64_t{s} << width_ | bits));
    }
  }
  /// PRE lookup: the ports of group `group`, ascending; false if no such group
  /// (shard index out of range, or a bit for a port the switch does not have).
  bool Ports(uint32_t group, std::vector<uint16_t>& out) const {
    out.clear();
    const uint64_t shard = width_ >= 32 ? 0 : group >> width_;
    const uint64_t bits = width_ >= 32 ? group : group & ((uint32_t{1} << width_) - 1);
    if (shard >= shards_ || bits == 0) return false;
    for (uint32_t b = 0; b < width_; ++b) {
      if (!(bits >> b & 1)) continue;
      const uint64_t port = shard * width_ + b;
      if (port >= num_ports_) return false;
      out.push_back(static_cast<uint16_t>(port));
    }
    return true;
  }

 private:
  uint32_t num_ports_;
  uint32_t width_;
  uint32_t shards_;
};

}  // namespace inasim::p4::canary
