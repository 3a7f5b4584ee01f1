#include "ina/traffic-links.h"

#include "ina/background.h"
#include "topology/topology.h"

namespace inasim {

RunHostSets SelectRunHosts(const Scenario& s, uint32_t nh) {
  RunHostSets h;
  if (s.workload.type != WorkloadType::kNone) h.workload = SelectHosts(s.workload.hosts, nh, s.seed);
  BackgroundHosts bg = SelectBackgroundHosts(s, nh, h.workload);
  h.flows = std::move(bg.flows);
  h.congestion = std::move(bg.congestion);
  return h;
}

namespace {

/// Marks (in `used`, two entries per link: [2i] a->b, [2i+1] b->a) every
/// directed link on a route from a host of `sources` to host `dst`: the
/// source's host link, then every equal-cost next hop towards dst.
class RouteMarker {
 public:
  RouteMarker(const topo::Topology& t, const topo::RoutingTable& r)
      : t_(t), r_(r), seen_(t.num_vertices(), 0) {}

  void Mark(const std::vector<uint32_t>& sources, uint32_t dst, std::vector<uint8_t>& used) {
    ++stamp_;
    for (const uint32_t src : sources) {
      if (src == dst) continue;
      Hop(src, 0, used);
      Walk(t_.tor_of(src), dst, used);
    }
  }

 private:
  void Hop(uint32_t v, uint16_t port, std::vector<uint8_t>& used) const {
    const topo::Port& p = t_.ports(v)[port];
    const topo::Link& l = t_.links()[p.link];
    used[2 * size_t{p.link} + (l.a == v ? 0 : 1)] = 1;
  }
  void Walk(uint32_t sw, uint32_t dst, std::vector<uint8_t>& used) {
    if (seen_[sw] == stamp_) return;  // its routes towards dst are marked already
    seen_[sw] = stamp_;
    for (const uint16_t port : r_.NextHops(sw, dst)) {
      Hop(sw, port, used);
      const uint32_t next = t_.ports(sw)[port].peer;
      if (!t_.is_host(next)) Walk(next, dst, used);
    }
  }

  const topo::Topology& t_;
  const topo::RoutingTable& r_;
  std::vector<uint32_t> seen_;
  uint32_t stamp_ = 0;
};

std::vector<uint8_t> RoutesAmong(RouteMarker& m, const std::vector<uint32_t>& hosts, size_t directed) {
  std::vector<uint8_t> used(directed, 0);
  if (hosts.size() < 2) return used;
  for (const uint32_t dst : hosts) m.Mark(hosts, dst, used);
  return used;
}

std::string DirectedName(const topo::Topology& t, size_t d) {
  const topo::Link& l = t.links()[d / 2];
  const uint32_t from = d % 2 ? l.b : l.a, to = d % 2 ? l.a : l.b;
  return t.node(from).name + "->" + t.node(to).name;
}

}  // namespace

nlohmann::json TrafficLinksJson(const Scenario& s) {
  const topo::Topology t = BuildTopology(s);
  const topo::RoutingTable routing(t);
  const RunHostSets hosts = SelectRunHosts(s, t.num_hosts());
  const size_t directed = 2 * t.links().size();
  RouteMarker marker(t, routing);
  const std::vector<uint8_t> workload = RoutesAmong(marker, hosts.workload, directed);
  std::vector<uint8_t> background(directed, 0);
  if (!s.background.flows.list.empty()) {
    for (const auto& f : s.background.flows.list) marker.Mark({f.src}, f.dst, background);
  } else {
    const std::vector<uint8_t> f = RoutesAmong(marker, hosts.flows, directed);
    for (size_t i = 0; i < directed; ++i) background[i] |= f[i];
  }
  const std::vector<uint8_t> c = RoutesAmong(marker, hosts.congestion, directed);
  size_t nw = 0, nb = 0, shared = 0;
  nlohmann::json examples = nlohmann::json::array();
  for (size_t i = 0; i < directed; ++i) {
    background[i] |= c[i];
    nw += workload[i];
    nb += background[i];
    if (workload[i] && background[i] && shared++ < 5) examples.push_back(DirectedName(t, i));
  }
  return {{"hosts", {{"workload", hosts.workload}, {"flows", hosts.flows}, {"congestion", hosts.congestion}}},
          {"links", {{"directed", directed}, {"workload", nw}, {"background", nb}, {"shared", shared}}},
          {"shared_examples", examples}};
}

}  // namespace inasim
