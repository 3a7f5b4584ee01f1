// SwitchML's entry in the protocol registry (protocols/switchml/protocol.json).
#include "ina/job-workload.h"
#include "ina/protocol-checks.h"
#include "ina/scenario.h"
#include "ina/workload.h"
#include "protocols/switchml/host/switchml-job.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace inasim::protocols::switchml {

std::unique_ptr<Workload> MakeWorkload(const WorkloadContext& context) {
  const Scenario& s = context.scenario;
  return MakeJobWorkload<SwitchMLJob>(context, [&] {
    std::vector<uint64_t> tensors = s.workload.spec<SwitchMLSpec>().tensors;
    if (tensors.empty()) tensors.push_back(s.workload.bytes);
    return std::make_unique<SwitchMLJob>(context.fabric, context.hosts, s.workload.dtype, s.workload.data, s.seed,
                                         s.workload.spec<SwitchMLSpec>(), tensors, s.workload.iterations,
                                         s.workload.compute_gap_ps, s.workload.schedule);
  });
}

namespace {

void CheckPlacement(const Scenario& s, const topo::Topology& t, const std::vector<uint32_t>& hosts) {
  const SwitchMLSpec& spec = s.workload.spec<SwitchMLSpec>();
  if (spec.backend == SwitchMLBackend::kRdma) {
    // (CheckRdma refuses a PS before it looks at the tree, which a PS run has none of.)
    const topo::AggregationTree tree =
        spec.ps == SwitchMLPs::kNone ? SwitchMLJob::CheckedTree(t, hosts, spec) : topo::AggregationTree{};
    SwitchMLJob::CheckRdma(spec, s.workload.dtype, t, tree);
  }
  if (spec.ps != SwitchMLPs::kNone) (void)SwitchMLJob::ParameterServerHosts(spec, t, hosts);
  else (void)SwitchMLJob::CheckedTree(t, hosts, spec);
  SwitchMLJob::CheckThreads(
      spec, SwitchMLJob::ResolveThreads(spec, static_cast<uint64_t>(std::llround(s.links.host_rate_gbps * 1e9))));
}

/// SwitchMLWorker's received_ (and float32 scaling_factors_), per packet of the largest tensor.
double StateBytes(const Scenario& s, size_t hosts) {
  const WorkloadSpec& w = s.workload;
  double largest = static_cast<double>(w.bytes / 4);
  for (uint64_t t : w.spec<SwitchMLSpec>().tensors) largest = std::max(largest, static_cast<double>(t / 4));
  const double per_packet = w.dtype == DType::kFloat32 ? 5.0 : 1.0;
  return static_cast<double>(hosts) * per_packet * std::ceil(largest / w.spec<SwitchMLSpec>().elements_per_packet);
}

constexpr char kTimerKey[] = "workload.switchml.timeout_us";
constexpr char kUdpPortKey[] = "workload.switchml.worker_udp_port";

}  // namespace

extern const ProtocolChecks kChecks;  // (declared for the registry: external linkage)
const ProtocolChecks kChecks = {&CheckPlacement, &StateBytes,
                                &AddSpecTimer<SwitchMLSpec, &SwitchMLSpec::timeout_ps, kTimerKey>,
                                &AddSpecUdpPort<SwitchMLSpec, &SwitchMLSpec::worker_udp_port, kUdpPortKey>};

}  // namespace inasim::protocols::switchml
