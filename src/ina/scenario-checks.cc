// The checks ParseScenario makes once the topology exists and the workload's
// hosts are chosen: everything the workload's constructors would reject when
// `run` builds it. They call the same functions the constructors call
// (SwitchMLJob::CheckedTree, P4SGDJob::CheckWorkers, ... through each
// protocol's ProtocolChecks in its registry entry), so `validate` and `run`
// accept the same scenarios. Pure topology work: no ns-3 objects.
#include "ina/scenario-checks.h"

#include "ina/background.h"
#include "ina/protocol-checks.h"
#include "ina/workload.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace inasim {

namespace {

/// workload.jobs concurrent allreduces need the protocol's minimum of hosts
/// each (SplitHosts in ina/jobs.h, the runner).
void CheckJobsFitHosts(const Scenario& s, size_t selected) {
  const uint32_t min_hosts = FindProtocol(s.workload.protocol)->min_hosts_per_job;
  if (selected >= uint64_t{min_hosts} * s.workload.jobs) return;
  throw ScenarioError(fmt::format("workload.jobs: {} jobs need at least {} hosts each; {} hosts are selected "
                                  "(workload.hosts)", s.workload.jobs, min_hosts, selected));
}

void CheckAllreducePlacement(const Scenario& s, const topo::Topology& t, const std::vector<uint32_t>& hosts) {
  CheckJobsFitHosts(s, hosts.size());
  FindProtocol(s.workload.protocol)->checks->check_placement(s, t, hosts);
}

/// Background flows and congestion need two hosts each, as resolved at run
/// time (e.g. "all" on a one-host rack).
void CheckBackgroundHosts(const Scenario& s, uint32_t nh, const std::vector<uint32_t>& workload_hosts) {
  const BackgroundHosts hosts = SelectBackgroundHosts(s, nh, workload_hosts);
  if (s.background.flows.enabled && s.background.flows.list.empty() && hosts.flows.size() < 2)
    throw ScenarioError("background.flows.hosts: flows need at least 2 hosts");
  if (s.background.congestion.enabled && hosts.congestion.size() < 2)
    throw ScenarioError("background.congestion.hosts: congestion needs at least 2 hosts");
  if (s.outputs.tcp_trace.enabled && !s.background.flows.enabled)
    throw ScenarioError("outputs.tcp_trace: traces the background TCP flows' senders, and background.flows is not "
                        "enabled");
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
/// summed over hosts: the arrays the agents size up front (each protocol's
/// ProtocolChecks::state_bytes).
double WorkloadStateBytes(const Scenario& s, size_t hosts) {
  return FindProtocol(s.workload.protocol)->checks->state_bytes(s, hosts);
}

/// Poisson background flows are drawn up front: about 512 bytes each while
/// the run holds them (FlowSpec, TCP state, their flows.csv line).
double BackgroundFlowBytes(const Scenario& s, uint32_t nh, const std::vector<uint32_t>& workload_hosts,
                           double& flows) {
  const BackgroundFlowsSpec& f = s.background.flows;
  flows = 0;
  if (!f.enabled || !f.list.empty() || !f.sizes) return 0;
  const double hosts = static_cast<double>(SelectBackgroundHosts(s, nh, workload_hosts).flows.size());
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
// 0.1 - 0.3 M events/s): kSlowRunEvents (protocol-checks.h).

/// The scenario's timers and its protocol's own warnings (ProtocolChecks::add_warnings).
std::vector<NamedTimer> ActiveTimers(const Scenario& s, const topo::Topology& t, std::vector<std::string>& warnings) {
  std::vector<NamedTimer> timers;
  if (s.workload.type == WorkloadType::kAllreduce)
    FindProtocol(s.workload.protocol)->checks->add_warnings(s, t, timers, warnings);
  if (s.background.flows.enabled)
    timers.push_back({"background.flows.tcp.min_rto_us", s.background.flows.tcp.min_rto_ps, 1e6, "us"});
  return timers;
}

}  // namespace

std::vector<std::string> SlowRunWarnings(const Scenario& s, const topo::Topology& t) {
  std::vector<std::string> out, protocol_warnings;
  const double frame_ps = (s.links.mtu_bytes + s.links.wire_overhead_bytes) * 8.0 * 1e3 / s.links.host_rate_gbps;
  for (const NamedTimer& timer : ActiveTimers(s, t, protocol_warnings))
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
  out.insert(out.end(), protocol_warnings.begin(), protocol_warnings.end());
  return out;
}

}  // namespace inasim
