// Gloo's entry in the protocol registry (protocols/gloo/protocol.json): one
// Gloo ring over the selected hosts, over ns-3's TCP.
#include "ina/fabric.h"
#include "ina/job-workload.h"
#include "ina/protocol-checks.h"
#include "ina/scenario.h"
#include "ina/workload.h"
#include "protocols/gloo/host/gloo-ring.h"

#include <fmt/format.h>

#include <algorithm>

namespace inasim::protocols::gloo {

/// A GlooRing as a job of MakeJobWorkload (Start, progress, Report).
class GlooJob : public GlooRing {
 public:
  using GlooRing::GlooRing;
};

std::unique_ptr<Workload> MakeWorkload(const WorkloadContext& context) {
  const Scenario& s = context.scenario;
  return MakeJobWorkload<GlooJob>(context, [&] {
    return std::make_unique<GlooJob>(context.fabric, context.hosts,
                                     CollectiveElements(s.workload.schedule, s.workload.bytes), s.workload.dtype,
                                     s.workload.data, s.seed, s.workload.spec<GlooSpec>(), s.workload.iterations,
                                     s.workload.compute_gap_ps, s.workload.schedule);
  });
}

namespace {

// gloo::allgather enforces out->size % context->size == 0 (allgather.cc:39-43); here per element.
bool TakesCountPerRank(CollectiveKind k) { return k == CollectiveKind::kAllGather; }

void CheckPlacement(const Scenario& s, const topo::Topology&, const std::vector<uint32_t>& hosts) {
  const ScheduleSpec& schedule = s.workload.schedule;
  const GlooSpec& spec = s.workload.spec<GlooSpec>();
  const auto n = static_cast<uint32_t>(hosts.size());
  if (n < 2) throw ScenarioError("workload.hosts: a Gloo ring needs at least 2 hosts");
  CheckEqualSegments(s, hosts.size(), &TakesCountPerRank, "a Gloo");
  try {  // communicators partition the ranks, a broadcast's root is one (as RankCollectives checks when built)
    CheckCommunicators(schedule, n);
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(e.what());
  }
  const size_t sets = 1 + schedule.communicator_names.size();  // one context (listener port) each
  if (spec.port + sets - 1 > 65535)
    throw ScenarioError(fmt::format("workload.gloo.port: the world and {} communicators listen on port .. port + {} "
                                    "= {}, beyond 65535", sets - 1, sets - 1, spec.port + sets - 1));
  const std::vector<uint64_t> elements = CollectiveElements(schedule, s.workload.bytes);
  for (size_t i = 0; i < elements.size(); ++i) {
    for (const std::vector<uint32_t>& group : GroupsOf(schedule, i, n)) {
      const auto size = static_cast<uint32_t>(group.size());
      try {
        (void)GlooPlan::Of(schedule, i, size, elements[i], spec.max_segment_bytes);
      } catch (const std::invalid_argument& e) {
        throw ScenarioError(schedule.given ? fmt::format("workload.schedule.collectives[{}]: {} (a group of {})", i,
                                                         e.what(), size)
                                           : fmt::format("workload.hosts: {}", e.what()));
      }
    }
  }
}

/// The segments a rank holds: about S / n of the tensor, and two in flight.
double StateBytes(const Scenario& s, size_t hosts) {
  const double n = static_cast<double>(std::max<size_t>(hosts, 1));
  return static_cast<double>(LargestCollectiveBytes(s.workload.schedule, s.workload.bytes)) * (1.0 + 2.0 / n);
}

void AddWarnings(const Scenario& s, const topo::Topology&, std::vector<NamedTimer>& timers, std::vector<std::string>&) {
  timers.push_back({"workload.gloo.min_rto_us", s.workload.spec<GlooSpec>().min_rto_ps, 1e6, "us"});
}

void AddUdpPorts(const Scenario&, std::vector<std::pair<const char*, uint16_t>>&) {}  // TCP only

}  // namespace

extern const ProtocolChecks kChecks;  // (declared for the registry: external linkage)
const ProtocolChecks kChecks = {&CheckPlacement, &StateBytes, &AddWarnings, &AddUdpPorts};

}  // namespace inasim::protocols::gloo
