#include "ina/runner.h"

#include "ina/diagnosis.h"
#include "ina/event-trace.h"
#include "ina/pcap-capture.h"
#include "ina/version.h"

#include "congestion/flow_stats.h"
#include "ina/addressing.h"
#include "ina/background.h"
#include "ina/fabric.h"
#include "ina/frame-fingerprint.h"
#include "ina/progress.h"
#include "ina/units.h"
#include "ina/workload.h"
#include "topology/topology.h"

#include "ns3/core-module.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <memory>
#include <sstream>

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


/// Seeds ns-3's RNG from the scenario and picks the event scheduler.
void SetUpSimulator(const Scenario& s) {
  RngSeedManager::SetSeed(static_cast<uint32_t>(s.seed % 4294967295ULL) + (s.seed >= 4294967295ULL));
  RngSeedManager::SetRun(s.seed >> 32);
  ObjectFactory scheduler;
  // std::priority_queue: 17 % fewer instructions per run than ns-3's
  // HeapScheduler, 4 % fewer than MapScheduler, on the k=4 permutation
  // (callgrind; bench/README.md). INASIM_SCHEDULER overrides it for measurements.
  const char* sched = std::getenv("INASIM_SCHEDULER");
  scheduler.SetTypeId(sched ? sched : "ns3::PriorityQueueScheduler");
  Simulator::SetScheduler(scheduler);
}

/// The fabric of `topology` with the scenario's links, switches and faults.
std::unique_ptr<Fabric> MakeFabric(const Scenario& s, const topo::Topology& topology) {
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
  if (s.faults.loss_rate > 0)
    for (uint32_t i = 0; i < topology.links().size(); ++i) fabric->SetLinkLoss(i, s.faults.loss_rate);
  for (const LinkFault& f : s.faults.links) {
    if (f.loss_rate >= 0) fabric->SetLinkLoss(f.link, f.loss_rate);
    if (f.down_at_ps) fabric->SetLinkDown(f.link, *f.down_at_ps, s.faults.reconverge_ps);
  }
  for (const SwitchFault& f : s.faults.switches) fabric->SetSwitchDown(f.vertex, f.down_at_ps, s.faults.reconverge_ps);
  for (const HostFault& h : s.faults.hosts) fabric->SetHostDelay(h.host, h.delay_ps, h.at_ps);
  return fabric;
}

/// When a run is over: the workload is done and, if asked, every background
/// flow has completed; moving congestion then stops too.
class RunControl {
 public:
  explicit RunControl(const Scenario& s)
      : s_(s),
        has_background_(s.background.flows.enabled || s.background.congestion.enabled),
        workload_done_(s.workload.type == WorkloadType::kNone),
        flows_done_(!s.background.flows.enabled || !s.background.flows.wait_for_completion),
        finished_(workload_done_ && !has_background_) {}

  void Finish() {
    if (finished_) return;
    finished_ = true;
    finished_ps_ = NowPs();
    if (background_) background_->Stop();
    Simulator::Stop();
  }
  void MaybeFinish() {
    if (!workload_done_ || !flows_done_) return;
    if (s_.workload.type == WorkloadType::kNone && !s_.background.flows.enabled) return;  // congestion alone: runs to its stop
    Finish();
  }
  void WorkloadDone() {
    workload_done_ = true;
    MaybeFinish();
  }
  void FlowsDone() {
    flows_done_ = true;
    MaybeFinish();
  }
  void set_background(Background* b) { background_ = b; }
  bool has_background() const { return has_background_; }
  bool finished() const { return finished_; }
  /// The run's end: when it finished, else (time limit, congestion alone) now.
  uint64_t EndPs() const {
    return finished_ && (s_.workload.type != WorkloadType::kNone || has_background_) ? finished_ps_ : NowPs();
  }

 private:
  const Scenario& s_;
  bool has_background_;
  bool workload_done_;
  bool flows_done_;
  bool finished_;
  uint64_t finished_ps_ = 0;
  Background* background_ = nullptr;
};

/// The registered protocol a scenario's workload runs (nullptr: type "none").
const Protocol* WorkloadProtocol(const Scenario& s) {
  if (s.workload.type == WorkloadType::kNone) return nullptr;
  const std::string_view name =
      s.workload.type == WorkloadType::kPermutation ? std::string_view("permutation") : std::string_view(s.workload.protocol);
  const Protocol* p = FindProtocol(name);
  if (!p) throw ScenarioError(fmt::format("workload.protocol: \"{}\" is not a registered protocol ({})", name,
                                          ProtocolNames()));
  return p;
}

/// Builds and starts the workload (nullptr for type "none").
std::unique_ptr<Workload> StartWorkload(const Scenario& s, Fabric& fabric, const std::vector<uint32_t>& hosts,
                                        RunControl& control) {
  const Protocol* protocol = WorkloadProtocol(s);
  if (!protocol) return nullptr;
  const uint32_t jobs = s.workload.type == WorkloadType::kAllreduce ? s.workload.jobs : 1;
  if (s.workload.type == WorkloadType::kAllreduce && hosts.size() < uint64_t{protocol->min_hosts_per_job} * jobs)
    throw ScenarioError(fmt::format("workload.jobs: {} jobs need at least {} hosts each; {} hosts are selected", jobs,
                                    protocol->min_hosts_per_job, hosts.size()));
  std::unique_ptr<Workload> workload = protocol->make(WorkloadContext{s, fabric, hosts});
  workload->Start([&control] { control.WorkloadDone(); });
  return workload;
}

/// Installs the background traffic (nullptr: none) and the events that end a
/// run whose measured traffic it is.
std::unique_ptr<Background> StartBackground(const Scenario& s, Fabric& fabric, const std::vector<uint32_t>& hosts,
                                            RunControl& control) {
  if (!control.has_background()) return nullptr;
  std::unique_ptr<Background> background;
  try {
    background = std::make_unique<Background>(s, fabric, hosts);
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(fmt::format("background: {}", e.what()));
  }
  control.set_background(background.get());
  std::function<void()> on_flows_done;
  if (s.background.flows.enabled && s.background.flows.wait_for_completion)
    on_flows_done = [&control] { control.FlowsDone(); };
  background->Install(on_flows_done);
  // Flows not waited for: with no workload, the run ends when arrivals stop.
  if (s.background.flows.enabled && !s.background.flows.wait_for_completion)
    Simulator::Schedule(PicoSeconds(s.background.flows.stop_ps), [&control] { control.MaybeFinish(); });
  // Congestion alone is the measured traffic: the run ends when it stops,
  // so utilisation is over the time it ran.
  if (s.workload.type == WorkloadType::kNone && !s.background.flows.enabled && s.background.congestion.stop_ps)
    Simulator::Schedule(PicoSeconds(s.background.congestion.stop_ps), [&control] { control.Finish(); });
  return background;
}

/// The progress fraction of a run: its workload's, else its flows', else simulated time's.
std::function<double()> ProgressOf(const Scenario& s, const Workload* workload, const Background* background) {
  if (workload) return [workload] { return workload->Progress(); };
  if (background && background->has_flows()) return [background] { return background->flow_progress(); };
  if (background && s.background.congestion.stop_ps)
    return [&s] { return static_cast<double>(NowPs()) / s.background.congestion.stop_ps; };
  return [&s] { return static_cast<double>(NowPs()) / s.max_sim_time_ps; };
}

/// Optional queue / utilisation time series (samples.csv): every link
/// direction every outputs.sample_interval, until the run finishes.
class LinkSampler {
 public:
  LinkSampler(const Scenario& s, const topo::Topology& topology, const Fabric& fabric, const RunControl& control)
      : s_(s), topology_(topology), fabric_(fabric), control_(control),
        busy_before_(2 * topology.links().size(), 0) {
    if (s.outputs.sample_interval_ps == 0) return;
    links_ = SelectLinks(s.outputs.sample_links, s.outputs.sample_nodes, topology, "outputs.sample_links",
                         "outputs.sample_nodes");
    Simulator::Schedule(PicoSeconds(0), &LinkSampler::Sample, this);
  }
  const std::string& csv() const { return csv_; }

 private:
  void Sample() {
    const uint64_t now_ps = NowPs();
    const double now = PsToS(now_ps);
    for (uint32_t i : links_)
      for (int d = 0; d < 2; ++d) {
        const InaNetDevice& dev = fabric_.link_tx(i, d);
        // Busy time since the previous sample over the interval: the link's
        // utilisation in that interval (Canary Fig. 7b/10b, over time).
        uint64_t& before = busy_before_[2 * i + d];
        const double util = now_ps > sampled_ps_ ? static_cast<double>(dev.counters().busy_ps - before) /
                                                       static_cast<double>(now_ps - sampled_ps_)
                                                 : 0.0;
        before = dev.counters().busy_ps;
        csv_ += fmt::format("{:.9f},{},{},{},{},{},{:.6f}\n", now, i, d, dev.queued_bytes(), dev.queued_packets(),
                            dev.counters().tx_bytes, util);
      }
    sampled_ps_ = now_ps;
    if (!control_.finished()) Simulator::Schedule(PicoSeconds(s_.outputs.sample_interval_ps), &LinkSampler::Sample, this);
  }

  const Scenario& s_;
  const topo::Topology& topology_;
  const Fabric& fabric_;
  const RunControl& control_;
  std::vector<uint64_t> busy_before_;
  std::vector<uint32_t> links_;  ///< the links sampled, in link order
  uint64_t sampled_ps_ = 0;
  std::string csv_ = "time_s,link,direction,queue_bytes,queue_packets,tx_bytes,utilization\n";
};

/// What every link direction sent, dropped and marked, summed; links.csv.
struct NetworkTotals {
  uint64_t frames = 0, bytes = 0, wire = 0, drops_buf = 0, drops_loss = 0, drops_down = 0, marks = 0, pauses = 0;
  uint64_t host_tx_bytes = 0;
  uint64_t fingerprint = 0;     // every device's frames, folded in port order (2 x link + direction)
  uint64_t host_link_wire = 0;  // both directions of host links: what hosts send plus receive
  std::vector<double> util_all, util_fabric;  // per link direction, over [0, end]
  std::vector<LinkDirection> directions;      // the diagnosis' rankings
  std::string links_csv =
      "link,a,b,direction,rate_gbps,tx_frames,tx_bytes,wire_bytes,utilization,drops_buffer,drops_loss,"
      "drops_link_down,ecn_marks,pause_sent,paused_s,max_queue_bytes\n";
};

void AddLinkDirection(NetworkTotals& n, const topo::Topology& topology, const InaNetDevice& dev, uint32_t i, int d,
                      uint64_t end_ps, bool links_csv) {
  const auto& l = topology.links()[i];
  const PortCounters& c = dev.counters();
  const congestion::QueueCounters& q = dev.queue_counters();
  n.fingerprint = FingerprintCombine(n.fingerprint, 2 * uint64_t{i} + d, dev.fingerprint(), c.tx_packets);
  n.frames += c.tx_packets;
  n.bytes += c.tx_bytes;
  n.wire += c.tx_wire_bytes;
  n.drops_buf += q.dropped_buffer;
  n.drops_loss += c.drops_loss;
  n.drops_down += c.drops_link_down;
  n.marks += q.marked;
  n.pauses += c.pause_sent;
  const uint32_t from = d == 0 ? l.a : l.b;
  if (topology.is_host(from)) n.host_tx_bytes += c.tx_bytes;
  if (topology.is_host(l.a) || topology.is_host(l.b)) n.host_link_wire += c.tx_wire_bytes;
  n.directions.push_back({i, topology.node(from).name, topology.node(d == 0 ? l.b : l.a).name,
                          static_cast<double>(q.max_bytes) * 8.0 / static_cast<double>(dev.rate_bps()), q.max_bytes,
                          q.dropped_buffer + c.drops_loss + c.drops_link_down, q.marked, PsToS(c.paused_ps)});
  const double util = end_ps ? static_cast<double>(c.busy_ps) / static_cast<double>(end_ps) : 0.0;
  n.util_all.push_back(util);
  if (!topology.is_host(l.a) && !topology.is_host(l.b)) n.util_fabric.push_back(util);
  if (!links_csv) return;
  n.links_csv += fmt::format("{},{},{},{},{},{},{},{},{:.6f},{},{},{},{},{},{:.9f},{}\n", i,
                             topology.node(d == 0 ? l.a : l.b).name, topology.node(d == 0 ? l.b : l.a).name,
                             d == 0 ? "a->b" : "b->a", static_cast<double>(l.spec.rate_bps) / 1e9, c.tx_packets,
                             c.tx_bytes, c.tx_wire_bytes, util, q.dropped_buffer, c.drops_loss, c.drops_link_down,
                             q.marked, c.pause_sent, PsToS(c.paused_ps), q.max_bytes);
}

NetworkTotals CollectNetwork(const Scenario& s, const topo::Topology& topology, const Fabric& fabric, uint64_t end_ps) {
  NetworkTotals n;
  for (uint32_t i = 0; i < topology.links().size(); ++i)
    for (int d = 0; d < 2; ++d) AddLinkDirection(n, topology, fabric.link_tx(i, d), i, d, end_ps, s.outputs.links_csv);
  return n;
}

/// results.json's "network": totals, drops by cause, utilisation histograms.
json NetworkJson(const NetworkTotals& n, const Fabric& fabric) {
  uint64_t no_route = 0, not_ipv4 = 0;
  for (uint32_t i = 0; i < fabric.num_switches(); ++i) {
    no_route += fabric.switch_node(i).counters().dropped_no_route;
    not_ipv4 += fabric.switch_node(i).counters().dropped_not_ipv4;
  }
  json net = {{"frames_tx", n.frames},         {"bytes_tx", n.bytes},
              {"wire_bytes_tx", n.wire},       {"host_bytes_tx", n.host_tx_bytes},
              {"host_link_wire_bytes", n.host_link_wire},
              {"drops_buffer", n.drops_buf},   {"drops_loss", n.drops_loss},
              {"drops_link_down", n.drops_down}, {"drops_no_route", no_route},
              {"drops_not_ipv4", not_ipv4},    {"ecn_marks", n.marks},
              {"pfc_pause_frames", n.pauses}};
  // Canary Fig. 7b/10b: how busy links were, one sample per link direction.
  net["utilization"] = {{"all_links", congestion::UtilizationHistogram(n.util_all)},
                        {"switch_links", congestion::UtilizationHistogram(n.util_fabric)}};
  return net;
}

/// The workload's part of the results ({"type": "none"} without one).
WorkloadReport ReportWorkload(const Scenario& s, const Workload* workload, bool finished) {
  WorkloadReport report;
  if (!workload) {
    report.workload = {{"type", "none"}};
    return report;
  }
  workload->Report(finished, report);
  if (s.workload.type == WorkloadType::kAllreduce && !report.workload.contains("check"))
    report.workload["check"] = DataCheckDescription(s.workload.data);  // a verdict says what it checked
  return report;
}

/// Wall-clock measurements (perf) and the summary's last line.
json PerfJson(double wall, double setup, double run_s, uint64_t events, uint64_t host_tx_bytes,
              uint64_t payload_delivered, uint64_t link_bytes) {
  return {{"wall_s", wall},
          {"setup_s", setup},
          {"run_s", run_s},
          {"events_per_s", run_s > 0 ? events / run_s : 0.0},
          {"host_bytes_per_wall_s", run_s > 0 ? host_tx_bytes / run_s : 0.0},
          {"payload_bytes_per_wall_s", run_s > 0 ? payload_delivered / run_s : 0.0},
          {"link_bytes_per_wall_s", run_s > 0 ? link_bytes / run_s : 0.0},
          {"peak_rss_mb", PeakRssMb()},
          {"note", "perf is wall-clock dependent; everything else in this file is deterministic"}};
}

/// Everything but perf: the scenario echo, topology, sim, network, the
/// workload's report and the background's.
RunResult CollectResults(const Scenario& s, const topo::Topology& topology, const Fabric& fabric,
                         const NetworkTotals& n, const Workload* workload, const Background* background,
                         const HostTimeouts& timeouts, bool finished, uint64_t end_ps, uint64_t events,
                         uint64_t& payload_delivered) {
  RunResult out;
  json& r = out.json;
  r["inasim_version"] = Version();
  r["scenario"] = s.resolved;
  r["seed"] = s.seed;
  r["topology"] = {{"description", topology.description},
                   {"hosts", topology.num_hosts()},
                   {"switches", topology.num_switches()},
                   {"links", topology.links().size()},
                   {"routing_groups", fabric.routing().num_groups()}};
  r["sim"] = {{"end_time_ps", end_ps},
              {"end_time_s", PsToS(end_ps)},
              {"events", events},
              {"stopped_by", finished ? "workload_done" : "max_sim_time"}};
  // Final avalanche (congestion::Mix64, SplitMix64's finaliser): similar runs give unrelated strings.
  r["sim"]["fingerprint"] = fmt::format("{:016x}", congestion::Mix64(n.fingerprint));
  r["network"] = NetworkJson(n, fabric);
  out.summary = fmt::format("inasim {}: scenario \"{}\" on {} ({} hosts, {} switches), seed {}\n", Version(),
                            s.name, topology.description, topology.num_hosts(), topology.num_switches(), s.seed);
  WorkloadReport w = ReportWorkload(s, workload, finished);
  out.summary += w.summary;
  out.csv_names = std::move(w.csv_names);
  out.csv_texts = std::move(w.csv_texts);
  payload_delivered = w.payload_delivered;
  out.correct = workload ? w.correct : true;
  r["workload"] = std::move(w.workload);
  if (!w.rank_spans.empty()) {
    out.csv_names.push_back("hosts.csv");
    out.csv_texts.push_back(HostsCsv(topology, w.rank_spans, timeouts));
  }
  if (!w.iteration_starts.empty() && s.workload.schedule.given) {
    out.csv_names.push_back("iterations.csv");
    out.csv_texts.push_back(IterationsCsv(topology, w.iteration_starts, w.rank_spans));
    r["workload"]["step"] = StepSummary(w.iteration_starts, w.rank_spans, out.summary);
  }
  if (background) {
    background->Report(r, out.csv_names, out.csv_texts, out.summary);
    payload_delivered += background->payload_delivered();
  }
  r["correct"] = out.correct;
  if (s.workload.type == WorkloadType::kAllreduce) r["check"] = r["workload"]["check"];
  out.summary += fmt::format("  network: {} frames, {} buffer drops, {} random losses, {} link-down drops, {} ECN "
                             "marks, {} PFC pauses\n",
                             n.frames, n.drops_buf, n.drops_loss, n.drops_down, n.marks, n.pauses);
  r["diagnosis"] = Diagnosis(topology, n.directions, w.rank_spans, timeouts, out.summary);
  if (!w.diagnosis.empty()) r["diagnosis"]["protocol"] = std::move(w.diagnosis);
  return out;
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
  SetUpSimulator(s);
  const topo::Topology topology = BuildTopology(s);
  std::unique_ptr<Fabric> fabric = MakeFabric(s, topology);
  std::vector<uint32_t> hosts;
  if (s.workload.type != WorkloadType::kNone) hosts = SelectHosts(s.workload.hosts, topology.num_hosts(), s.seed);
  RunControl control(s);
  std::unique_ptr<Workload> workload;
  std::unique_ptr<Background> background;
  // A setup that throws (a job finding bad input) must leave ns-3 clean for
  // the next run in this process (Python, sweeps): destroy the simulator, and
  // with it the scheduled events and the nodes, before the workload and the
  // fabric go (this guard is declared after them, so it runs first).
  struct DestroySimulatorOnThrow {
    bool armed = true;
    ~DestroySimulatorOnThrow() {
      if (armed) Simulator::Destroy();
    }
  } destroy_on_throw;
  workload = StartWorkload(s, *fabric, hosts, control);
  background = StartBackground(s, *fabric, hosts, control);
  LinkSampler sampler(s, topology, *fabric, control);
  const HostTimeouts timeouts(*fabric);  // after the workload: its agents exist
  std::unique_ptr<PcapCapture> pcap;
  if (s.outputs.pcap.enabled) pcap = std::make_unique<PcapCapture>(s.outputs.pcap, topology, *fabric);
  std::unique_ptr<EventTrace> trace;
  if (s.outputs.trace.enabled)
    trace = std::make_unique<EventTrace>(s.outputs.trace, topology, *fabric, workload.get(),
                                         s.workload.type == WorkloadType::kNone ? "" : s.workload.protocol);

  const bool show_progress = options.progress == ProgressMode::kOn ||
                             (options.progress == ProgressMode::kAuto && isatty(STDERR_FILENO));
  ProgressReporter progress(ProgressOf(s, workload.get(), background.get()), s.max_sim_time_ps, show_progress,
                            options.on_tick);
  if (progress.wanted()) progress.Start();
  Simulator::Stop(PicoSeconds(s.max_sim_time_ps));
  const auto t1 = Clock::now();
  Simulator::Run();
  const auto t2 = Clock::now();
  progress.Finish();
  if (progress.interrupted()) throw RunInterrupted();  // destroy_on_throw resets ns-3
  const uint64_t end_ps = control.EndPs();
  const uint64_t events = Simulator::GetEventCount() - progress.events();

  NetworkTotals network = CollectNetwork(s, topology, *fabric, end_ps);
  uint64_t payload_delivered = 0;
  RunResult out = CollectResults(s, topology, *fabric, network, workload.get(), background.get(), timeouts,
                                 control.finished(), end_ps, events, payload_delivered);
  const double run_s = Seconds(t1, t2);
  const double wall = Seconds(t0, Clock::now());
  const uint64_t host_tx_bytes = network.host_tx_bytes;
  out.json["perf"] = PerfJson(wall, Seconds(t0, t1), run_s, events, host_tx_bytes, payload_delivered, network.bytes);
  out.summary += fmt::format("  simulated {} in {:.2f} s wall ({:.2f} M events/s, {:.1f} MB/s of host traffic), "
                             "peak RSS {:.0f} MB\n",
                             HumanTime(PsToS(end_ps)), wall, run_s > 0 ? events / run_s / 1e6 : 0.0,
                             run_s > 0 ? host_tx_bytes / run_s / 1e6 : 0.0, PeakRssMb());
  if (s.outputs.links_csv) {
    out.csv_names.push_back("links.csv");
    out.csv_texts.push_back(std::move(network.links_csv));
  }
  if (s.outputs.sample_interval_ps > 0) {
    out.csv_names.push_back("samples.csv");
    out.csv_texts.push_back(sampler.csv());
  }
  out.gzip_csv = s.outputs.gzip;
  if (pcap) {
    out.json["outputs"]["pcap"] = pcap->Report();
    out.files = pcap->Files();
  }
  if (trace) {
    out.json["outputs"]["trace"] = trace->Report();
    out.csv_names.push_back("trace.csv");
    out.csv_texts.push_back(trace->Csv());
  }

  destroy_on_throw.armed = false;
  Simulator::Destroy();
  workload.reset();    // after Destroy: its sockets and applications call back into it until then
  background.reset();  // likewise
  fabric.reset();
  return out;
}

}  // namespace inasim
