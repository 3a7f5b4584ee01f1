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
  CheckEqualSegments(s, hosts.size(), &TakesCountPerRank, "a Gloo");
  try {
    for (uint64_t e : CollectiveElements(s.workload.schedule, s.workload.bytes))
      (void)GlooPlan(static_cast<uint32_t>(hosts.size()), e * 4, s.workload.spec<GlooSpec>().max_segment_bytes);
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(fmt::format("workload.hosts: {}", e.what()));
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
