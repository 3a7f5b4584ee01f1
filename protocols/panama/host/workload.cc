// PANAMA's entry in the protocol registry (protocols/panama/protocol.json):
// one job, concurrent jobs (workload.panama.jobs) or a cluster of arriving
// jobs (workload.panama.cluster), all in ina/panama-job.h's PanamaJobSet.
#include "ina/job-workload.h"
#include "ina/protocol-checks.h"
#include "ina/scenario.h"
#include "ina/workload.h"
#include "protocols/panama/host/panama-job.h"

namespace inasim::protocols::panama {

std::unique_ptr<Workload> MakeWorkload(const WorkloadContext& context) {
  return MakeJobWorkload<PanamaJobSet>(
      context, [&] { return std::make_unique<PanamaJobSet>(context.fabric, context.scenario, context.hosts); });
}

namespace {

void CheckPlacement(const Scenario& s, const topo::Topology& t, const std::vector<uint32_t>& hosts) {
  PanamaJobSet::CheckPlacement(t, s, hosts);
}

/// Per-packet state is bounded by the windows.
double StateBytes(const Scenario&, size_t) { return 0; }

void AddWarnings(const Scenario& s, const topo::Topology&, std::vector<NamedTimer>& timers,
                 std::vector<std::string>&) {
  const PanamaClusterSpec& c = s.workload.spec<PanamaSpec>().cluster;
  if (c.jobs && c.allreduce == PanamaClusterSpec::Allreduce::kRing)  // the cluster's ring jobs
    timers.push_back({"workload.ring.rto_us", s.workload.spec<RingSpec>().rto_ps, 1e6, "us"});
  timers.push_back({"workload.panama.timeout_us", s.workload.spec<PanamaSpec>().timeout_ps, 1e6, "us"});
}

void AddUdpPorts(const Scenario& s, std::vector<std::pair<const char*, uint16_t>>& ports) {
  const PanamaClusterSpec& c = s.workload.spec<PanamaSpec>().cluster;
  if (c.jobs && c.allreduce == PanamaClusterSpec::Allreduce::kRing)
    ports.emplace_back("workload.ring.udp_port", s.workload.spec<RingSpec>().udp_port);
  ports.emplace_back("workload.panama.udp_port", s.workload.spec<PanamaSpec>().udp_port);
}

}  // namespace

extern const ProtocolChecks kChecks;  // (declared for the registry: external linkage)
const ProtocolChecks kChecks = {&CheckPlacement, &StateBytes, &AddWarnings, &AddUdpPorts};

}  // namespace inasim::protocols::panama
