// Hierarchical SwitchML (paper §7, "Scaling beyond a rack"): one level of an
// aggregation tree. This is OUR composition of the upstream program, not
// upstream code: p4app-switchML@b5c74a04 implements one rack only. The design
// follows the paper's text and reuses the upstream model unchanged:
//
//  - Each tree switch runs the upstream SwitchML program (SwitchMLDataplane)
//    with its children as the job's "workers": hosts at a ToR, child switches
//    above. A child switch is a worker of its parent like a host is: its own
//    IPv4/MAC address, UDP destination port 0xbee0, one receive_udp entry, one
//    bitmap bit, one PRE node. So upper levels need no new header and no new
//    register: the same switchml_h (pool_index with the set bit, exponents)
//    carries partial aggregates up, and the same bitmaps/shadow copies make a
//    retransmission recognisable at every level.
//  - Below the root, what the program would send to its workers (the
//    broadcast of a completed slot, or the unicast answer to a retransmission
//    for a complete slot) goes instead, once, up to the parent, rewritten as
//    a worker packet of this switch (paper: "Rather than broadcast the result
//    packet to the workers, it instead sends it to a tier-1 aggregation
//    switch"). A worker's retransmission for a slot complete here therefore
//    re-sends this level's partial aggregate upwards, where it is either
//    aggregated (the first copy was lost) or recognised as a retransmission
//    and answered ("ensuring that the switch affected by the packet loss is
//    always ultimately reached").
//  - A result coming down from the parent is multicast to every child with
//    the child's addresses (paper: "At each level, the switches further
//    multicast the packet"). Children that already had it drop the duplicate
//    (workers by packet id); this level keeps no copy of the final result.
//  - The root is a plain SwitchMLDataplane whose workers are its children.
#pragma once

#include "p4model/common/dataplane.h"
#include "protocols/switchml/dataplane/config.h"
#include "protocols/switchml/dataplane/switchml_dataplane.h"

#include <cstdint>
#include <string>
#include <vector>

namespace inasim::p4::switchml {

/// What a non-root level knows about its parent.
struct ParentLink {
  uint16_t uplink_port = 0;  ///< this switch's (simulator) port towards the parent
  mac_addr_t parent_mac{};
  uint32_t parent_ip = 0;    ///< host order
  /// UDP destination port of the partial aggregates sent up (the switch's);
  /// their source port is the completing packet's (a worker thread's port).
  uint16_t dst_udp_port = kUdpPortSwitchmlBase;
};

class HierarchicalSwitchML : public Dataplane {
 public:
  struct Stats {
    uint64_t partials_up = 0;        ///< completed slots sent to the parent
    uint64_t retransmissions_up = 0; ///< partial aggregates re-sent up for a worker's retransmission
    uint64_t results_down = 0;       ///< results from the parent multicast to the children
    uint64_t copies_down = 0;
    static constexpr StatCounter<Stats> kCounters[] = {
        {"partials_up", &Stats::partials_up},
        {"retransmissions_up", &Stats::retransmissions_up},
        {"results_down", &Stats::results_down},
        {"copies_down", &Stats::copies_down}};
  };

  HierarchicalSwitchML(SwitchMLConfig level, ParentLink parent);

  std::string Name() const override { return "switchml"; }
  bool Claims(const FrameView& frame) const override;
  void Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds now,
               Emitter& out) override;
  std::string DumpState() const override;
  uint32_t LastPasses() const override { return last_passes_; }

  const SwitchMLDataplane& level() const { return level_; }
  const Stats& stats() const { return stats_; }

 private:
  /// Catches what the level's program emits: SwitchML copies are kept (the
  /// first one only: a broadcast's copies differ only in addresses, which are
  /// rewritten anyway), routed frames pass straight through.
  class Capture : public Emitter {
   public:
    Emitter* out = nullptr;
    uint32_t copies = 0;
    std::vector<uint8_t> first;
    Picoseconds latency = 0;
    void Emit(inasim::Span<const uint8_t> frame, uint16_t port, Picoseconds latency) override;
    void EmitMulticast(inasim::Span<const uint8_t> frame, inasim::Span<const uint16_t> ports,
                       Picoseconds latency) override;
    void EmitRouted(inasim::Span<const uint8_t> frame, Picoseconds latency) override;
  };
  bool FromParent(const FrameView& f) const;
  void Down(inasim::Span<const uint8_t> frame, Emitter& out);

  SwitchMLDataplane level_;
  SwitchMLConfig config_;
  ParentLink parent_;
  Capture capture_;
  Stats stats_;
  uint32_t last_passes_ = 0;
  std::vector<uint8_t> copy_;
};

/// Rewrites the Ethernet and IPv4 addresses of a SwitchML frame (IPv4
/// checksum recomputed, TTL 64 as the upstream egress sets it) and, if
/// non-zero, its UDP ports; the UDP checksum is zeroed (optional in IPv4, and
/// the upstream egress does not compute it either).
void RewriteAddresses(uint8_t* frame, size_t len, const mac_addr_t& eth_src, const mac_addr_t& eth_dst,
                      uint32_t ip_src, uint32_t ip_dst, uint16_t udp_src = 0, uint16_t udp_dst = 0);

}  // namespace inasim::p4::switchml
