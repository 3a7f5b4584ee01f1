#include "ina/runner.h"

#include "congestion/flow_stats.h"
#include "ina/addressing.h"
#include "ina/background.h"
#include "ina/canary-job.h"
#include "ina/panama-job.h"
#include "ina/p4sgd-job.h"
#include "ina/canary-jobs.h"
#include "ina/fabric.h"
#include "ina/frame-fingerprint.h"
#include "ina/progress.h"
#include "ina/ring-allreduce.h"
#include "ina/switchml-job.h"
#include "ina/units.h"
#include "topology/topology.h"

#include "ns3/core-module.h"
#include "ns3/udp-client.h"
#include "ns3/udp-server.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <memory>
#include <sstream>

#ifndef INASIM_VERSION
#define INASIM_VERSION "unknown"
#endif

namespace inasim {

using namespace ns3;
using nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}
uint64_t NowPs() { return static_cast<uint64_t>(Simulator::Now().GetPicoSeconds()); }

double PeakRssMb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}


/// Permutation workload: each selected host sends one paced UDP flow (ns-3's
/// UdpClient) to its image under a random derangement; UdpServer receives.
struct Permutation {
  std::vector<Ptr<UdpServer>> servers;
  uint64_t expected_packets = 0;
  uint64_t received_packets = 0;
  uint64_t last_rx_ps = 0;
  std::function<void()> on_finished;
  void OnRx(Ptr<const Packet>) {
    ++received_packets;
    last_rx_ps = NowPs();
    if (received_packets == expected_packets && on_finished) on_finished();
  }
};

/// workload.jobs > 1 with the ring (canary-fgcs24 Fig. 10a): one ring per
/// host group, the groups split as CanaryJobSet splits them; job 0 keeps the
/// scenario's data seed.
std::vector<std::unique_ptr<RingAllreduce>> MakeRingJobs(const Scenario& s, Fabric& fabric,
                                                         const std::vector<uint32_t>& hosts) {
  std::vector<std::unique_ptr<RingAllreduce>> rings;
  try {
    const auto groups = CanaryJobSet::SplitHosts(hosts, s.workload.jobs, s.seed, s.workload.jobs_contiguous);
    for (uint32_t j = 0; j < groups.size(); ++j) {
      NodeContainer nodes;
      std::vector<Ipv4Address> addrs;
      for (uint32_t h : groups[j]) {
        nodes.Add(fabric.host(h));
        addrs.push_back(fabric.host_address(h));
      }
      const uint64_t seed = j == 0 ? s.seed : s.seed ^ congestion::Mix64(0x6a6f6273ull + j);
      rings.push_back(std::make_unique<RingAllreduce>(nodes, addrs, s.workload.bytes, s.workload.dtype,
                                                      s.workload.data, seed, RingConfigOf(s), s.workload.iterations,
                                                      s.workload.compute_gap_ps,
                                                      static_cast<uint16_t>(s.links.mtu_bytes)));
    }
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(fmt::format("workload: {}", e.what()));
  }
  return rings;
}

/// The report of several concurrent rings: as CanaryJobSet's (mean goodput
/// over the jobs, per_job, collectives.csv with a leading job column).
void ReportRingJobs(const Scenario& s, const std::vector<std::unique_ptr<RingAllreduce>>& rings, bool finished,
                    json& w, std::string& csv, std::string& summary, bool& correct, uint64_t& payload_delivered) {
  csv = "job,iteration,start_s,end_s,duration_s,goodput_gbps,correct,elements_checked,mismatches,retransmissions\n";
  json per_job = json::array();
  double goodput_sum = 0, duration_sum = 0, goodput_min = 0, goodput_max = 0;
  uint64_t checked = 0, mism = 0, ranks = 0;
  correct = finished;
  for (uint32_t j = 0; j < rings.size(); ++j) {
    const RingAllreduce& ring = *rings[j];
    const uint32_t n = ring.plan().ranks();
    double dur_sum = 0;
    uint64_t done = 0, job_checked = 0, job_mism = 0;
    bool ok = true;
    for (const CollectiveRecord& c : ring.records()) {
      job_checked += c.elements_checked;
      job_mism += c.mismatches;
      if (c.end_ps == 0) continue;  // unfinished
      const double dur = PsToS(c.end_ps - c.start_ps);
      const bool c_ok = ring.Exact(c);
      ok &= c_ok;
      dur_sum += dur;
      ++done;
      csv += fmt::format("{},{},{:.12f},{:.12f},{:.12f},{:.6f},{},{},{},{}\n", j, c.iteration, PsToS(c.start_ps),
                         PsToS(c.end_ps), dur, static_cast<double>(s.workload.bytes) * 8.0 / dur / 1e9, c_ok ? 1 : 0,
                         c.elements_checked, c.mismatches, c.retransmissions);
    }
    ok &= done == s.workload.iterations;
    correct &= ok;
    const double mean = done ? dur_sum / static_cast<double>(done) : 0.0;
    const double goodput = mean > 0 ? static_cast<double>(s.workload.bytes) * 8.0 / mean / 1e9 : 0.0;
    goodput_sum += goodput;
    goodput_min = j == 0 ? goodput : std::min(goodput_min, goodput);
    goodput_max = j == 0 ? goodput : std::max(goodput_max, goodput);
    duration_sum += mean;
    checked += job_checked;
    mism += job_mism;
    ranks += n;
    payload_delivered += 2 * (uint64_t{n} - 1) * s.workload.bytes * done;
    per_job.push_back({{"job", j}, {"ranks", n}, {"mean_duration_s", mean}, {"goodput_gbps", goodput},
                       {"correct", ok}, {"elements_checked", job_checked}, {"mismatches", job_mism}});
  }
  const double jobs = static_cast<double>(rings.size());
  w = {{"type", "allreduce"},
       {"protocol", "ring"},
       {"bytes", s.workload.bytes},
       {"iterations_requested", s.workload.iterations},
       {"jobs", rings.size()},
       {"host_split", "seeded shuffle of the selected hosts, dealt into equal groups"},
       {"ranks", ranks},
       {"mean_duration_s", duration_sum / jobs},
       {"goodput_gbps", goodput_sum / jobs},
       {"min_goodput_gbps", goodput_min},
       {"max_goodput_gbps", goodput_max},
       {"elements_checked", checked},
       {"mismatches", mism},
       {"correct", correct},
       {"per_job", per_job}};
  summary += fmt::format("{} jobs of ring allreduce of {} over {} hosts in all: mean goodput {:.2f} Gb/s per job "
                         "(min {:.2f}, max {:.2f})\n  result: {} - {} elements checked against the exact sums, {} "
                         "mismatches\n",
                         rings.size(), HumanBytes(s.workload.bytes), ranks, goodput_sum / jobs, goodput_min,
                         goodput_max, VerdictWord(correct, s.workload.data), checked, mism);
}

}  // namespace

void EnsurePicosecondTime() {
  static const bool done = [] {
    Time::SetResolution(Time::PS);
    return true;
  }();
  (void)done;
}

RunResult RunScenario(const Scenario& s, const RunOptions& options) {
  EnsurePicosecondTime();
  const auto t0 = Clock::now();
  RngSeedManager::SetSeed(static_cast<uint32_t>(s.seed % 4294967295ULL) + (s.seed >= 4294967295ULL));
  RngSeedManager::SetRun(s.seed >> 32);
  ObjectFactory scheduler;
  // std::priority_queue: 17 % fewer instructions per run than ns-3's
  // HeapScheduler, 4 % fewer than MapScheduler, on the k=4 permutation
  // (callgrind; bench/README.md). INASIM_SCHEDULER overrides it for measurements.
  const char* sched = std::getenv("INASIM_SCHEDULER");
  scheduler.SetTypeId(sched ? sched : "ns3::PriorityQueueScheduler");
  Simulator::SetScheduler(scheduler);

  const topo::Topology topology = BuildTopology(s);
  FabricConfig fc;
  fc.switch_port = s.sw.port;
  fc.host_port = s.host_port;
  fc.ecn_threshold_by_rate = s.sw.ecn_threshold_by_rate;
  fc.wire_overhead_bytes = s.links.wire_overhead_bytes;
  fc.mtu_bytes = static_cast<uint16_t>(s.links.mtu_bytes);
  fc.forwarding_latency_ps = s.sw.forwarding_latency_ps;
  fc.forwarding.policy = s.sw.forwarding;
  fc.forwarding.adaptive_threshold = s.sw.adaptive_threshold;
  fc.forwarding.adaptive_by_destination = s.sw.adaptive_by_destination;
  fc.forwarding.hash_seed = s.sw.hash_seed;
  fc.forwarding.pfc_enabled = s.sw.port.pfc_enabled;
  fc.forwarding.pfc_xoff_bytes = s.sw.port.pfc_xoff_bytes;
  fc.forwarding.pfc_xon_bytes = s.sw.port.pfc_xon_bytes;
  auto fabric = std::make_unique<Fabric>(topology, fc);

  // Faults.
  if (s.faults.loss_rate > 0)
    for (uint32_t i = 0; i < topology.links().size(); ++i) fabric->SetLinkLoss(i, s.faults.loss_rate);
  for (const LinkFault& f : s.faults.links) {
    if (f.loss_rate >= 0) fabric->SetLinkLoss(f.link, f.loss_rate);
    if (f.down_at_ps) fabric->SetLinkDown(f.link, *f.down_at_ps, s.faults.reconverge_ps);
  }
  for (const HostFault& h : s.faults.hosts) fabric->SetHostDelay(h.host, h.delay_ps, h.at_ps);

  // Workload.
  std::vector<uint32_t> hosts;
  if (s.workload.type != WorkloadType::kNone)
    hosts = SelectHosts(s.workload.hosts, topology.num_hosts(), s.seed);
  std::unique_ptr<RingAllreduce> ring;
  std::vector<std::unique_ptr<RingAllreduce>> ring_jobs;  // workload.jobs > 1 (Canary Fig. 10's ring)
  std::unique_ptr<SwitchMLJob> switchml;
  std::unique_ptr<CanaryJobSet> canary;
  std::unique_ptr<PanamaJobSet> panama;
  std::unique_ptr<P4SGDJob> p4sgd;
  std::unique_ptr<Permutation> perm;
  // The run is over when the workload is done and, if asked, every background
  // flow has completed; moving congestion then stops too.
  const bool has_background = s.background.flows.enabled || s.background.congestion.enabled;
  bool workload_done = s.workload.type == WorkloadType::kNone;
  bool flows_done = !s.background.flows.enabled || !s.background.flows.wait_for_completion;
  bool finished = workload_done && !has_background;
  uint64_t finished_ps = 0;
  std::unique_ptr<Background> background;
  // A setup that throws (a job finding bad input) must leave ns-3 clean for
  // the next run in this process (Python, sweeps): destroy the simulator, and
  // with it the scheduled events and the nodes, before the jobs and the
  // fabric go (this guard is declared after them, so it runs first).
  struct DestroySimulatorOnThrow {
    bool armed = true;
    ~DestroySimulatorOnThrow() {
      if (armed) Simulator::Destroy();
    }
  } destroy_on_throw;
  auto finish = [&] {
    if (finished) return;
    finished = true;
    finished_ps = NowPs();
    if (background) background->Stop();
    Simulator::Stop();
  };
  auto maybe_finish = [&] {
    if (!workload_done || !flows_done) return;
    if (s.workload.type == WorkloadType::kNone && !s.background.flows.enabled) return;  // congestion alone: runs to its stop
    finish();
  };
  auto on_finished = [&] {
    workload_done = true;
    maybe_finish();
  };
  std::function<double()> progress_fn = [&] { return static_cast<double>(NowPs()) / s.max_sim_time_ps; };

  if (s.workload.type == WorkloadType::kAllreduce && s.workload.protocol != "p4sgd" &&
      hosts.size() < 2ull * s.workload.jobs)
    throw ScenarioError(fmt::format("workload.jobs: {} jobs need at least 2 hosts each; {} hosts are selected",
                                    s.workload.jobs, hosts.size()));
  if (s.workload.type == WorkloadType::kAllreduce && s.workload.protocol == "switchml") {
    std::vector<uint64_t> tensors = s.workload.switchml.tensors;
    if (tensors.empty()) tensors.push_back(s.workload.bytes);
    try {
      switchml = std::make_unique<SwitchMLJob>(*fabric, hosts, s.workload.dtype, s.workload.data, s.seed,
                                               s.workload.switchml, tensors, s.workload.iterations,
                                               s.workload.compute_gap_ps);
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(fmt::format("workload: {}", e.what()));
    }
    switchml->on_finished = on_finished;
    switchml->Start(s.workload.start_ps);
    progress_fn = [&] { return switchml->progress(); };
  } else if (s.workload.type == WorkloadType::kAllreduce &&
             (s.workload.protocol == "canary" || s.workload.protocol == "static_tree")) {
    try {
      canary = std::make_unique<CanaryJobSet>(
          *fabric, hosts, s.workload.protocol == "canary" ? InaTreeMode::kCanary : InaTreeMode::kStaticTree,
          s.workload.data, s.seed, s.workload, s.workload.jobs);
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(fmt::format("workload: {}", e.what()));
    }
    canary->on_finished = on_finished;
    canary->Start(s.workload.start_ps);
    progress_fn = [&] { return canary->progress(); };
  } else if (s.workload.type == WorkloadType::kAllreduce && s.workload.protocol == "p4sgd") {
    try {
      p4sgd = std::make_unique<P4SGDJob>(*fabric, hosts, s.workload.p4sgd, s.seed);
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(fmt::format("workload: {}", e.what()));
    }
    p4sgd->on_finished = on_finished;
    p4sgd->Start(s.workload.start_ps);
    progress_fn = [&] { return p4sgd->progress(); };
  } else if (s.workload.type == WorkloadType::kAllreduce && s.workload.protocol == "panama") {
    panama = std::make_unique<PanamaJobSet>(*fabric, s, hosts);
    panama->on_finished = on_finished;
    panama->Start();
    progress_fn = [&] { return panama->progress(); };
  } else if (s.workload.type == WorkloadType::kAllreduce && s.workload.jobs > 1) {
    ring_jobs = MakeRingJobs(s, *fabric, hosts);
    auto rings_done = std::make_shared<size_t>(0);
    for (auto& rj : ring_jobs) {
      rj->on_finished = [&, rings_done] {
        if (++*rings_done == ring_jobs.size()) on_finished();
      };
      rj->Start(s.workload.start_ps);
    }
    progress_fn = [&] {
      double sum = 0;
      for (const auto& rj : ring_jobs) sum += rj->progress();
      return sum / static_cast<double>(ring_jobs.size());
    };
  } else if (s.workload.type == WorkloadType::kAllreduce) {
    NodeContainer nodes;
    std::vector<Ipv4Address> addrs;
    for (uint32_t h : hosts) {
      nodes.Add(fabric->host(h));
      addrs.push_back(fabric->host_address(h));
    }
    const RingConfig rc = RingConfigOf(s);
    try {
      ring = std::make_unique<RingAllreduce>(nodes, addrs, s.workload.bytes, s.workload.dtype, s.workload.data,
                                             s.seed, rc, s.workload.iterations, s.workload.compute_gap_ps,
                                             static_cast<uint16_t>(s.links.mtu_bytes));
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(fmt::format("workload: {}", e.what()));
    }
    ring->on_finished = on_finished;
    ring->Start(s.workload.start_ps);
    progress_fn = [&] { return ring->progress(); };
  } else if (s.workload.type == WorkloadType::kPermutation) {
    perm = std::make_unique<Permutation>();
    const std::vector<uint32_t> image = topo::RandomDerangement(static_cast<uint32_t>(hosts.size()), s.seed);
    const uint32_t payload = s.workload.payload_bytes;
    const uint64_t packets = (s.workload.flow_bytes + payload - 1) / payload;
    const double rate = (s.workload.rate_gbps > 0 ? s.workload.rate_gbps : s.links.host_rate_gbps) * 1e9;
    const uint64_t wire = uint64_t{payload} + 28 + 14 + s.links.wire_overhead_bytes;
    const auto interval_ps = static_cast<uint64_t>(std::ceil(wire * 8e12 / rate));
    for (uint32_t h : hosts) {
      auto server = CreateObject<UdpServer>();
      server->SetAttribute("Port", UintegerValue(9));
      fabric->host(h)->AddApplication(server);
      server->TraceConnectWithoutContext("Rx", MakeCallback(&Permutation::OnRx, perm.get()));
      perm->servers.push_back(server);
    }
    for (size_t i = 0; i < hosts.size(); ++i) {
      auto client = CreateObject<UdpClient>();
      client->SetAttribute("RemoteAddress", AddressValue(fabric->host_address(hosts[image[i]])));
      client->SetAttribute("RemotePort", UintegerValue(9));
      client->SetAttribute("MaxPackets", UintegerValue(packets));
      client->SetAttribute("Interval", TimeValue(PicoSeconds(interval_ps)));
      client->SetAttribute("PacketSize", UintegerValue(payload));
      fabric->host(hosts[i])->AddApplication(client);
    }
    perm->expected_packets = packets * hosts.size();
    perm->on_finished = on_finished;
    progress_fn = [&] { return static_cast<double>(perm->received_packets) / perm->expected_packets; };
  }

  if (has_background) {
    try {
      background = std::make_unique<Background>(s, *fabric, hosts);
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(fmt::format("background: {}", e.what()));
    }
    std::function<void()> on_flows_done;
    if (s.background.flows.enabled && s.background.flows.wait_for_completion)
      on_flows_done = [&] {
        flows_done = true;
        maybe_finish();
      };
    background->Install(on_flows_done);
    // Flows not waited for: with no workload, the run ends when arrivals stop.
    if (s.background.flows.enabled && !s.background.flows.wait_for_completion)
      Simulator::Schedule(PicoSeconds(s.background.flows.stop_ps), [&] { maybe_finish(); });
    // Congestion alone is the measured traffic: the run ends when it stops,
    // so utilisation is over the time it ran.
    if (s.workload.type == WorkloadType::kNone && !s.background.flows.enabled && s.background.congestion.stop_ps)
      Simulator::Schedule(PicoSeconds(s.background.congestion.stop_ps), finish);
    if (s.workload.type == WorkloadType::kNone && background->has_flows())
      progress_fn = [&] { return background->flow_progress(); };
    else if (s.workload.type == WorkloadType::kNone && s.background.congestion.stop_ps)
      progress_fn = [&] { return static_cast<double>(NowPs()) / s.background.congestion.stop_ps; };
  }

  // Optional queue / utilisation time series.
  std::string samples = "time_s,link,direction,queue_bytes,queue_packets,tx_bytes,utilization\n";
  std::function<void()> sample;
  std::vector<uint64_t> busy_before(2 * topology.links().size(), 0);
  uint64_t sampled_ps = 0;
  if (s.outputs.sample_interval_ps > 0) {
    sample = [&] {
      const uint64_t now_ps = NowPs();
      const double now = PsToS(now_ps);
      for (uint32_t i = 0; i < topology.links().size(); ++i)
        for (int d = 0; d < 2; ++d) {
          const InaNetDevice& dev = fabric->link_tx(i, d);
          // Busy time since the previous sample over the interval: the link's
          // utilisation in that interval (Canary Fig. 7b/10b, over time).
          uint64_t& before = busy_before[2 * i + d];
          const double util = now_ps > sampled_ps ? static_cast<double>(dev.counters().busy_ps - before) /
                                                        static_cast<double>(now_ps - sampled_ps)
                                                  : 0.0;
          before = dev.counters().busy_ps;
          samples += fmt::format("{:.9f},{},{},{},{},{},{:.6f}\n", now, i, d, dev.queued_bytes(), dev.queued_packets(),
                                 dev.counters().tx_bytes, util);
        }
      sampled_ps = now_ps;
      if (!finished) Simulator::Schedule(PicoSeconds(s.outputs.sample_interval_ps), sample);
    };
    Simulator::Schedule(PicoSeconds(0), sample);
  }

  const bool show_progress = options.progress == ProgressMode::kOn ||
                             (options.progress == ProgressMode::kAuto && isatty(STDERR_FILENO));
  ProgressReporter progress(progress_fn, s.max_sim_time_ps);
  if (show_progress) progress.Start();

  Simulator::Stop(PicoSeconds(s.max_sim_time_ps));
  const auto t1 = Clock::now();
  Simulator::Run();
  const auto t2 = Clock::now();
  progress.Finish();
  const uint64_t end_ps = finished && (s.workload.type != WorkloadType::kNone || has_background) ? finished_ps : NowPs();
  const uint64_t events = Simulator::GetEventCount() - progress.events();

  // ---------------------------------------------------------------- results
  RunResult out;
  json& r = out.json;
  r["inasim_version"] = INASIM_VERSION;
  r["scenario"] = s.resolved;
  r["seed"] = s.seed;
  r["topology"] = {{"description", topology.description},
                   {"hosts", topology.num_hosts()},
                   {"switches", topology.num_switches()},
                   {"links", topology.links().size()},
                   {"routing_groups", fabric->routing().num_groups()}};
  r["sim"] = {{"end_time_ps", end_ps},
              {"end_time_s", PsToS(end_ps)},
              {"events", events},
              {"stopped_by", finished ? "workload_done" : "max_sim_time"}};

  // Network counters.
  uint64_t frames = 0, bytes = 0, wire = 0, drops_buf = 0, drops_loss = 0, drops_down = 0, marks = 0, pauses = 0;
  uint64_t host_tx_bytes = 0;
  uint64_t fingerprint = 0;  // every device's frames, folded in port order (2 x link + direction)
  uint64_t host_link_wire = 0;  // both directions of host links: what hosts send plus receive
  std::vector<double> util_all, util_fabric;  // per link direction, over [0, end]
  std::string links_csv =
      "link,a,b,direction,rate_gbps,tx_frames,tx_bytes,wire_bytes,utilization,drops_buffer,drops_loss,"
      "drops_link_down,ecn_marks,pause_sent,paused_s,max_queue_bytes\n";
  for (uint32_t i = 0; i < topology.links().size(); ++i) {
    const auto& l = topology.links()[i];
    for (int d = 0; d < 2; ++d) {
      const InaNetDevice& dev = fabric->link_tx(i, d);
      const PortCounters& c = dev.counters();
      const congestion::QueueCounters& q = dev.queue_counters();
      fingerprint = FingerprintCombine(fingerprint, 2 * uint64_t{i} + d, dev.fingerprint(), c.tx_packets);
      frames += c.tx_packets;
      bytes += c.tx_bytes;
      wire += c.tx_wire_bytes;
      drops_buf += q.dropped_buffer;
      drops_loss += c.drops_loss;
      drops_down += c.drops_link_down;
      marks += q.marked;
      pauses += c.pause_sent;
      const uint32_t from = d == 0 ? l.a : l.b;
      if (topology.is_host(from)) host_tx_bytes += c.tx_bytes;
      if (topology.is_host(l.a) || topology.is_host(l.b)) host_link_wire += c.tx_wire_bytes;
      const double util = end_ps ? static_cast<double>(c.busy_ps) / static_cast<double>(end_ps) : 0.0;
      util_all.push_back(util);
      if (!topology.is_host(l.a) && !topology.is_host(l.b)) util_fabric.push_back(util);
      if (s.outputs.links_csv) {
        links_csv += fmt::format("{},{},{},{},{},{},{},{},{:.6f},{},{},{},{},{},{:.9f},{}\n", i,
                                 topology.node(d == 0 ? l.a : l.b).name, topology.node(d == 0 ? l.b : l.a).name,
                                 d == 0 ? "a->b" : "b->a", static_cast<double>(l.spec.rate_bps) / 1e9, c.tx_packets,
                                 c.tx_bytes, c.tx_wire_bytes, util, q.dropped_buffer, c.drops_loss,
                                 c.drops_link_down, q.marked, c.pause_sent, PsToS(c.paused_ps), q.max_bytes);
      }
    }
  }
  // Final avalanche (congestion::Mix64, SplitMix64's finaliser): similar runs give unrelated strings.
  r["sim"]["fingerprint"] = fmt::format("{:016x}", congestion::Mix64(fingerprint));
  uint64_t no_route = 0, not_ipv4 = 0;
  for (uint32_t i = 0; i < fabric->num_switches(); ++i) {
    no_route += fabric->switch_node(i).counters().dropped_no_route;
    not_ipv4 += fabric->switch_node(i).counters().dropped_not_ipv4;
  }
  r["network"] = {{"frames_tx", frames},         {"bytes_tx", bytes},
                  {"wire_bytes_tx", wire},       {"host_bytes_tx", host_tx_bytes},
                  {"host_link_wire_bytes", host_link_wire},
                  {"drops_buffer", drops_buf},   {"drops_loss", drops_loss},
                  {"drops_link_down", drops_down}, {"drops_no_route", no_route},
                  {"drops_not_ipv4", not_ipv4},  {"ecn_marks", marks},
                  {"pfc_pause_frames", pauses}};
  // Canary Fig. 7b/10b: how busy links were, one sample per link direction.
  r["network"]["utilization"] = {{"all_links", congestion::UtilizationHistogram(util_all)},
                                 {"switch_links", congestion::UtilizationHistogram(util_fabric)}};

  uint64_t payload_delivered = 0;
  std::string summary;
  summary += fmt::format("inasim {}: scenario \"{}\" on {} ({} hosts, {} switches), seed {}\n", INASIM_VERSION,
                         s.name, topology.description, topology.num_hosts(), topology.num_switches(), s.seed);
  json& w = r["workload"];
  if (ring) {
    const RingPlan& plan = ring->plan();
    const uint32_t n = plan.ranks();
    const double rate = s.links.host_rate_gbps * 1e9;
    const double bound = 2.0 * (n - 1) / n * static_cast<double>(s.workload.bytes) * 8.0 / rate;
    // Framing bound: the busiest rank's stream with every header and wire byte.
    uint64_t worst_wire = 0;
    for (uint32_t rk = 0; rk < n; ++rk) {
      uint64_t elems = 0;
      for (uint32_t t = 0; t < plan.steps(); ++t) {
        const uint32_t c = plan.chunk_sent(rk, t);
        const uint64_t g0 = plan.chunk_first(c), g1 = plan.chunk_first(c) + plan.chunk_packets(c);
        const uint64_t e1 = std::min<uint64_t>(g1 * plan.epp(), plan.elements());
        elems += e1 - std::min<uint64_t>(g0 * plan.epp(), plan.elements());
      }
      const uint64_t pkts = plan.stream_packets(rk);
      const uint64_t wb = elems * 4 + pkts * (RingWire::kDataHeader + 8 + 20 + 14 + s.links.wire_overhead_bytes);
      worst_wire = std::max(worst_wire, wb);
    }
    const double framing_bound = static_cast<double>(worst_wire) * 8.0 / rate;
    json colls = json::array();
    std::string csv = "iteration,start_s,end_s,duration_s,algbw_gbps,busbw_gbps,bound_s,bound_ratio,correct,"
                      "elements_checked,mismatches,retransmissions\n";
    uint64_t checked = 0, mism = 0;
    double total_dur = 0;
    bool all_correct = true;
    for (const CollectiveRecord& c : ring->records()) {
      if (c.end_ps == 0) continue;  // unfinished
      const double dur = PsToS(c.end_ps - c.start_ps);
      const double algbw = static_cast<double>(s.workload.bytes) * 8.0 / dur / 1e9;
      const double busbw = algbw * 2.0 * (n - 1) / n;
      // Every rank must end with every element exactly once: n * E checks.
      const bool ok = c.mismatches == 0 && c.elements_checked == uint64_t{n} * plan.elements();
      all_correct &= ok;
      checked += c.elements_checked;
      mism += c.mismatches;
      total_dur += dur;
      colls.push_back({{"iteration", c.iteration}, {"start_s", PsToS(c.start_ps)}, {"end_s", PsToS(c.end_ps)},
                       {"duration_s", dur}, {"algbw_gbps", algbw}, {"busbw_gbps", busbw},
                       {"bound_ratio", bound / dur}, {"correct", ok}, {"elements_checked", c.elements_checked},
                       {"mismatches", c.mismatches}, {"retransmissions", c.retransmissions}});
      csv += fmt::format("{},{:.12f},{:.12f},{:.12f},{:.6f},{:.6f},{:.12f},{:.6f},{},{},{},{}\n", c.iteration,
                         PsToS(c.start_ps), PsToS(c.end_ps), dur, algbw, busbw, bound, bound / dur, ok ? 1 : 0,
                         c.elements_checked, c.mismatches, c.retransmissions);
    }
    const size_t done_count = colls.size();
    payload_delivered = 2 * (uint64_t{n} - 1) * s.workload.bytes * done_count;  // summed over ranks
    out.correct = finished && all_correct;
    w = {{"type", "allreduce"},
         {"protocol", "ring"},
         {"ranks", n},
         {"bytes", s.workload.bytes},
         {"elements", plan.elements()},
         {"elements_per_packet", plan.epp()},
         {"packets_per_rank", plan.stream_packets(0)},
         {"iterations_requested", s.workload.iterations},
         {"iterations_completed", done_count},
         {"analytic_bound_s", bound},
         {"analytic_bound_formula", "2(n-1)/n * S / B"},
         {"framing_bound_s", framing_bound},
         {"mean_duration_s", done_count ? total_dur / done_count : 0.0},
         {"elements_checked", checked},
         {"mismatches", mism},
         {"correct", out.correct},
         {"collectives", colls}};
    out.csv_names.push_back("collectives.csv");
    out.csv_texts.push_back(csv);
    if (done_count) {
      const double mean = total_dur / done_count;
      summary += fmt::format("ring allreduce of {} ({}, {}) over {} hosts at {} Gb/s: {} per collective "
                             "(x{} iterations)\n",
                             HumanBytes(s.workload.bytes), s.workload.dtype == DType::kInt32 ? "int32" : "float32",
                             s.workload.data == DataPattern::kHashed ? "hashed data" : "all ones", n,
                             s.links.host_rate_gbps, HumanTime(mean), done_count);
      summary += fmt::format("  analytic bound 2(n-1)/n*S/B = {} ({:.1f} % of it reached); with framing {} "
                             "({:.1f} %)\n",
                             HumanTime(bound), 100.0 * bound / mean, HumanTime(framing_bound),
                             100.0 * framing_bound / mean);
    }
    summary += fmt::format("  result: {} - {} elements checked against the exact sum, {} mismatches{}\n",
                           VerdictWord(out.correct, s.workload.data), checked, mism,
                           finished ? "" : fmt::format(" (only {} of {} iterations finished by the time limit)",
                                                       done_count, s.workload.iterations));
  } else if (!ring_jobs.empty()) {
    std::string csv;
    ReportRingJobs(s, ring_jobs, finished, w, csv, summary, out.correct, payload_delivered);
    out.csv_names.push_back("collectives.csv");
    out.csv_texts.push_back(csv);
  } else if (switchml) {
    switchml->Report(s, finished, w, out.csv_names, out.csv_texts, summary, out.correct, payload_delivered);
  } else if (canary) {
    canary->Report(s, finished, w, out.csv_names, out.csv_texts, summary, out.correct, payload_delivered);
  } else if (panama) {
    panama->Report(s, finished, w, out.csv_names, out.csv_texts, summary, out.correct, payload_delivered);
  } else if (p4sgd) {
    p4sgd->Report(s, finished, w, out.csv_names, out.csv_texts, summary, out.correct, payload_delivered);
  } else if (perm) {
    payload_delivered = perm->received_packets * s.workload.payload_bytes;
    uint64_t lost = 0;
    for (auto& srv : perm->servers) lost += srv->GetLost();
    out.correct = finished;  // nothing is aggregated: correct means every flow completed
    w = {{"type", "permutation"},
         {"flows", hosts.size()},
         {"flow_bytes", s.workload.flow_bytes},
         {"payload_bytes", s.workload.payload_bytes},
         {"packets_expected", perm->expected_packets},
         {"packets_received", perm->received_packets},
         {"complete", perm->received_packets == perm->expected_packets},
         {"last_rx_s", PsToS(perm->last_rx_ps)},
         {"payload_delivered_bytes", payload_delivered}};
    summary += fmt::format("permutation: {} flows of {} -> {} of {} packets delivered, last at {}\n", hosts.size(),
                           HumanBytes(s.workload.flow_bytes), perm->received_packets, perm->expected_packets,
                           HumanTime(PsToS(perm->last_rx_ps)));
  } else {
    w = {{"type", "none"}};
  }
  if (background) {
    background->Report(r, out.csv_names, out.csv_texts, summary);
    payload_delivered += background->payload_delivered();
  }
  r["correct"] = out.correct;
  if (s.workload.type == WorkloadType::kAllreduce) {
    // A verdict says what it checked (ones data: counts only).
    if (!w.contains("check")) w["check"] = DataCheckDescription(s.workload.data);
    r["check"] = w["check"];
  }
  summary += fmt::format("  network: {} frames, {} buffer drops, {} random losses, {} link-down drops, {} ECN marks, "
                         "{} PFC pauses\n",
                         frames, drops_buf, drops_loss, drops_down, marks, pauses);

  const double run_s = Seconds(t1, t2);
  const double wall = Seconds(t0, Clock::now());
  r["perf"] = {{"wall_s", wall},
               {"setup_s", Seconds(t0, t1)},
               {"run_s", run_s},
               {"events_per_s", run_s > 0 ? events / run_s : 0.0},
               {"host_bytes_per_wall_s", run_s > 0 ? host_tx_bytes / run_s : 0.0},
               {"payload_bytes_per_wall_s", run_s > 0 ? payload_delivered / run_s : 0.0},
               {"link_bytes_per_wall_s", run_s > 0 ? bytes / run_s : 0.0},
               {"peak_rss_mb", PeakRssMb()},
               {"note", "perf is wall-clock dependent; everything else in this file is deterministic"}};
  summary += fmt::format("  simulated {} in {:.2f} s wall ({:.2f} M events/s, {:.1f} MB/s of host traffic), "
                         "peak RSS {:.0f} MB\n",
                         HumanTime(PsToS(end_ps)), wall, run_s > 0 ? events / run_s / 1e6 : 0.0,
                         run_s > 0 ? host_tx_bytes / run_s / 1e6 : 0.0, PeakRssMb());
  out.summary = summary;

  if (s.outputs.links_csv) {
    out.csv_names.push_back("links.csv");
    out.csv_texts.push_back(links_csv);
  }
  if (s.outputs.sample_interval_ps > 0) {
    out.csv_names.push_back("samples.csv");
    out.csv_texts.push_back(samples);
  }

  destroy_on_throw.armed = false;
  ring.reset();
  ring_jobs.clear();
  Simulator::Destroy();
  switchml.reset();  // after Destroy: workers' sockets call back into it until then
  canary.reset();    // after Destroy, likewise
  panama.reset();    // after Destroy, likewise
  background.reset();  // after Destroy: its sockets' callbacks point into it
  fabric.reset();
  return out;
}

}  // namespace inasim
