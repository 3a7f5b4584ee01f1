// Stock ns-3 baseline for the permutation benchmark.
//
// Builds the same k-ary fat tree as INA-Sim (src/topology) but entirely out of
// stock ns-3 3.37 parts: every vertex (host or switch) is an ns3::Node with the
// full Internet stack and Nix-vector routing, every link a PointToPoint link
// with a DropTail device queue. Host i sends one paced UDP flow (UdpClient) to
// host perm[i] (a single-cycle derangement), received by a UdpServer. The
// program prints one JSON object on stdout; progress goes to stderr.
//
// Choices a normal ns-3 user would make, documented in bench/STOCK.md:
//  * Ipv4AddressHelper::Assign installs the default root queue disc
//    (fq_codel) on every device; we uninstall it (TrafficControlHelper::
//    Uninstall) so packets go straight to the device's DropTail queue, like the
//    switches of INA-Sim. --tc=true keeps the default queue discs.
//  * Nix-vector routing computes one BFS shortest path per (source node,
//    destination) and caches it: no ECMP, every flow takes one fixed path
//    (the BFS explores devices in creation order, so in a fat tree most
//    inter-pod flows share the first aggregation and core switches).
//    --routing=ecmp uses stock Ipv4GlobalRouting with per-packet random ECMP
//    instead (RandomEcmpRouting=true), for comparison.

#include "topology/topology.h"

#include <ns3/applications-module.h>
#include <ns3/core-module.h>
#include <ns3/internet-module.h>
#include <ns3/ipv4-global-routing-helper.h>
#include <ns3/network-module.h>
#include <ns3/nix-vector-helper.h>
#include <ns3/point-to-point-module.h>
#include <ns3/traffic-control-helper.h>

#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

using namespace ns3;

namespace {

double WallSeconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double PeakRssMb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// User + system CPU time of this process, seconds (robust to a shared machine).
double CpuSeconds() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  auto tv = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return tv(ru.ru_utime) + tv(ru.ru_stime);
}

std::string SchedulerTypeId(const std::string& name) {
  if (name == "map") return "ns3::MapScheduler";
  if (name == "heap") return "ns3::HeapScheduler";
  if (name == "calendar") return "ns3::CalendarScheduler";
  if (name == "priority") return "ns3::PriorityQueueScheduler";
  if (name == "list") return "ns3::ListScheduler";
  return {};
}

// Receive-side bookkeeping shared by all UdpServers.
struct RxState {
  uint64_t received = 0;
  uint64_t expected = 0;
  Time last_rx;
};

void OnRx(RxState* st, Ptr<const Packet>) {
  st->last_rx = Simulator::Now();
  if (++st->received == st->expected) Simulator::Stop();  // all flows complete
}

// The command line.
struct Options {
  uint32_t k = 16;
  double rate_gbps = 100;
  double delay_us = 1;
  uint64_t flow_bytes = 2'000'000;
  uint32_t payload = 1472;
  uint64_t seed = 1;
  uint32_t queue_packets = 1000;
  double stop_ms = 0;
  std::string scheduler = "heap";
  bool tc = false;
  std::string routing = "nix";
  bool link_stats = false;
  bool prewarm = true;
};

// Parses and checks the options and installs the event scheduler; false
// (after saying why on stderr) on bad input.
bool ParseOptions(int argc, char** argv, Options* o) {
  CommandLine cmd(__FILE__);
  cmd.AddValue("k", "fat-tree arity (even, >= 2)", o->k);
  cmd.AddValue("rate_gbps", "rate of every link, Gb/s", o->rate_gbps);
  cmd.AddValue("delay_us", "propagation delay of every link, us", o->delay_us);
  cmd.AddValue("flow_bytes", "UDP payload bytes per flow", o->flow_bytes);
  cmd.AddValue("payload", "UDP payload bytes per packet (1472 = 1500-byte IP MTU)", o->payload);
  cmd.AddValue("seed", "seed of the permutation", o->seed);
  cmd.AddValue("queue_packets", "DropTail device queue size, packets", o->queue_packets);
  cmd.AddValue("stop_ms", "simulation time limit in ms (0 = 10x ideal + 1 ms)", o->stop_ms);
  cmd.AddValue("scheduler", "event scheduler: map|heap|calendar|priority|list", o->scheduler);
  cmd.AddValue("tc", "keep ns-3's default traffic-control queue discs (fq_codel)", o->tc);
  cmd.AddValue("routing", "nix (Nix-vector) | ecmp (global routing, per-packet random ECMP)",
               o->routing);
  cmd.AddValue("prewarm",
               "compute every flow's route during setup (else lazily on its first packet)",
               o->prewarm);
  cmd.AddValue("link_stats", "print the busiest links (packets sent) on stderr", o->link_stats);
  cmd.Parse(argc, argv);

  const std::string sched_tid = SchedulerTypeId(o->scheduler);
  if (sched_tid.empty()) {
    std::cerr << "unknown --scheduler=" << o->scheduler << "\n";
    return false;
  }
  if (o->payload < 12 || o->payload > 1472) {
    std::cerr << "--payload must be in [12, 1472] (SeqTsHeader .. 1500-byte MTU)\n";
    return false;
  }
  if (o->routing != "nix" && o->routing != "ecmp") {
    std::cerr << "unknown --routing=" << o->routing << "\n";
    return false;
  }
  if (o->flow_bytes == 0 || o->rate_gbps <= 0 || o->delay_us < 0 || o->queue_packets == 0) {
    std::cerr << "bad --flow_bytes/--rate_gbps/--delay_us/--queue_packets\n";
    return false;
  }
  ObjectFactory sched_factory;
  sched_factory.SetTypeId(sched_tid);
  Simulator::SetScheduler(sched_factory);
  return true;
}

// The fat tree as stock ns-3 nodes and PointToPoint links.
struct Network {
  NodeContainer nodes;
  std::vector<Ptr<NetDevice>> link_dev;  // 2 per link: link byte counts, --link_stats
  std::vector<Ipv4Address> host_addr;    // per host: its address on its (only) link
};

// Every vertex a node with the Internet stack (Nix-vector or global routing),
// every link a PointToPoint link with a DropTail queue and a /30.
void BuildNetwork(const inasim::topo::Topology& topo, const Options& o, Network* net) {
  const auto& links = topo.links();
  net->nodes.Create(topo.num_vertices());

  Ipv4NixVectorHelper nix;
  Ipv4GlobalRoutingHelper global;
  InternetStackHelper stack;
  if (o.routing == "nix") {
    stack.SetRoutingHelper(nix);
  } else {
    Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(true));
    stack.SetRoutingHelper(global);
  }
  stack.SetIpv6StackInstall(false);
  stack.Install(net->nodes);

  PointToPointHelper p2p;
  p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
               QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, o.queue_packets)));
  Ipv4AddressHelper addr;
  addr.SetBase("10.0.0.0", "255.255.255.252");  // one /30 per link
  TrafficControlHelper tch;
  net->host_addr.resize(topo.num_hosts());
  for (const auto& l : links) {
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(l.spec.rate_bps)));
    p2p.SetChannelAttribute("Delay", TimeValue(PicoSeconds(static_cast<int64_t>(l.spec.delay_ps))));
    NetDeviceContainer devs = p2p.Install(net->nodes.Get(l.a), net->nodes.Get(l.b));
    Ipv4InterfaceContainer ifs = addr.Assign(devs);  // also installs fq_codel root qdiscs
    addr.NewNetwork();
    if (!o.tc) tch.Uninstall(devs);
    net->link_dev.push_back(devs.Get(0));
    net->link_dev.push_back(devs.Get(1));
    if (topo.is_host(l.a)) net->host_addr[l.a] = ifs.GetAddress(0);
    if (topo.is_host(l.b)) net->host_addr[l.b] = ifs.GetAddress(1);
  }

  if (o.routing == "ecmp") Ipv4GlobalRoutingHelper::PopulateRoutingTables();
}

// The permutation: one paced UdpClient per host to a UdpServer on host perm[h].
struct Flows {
  Time interval;         // between two packets of a flow: one packet's time on the host link
  uint32_t max_packets;  // per flow
  std::vector<uint32_t> perm;
  ApplicationContainer servers;
  ApplicationContainer clients;
};

void InstallFlows(const inasim::topo::Topology& topo, const Options& o, const Network& net,
                  Flows* f) {
  const uint32_t num_hosts = topo.num_hosts();
  // Pace at the rate of host 0's link (all host links are alike in a fat tree).
  const double host_rate_bps =
      static_cast<double>(topo.links().at(topo.ports(0).at(0).link).spec.rate_bps);
  // One packet's time on the host link: payload + UDP 8 + IPv4 20 + PPP 2 bytes.
  const uint64_t wire_bits = (static_cast<uint64_t>(o.payload) + 28 + 2) * 8;
  f->interval =
      PicoSeconds(static_cast<int64_t>(std::llround(wire_bits * 1e12 / host_rate_bps)));
  f->max_packets = static_cast<uint32_t>((o.flow_bytes + o.payload - 1) / o.payload);

  f->perm = inasim::topo::RandomDerangement(num_hosts, o.seed);
  const uint16_t port = 9;

  for (uint32_t h = 0; h < num_hosts; ++h) {
    UdpServerHelper server(port);
    f->servers.Add(server.Install(net.nodes.Get(h)));
  }
  for (uint32_t h = 0; h < num_hosts; ++h) {
    UdpClientHelper client(net.host_addr[f->perm[h]], port);
    client.SetAttribute("MaxPackets", UintegerValue(f->max_packets));
    client.SetAttribute("Interval", TimeValue(f->interval));
    client.SetAttribute("PacketSize", UintegerValue(o.payload));
    f->clients.Add(client.Install(net.nodes.Get(h)));
  }
  f->servers.Start(Seconds(0));
  f->clients.Start(Seconds(0));
}

// Nix-vector routing computes a path (a BFS over the whole topology) lazily
// on the first packet to each destination. Trigger that once per flow here,
// exactly as the first packet would, so setup_s contains all route
// computation and run_s only packet processing. Global routing computed its
// tables in PopulateRoutingTables; this is then a cheap lookup. False when a
// flow has no route.
bool PrewarmRoutes(uint32_t num_hosts, const Options& o, const Network& net, const Flows& f) {
  for (uint32_t h = 0; h < num_hosts; ++h) {
    Ptr<Ipv4> ipv4 = net.nodes.Get(h)->GetObject<Ipv4>();
    Ipv4Header header;
    header.SetSource(net.host_addr[h]);
    header.SetDestination(net.host_addr[f.perm[h]]);
    header.SetProtocol(17);  // UDP
    Socket::SocketErrno err = Socket::ERROR_NOTERROR;
    Ptr<Ipv4Route> route =
        ipv4->GetRoutingProtocol()->RouteOutput(Create<Packet>(o.payload), header, nullptr, err);
    if (!route) {
      std::cerr << "stock_ns3: no route from host " << h << " to host " << f.perm[h] << "\n";
      return false;
    }
  }
  return true;
}

// --link_stats: how many link directions carried packets, and the ten busiest.
void PrintBusiestLinks(const inasim::topo::Topology& topo, const std::vector<uint64_t>& dev_tx) {
  std::vector<std::pair<uint64_t, size_t>> busiest;
  size_t used = 0;
  for (size_t i = 0; i < dev_tx.size(); ++i) {
    used += dev_tx[i] > 0;
    busiest.emplace_back(dev_tx[i], i);
  }
  std::sort(busiest.rbegin(), busiest.rend());
  std::cerr << "stock_ns3: " << used << " of " << dev_tx.size() << " link directions used\n";
  for (size_t j = 0; j < std::min<size_t>(10, busiest.size()); ++j) {
    const auto& l = topo.links()[busiest[j].second / 2];
    const bool fwd = busiest[j].second % 2 == 0;
    const uint32_t from = fwd ? l.a : l.b, to = fwd ? l.b : l.a;
    std::cerr << "  " << topo.node(from).name << " -> " << topo.node(to).name << ": "
              << busiest[j].first << " packets\n";
  }
}

// What the run delivered, read from the applications and device queues.
struct Counts {
  uint64_t received = 0;    // packets, at the servers
  uint64_t sent = 0;        // packets, by the clients
  uint64_t link_bytes = 0;  // PPP frame bytes put on all links
};

Counts CountTraffic(const Options& o, const Network& net, const Flows& f) {
  Counts c;
  for (uint32_t i = 0; i < f.servers.GetN(); ++i) {
    Ptr<UdpServer> s = DynamicCast<UdpServer>(f.servers.Get(i));
    c.received += s->GetReceived();
  }
  uint64_t sent_bytes = 0;
  for (uint32_t i = 0; i < f.clients.GetN(); ++i) {
    sent_bytes += DynamicCast<UdpClient>(f.clients.Get(i))->GetTotalTx();
  }
  c.sent = sent_bytes / o.payload;
  // Bytes put on all links (PPP frames), from the device queues' own counters:
  // every frame a device sent passed its DropTail queue.
  for (const auto& dev : net.link_dev) {
    Ptr<Queue<Packet>> q = DynamicCast<PointToPointNetDevice>(dev)->GetQueue();
    c.link_bytes += q->GetTotalReceivedBytes() - q->GetTotalDroppedBytes() - q->GetNBytes();
  }
  return c;
}

// Wall-clock and CPU times of the phases.
struct Timing {
  double setup_s;
  double run_s;
  double run_cpu_s;
  double wall_s;
};

// The report's echo of the options (not --stop_ms, --link_stats) and its times.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Options, k, rate_gbps, delay_us, flow_bytes, payload, seed,
                                   queue_packets, scheduler, tc, routing, prewarm)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Timing, setup_s, run_s, run_cpu_s, wall_s)

// The one JSON object printed on stdout (its keys sorted, as nlohmann::json keeps them).
nlohmann::json Report(const inasim::topo::Topology& topo, const Options& o, const Timing& t,
                      uint64_t events, const RxState& rx, Time ideal, const Counts& c) {
  const uint64_t delivered = c.received * o.payload;
  const double run_s = t.run_s;
  nlohmann::json out = o;
  out.update(nlohmann::json(t));
  out.update({
      {"name", o.routing == "nix" ? "stock_ns3_nix" : "stock_ns3_ecmp"},
      {"hosts", topo.num_hosts()},
      {"switches", topo.num_switches()},
      {"links", topo.links().size()},
      {"events", events},
      {"sim_time_s", rx.last_rx.GetSeconds()},
      {"ideal_sim_time_s", ideal.GetSeconds()},
      {"completed", rx.received == rx.expected},
      {"delivered_bytes", delivered},
      {"sent_packets", c.sent},
      {"received_packets", c.received},
      {"lost_packets", c.sent - c.received},
      {"delivered_bytes_per_wall_s", run_s > 0 ? delivered / run_s : 0.0},
      {"link_bytes", c.link_bytes},
      {"link_bytes_per_wall_s", run_s > 0 ? c.link_bytes / run_s : 0.0},
      {"events_per_s", run_s > 0 ? events / run_s : 0.0},
      {"peak_rss_mb", PeakRssMb()},
  });
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const auto t_start = std::chrono::steady_clock::now();
  // 100 Gb/s serialises a 1502-byte frame in 120.16 ns: needs sub-ns resolution.
  Time::SetResolution(Time::PS);

  Options o;
  if (!ParseOptions(argc, argv, &o)) return 2;

  inasim::topo::LinkSpec spec;
  spec.rate_bps = static_cast<uint64_t>(std::llround(o.rate_gbps * 1e9));
  spec.delay_ps = static_cast<uint64_t>(std::llround(o.delay_us * 1e6));
  const inasim::topo::Topology topo = inasim::topo::BuildFatTree(o.k, spec, spec);
  const uint32_t num_hosts = topo.num_hosts();
  std::cerr << "stock_ns3: " << topo.description << ": " << num_hosts << " hosts, "
            << topo.num_switches() << " switches, " << topo.links().size()
            << " links, scheduler " << o.scheduler << "\n";

  Network net;
  BuildNetwork(topo, o, &net);
  Flows flows;
  InstallFlows(topo, o, net, &flows);
  if (o.prewarm && !PrewarmRoutes(num_hosts, o, net, flows)) return 1;

  RxState rx;
  rx.expected = static_cast<uint64_t>(flows.max_packets) * num_hosts;
  for (uint32_t i = 0; i < flows.servers.GetN(); ++i) {
    flows.servers.Get(i)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, &rx));
  }

  // Ideal completion: all packets back to back at line rate plus the longest
  // path (6 hops host-edge-agg-core-agg-edge-host) of store-and-forward.
  const uint32_t max_hops = 6;
  const Time ideal = flows.interval * static_cast<int64_t>(flows.max_packets) +
                     (flows.interval + PicoSeconds(static_cast<int64_t>(spec.delay_ps))) * max_hops;
  const Time stop = o.stop_ms > 0
                        ? MicroSeconds(static_cast<int64_t>(std::llround(o.stop_ms * 1e3)))
                        : ideal * 10 + MilliSeconds(1);
  Simulator::Stop(stop);

  std::vector<uint64_t> dev_tx(o.link_stats ? net.link_dev.size() : 0);
  for (size_t i = 0; i < dev_tx.size(); ++i) {
    net.link_dev[i]->TraceConnectWithoutContext(
        "PhyTxEnd", MakeBoundCallback(+[](uint64_t* n, Ptr<const Packet>) { ++*n; }, &dev_tx[i]));
  }

  const auto t_setup = std::chrono::steady_clock::now();
  std::cerr << "stock_ns3: setup " << WallSeconds(t_start, t_setup) << " s; " << flows.max_packets
            << " packets/flow every " << flows.interval.GetPicoSeconds() << " ps; ideal "
            << ideal.GetSeconds() * 1e3 << " ms, stop at " << stop.GetSeconds() * 1e3 << " ms\n";

  const double cpu_setup = CpuSeconds();
  Simulator::Run();
  const auto t_run = std::chrono::steady_clock::now();
  const double run_cpu_s = CpuSeconds() - cpu_setup;

  const Counts counts = CountTraffic(o, net, flows);
  const uint64_t events = Simulator::GetEventCount();
  if (o.link_stats) PrintBusiestLinks(topo, dev_tx);
  Simulator::Destroy();
  const auto t_end = std::chrono::steady_clock::now();

  const Timing timing{WallSeconds(t_start, t_setup), WallSeconds(t_setup, t_run), run_cpu_s,
                      WallSeconds(t_start, t_end)};
  std::cout << Report(topo, o, timing, events, rx, ideal, counts).dump() << std::endl;
  return 0;
}
