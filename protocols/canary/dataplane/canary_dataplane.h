// CanaryDataplane: the Canary switch (canary-fgcs24 §3-§4) behind the
// inasim::p4::Dataplane seam. See protocols/canary/dataplane/README.md.
#pragma once

#include "protocols/canary/dataplane/config.h"
#include "protocols/canary/dataplane/controls.h"
#include "protocols/canary/dataplane/types.h"
#include "p4model/common/counters.h"
#include "p4model/common/dataplane.h"

#include <cstdint>
#include <string>
#include <vector>

namespace inasim::p4::canary {

class CanaryDataplane : public Dataplane {
 public:
  /// Model-level counters of what happened to packets (named outcomes).
  struct Stats {
    uint64_t processed = 0;          ///< Process() calls
    uint64_t malformed_dropped = 0;  ///< claimed but truncated/inconsistent (lengths, IPv4 fragment)
    uint64_t not_canary = 0;         ///< Process() on a frame Claims() would refuse: routed untouched
    uint64_t bad_port_dropped = 0;   ///< reduce packet from a port with no one-hot entry
    uint64_t allocated = 0;          ///< §3.1.1 first packet of a block: descriptor created
    uint64_t aggregated = 0;         ///< §3.1.1 same id: added into the accumulator
    uint64_t completed = 0;          ///< §3.1.1 counter reached hosts: aggregate sent at once
    uint64_t timeouts = 0;           ///< §3.1.1 timer expired: partial aggregate sent
    uint64_t stragglers = 0;         ///< §3.1.1 arrived after the aggregate went up: forwarded
    uint64_t collisions = 0;         ///< §3.2.1 different id in the slot: bypassed to the leader
    uint64_t bypassed = 0;           ///< §4.1 bypass bit set: routed untouched
    uint64_t broadcasts = 0;         ///< §3.1.2 multicast to the children, descriptor freed
    uint64_t broadcast_misses = 0;   ///< §3.5 broadcast without a descriptor: dropped
    uint64_t restorations = 0;       ///< §3.2.1 restoration packet for this switch: multicast
    uint64_t restoration_bad_group = 0;  ///< restoration naming no valid group: dropped
    uint64_t multicast_groups = 0;   ///< EmitMulticast calls (one per non-empty shard)
    uint64_t multicast_copies = 0;   ///< ports summed over those calls
    uint64_t stale_timers = 0;       ///< timer of a descriptor already sent/freed/re-allocated
    /// All in the dump; the Canary report shows what a tree did (CSV and
    /// sums) and the malformed drops (sums).
    static constexpr StatCounter<Stats> kCounters[] = {
        {"processed", &Stats::processed},
        {"malformed_dropped", &Stats::malformed_dropped, Shown::kDump | Shown::kSums},
        {"not_canary", &Stats::not_canary},
        {"bad_port_dropped", &Stats::bad_port_dropped},
        {"allocated", &Stats::allocated, Shown::kEverywhere},
        {"aggregated", &Stats::aggregated, Shown::kEverywhere},
        {"completed", &Stats::completed, Shown::kEverywhere},
        {"timeouts", &Stats::timeouts, Shown::kEverywhere},
        {"stragglers", &Stats::stragglers, Shown::kEverywhere},
        {"collisions", &Stats::collisions, Shown::kEverywhere},
        {"bypassed", &Stats::bypassed, Shown::kEverywhere},
        {"broadcasts", &Stats::broadcasts, Shown::kEverywhere},
        {"broadcast_misses", &Stats::broadcast_misses, Shown::kEverywhere},
        {"restorations", &Stats::restorations, Shown::kEverywhere},
        {"restoration_bad_group", &Stats::restoration_bad_group},
        {"multicast_groups", &Stats::multicast_groups},
        {"multicast_copies", &Stats::multicast_copies},
        {"stale_timers", &Stats::stale_timers}};
  };

  explicit CanaryDataplane(CanaryConfig config);

  std::string Name() const override { return "canary"; }
  /// IPv4, UDP, destination port == config.udp_port.
  bool Claims(const FrameView& frame) const override;
  void Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds now,
               Emitter& out) override;
  /// A descriptor's timeout (exact timer or computed clock-scan tick).
  void OnTimer(uint64_t cookie, Picoseconds now, Emitter& out) override;
  std::string DumpState() const override;
  uint32_t LastPasses() const override { return last_passes_; }

  const CanaryConfig& config() const { return config_; }
  const Stats& stats() const { return stats_; }
  /// Descriptors in use now, and the most ever in use at once (§3.2.2).
  uint32_t descriptors_in_use() const { return table_.occupied(); }
  uint32_t peak_descriptors_in_use() const { return table_.peak_occupied(); }
  const MulticastShards& multicast() const { return shards_; }
  /// Descriptor index of block `id`: its tenant's base + (hash & mask).
  uint32_t IndexOf(uint32_t id) const {
    const TenantPartition::Share s = partition_.apply(id);
    return s.base + (hash_.Hash(id) & s.mask);
  }
  /// Control plane: gives application `p.application_id` its own share of the
  /// descriptor table from now on (§5.2.4). Throws std::invalid_argument if
  /// the share is malformed or overlaps one already installed.
  void AddPartition(const TablePartition& p);
  /// The descriptor at `index` (no side effects; an all-zero one when unused).
  const Descriptor& DescriptorAt(uint32_t index) const { return table_.Peek(index); }
  /// The valid descriptor of block `id`, or nullptr.
  const Descriptor* Find(uint32_t id) const;
  /// The accumulator at `index` as int32 (zeros when never written).
  std::vector<int32_t> Accumulator(uint32_t index) const;

 private:
  struct Packet {
    canary_h hdr;
    size_t ip_at = 0;      ///< offset of the IPv4 header
    size_t udp_at = 0;     ///< offset of the UDP header
    size_t canary_at = 0;  ///< offset of the Canary header
    uint32_t ip_dst = 0;
  };
  enum class ParseResult { kCanary, kNotCanary, kMalformed };
  ParseResult Parse(inasim::Span<const uint8_t> frame, Packet& p) const;

  // canary-fgcs24 §3.1.1 / §3.2 / §3.2.1
  void Reduce(uint16_t ingress_port, inasim::Span<const uint8_t> frame, const Packet& p, Picoseconds now,
              Emitter& out);
  // canary-fgcs24 §3.1.2
  void Broadcast(inasim::Span<const uint8_t> frame, const Packet& p, Emitter& out);
  // canary-fgcs24 §3.2.1 tree restoration
  void Restore(inasim::Span<const uint8_t> frame, const Packet& p, Emitter& out);

  /// Builds the aggregate packet of descriptor `index` and routes it towards
  /// its leader (canary-fgcs24 §3.1.1 "stores it in a new packet, and sends it
  /// to the next hop towards the root").
  void SendAggregate(uint32_t index, Emitter& out);
  /// Routes a (possibly rewritten) packet towards the Canary destination.
  void RouteToLeader(inasim::Span<const uint8_t> frame, const Packet& p, bool collided, uint16_t ingress_port,
                     Emitter& out);

  CanaryConfig config_;
  IdHash hash_;
  TenantPartition partition_;
  PortToOneHot port_to_one_hot_;
  DescriptorTable table_;
  TimeoutUnit timeout_;
  MulticastShards shards_;
  Stats stats_;
  uint32_t last_passes_ = 0;
  // Per-packet scratch, reused (no allocation per packet once warmed up).
  std::vector<uint8_t> out_;
  std::vector<uint32_t> groups_;
  std::vector<uint16_t> ports_;
};

}  // namespace inasim::p4::canary
