#include "ina/fabric.h"

#include "ina/addressing.h"

#include "ns3/log.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-static-routing-helper.h"
#include "ns3/ipv4.h"
#include "ns3/simulator.h"

#include <fmt/format.h>

#include <stdexcept>

namespace inasim {

NS_LOG_COMPONENT_DEFINE("InaFabric");

using namespace ns3;

namespace {
Ptr<UniformRandomVariable> StreamRng(int64_t stream) {
  auto rng = CreateObject<UniformRandomVariable>();
  rng->SetStream(stream);
  return rng;
}
}  // namespace

Fabric::Fabric(const topo::Topology& topo, const FabricConfig& config)
    : topo_(topo),
      config_(config),
      pool_(std::make_unique<ArrivalPool>()),
      routing_(std::make_unique<topo::RoutingTable>(topo)) {
  const uint32_t nh = topo.num_hosts();
  if (nh > kMaxHosts) throw std::invalid_argument("too many hosts for the 10.0.0.0/8 plan");
  hosts_.Create(nh);
  for (uint32_t s = 0; s < topo.num_switches(); ++s) {
    auto sw = CreateObject<InaSwitchNode>();
    // An RngStream costs ~0.5 M instructions to position: only spraying needs one.
    ForwardingConfig forwarding = config.forwarding;
    forwarding.credit_enabled = config.switch_port.credit_enabled;  // the ports' setting, for the switch's holds
    sw->Configure(topo.switch_vertex(s), topo.node(topo.switch_vertex(s)).tier, routing_.get(), nh,
                  forwarding,
                  config.forwarding.policy == congestion::ForwardingPolicy::kSpray
                      ? StreamRng(kSprayStreamBase + s)
                      : nullptr);
    switches_.push_back(sw);
  }

  devices_.resize(topo.num_vertices());
  for (uint32_t v = 0; v < topo.num_vertices(); ++v) {
    const bool is_switch = !topo.is_host(v);
    for (size_t p = 0; p < topo.ports(v).size(); ++p) {
      auto dev = CreateObject<InaNetDevice>();
      const auto& link = topo.links()[topo.ports(v)[p].link];
      dev->SetRate(link.spec.rate_bps);
      dev->SetWireOverhead(config.wire_overhead_bytes);
      congestion::PortConfig port = is_switch ? config.switch_port : config.host_port;
      if (is_switch)
        for (const auto& [rate_bps, k] : config.ecn_threshold_by_rate)
          if (rate_bps == link.spec.rate_bps) port.ecn_threshold = k;
      dev->SetPortConfig(port);
      dev->SetMtu(config.mtu_bytes);
      dev->SetArrivalPool(pool_.get());
      devices_[v].push_back(dev);
    }
  }
  channels_.reserve(topo.links().size());
  for (uint32_t i = 0; i < topo.links().size(); ++i) {
    const auto& l = topo.links()[i];
    auto ch = CreateObject<InaChannel>();
    ch->link_index = i;
    ch->Connect(devices_[l.a][l.port_a], devices_[l.b][l.port_b], l.spec.delay_ps);
    // Switch pipeline time folds into the hop towards the switch: the same
    // arrival time as a separate "processing" event, one event fewer per hop.
    if (!topo.is_host(l.b)) devices_[l.a][l.port_a]->SetExtraDelay(config.forwarding_latency_ps);
    if (!topo.is_host(l.a)) devices_[l.b][l.port_b]->SetExtraDelay(config.forwarding_latency_ps);
    // Credit-based flow control: whatever sends into a switch port holds
    // that port's credit (hosts take what the switch sends at once).
    if (config.switch_port.credit_enabled) {
      if (!topo.is_host(l.b)) devices_[l.a][l.port_a]->SetCredit(config.switch_port.credit_bytes);
      if (!topo.is_host(l.a)) devices_[l.b][l.port_b]->SetCredit(config.switch_port.credit_bytes);
    }
    channels_.push_back(ch);
  }
  for (uint32_t s = 0; s < topo.num_switches(); ++s) {
    for (auto& dev : devices_[topo.switch_vertex(s)]) switches_[s]->AddPort(dev);
  }

  // Hosts: their NIC; ns-3's stack comes with the first socket (ip_host).
  for (uint32_t h = 0; h < nh; ++h) {
    if (devices_[h].size() != 1) throw std::invalid_argument("a host must have exactly one link");
    devices_[h][0]->SetHostIpv4(HostIpv4(h));
    hosts_.Get(h)->AddDevice(devices_[h][0]);
  }
  has_ip_stack_.assign(nh, 0);
}

// The real ns-3 stack, IPv4 only, static routing (the /8 network route that
// comes with the interface address covers every host).
Ptr<Node> Fabric::ip_host(uint32_t h) {
  Ptr<Node> node = hosts_.Get(h);
  if (has_ip_stack_.at(h)) return node;
  has_ip_stack_[h] = 1;
  InternetStackHelper stack;
  stack.SetIpv6StackInstall(false);
  Ipv4StaticRoutingHelper static_routing;
  stack.SetRoutingHelper(static_routing);
  stack.Install(node);
  Ptr<Ipv4> ipv4 = node->GetObject<Ipv4>();
  const int32_t iface = ipv4->AddInterface(devices_[h][0]);
  ipv4->AddAddress(iface, Ipv4InterfaceAddress(Ipv4Address(HostIpv4(h)), Ipv4Mask("255.0.0.0")));
  ipv4->SetMetric(iface, 1);
  ipv4->SetUp(iface);
  return node;
}

Fabric::~Fabric() = default;

Ipv4Address Fabric::host_address(uint32_t h) const { return Ipv4Address(HostIpv4(h)); }

InaNetDevice& Fabric::link_tx(uint32_t link, int dir) const {
  const auto& l = topo_.links()[link];
  return dir == 0 ? *devices_[l.a][l.port_a] : *devices_[l.b][l.port_b];
}

void Fabric::SetLinkLoss(uint32_t link, double rate) {
  link_tx(link, 0).SetLoss(rate, StreamRng(kLossStreamBase + 2 * int64_t{link}));
  link_tx(link, 1).SetLoss(rate, StreamRng(kLossStreamBase + 2 * int64_t{link} + 1));
}

void Fabric::SetLinkDown(uint32_t link, uint64_t at_ps, uint64_t reconverge_ps) {
  SetLinksDown({link}, at_ps, reconverge_ps);
}

void Fabric::SetSwitchDown(uint32_t sw, uint64_t at_ps, uint64_t reconverge_ps) {
  if (sw >= topo_.num_vertices() || topo_.is_host(sw)) throw std::invalid_argument("SetSwitchDown: not a switch vertex");
  std::vector<uint32_t> links;
  for (const topo::Port& p : topo_.ports(sw)) links.push_back(p.link);
  SetLinksDown(std::move(links), at_ps, reconverge_ps);
}

void Fabric::SetLinksDown(std::vector<uint32_t> links, uint64_t at_ps, uint64_t reconverge_ps) {
  for (uint32_t link : links) {
    NS_LOG_INFO("link " << link << " goes down at " << at_ps << " ps"
                        << (reconverge_ps != UINT64_MAX ? ", routes reconverge after it" : ""));
    channels_[link]->SetDownAt(at_ps);
  }
  if (reconverge_ps != UINT64_MAX)
    Simulator::Schedule(PicoSeconds(at_ps + reconverge_ps), &Fabric::Reconverge, this, std::move(links));
}

void Fabric::Reconverge(std::vector<uint32_t> links) {
  failed_links_.resize(topo_.links().size(), 0);
  for (uint32_t link : links) failed_links_[link] = 1;
  old_routing_.push_back(std::move(routing_));
  routing_ = std::make_unique<topo::RoutingTable>(topo_, &failed_links_);
  for (auto& sw : switches_) sw->SetRouting(routing_.get());
  NS_LOG_INFO("routes reconverged around " << links.size() << " failed link(s)");
}

uint64_t Fabric::IdleOneWayPs(uint32_t src, uint32_t dst, uint32_t frame_bytes, uint64_t per_switch_ps,
                              uint64_t* bottleneck_bps) const {
  uint64_t ps = 0, slowest = UINT64_MAX;
  uint32_t v = src;
  uint16_t port = 0;  // a host's only port
  for (uint32_t hop = 0; hop <= topo_.num_vertices(); ++hop) {
    const InaNetDevice& dev = device(v, port);
    const topo::Port& p = topo_.ports(v).at(port);
    // Into a switch: its forwarding latency, which the device folds into the
    // hop (the constructor's SetExtraDelay), without a fault's host delay.
    ps += dev.SerializationPs(frame_bytes) + channels_[p.link]->delay_ps() +
          (topo_.is_host(p.peer) ? 0 : config_.forwarding_latency_ps);
    slowest = std::min(slowest, dev.rate_bps());
    v = p.peer;
    if (v == dst) {
      if (bottleneck_bps) *bottleneck_bps = slowest;
      return ps;
    }
    const auto hops = routing_->NextHops(v, dst);
    if (topo_.is_host(v) || hops.empty()) break;
    ps += per_switch_ps;
    port = hops[0];
  }
  throw std::logic_error(fmt::format("IdleOneWayPs: no route from host {} to host {}", src, dst));
}

void Fabric::SetHostDelay(uint32_t host, uint64_t extra_ps, uint64_t at_ps) {
  InaNetDevice* dev = &device(host, 0);
  const uint64_t total = dev->extra_delay_ps() + extra_ps;
  const uint64_t now = static_cast<uint64_t>(ns3::Simulator::Now().GetPicoSeconds());
  ns3::Simulator::Schedule(ns3::PicoSeconds(at_ps > now ? at_ps - now : 0), &InaNetDevice::SetExtraDelay, dev, total);
}

}  // namespace inasim
