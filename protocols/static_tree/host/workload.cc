// The static_tree entry in the protocol registry (protocols/static_tree/protocol.json): the
// host agents and switch programs of ina/canary-jobs.h in mode InaTreeMode::kStaticTree.
#include "ina/protocol-checks.h"
#include "ina/scenario.h"
#include "ina/workload.h"
#include "protocols/canary/host/canary-jobs.h"

namespace inasim::protocols::static_tree {

std::unique_ptr<Workload> MakeWorkload(const WorkloadContext& context) {
  return CanaryJobSet::MakeWorkload(context, InaTreeMode::kStaticTree);
}

namespace {

/// CanaryHost's per-block arrays, as static trees use them.
double StateBytes(const Scenario& s, size_t hosts) {
  return CanaryJobSet::Blocks<StaticTreeSpec>(s) * 3.0 * static_cast<double>(hosts);
}

void AddWarnings(const Scenario&, const topo::Topology&, std::vector<NamedTimer>&, std::vector<std::string>&) {}

// Its hosts use the static-tree header's fixed port (p4model), no scenario key.
void AddUdpPorts(const Scenario&, std::vector<std::pair<const char*, uint16_t>>&) {}

}  // namespace

extern const ProtocolChecks kChecks;  // (declared for the registry: external linkage)
const ProtocolChecks kChecks = {&CanaryJobSet::CheckScenarioPlacement<InaTreeMode::kStaticTree>, &StateBytes, &AddWarnings,
                                &AddUdpPorts};

}  // namespace inasim::protocols::static_tree
