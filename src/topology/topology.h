// Data-centre topologies as Boost.Graph graphs, with explicit port numbering.
//
// Vertex numbering is fixed so that every other layer can index arrays by it:
// hosts come first (vertex v == host id for v < num_hosts()), then switches
// (switch id == vertex - num_hosts()). Each node's ports are numbered 0..n-1 in
// the order its links were added; a switch dataplane sees exactly these numbers.
#pragma once

#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include "p4model/common/span.h"
#include <string>
#include <vector>

namespace inasim::topo {

/// Rate and one-way propagation delay of one full-duplex link.
struct LinkSpec {
  uint64_t rate_bps = 100'000'000'000ULL;  ///< bits per second
  uint64_t delay_ps = 1'000'000ULL;         ///< propagation delay, picoseconds
};

enum class NodeKind : uint8_t { kHost, kSwitch };

/// Tier of a node: 0 hosts, 1 ToR/leaf/edge, 2 spine/aggregation, 3 core.
struct NodeInfo {
  NodeKind kind = NodeKind::kHost;
  uint16_t tier = 0;
  uint32_t pod = 0;   ///< fat-tree pod (0 elsewhere)
  std::string name;   ///< "h12", "leaf3", "spine0", "edge2", "agg5", "core7", "tor"
};

struct EdgeInfo {
  uint32_t link = 0;  ///< index into Topology::links()
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                    NodeInfo, EdgeInfo>;

/// One end of a link as seen from a node.
struct Port {
  uint32_t peer = 0;       ///< vertex at the other end
  uint16_t peer_port = 0;  ///< port number on the peer
  uint32_t link = 0;       ///< index into Topology::links()
};

struct Link {
  uint32_t a = 0, b = 0;            ///< vertices
  uint16_t port_a = 0, port_b = 0;  ///< port numbers on a and b
  LinkSpec spec;
};

class Topology {
 public:
  /// Adds a node; hosts must all be added before the first switch.
  uint32_t AddNode(NodeInfo info);
  /// Adds a full-duplex link; returns its index.
  uint32_t AddLink(uint32_t a, uint32_t b, LinkSpec spec);

  uint32_t num_hosts() const { return num_hosts_; }
  uint32_t num_switches() const { return num_vertices() - num_hosts_; }
  uint32_t num_vertices() const { return static_cast<uint32_t>(boost::num_vertices(graph_)); }
  bool is_host(uint32_t v) const { return v < num_hosts_; }
  uint32_t switch_vertex(uint32_t switch_id) const { return num_hosts_ + switch_id; }
  const NodeInfo& node(uint32_t v) const { return graph_[v]; }

  const std::vector<Port>& ports(uint32_t v) const { return ports_[v]; }
  const std::vector<Link>& links() const { return links_; }
  const Graph& graph() const { return graph_; }

  /// The single switch a host is attached to (and the port on it).
  uint32_t tor_of(uint32_t host) const { return ports_[host].at(0).peer; }

  /// Human-readable kind of topology, e.g. "fat_tree(k=4)".
  std::string description;

 private:
  Graph graph_;
  std::vector<std::vector<Port>> ports_;
  std::vector<Link> links_;
  uint32_t num_hosts_ = 0;
  bool seen_switch_ = false;
};

/// n hosts on one switch. Throws std::invalid_argument on bad sizes.
Topology BuildSingleRack(uint32_t hosts, LinkSpec host_link);

/// 2-level leaf-spine Clos: each leaf has hosts_per_leaf hosts and one link to
/// every spine. Oversubscription = hosts_per_leaf * host rate / (spines * fabric rate).
Topology BuildLeafSpine(uint32_t leaves, uint32_t spines, uint32_t hosts_per_leaf,
                        LinkSpec host_link, LinkSpec fabric_link);

/// 3-tier k-ary fat tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge and
/// k/2 aggregation switches, (k/2)^2 cores. hosts_per_edge = 0 means k/2
/// (non-blocking); more hosts per edge oversubscribe the edge layer.
Topology BuildFatTree(uint32_t k, LinkSpec host_link, LinkSpec fabric_link,
                      uint32_t hosts_per_edge = 0);

/// Shortest-path (up/down in a Clos) next hops for every switch and destination
/// host. Ports in each set are sorted ascending, so the result is deterministic.
class RoutingTable {
 public:
  /// `failed_links` (optional, indexed by link): links routing must avoid, as
  /// after the control plane reconverged around a failure.
  explicit RoutingTable(const Topology& topo, const std::vector<uint8_t>* failed_links = nullptr);

  /// Equal-cost next-hop ports of switch vertex `sw` towards host `host`.
  inasim::Span<const uint16_t> NextHops(uint32_t sw, uint32_t host) const {
    const uint32_t g = group_[static_cast<size_t>(sw - num_hosts_) * num_hosts_dst_ + host];
    return {ports_.data() + group_offset_[g], group_offset_[g + 1] - group_offset_[g]};
  }
  /// Number of distinct next-hop sets (for memory reports).
  size_t num_groups() const { return group_offset_.size() - 1; }
  size_t memory_bytes() const;

 private:
  uint32_t num_hosts_ = 0;      // vertex offset of switch 0
  uint32_t num_hosts_dst_ = 0;  // row length
  std::vector<uint32_t> group_;         // [switch][host] -> group id
  std::vector<uint32_t> group_offset_;  // group id -> offset into ports_
  std::vector<uint16_t> ports_;
};

/// A spanning tree over a set of hosts rooted at one switch: the union of one
/// shortest path from each host to the root. Among equal-cost next hops the
/// tree takes the one chosen by (host-independent) lowest port, so that paths
/// from one subtree merge as early as possible.
struct AggregationTree {
  static constexpr uint32_t kNone = 0xffffffffu;
  uint32_t root = kNone;                      ///< root switch vertex
  std::vector<uint32_t> hosts;                ///< participating host ids
  std::vector<uint32_t> parent;               ///< per vertex: parent vertex or kNone
  std::vector<int32_t> parent_port;           ///< per vertex: own port towards parent, -1 if none
  std::vector<std::vector<uint16_t>> child_ports;  ///< per vertex: own ports towards children
  bool contains(uint32_t v) const { return v == root || parent[v] != kNone; }
  /// Vertices in the tree, root first then breadth-first.
  std::vector<uint32_t> vertices() const;
  /// Longest host-to-root hop count.
  uint32_t depth() const;
};

/// Tree rooted at switch vertex `root` over `hosts`. Throws if root is not a
/// switch or a host cannot reach it.
AggregationTree BuildTree(const Topology& topo, uint32_t root, inasim::Span<const uint32_t> hosts);

/// n trees with distinct roots drawn from the lowest tier in which some switch
/// reaches every host going only downwards (the ToR for one rack, a pod's
/// aggregation switches for one pod, else the spines/cores), spread evenly over
/// that tier's candidates. Throws if fewer than n distinct roots exist.
std::vector<AggregationTree> BuildTrees(const Topology& topo, inasim::Span<const uint32_t> hosts,
                                        uint32_t n);

/// As BuildTrees, but the n distinct roots are a uniform random sample of the
/// candidates (canary-fgcs24 §5.2: static trees "rooted at random" switches),
/// the same on every platform for a seed (SplitMix64, partial Fisher-Yates).
std::vector<AggregationTree> BuildRandomTrees(const Topology& topo, inasim::Span<const uint32_t> hosts, uint32_t n,
                                              uint64_t seed);

/// The switches BuildTrees may use as roots: the lowest tier whose switches reach
/// every host going only downwards (ascending vertex ids). Throws if none.
std::vector<uint32_t> CommonRoots(const Topology& topo, inasim::Span<const uint32_t> hosts);

}  // namespace inasim::topo

namespace inasim::topo {
/// A random permutation of 0..n-1 with no fixed point and a single cycle
/// (Sattolo's algorithm over SplitMix64), identical on every platform for a seed.
/// Used for permutation traffic: host i sends to result[i]. n must be >= 2.
std::vector<uint32_t> RandomDerangement(uint32_t n, uint64_t seed);
}  // namespace inasim::topo
