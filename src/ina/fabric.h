// Builds the ns-3 network for a Topology: hosts with ns-3's IPv4/UDP/TCP stack
// (static routing only: one interface, one /8 route), lean switch nodes with
// per-destination tables, and an InaChannel per link. Hides all wiring.
#pragma once

#include "congestion/egress_queue.h"
#include "ina/ina-net-device.h"
#include "ina/ina-switch-node.h"
#include "topology/topology.h"

#include "ns3/ipv4-address.h"
#include "ns3/node-container.h"

#include <memory>
#include <utility>
#include <vector>

namespace inasim {

struct FabricConfig {
  congestion::PortConfig switch_port;     ///< every switch egress port
  congestion::PortConfig host_port;       ///< every host NIC
  /// ECN K of switch ports by link rate (bit/s): DCTCP's K scales with C x RTT.
  std::vector<std::pair<uint64_t, uint64_t>> ecn_threshold_by_rate;
  ForwardingConfig forwarding;
  uint32_t wire_overhead_bytes = 24;
  uint16_t mtu_bytes = 1500;              ///< IP MTU of host interfaces
  uint64_t forwarding_latency_ps = 0;     ///< added to every hop that ends at a switch
};

class Fabric {
 public:
  /// Builds everything; `topo` must outlive the Fabric.
  Fabric(const topo::Topology& topo, const FabricConfig& config);
  ~Fabric();

  const topo::Topology& topology() const { return topo_; }
  const topo::RoutingTable& routing() const { return *routing_; }
  const ns3::NodeContainer& hosts() const { return hosts_; }
  /// Host h's node, its NIC attached (for applications and endpoints).
  ns3::Ptr<ns3::Node> host(uint32_t h) const { return hosts_.Get(h); }
  /// Host h's node with ns-3's IPv4/TCP/UDP stack, installed on first use:
  /// only hosts that open ns-3 sockets (TCP flows and baselines) pay for one.
  ns3::Ptr<ns3::Node> ip_host(uint32_t h);
  ns3::Ipv4Address host_address(uint32_t h) const;
  InaSwitchNode& switch_node(uint32_t switch_id) const { return *switches_[switch_id]; }
  uint32_t num_switches() const { return static_cast<uint32_t>(switches_.size()); }
  /// Device of vertex v's port p.
  InaNetDevice& device(uint32_t v, uint16_t p) const { return *devices_[v][p]; }
  /// The two directions of link i: [0] transmits a->b, [1] transmits b->a.
  InaNetDevice& link_tx(uint32_t link, int dir) const;
  InaChannel& channel(uint32_t link) const { return *channels_[link]; }

  /// Bernoulli loss on both directions of link i, each direction with its own
  /// stream so adding a lossy link never changes another link's draws.
  void SetLinkLoss(uint32_t link, double rate);
  /// Link i fails (both directions) at `at_ps`. Until the control plane
  /// reconverges, switches only avoid it locally (another equal-cost port);
  /// `reconverge_ps` later every switch gets tables computed without it.
  void SetLinkDown(uint32_t link, uint64_t at_ps, uint64_t reconverge_ps = UINT64_MAX);
  /// Switch vertex `sw` fails at `at_ps`: every link of it goes down at once
  /// (a dead switch forwards nothing and its soft state is gone), and the
  /// tables are recomputed once without them `reconverge_ps` later.
  void SetSwitchDown(uint32_t sw, uint64_t at_ps, uint64_t reconverge_ps = UINT64_MAX);
  /// From `at_ps` on, every frame host h sends arrives `extra_ps` later (a straggler).
  void SetHostDelay(uint32_t host, uint64_t extra_ps, uint64_t at_ps);

  /// How long a `frame_bytes` frame takes from host `src` starting to send it
  /// to host `dst` holding it, alone in an idle, fault-free network: on one
  /// shortest path (the lowest next-hop port at each switch; equal-cost paths
  /// look alike in the topologies we build), each hop's serialization (whole
  /// picoseconds, as the device rounds it), propagation and, into a switch,
  /// its forwarding latency, plus `per_switch_ps` at each switch (a
  /// dataplane's pipeline time, which the fabric does not know). A host's
  /// injected delay (faults.hosts) is not part of it. `bottleneck_bps`, if
  /// given, receives the path's slowest link rate.
  uint64_t IdleOneWayPs(uint32_t src, uint32_t dst, uint32_t frame_bytes, uint64_t per_switch_ps = 0,
                        uint64_t* bottleneck_bps = nullptr) const;

 private:
  const topo::Topology& topo_;
  FabricConfig config_;
  std::unique_ptr<ArrivalPool> pool_;  // declared first: destroyed last
  std::unique_ptr<topo::RoutingTable> routing_;
  ns3::NodeContainer hosts_;
  std::vector<uint8_t> has_ip_stack_;
  std::vector<ns3::Ptr<InaSwitchNode>> switches_;
  std::vector<std::vector<ns3::Ptr<InaNetDevice>>> devices_;  // [vertex][port]
  std::vector<ns3::Ptr<InaChannel>> channels_;
  std::vector<uint8_t> failed_links_;
  std::vector<std::unique_ptr<topo::RoutingTable>> old_routing_;  // tables in use stay alive

  /// The links fail together; the tables are recomputed once without them.
  void SetLinksDown(std::vector<uint32_t> links, uint64_t at_ps, uint64_t reconverge_ps);
  void Reconverge(std::vector<uint32_t> links);
};

/// Stream numbers: every random component draws from its own ns-3 RngStream.
/// Loss of link i direction d uses kLossStreamBase + 2i + d; spraying at switch s
/// uses kSprayStreamBase + s; workloads start at kWorkloadStreamBase.
inline constexpr int64_t kSprayStreamBase = 1'000'000;
inline constexpr int64_t kLossStreamBase = 2'000'000;
inline constexpr int64_t kWorkloadStreamBase = 10'000'000;

}  // namespace inasim
