// All-pairs shortest-path next hops, one BFS per destination host.
//
// A Clos has few distinct next-hop sets (e.g. "all up ports", "the one down
// port towards pod p"), so the [switch][host] table stores a 32-bit group id
// and each distinct port set is stored once.
#include "topology/topology.h"

#include <boost/container_hash/hash.hpp>

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace inasim::topo {
namespace {

constexpr uint32_t kUnreached = std::numeric_limits<uint32_t>::max();

struct PortSetHash {
  size_t operator()(const std::vector<uint16_t>& v) const {
    return boost::hash_range(v.begin(), v.end());
  }
};

}  // namespace

RoutingTable::RoutingTable(const Topology& topo, const std::vector<uint8_t>* failed_links)
    : num_hosts_(topo.num_hosts()), num_hosts_dst_(topo.num_hosts()) {
  auto usable = [failed_links](const Port& p) { return !failed_links || !(*failed_links)[p.link]; };
  const uint32_t n = topo.num_vertices();
  const uint32_t num_switches = topo.num_switches();
  group_.assign(static_cast<size_t>(num_switches) * num_hosts_dst_, 0);

  // Group 0 is the empty set: what a switch that cannot reach a host gets.
  std::unordered_map<std::vector<uint16_t>, uint32_t, PortSetHash> groups;
  groups.emplace(std::vector<uint16_t>{}, 0);
  group_offset_ = {0, 0};

  std::vector<uint32_t> dist(n);
  std::vector<uint32_t> queue(n);
  std::vector<uint16_t> hops;
  for (uint32_t d = 0; d < num_hosts_dst_; ++d) {
    std::fill(dist.begin(), dist.end(), kUnreached);
    size_t head = 0, tail = 0;
    dist[d] = 0;
    queue[tail++] = d;
    while (head < tail) {
      const uint32_t v = queue[head++];
      // Hosts do not forward: a path may end at a host but never pass through one.
      if (v != d && topo.is_host(v)) continue;
      for (const Port& p : topo.ports(v)) {
        if (dist[p.peer] == kUnreached && usable(p)) {
          dist[p.peer] = dist[v] + 1;
          queue[tail++] = p.peer;
        }
      }
    }

    for (uint32_t s = 0; s < num_switches; ++s) {
      const uint32_t sv = num_hosts_ + s;
      if (dist[sv] == kUnreached) continue;  // stays group 0
      hops.clear();
      const auto& ports = topo.ports(sv);
      for (size_t i = 0; i < ports.size(); ++i) {
        const uint32_t peer = ports[i].peer;
        // A host other than d is a dead end even if its BFS label looks closer.
        if (dist[peer] == dist[sv] - 1 && (peer == d || !topo.is_host(peer)) && usable(ports[i])) {
          hops.push_back(static_cast<uint16_t>(i));
        }
      }
      auto it = groups.find(hops);
      if (it == groups.end()) {
        const auto id = static_cast<uint32_t>(group_offset_.size() - 1);
        it = groups.emplace(hops, id).first;
        ports_.insert(ports_.end(), hops.begin(), hops.end());
        group_offset_.push_back(static_cast<uint32_t>(ports_.size()));
      }
      group_[static_cast<size_t>(s) * num_hosts_dst_ + d] = it->second;
    }
  }
  group_offset_.shrink_to_fit();
  ports_.shrink_to_fit();
}

size_t RoutingTable::memory_bytes() const {
  return sizeof(*this) + group_.capacity() * sizeof(uint32_t) +
         group_offset_.capacity() * sizeof(uint32_t) + ports_.capacity() * sizeof(uint16_t);
}

}  // namespace inasim::topo
