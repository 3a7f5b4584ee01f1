// The canary entry in the protocol registry (protocols/canary/protocol.json): the
// host agents and switch programs of ina/canary-jobs.h in mode InaTreeMode::kCanary.
#include "ina/protocol-checks.h"
#include "ina/scenario.h"
#include "ina/workload.h"
#include "protocols/canary/host/canary-jobs.h"

#include <fmt/format.h>

namespace inasim::protocols::canary {

std::unique_ptr<Workload> MakeWorkload(const WorkloadContext& context) {
  return CanaryJobSet::MakeWorkload(context, InaTreeMode::kCanary);
}

namespace {

/// CanaryHost's attempt_, state_, queued_, sent_at_ps_, requests_, lead_ and its timers' generation per block.
double StateBytes(const Scenario& s, size_t hosts) {
  return CanaryJobSet::Blocks<CanarySpec>(s) * (16.0 * static_cast<double>(hosts) + 80.0);
}

void AddWarnings(const Scenario& s, const topo::Topology& t, std::vector<NamedTimer>& timers,
                 std::vector<std::string>& warnings) {
  const CanarySpec& c = s.workload.spec<CanarySpec>();
  timers.push_back({"workload.canary.timeout_us", c.timeout_ps, 1e6, "us"});
  if (c.retransmit_timeout_rtts <= 0)  // in round trips: a few us, known once the job is built
    timers.push_back({"workload.canary.retransmit_timeout_us", c.retransmit_timeout_ps, 1e6, "us"});
  if (c.timeout_mode != CanaryTimeoutMode::kClockScan) return;
  const double limit_ps = static_cast<double>(s.max_sim_time_ps);
  const double clocks = limit_ps / static_cast<double>(c.clock_period_ps) * t.num_switches();
  if (clocks > kSlowRunEvents)
    warnings.push_back(fmt::format("workload.canary.clock_period_ns: a clock packet every {:g} ns on {} switches "
                                   "over stop.max_sim_time_ms = {:g} is up to {:.3g} events: the run may take hours",
                                   c.clock_period_ps / 1e3, t.num_switches(), limit_ps / 1e9, clocks));
}

// Its hosts use the Canary header's fixed port (p4model), no scenario key.
void AddUdpPorts(const Scenario&, std::vector<std::pair<const char*, uint16_t>>&) {}

}  // namespace

extern const ProtocolChecks kChecks;  // (declared for the registry: external linkage)
const ProtocolChecks kChecks = {&CanaryJobSet::CheckScenarioPlacement<InaTreeMode::kCanary>, &StateBytes, &AddWarnings,
                                &AddUdpPorts};

}  // namespace inasim::protocols::canary
