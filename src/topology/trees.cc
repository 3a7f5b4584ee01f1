// Aggregation trees: one shortest path from each host to a root switch.
#include "topology/topology.h"
#include "topology/split_mix64.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace inasim::topo {
namespace {

constexpr uint32_t kUnreached = std::numeric_limits<uint32_t>::max();

// BFS hop counts from `source`; hosts other than the source are reached but
// never expanded, because hosts do not forward.
std::vector<uint32_t> Distances(const Topology& topo, uint32_t source) {
  std::vector<uint32_t> dist(topo.num_vertices(), kUnreached);
  std::vector<uint32_t> queue;
  queue.reserve(topo.num_vertices());
  dist[source] = 0;
  queue.push_back(source);
  for (size_t head = 0; head < queue.size(); ++head) {
    const uint32_t v = queue[head];
    if (v != source && topo.is_host(v)) continue;
    for (const Port& p : topo.ports(v)) {
      if (dist[p.peer] == kUnreached) {
        dist[p.peer] = dist[v] + 1;
        queue.push_back(p.peer);
      }
    }
  }
  return dist;
}

void CheckHosts(const Topology& topo, inasim::Span<const uint32_t> hosts, const char* fn) {
  if (hosts.empty()) throw std::invalid_argument(std::string(fn) + ": empty host set");
  std::vector<bool> seen(topo.num_hosts(), false);
  for (const uint32_t h : hosts) {
    if (h >= topo.num_hosts()) {
      throw std::invalid_argument(std::string(fn) + ": host " + std::to_string(h) +
                                  " out of range (" + std::to_string(topo.num_hosts()) + " hosts)");
    }
    if (seen[h]) throw std::invalid_argument(std::string(fn) + ": duplicate host " + std::to_string(h));
    seen[h] = true;
  }
}

}  // namespace

std::vector<uint32_t> AggregationTree::vertices() const {
  if (root == kNone) return {};
  // Children lists in CSR form; scanning v upwards keeps each list in vertex order,
  // which makes the order deterministic without needing the topology.
  const size_t n = parent.size();
  std::vector<uint32_t> start(n + 1, 0);
  for (size_t v = 0; v < n; ++v) {
    if (parent[v] != kNone) ++start[parent[v] + 1];
  }
  for (size_t v = 0; v < n; ++v) start[v + 1] += start[v];
  std::vector<uint32_t> children(start[n]);
  std::vector<uint32_t> fill(start.begin(), start.end() - 1);
  for (size_t v = 0; v < n; ++v) {
    if (parent[v] != kNone) children[fill[parent[v]]++] = static_cast<uint32_t>(v);
  }

  std::vector<uint32_t> order;
  order.reserve(children.size() + 1);
  order.push_back(root);
  for (size_t head = 0; head < order.size(); ++head) {
    const uint32_t v = order[head];
    order.insert(order.end(), children.begin() + start[v], children.begin() + start[v + 1]);
  }
  return order;
}

uint32_t AggregationTree::depth() const {
  uint32_t best = 0;
  for (const uint32_t h : hosts) {
    uint32_t hops = 0;
    for (uint32_t v = h; v != root && v != kNone; v = parent[v]) ++hops;
    best = std::max(best, hops);
  }
  return best;
}

AggregationTree BuildTree(const Topology& topo, uint32_t root, inasim::Span<const uint32_t> hosts) {
  if (root >= topo.num_vertices() || topo.is_host(root)) {
    throw std::invalid_argument("BuildTree: root " + std::to_string(root) + " is not a switch vertex");
  }
  CheckHosts(topo, hosts, "BuildTree");
  const std::vector<uint32_t> dist = Distances(topo, root);

  AggregationTree tree;
  const uint32_t n = topo.num_vertices();
  tree.root = root;
  tree.hosts.assign(hosts.begin(), hosts.end());
  tree.parent.assign(n, AggregationTree::kNone);
  tree.parent_port.assign(n, -1);
  tree.child_ports.assign(n, {});

  for (const uint32_t h : hosts) {
    if (dist[h] == kUnreached) {
      throw std::invalid_argument("BuildTree: host " + std::to_string(h) + " cannot reach root " +
                                  topo.node(root).name);
    }
    // The choice at each vertex ignores which host we came from, so once a walk
    // meets a vertex already in the tree the rest of its path is already there.
    for (uint32_t v = h; v != root && tree.parent[v] == AggregationTree::kNone;) {
      const auto& ports = topo.ports(v);
      size_t chosen = ports.size();
      for (size_t i = 0; i < ports.size(); ++i) {
        const uint32_t peer = ports[i].peer;
        if (dist[peer] == dist[v] - 1 && !topo.is_host(peer)) {
          chosen = i;
          break;
        }
      }
      // Unreachable on a finite BFS labelling from a switch root; kept as a guard.
      if (chosen == ports.size()) throw std::logic_error("BuildTree: no next hop towards the root");
      const Port& up = ports[chosen];
      tree.parent[v] = up.peer;
      tree.parent_port[v] = static_cast<int32_t>(chosen);
      tree.child_ports[up.peer].push_back(up.peer_port);
      v = up.peer;
    }
  }
  for (auto& cp : tree.child_ports) std::sort(cp.begin(), cp.end());
  return tree;
}

std::vector<uint32_t> CommonRoots(const Topology& topo, inasim::Span<const uint32_t> hosts) {
  CheckHosts(topo, hosts, "BuildTrees");

  // A switch whose distance to a host equals its tier reaches it going only
  // downwards; a root must do so for every host, or tree paths would turn back
  // up and waste fabric links.
  const uint32_t num_v = topo.num_vertices();
  std::vector<bool> common(num_v, true);
  for (const uint32_t h : hosts) {
    const std::vector<uint32_t> dist = Distances(topo, h);
    for (uint32_t v = topo.num_hosts(); v < num_v; ++v) {
      if (dist[v] != topo.node(v).tier) common[v] = false;
    }
  }
  uint32_t tier = std::numeric_limits<uint32_t>::max();
  for (uint32_t v = topo.num_hosts(); v < num_v; ++v) {
    if (common[v]) tier = std::min<uint32_t>(tier, topo.node(v).tier);
  }
  std::vector<uint32_t> candidates;
  for (uint32_t v = topo.num_hosts(); v < num_v; ++v) {
    if (common[v] && topo.node(v).tier == tier) candidates.push_back(v);
  }
  if (candidates.empty()) {
    throw std::invalid_argument("BuildTrees: no switch reaches all hosts going only downwards");
  }
  return candidates;
}

std::vector<AggregationTree> BuildTrees(const Topology& topo, inasim::Span<const uint32_t> hosts,
                                        uint32_t n) {
  if (n == 0) throw std::invalid_argument("BuildTrees: n must be > 0");
  const std::vector<uint32_t> candidates = CommonRoots(topo, hosts);
  const uint32_t tier = topo.node(candidates[0]).tier;
  const uint64_t c = candidates.size();
  if (n > c) {
    throw std::invalid_argument("BuildTrees: asked for " + std::to_string(n) + " roots but only " +
                                std::to_string(c) + " tier-" + std::to_string(tier) +
                                " switches are common to all hosts");
  }

  std::vector<AggregationTree> trees;
  trees.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    // floor(i*C/n) is strictly increasing in i when n <= C, so roots are distinct.
    trees.push_back(BuildTree(topo, candidates[i * c / n], hosts));
  }
  return trees;
}

std::vector<AggregationTree> BuildRandomTrees(const Topology& topo, inasim::Span<const uint32_t> hosts, uint32_t n,
                                              uint64_t seed) {
  if (n == 0) throw std::invalid_argument("BuildTrees: n must be > 0");
  std::vector<uint32_t> candidates = CommonRoots(topo, hosts);
  if (n > candidates.size()) {
    throw std::invalid_argument("BuildTrees: asked for " + std::to_string(n) + " roots but only " +
                                std::to_string(candidates.size()) + " tier-" +
                                std::to_string(topo.node(candidates[0]).tier) + " switches are common to all hosts");
  }
  SplitMix64 rng(seed ^ 0x7265656e74726565ULL);  // "reentree": roots apart from other seeded draws
  std::vector<AggregationTree> trees;
  trees.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t j = i + UniformBelow(rng, candidates.size() - i);
    std::swap(candidates[i], candidates[j]);
    trees.push_back(BuildTree(topo, candidates[i], hosts));
  }
  return trees;
}

}  // namespace inasim::topo
