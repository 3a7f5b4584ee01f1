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

}  // namespace

int main(int argc, char** argv) {
  const auto t_start = std::chrono::steady_clock::now();
  // 100 Gb/s serialises a 1502-byte frame in 120.16 ns: needs sub-ns resolution.
  Time::SetResolution(Time::PS);

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

  CommandLine cmd(__FILE__);
  cmd.AddValue("k", "fat-tree arity (even, >= 2)", k);
  cmd.AddValue("rate_gbps", "rate of every link, Gb/s", rate_gbps);
  cmd.AddValue("delay_us", "propagation delay of every link, us", delay_us);
  cmd.AddValue("flow_bytes", "UDP payload bytes per flow", flow_bytes);
  cmd.AddValue("payload", "UDP payload bytes per packet (1472 = 1500-byte IP MTU)", payload);
  cmd.AddValue("seed", "seed of the permutation", seed);
  cmd.AddValue("queue_packets", "DropTail device queue size, packets", queue_packets);
  cmd.AddValue("stop_ms", "simulation time limit in ms (0 = 10x ideal + 1 ms)", stop_ms);
  cmd.AddValue("scheduler", "event scheduler: map|heap|calendar|priority|list", scheduler);
  cmd.AddValue("tc", "keep ns-3's default traffic-control queue discs (fq_codel)", tc);
  cmd.AddValue("routing", "nix (Nix-vector) | ecmp (global routing, per-packet random ECMP)",
               routing);
  cmd.AddValue("prewarm",
               "compute every flow's route during setup (else lazily on its first packet)",
               prewarm);
  cmd.AddValue("link_stats", "print the busiest links (packets sent) on stderr", link_stats);
  cmd.Parse(argc, argv);

  const std::string sched_tid = SchedulerTypeId(scheduler);
  if (sched_tid.empty()) {
    std::cerr << "unknown --scheduler=" << scheduler << "\n";
    return 2;
  }
  if (payload < 12 || payload > 1472) {
    std::cerr << "--payload must be in [12, 1472] (SeqTsHeader .. 1500-byte MTU)\n";
    return 2;
  }
  if (routing != "nix" && routing != "ecmp") {
    std::cerr << "unknown --routing=" << routing << "\n";
    return 2;
  }
  if (flow_bytes == 0 || rate_gbps <= 0 || delay_us < 0 || queue_packets == 0) {
    std::cerr << "bad --flow_bytes/--rate_gbps/--delay_us/--queue_packets\n";
    return 2;
  }
  ObjectFactory sched_factory;
  sched_factory.SetTypeId(sched_tid);
  Simulator::SetScheduler(sched_factory);

  // ---------------------------------------------------------------- topology
  inasim::topo::LinkSpec spec;
  spec.rate_bps = static_cast<uint64_t>(std::llround(rate_gbps * 1e9));
  spec.delay_ps = static_cast<uint64_t>(std::llround(delay_us * 1e6));
  const inasim::topo::Topology topo = inasim::topo::BuildFatTree(k, spec, spec);
  const uint32_t num_hosts = topo.num_hosts();
  const uint32_t num_vertices = topo.num_vertices();
  const auto& links = topo.links();
  std::cerr << "stock_ns3: " << topo.description << ": " << num_hosts << " hosts, "
            << topo.num_switches() << " switches, " << links.size() << " links, scheduler "
            << scheduler << "\n";

  NodeContainer nodes;
  nodes.Create(num_vertices);

  Ipv4NixVectorHelper nix;
  Ipv4GlobalRoutingHelper global;
  InternetStackHelper stack;
  if (routing == "nix") {
    stack.SetRoutingHelper(nix);
  } else {
    Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(true));
    stack.SetRoutingHelper(global);
  }
  stack.SetIpv6StackInstall(false);
  stack.Install(nodes);

  PointToPointHelper p2p;
  p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
               QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queue_packets)));
  Ipv4AddressHelper addr;
  addr.SetBase("10.0.0.0", "255.255.255.252");  // one /30 per link
  TrafficControlHelper tch;
  std::vector<Ptr<NetDevice>> link_dev;  // 2 per link: link byte counts, --link_stats
  // Per host: its address on its (only) link.
  std::vector<Ipv4Address> host_addr(num_hosts);
  for (const auto& l : links) {
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(l.spec.rate_bps)));
    p2p.SetChannelAttribute("Delay", TimeValue(PicoSeconds(static_cast<int64_t>(l.spec.delay_ps))));
    NetDeviceContainer devs = p2p.Install(nodes.Get(l.a), nodes.Get(l.b));
    Ipv4InterfaceContainer ifs = addr.Assign(devs);  // also installs fq_codel root qdiscs
    addr.NewNetwork();
    if (!tc) tch.Uninstall(devs);
    link_dev.push_back(devs.Get(0));
    link_dev.push_back(devs.Get(1));
    if (topo.is_host(l.a)) host_addr[l.a] = ifs.GetAddress(0);
    if (topo.is_host(l.b)) host_addr[l.b] = ifs.GetAddress(1);
  }

  if (routing == "ecmp") Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  // ---------------------------------------------------------------- workload
  // Pace at the rate of host 0's link (all host links are alike in a fat tree).
  const double host_rate_bps = static_cast<double>(links.at(topo.ports(0).at(0).link).spec.rate_bps);
  // One packet's time on the host link: payload + UDP 8 + IPv4 20 + PPP 2 bytes.
  const uint64_t wire_bits = (static_cast<uint64_t>(payload) + 28 + 2) * 8;
  const Time interval = PicoSeconds(static_cast<int64_t>(std::llround(wire_bits * 1e12 / host_rate_bps)));
  const uint32_t max_packets = static_cast<uint32_t>((flow_bytes + payload - 1) / payload);

  const std::vector<uint32_t> perm = inasim::topo::RandomDerangement(num_hosts, seed);
  const uint16_t port = 9;

  ApplicationContainer servers;
  ApplicationContainer clients;
  for (uint32_t h = 0; h < num_hosts; ++h) {
    UdpServerHelper server(port);
    servers.Add(server.Install(nodes.Get(h)));
  }
  for (uint32_t h = 0; h < num_hosts; ++h) {
    UdpClientHelper client(host_addr[perm[h]], port);
    client.SetAttribute("MaxPackets", UintegerValue(max_packets));
    client.SetAttribute("Interval", TimeValue(interval));
    client.SetAttribute("PacketSize", UintegerValue(payload));
    clients.Add(client.Install(nodes.Get(h)));
  }
  servers.Start(Seconds(0));
  clients.Start(Seconds(0));

  // Nix-vector routing computes a path (a BFS over the whole topology) lazily
  // on the first packet to each destination. Trigger that once per flow here,
  // exactly as the first packet would, so setup_s contains all route
  // computation and run_s only packet processing. Global routing computed its
  // tables in PopulateRoutingTables above; this is then a cheap lookup.
  if (prewarm) {
    for (uint32_t h = 0; h < num_hosts; ++h) {
      Ptr<Ipv4> ipv4 = nodes.Get(h)->GetObject<Ipv4>();
      Ipv4Header header;
      header.SetSource(host_addr[h]);
      header.SetDestination(host_addr[perm[h]]);
      header.SetProtocol(17);  // UDP
      Socket::SocketErrno err = Socket::ERROR_NOTERROR;
      Ptr<Ipv4Route> route =
          ipv4->GetRoutingProtocol()->RouteOutput(Create<Packet>(payload), header, nullptr, err);
      if (!route) {
        std::cerr << "stock_ns3: no route from host " << h << " to host " << perm[h] << "\n";
        return 1;
      }
    }
  }

  RxState rx;
  rx.expected = static_cast<uint64_t>(max_packets) * num_hosts;
  for (uint32_t i = 0; i < servers.GetN(); ++i) {
    servers.Get(i)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, &rx));
  }

  // Ideal completion: all packets back to back at line rate plus the longest
  // path (6 hops host-edge-agg-core-agg-edge-host) of store-and-forward.
  const uint32_t max_hops = 6;
  const Time ideal = interval * static_cast<int64_t>(max_packets) +
                     (interval + PicoSeconds(static_cast<int64_t>(spec.delay_ps))) * max_hops;
  const Time stop = stop_ms > 0 ? MicroSeconds(static_cast<int64_t>(std::llround(stop_ms * 1e3)))
                                : ideal * 10 + MilliSeconds(1);
  Simulator::Stop(stop);

  std::vector<uint64_t> dev_tx(link_stats ? link_dev.size() : 0);
  for (size_t i = 0; i < dev_tx.size(); ++i) {
    link_dev[i]->TraceConnectWithoutContext(
        "PhyTxEnd", MakeBoundCallback(+[](uint64_t* n, Ptr<const Packet>) { ++*n; }, &dev_tx[i]));
  }

  const auto t_setup = std::chrono::steady_clock::now();
  std::cerr << "stock_ns3: setup " << WallSeconds(t_start, t_setup) << " s; " << max_packets
            << " packets/flow every " << interval.GetPicoSeconds() << " ps; ideal "
            << ideal.GetSeconds() * 1e3 << " ms, stop at " << stop.GetSeconds() * 1e3 << " ms\n";

  const double cpu_setup = CpuSeconds();
  Simulator::Run();
  const auto t_run = std::chrono::steady_clock::now();
  const double run_cpu_s = CpuSeconds() - cpu_setup;

  // ---------------------------------------------------------------- results
  uint64_t received = 0;
  for (uint32_t i = 0; i < servers.GetN(); ++i) {
    Ptr<UdpServer> s = DynamicCast<UdpServer>(servers.Get(i));
    received += s->GetReceived();
  }
  uint64_t sent_bytes = 0;
  for (uint32_t i = 0; i < clients.GetN(); ++i) {
    sent_bytes += DynamicCast<UdpClient>(clients.Get(i))->GetTotalTx();
  }
  const uint64_t sent = sent_bytes / payload;
  // Bytes put on all links (PPP frames), from the device queues' own counters:
  // every frame a device sent passed its DropTail queue.
  uint64_t link_bytes = 0;
  for (const auto& dev : link_dev) {
    Ptr<Queue<Packet>> q = DynamicCast<PointToPointNetDevice>(dev)->GetQueue();
    link_bytes += q->GetTotalReceivedBytes() - q->GetTotalDroppedBytes() - q->GetNBytes();
  }
  const uint64_t events = Simulator::GetEventCount();
  if (link_stats) {
    std::vector<std::pair<uint64_t, size_t>> busiest;
    size_t used = 0;
    for (size_t i = 0; i < dev_tx.size(); ++i) {
      used += dev_tx[i] > 0;
      busiest.emplace_back(dev_tx[i], i);
    }
    std::sort(busiest.rbegin(), busiest.rend());
    std::cerr << "stock_ns3: " << used << " of " << dev_tx.size() << " link directions used\n";
    for (size_t j = 0; j < std::min<size_t>(10, busiest.size()); ++j) {
      const auto& l = links[busiest[j].second / 2];
      const bool fwd = busiest[j].second % 2 == 0;
      const uint32_t from = fwd ? l.a : l.b, to = fwd ? l.b : l.a;
      std::cerr << "  " << topo.node(from).name << " -> " << topo.node(to).name << ": "
                << busiest[j].first << " packets\n";
    }
  }
  Simulator::Destroy();
  const auto t_end = std::chrono::steady_clock::now();

  const double setup_s = WallSeconds(t_start, t_setup);
  const double run_s = WallSeconds(t_setup, t_run);
  const uint64_t delivered = received * payload;
  nlohmann::json out = {
      {"name", routing == "nix" ? "stock_ns3_nix" : "stock_ns3_ecmp"},
      {"routing", routing},
      {"k", k},
      {"hosts", num_hosts},
      {"switches", topo.num_switches()},
      {"links", links.size()},
      {"flow_bytes", flow_bytes},
      {"payload", payload},
      {"seed", seed},
      {"rate_gbps", rate_gbps},
      {"delay_us", delay_us},
      {"queue_packets", queue_packets},
      {"scheduler", scheduler},
      {"tc", tc},
      {"prewarm", prewarm},
      {"setup_s", setup_s},
      {"run_s", run_s},
      {"run_cpu_s", run_cpu_s},
      {"wall_s", WallSeconds(t_start, t_end)},
      {"events", events},
      {"sim_time_s", rx.last_rx.GetSeconds()},
      {"ideal_sim_time_s", ideal.GetSeconds()},
      {"completed", rx.received == rx.expected},
      {"delivered_bytes", delivered},
      {"sent_packets", sent},
      {"received_packets", received},
      {"lost_packets", sent - received},
      {"delivered_bytes_per_wall_s", run_s > 0 ? delivered / run_s : 0.0},
      {"link_bytes", link_bytes},
      {"link_bytes_per_wall_s", run_s > 0 ? link_bytes / run_s : 0.0},
      {"events_per_s", run_s > 0 ? events / run_s : 0.0},
      {"peak_rss_mb", PeakRssMb()},
  };
  std::cout << out.dump() << std::endl;
  return 0;
}
