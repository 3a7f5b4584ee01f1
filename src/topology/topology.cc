// Topology construction and the three standard data-centre builders.
//
// The builders add links in a fixed order (host links, then edge->agg, then
// agg->core) so that port numbers are predictable without a lookup table; the
// layout is documented in README.md and relied on by tests and the dataplane.
#include "topology/topology.h"

#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace inasim::topo {
namespace {

// Routing tables are [switch][host] arrays, so a bound on the graph keeps every
// later allocation bounded as well.
constexpr uint64_t kMaxVertices = 1'000'000;
// Port numbers are uint16_t in Port/Link and in the dataplane.
constexpr uint64_t kMaxPortsPerNode = uint64_t{std::numeric_limits<uint16_t>::max()} + 1;

[[noreturn]] void Invalid(const std::string& what) { throw std::invalid_argument(what); }

void CheckRate(const char* builder, const char* which, const LinkSpec& spec) {
  if (spec.rate_bps == 0) Invalid(std::string(builder) + ": " + which + " rate_bps must be > 0");
}

void CheckVertices(const char* builder, uint64_t hosts, uint64_t switches) {
  // Callers keep both terms small enough that the sum cannot wrap.
  if (hosts + switches > kMaxVertices) {
    Invalid(std::string(builder) + ": " + std::to_string(hosts) + " hosts + " +
            std::to_string(switches) + " switches exceeds the limit of " +
            std::to_string(kMaxVertices) + " vertices");
  }
}

void CheckPorts(const char* builder, const char* node, uint64_t ports) {
  if (ports > kMaxPortsPerNode) {
    Invalid(std::string(builder) + ": a " + node + " would need " + std::to_string(ports) +
            " ports, more than the " + std::to_string(kMaxPortsPerNode) + " a port number can address");
  }
}

// Appends instead of `prefix + std::to_string(i)`, which trips a GCC 12
// -Wrestrict false positive (GCC bug 105329) at -O2.
std::string Name(const char* prefix, uint32_t index) {
  std::string name(prefix);
  name += std::to_string(index);
  return name;
}

NodeInfo Host(uint32_t id, uint32_t pod) { return NodeInfo{NodeKind::kHost, 0, pod, Name("h", id)}; }

NodeInfo Switch(const char* prefix, uint32_t index, uint16_t tier, uint32_t pod) {
  return NodeInfo{NodeKind::kSwitch, tier, pod, Name(prefix, index)};
}

}  // namespace

uint32_t Topology::AddNode(NodeInfo info) {
  const bool host = info.kind == NodeKind::kHost;
  // Hosts-first numbering lets every layer use the host id as a vertex index.
  if (host && seen_switch_) throw std::logic_error("Topology::AddNode: host added after a switch");
  if (num_vertices() >= kMaxVertices) {
    throw std::length_error("Topology::AddNode: more than " + std::to_string(kMaxVertices) +
                            " vertices");
  }
  const auto v = static_cast<uint32_t>(boost::add_vertex(std::move(info), graph_));
  ports_.emplace_back();
  if (host) {
    ++num_hosts_;
  } else {
    seen_switch_ = true;
  }
  return v;
}

uint32_t Topology::AddLink(uint32_t a, uint32_t b, LinkSpec spec) {
  const uint32_t n = num_vertices();
  if (a >= n || b >= n) {
    Invalid("Topology::AddLink: vertex " + std::to_string(a >= n ? a : b) + " out of range (" +
            std::to_string(n) + " vertices)");
  }
  if (a == b) Invalid("Topology::AddLink: self-loop on vertex " + std::to_string(a));
  if (spec.rate_bps == 0) Invalid("Topology::AddLink: rate_bps must be > 0");
  if (ports_[a].size() >= kMaxPortsPerNode || ports_[b].size() >= kMaxPortsPerNode) {
    Invalid("Topology::AddLink: node out of port numbers");
  }
  const auto index = static_cast<uint32_t>(links_.size());
  const auto port_a = static_cast<uint16_t>(ports_[a].size());
  const auto port_b = static_cast<uint16_t>(ports_[b].size());
  links_.push_back(Link{a, b, port_a, port_b, spec});
  ports_[a].push_back(Port{b, port_b, index});
  ports_[b].push_back(Port{a, port_a, index});
  boost::add_edge(a, b, EdgeInfo{index}, graph_);
  return index;
}

Topology BuildSingleRack(uint32_t hosts, LinkSpec host_link) {
  constexpr const char* kName = "BuildSingleRack";
  if (hosts == 0) Invalid("BuildSingleRack: hosts must be > 0");
  CheckRate(kName, "host_link", host_link);
  CheckVertices(kName, hosts, 1);
  CheckPorts(kName, "ToR", hosts);

  Topology t;
  t.description = "single_rack(hosts=" + std::to_string(hosts) + ")";
  for (uint32_t h = 0; h < hosts; ++h) t.AddNode(Host(h, 0));
  const uint32_t tor = t.AddNode(NodeInfo{NodeKind::kSwitch, 1, 0, "tor"});
  for (uint32_t h = 0; h < hosts; ++h) t.AddLink(h, tor, host_link);
  return t;
}

Topology BuildLeafSpine(uint32_t leaves, uint32_t spines, uint32_t hosts_per_leaf,
                        LinkSpec host_link, LinkSpec fabric_link) {
  constexpr const char* kName = "BuildLeafSpine";
  if (leaves == 0) Invalid("BuildLeafSpine: leaves must be > 0");
  if (spines == 0) Invalid("BuildLeafSpine: spines must be > 0");
  if (hosts_per_leaf == 0) Invalid("BuildLeafSpine: hosts_per_leaf must be > 0");
  CheckRate(kName, "host_link", host_link);
  CheckRate(kName, "fabric_link", fabric_link);
  const uint64_t hosts = uint64_t{leaves} * hosts_per_leaf;
  CheckVertices(kName, hosts, uint64_t{leaves} + spines);
  CheckPorts(kName, "leaf", uint64_t{hosts_per_leaf} + spines);
  CheckPorts(kName, "spine", leaves);

  Topology t;
  t.description = "leaf_spine(leaves=" + std::to_string(leaves) + ",spines=" +
                  std::to_string(spines) + ",hosts_per_leaf=" + std::to_string(hosts_per_leaf) + ")";
  const auto num_hosts = static_cast<uint32_t>(hosts);
  for (uint32_t h = 0; h < num_hosts; ++h) t.AddNode(Host(h, 0));
  const uint32_t leaf0 = num_hosts;
  for (uint32_t i = 0; i < leaves; ++i) t.AddNode(Switch("leaf", i, 1, 0));
  const uint32_t spine0 = leaf0 + leaves;
  for (uint32_t j = 0; j < spines; ++j) t.AddNode(Switch("spine", j, 2, 0));

  // Host links first: leaf i port p is host i*H+p; then leaf port H+j = spine j
  // and spine port i = leaf i.
  for (uint32_t h = 0; h < num_hosts; ++h) t.AddLink(h, leaf0 + h / hosts_per_leaf, host_link);
  for (uint32_t i = 0; i < leaves; ++i) {
    for (uint32_t j = 0; j < spines; ++j) t.AddLink(leaf0 + i, spine0 + j, fabric_link);
  }
  return t;
}

Topology BuildFatTree(uint32_t k, LinkSpec host_link, LinkSpec fabric_link,
                      uint32_t hosts_per_edge) {
  constexpr const char* kName = "BuildFatTree";
  if (k < 2 || k % 2 != 0) Invalid("BuildFatTree: k must be even and >= 2, got " + std::to_string(k));
  CheckRate(kName, "host_link", host_link);
  CheckRate(kName, "fabric_link", fabric_link);
  const uint32_t half = k / 2;
  const uint32_t hpe = hosts_per_edge == 0 ? half : hosts_per_edge;
  const uint64_t edges = uint64_t{k} * half;  // also the number of aggs
  const uint64_t cores = uint64_t{half} * half;
  // Switches first: with k bounded, edges * hpe below cannot overflow 64 bits.
  CheckVertices(kName, 0, 2 * edges + cores);
  const uint64_t hosts = edges * hpe;
  CheckVertices(kName, hosts, 2 * edges + cores);
  CheckPorts(kName, "edge switch", uint64_t{hpe} + half);
  // Aggs and cores have k ports; the vertex cap already bounds k far below 2^16.

  Topology t;
  t.description = "fat_tree(k=" + std::to_string(k) + ",hosts_per_edge=" + std::to_string(hpe) + ")";
  const auto num_hosts = static_cast<uint32_t>(hosts);
  const auto num_edges = static_cast<uint32_t>(edges);
  const auto num_cores = static_cast<uint32_t>(cores);
  for (uint32_t h = 0; h < num_hosts; ++h) t.AddNode(Host(h, h / hpe / half));
  const uint32_t edge0 = num_hosts;
  for (uint32_t e = 0; e < num_edges; ++e) t.AddNode(Switch("edge", e, 1, e / half));
  const uint32_t agg0 = edge0 + num_edges;
  for (uint32_t a = 0; a < num_edges; ++a) t.AddNode(Switch("agg", a, 2, a / half));
  const uint32_t core0 = agg0 + num_edges;
  for (uint32_t c = 0; c < num_cores; ++c) t.AddNode(Switch("core", c, 3, 0));

  // Order fixes the ports: edge = [hosts..., agg 0..k/2-1 of its pod];
  // agg = [edge 0..k/2-1 of its pod, core j*k/2 .. j*k/2+k/2-1]; core c = [pod 0..k-1].
  for (uint32_t h = 0; h < num_hosts; ++h) t.AddLink(h, edge0 + h / hpe, host_link);
  for (uint32_t p = 0; p < k; ++p) {
    for (uint32_t i = 0; i < half; ++i) {
      for (uint32_t j = 0; j < half; ++j) {
        t.AddLink(edge0 + p * half + i, agg0 + p * half + j, fabric_link);
      }
    }
  }
  for (uint32_t p = 0; p < k; ++p) {
    for (uint32_t j = 0; j < half; ++j) {
      for (uint32_t m = 0; m < half; ++m) {
        t.AddLink(agg0 + p * half + j, core0 + j * half + m, fabric_link);
      }
    }
  }
  return t;
}

}  // namespace inasim::topo
