// The checks ParseScenario makes once the topology exists and the workload's
// hosts are chosen: everything the workload's constructors would reject when
// `run` builds it. They call the same functions the constructors call
// (SwitchMLJob::CheckedTree, P4SGDJob::CheckWorkers, ...), so `validate` and
// `run` accept the same scenarios. Pure topology work: no ns-3 objects.
#include "ina/scenario-checks.h"

#include "ina/background.h"
#include "protocols/canary/host/canary-job.h"
#include "protocols/canary/host/canary-jobs.h"
#include "protocols/p4sgd/host/p4sgd-job.h"
#include "protocols/panama/host/panama-job.h"
#include "protocols/ring/host/ring-allreduce.h"
#include "protocols/switchml/host/switchml-job.h"

#include <fmt/format.h>

#include <unistd.h>

#include "ina/workload.h"

#include <algorithm>
#include <cmath>

namespace inasim {

namespace {

/// workload.jobs concurrent allreduces need the protocol's minimum of hosts
/// each (CanaryJobSet::SplitHosts, the runner).
void CheckJobsFitHosts(const Scenario& s, size_t selected) {
  const uint32_t min_hosts = FindProtocol(s.workload.protocol)->min_hosts_per_job;
  if (selected >= uint64_t{min_hosts} * s.workload.jobs) return;
  throw ScenarioError(fmt::format("workload.jobs: {} jobs need at least {} hosts each; {} hosts are selected "
                                  "(workload.hosts)", s.workload.jobs, min_hosts, selected));
}

/// A ring's per-rank packet stream must fit its 32-bit sequence numbers (RingAllreduce).
void CheckRingStream(const Scenario& s, size_t ranks) {
  const uint32_t epp = s.workload.ring.elements_per_packet
                           ? s.workload.ring.elements_per_packet
                           : (s.links.mtu_bytes - 20 - 8 - RingWire::kDataHeader) / 4;
  const RingPlan plan(static_cast<uint32_t>(ranks), s.workload.bytes / 4, epp);
  if (plan.stream_packets(0) >= (1ull << 32) - 1)
    throw ScenarioError(fmt::format("workload.bytes: a ring of {} ranks sends {} packets per rank, more than its "
                                    "32-bit sequence numbers count (fewer bytes, or more "
                                    "workload.ring.elements_per_packet)", ranks, plan.stream_packets(0)));
}

void CheckRingJobs(const Scenario& s, const std::vector<uint32_t>& hosts) {
  if (s.workload.jobs == 1) {
    CheckRingStream(s, hosts.size());
    return;
  }
  // The smallest group has the longest per-rank stream (fewer ranks, larger chunks).
  const auto groups = CanaryJobSet::SplitHosts(hosts, s.workload.jobs, s.seed, s.workload.jobs_contiguous);
  size_t smallest = hosts.size();
  for (const auto& g : groups) smallest = std::min(smallest, g.size());
  CheckRingStream(s, smallest);
}

void CheckAllreducePlacement(const Scenario& s, const topo::Topology& t, const std::vector<uint32_t>& hosts) {
  const std::string& p = s.workload.protocol;
  CheckJobsFitHosts(s, hosts.size());
  if (p == "switchml") {
    (void)SwitchMLJob::CheckedTree(t, hosts);
  } else if (p == "p4sgd") {
    P4SGDJob::CheckWorkers(t, hosts);
    // A LIBSVM file's shape is known only once it is read (at run time).
    const P4SGDSpec& spec = s.workload.p4sgd;
    if (spec.hashed || spec.dataset == "synthetic")
      P4SGDJob::CheckTrainingShape(spec, static_cast<uint32_t>(hosts.size()), spec.samples, spec.features);
  } else if (p == "canary" || p == "static_tree") {
    CanaryJobSet::CheckPlacement(t, hosts, p == "canary" ? InaTreeMode::kCanary : InaTreeMode::kStaticTree, s.seed,
                                 s.workload, s.workload.jobs);
  } else if (p == "panama") {
    PanamaJobSet::CheckPlacement(t, s, hosts);
  } else {
    CheckRingJobs(s, hosts);
  }
}

/// Background flows and congestion need two hosts each, as resolved at run
/// time (e.g. "all" on a one-host rack).
void CheckBackgroundHosts(const Scenario& s, uint32_t nh, const std::vector<uint32_t>& workload_hosts) {
  const BackgroundFlowsSpec& f = s.background.flows;
  if (f.enabled && f.list.empty() && SelectHosts(f.hosts, nh, s.seed + 0xb6f1, workload_hosts).size() < 2)
    throw ScenarioError("background.flows.hosts: flows need at least 2 hosts");
  const CongestionSpec& c = s.background.congestion;
  if (c.enabled && SelectHosts(c.hosts, nh, s.seed + 0xc0c0, workload_hosts).size() < 2)
    throw ScenarioError("background.congestion.hosts: congestion needs at least 2 hosts");
}

// ----------------------------------------------------------- memory estimate

/// Physical memory of this machine: a run that needs more cannot finish here.
double PhysicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 1e18;
}

/// An estimate's size, one decimal up to TiB (units.h's HumanBytes prints
/// exact sizes of tensors).
std::string ApproxBytes(double b) {
  if (b >= 1099511627776.0) return fmt::format("{:.1f} TiB", b / 1099511627776.0);
  if (b >= 1073741824.0) return fmt::format("{:.1f} GiB", b / 1073741824.0);
  return fmt::format("{:.1f} MiB", b / 1048576.0);
}

/// What the workload's hosts keep per packet (or block) of a collective,
/// summed over hosts: the arrays the agents size up front (RingRank acked_,
/// ready_, received_; SwitchMLWorker received_, scaling_factors_; CanaryHost
/// attempt_, state_, generation_, queued_, lead_).
double WorkloadStateBytes(const Scenario& s, size_t hosts) {
  const WorkloadSpec& w = s.workload;
  const double n = static_cast<double>(hosts), elements = static_cast<double>(w.bytes / 4);
  if (w.protocol == "ring") {
    const uint32_t epp = w.ring.elements_per_packet ? w.ring.elements_per_packet
                                                    : (s.links.mtu_bytes - 20 - 8 - RingWire::kDataHeader) / 4;
    return 6.0 * std::max(1.0, n - w.jobs) * std::ceil(elements / epp);  // 3 bytes x 2(n-1)/n x packets, per rank
  }
  if (w.protocol == "switchml") {
    double largest = elements;
    for (uint64_t t : w.switchml.tensors) largest = std::max(largest, static_cast<double>(t / 4));
    const double per_packet = w.dtype == DType::kFloat32 ? 5.0 : 1.0;
    return n * per_packet * std::ceil(largest / w.switchml.elements_per_packet);
  }
  if (w.protocol == "canary" || w.protocol == "static_tree") {
    const uint32_t k = w.protocol == "canary" ? w.canary.elements_per_packet : w.static_tree.elements_per_packet;
    const double blocks = std::ceil(elements / k) * w.iterations;
    return w.protocol == "canary" ? blocks * (7.0 * n + 80.0) : blocks * 3.0 * n;
  }
  return 0;  // panama, p4sgd: per-packet state bounded by windows (p4sgd's data: CheckTrainingShape)
}

/// Poisson background flows are drawn up front: about 512 bytes each while
/// the run holds them (FlowSpec, TCP state, their flows.csv line).
double BackgroundFlowBytes(const Scenario& s, uint32_t nh, const std::vector<uint32_t>& workload_hosts,
                           double& flows) {
  const BackgroundFlowsSpec& f = s.background.flows;
  flows = 0;
  if (!f.enabled || !f.list.empty() || !f.sizes) return 0;
  const double hosts = static_cast<double>(SelectHosts(f.hosts, nh, s.seed + 0xb6f1, workload_hosts).size());
  const double rate_per_s = f.load * hosts * s.links.host_rate_gbps * 1e9 / (8.0 * f.sizes->Mean());
  flows = rate_per_s * static_cast<double>(f.stop_ps - f.start_ps) / 1e12;
  return flows * 512.0;
}

/// Refuses a run whose up-front state would not fit this machine's memory
/// (it would end in std::bad_alloc), naming the key that sizes it.
void CheckMemoryEstimate(const Scenario& s, uint32_t nh, const std::vector<uint32_t>& hosts) {
  const double limit = PhysicalMemoryBytes();
  const double workload =
      s.workload.type == WorkloadType::kAllreduce ? WorkloadStateBytes(s, hosts.size()) : 0.0;
  double flows = 0;
  const double background = BackgroundFlowBytes(s, nh, hosts, flows);
  if (flows > 2e9)
    throw ScenarioError(fmt::format("background.flows.stop_us: about {:.3g} flows would arrive between start_us and "
                                    "stop_us; at most 2e9 (an earlier stop_us, a lower load or fewer hosts)", flows));
  if (workload + background <= limit) return;
  if (workload >= background)
    throw ScenarioError(fmt::format("workload.bytes: the {} hosts would keep about {} of per-packet state for {} "
                                    "(protocol \"{}\"), more than this machine's {} of memory (fewer bytes, hosts "
                                    "or iterations, or more elements per packet)", hosts.size(), ApproxBytes(workload),
                                    ApproxBytes(static_cast<double>(s.workload.bytes)), s.workload.protocol,
                                    ApproxBytes(limit)));
  throw ScenarioError(fmt::format("background.flows.stop_us: about {:.3g} flows would arrive before stop_us, about {} "
                                  "of memory, more than this machine's {} (an earlier stop_us, a lower load or fewer "
                                  "hosts)", flows, ApproxBytes(background), ApproxBytes(limit)));
}

}  // namespace

void CheckWorkloadPlacement(const Scenario& s, const topo::Topology& t) {
  const uint32_t nh = t.num_hosts();
  std::vector<uint32_t> hosts;
  if (s.workload.type != WorkloadType::kNone) hosts = SelectHosts(s.workload.hosts, nh, s.seed);
  if (s.workload.type == WorkloadType::kAllreduce) CheckAllreducePlacement(s, t, hosts);
  CheckBackgroundHosts(s, nh, hosts);
  CheckMemoryEstimate(s, nh, hosts);
}

namespace {

// docs/SCENARIO.md "Warnings": a retransmission or timeout timer shorter than
// one full frame's serialisation at the host link rate fires before even one
// packet can be answered, so a run retransmits (or times out) again and
// again; periodic events (samples, Canary clock packets) are counted over
// the whole simulated-time limit. 1e9 events take hours (bench/README.md:
// 0.1 - 0.3 M events/s).
constexpr double kSlowRunEvents = 1e9;

struct NamedTimer {
  const char* path;
  uint64_t ps;
  double unit_ps;     ///< of the key: 1e6 for _us, 1e3 for _ns
  const char* unit;
};

std::vector<NamedTimer> ActiveTimers(const Scenario& s) {
  const WorkloadSpec& w = s.workload;
  std::vector<NamedTimer> timers;
  if (w.type == WorkloadType::kAllreduce) {
    const bool ring = w.protocol == "ring" ||
                      (w.protocol == "panama" && w.panama.cluster.jobs &&
                       w.panama.cluster.allreduce == PanamaClusterSpec::Allreduce::kRing);
    if (ring) timers.push_back({"workload.ring.rto_us", w.ring.rto_ps, 1e6, "us"});
    if (w.protocol == "switchml") timers.push_back({"workload.switchml.timeout_us", w.switchml.timeout_ps, 1e6, "us"});
    if (w.protocol == "canary") {
      timers.push_back({"workload.canary.timeout_us", w.canary.timeout_ps, 1e6, "us"});
      timers.push_back({"workload.canary.retransmit_timeout_us", w.canary.retransmit_timeout_ps, 1e6, "us"});
    }
    if (w.protocol == "p4sgd") timers.push_back({"workload.p4sgd.timeout_us", w.p4sgd.timeout_ps, 1e6, "us"});
    if (w.protocol == "panama") timers.push_back({"workload.panama.timeout_us", w.panama.timeout_ps, 1e6, "us"});
  }
  if (s.background.flows.enabled)
    timers.push_back({"background.flows.tcp.min_rto_us", s.background.flows.tcp.min_rto_ps, 1e6, "us"});
  return timers;
}

}  // namespace

std::vector<std::string> SlowRunWarnings(const Scenario& s, const topo::Topology& t) {
  std::vector<std::string> out;
  const double frame_ps = (s.links.mtu_bytes + s.links.wire_overhead_bytes) * 8.0 * 1e3 / s.links.host_rate_gbps;
  for (const NamedTimer& timer : ActiveTimers(s))
    if (static_cast<double>(timer.ps) < frame_ps)
      out.push_back(fmt::format("{}: {:g} {} is shorter than one {}-byte frame at {:g} Gb/s ({:g} {}): the timer "
                                "fires before a packet can be answered, so the run may retransmit for hours",
                                timer.path, timer.ps / timer.unit_ps, timer.unit, s.links.mtu_bytes,
                                s.links.host_rate_gbps, frame_ps / timer.unit_ps, timer.unit));
  const double limit_ps = static_cast<double>(s.max_sim_time_ps);
  if (s.outputs.sample_interval_ps > 0) {
    const double rows = limit_ps / static_cast<double>(s.outputs.sample_interval_ps) * 2.0 * t.links().size();
    if (rows > kSlowRunEvents / 10)  // each row is ~60 bytes of samples.csv held until the end, too
      out.push_back(fmt::format("outputs.sample_interval_us: a sample every {:g} us over stop.max_sim_time_ms = {:g} "
                                "is up to {:.3g} rows of samples.csv ({:.3g} GB): the run may take hours",
                                s.outputs.sample_interval_ps / 1e6, limit_ps / 1e9, rows, rows * 60 / 1e9));
  }
  if (s.workload.type == WorkloadType::kAllreduce && s.workload.protocol == "canary" &&
      s.workload.canary.timeout_mode == CanaryTimeoutMode::kClockScan) {
    const double clocks = limit_ps / static_cast<double>(s.workload.canary.clock_period_ps) * t.num_switches();
    if (clocks > kSlowRunEvents)
      out.push_back(fmt::format("workload.canary.clock_period_ns: a clock packet every {:g} ns on {} switches over "
                                "stop.max_sim_time_ms = {:g} is up to {:.3g} events: the run may take hours",
                                s.workload.canary.clock_period_ps / 1e3, t.num_switches(), limit_ps / 1e9, clocks));
  }
  return out;
}

}  // namespace inasim
