// P4SGD's entry in the protocol registry (protocols/p4sgd/protocol.json).
#include "ina/job-workload.h"
#include "ina/protocol-checks.h"
#include "ina/scenario.h"
#include "ina/workload.h"
#include "protocols/p4sgd/host/p4sgd-job.h"

#include <fmt/format.h>

#include <stdexcept>

namespace inasim::protocols::p4sgd {

std::unique_ptr<Workload> MakeWorkload(const WorkloadContext& context) {
  return MakeJobWorkload<P4SGDJob>(context, [&] {
    return std::make_unique<P4SGDJob>(context.fabric, context.hosts, context.scenario.workload.spec<P4SGDSpec>(),
                                      context.scenario.seed);
  });
}

namespace {

void CheckPlacement(const Scenario& s, const topo::Topology& t, const std::vector<uint32_t>& hosts) {
  P4SGDJob::CheckWorkers(t, hosts);
  // A LIBSVM file's shape is known only once it is read (at run time).
  const P4SGDSpec& spec = s.workload.spec<P4SGDSpec>();
  if (spec.hashed || spec.dataset == "synthetic")
    P4SGDJob::CheckTrainingShape(spec, static_cast<uint32_t>(hosts.size()), spec.samples, spec.features);
}

/// Per-packet state is bounded by the window (the data: CheckTrainingShape).
double StateBytes(const Scenario&, size_t) { return 0; }

constexpr char kTimerKey[] = "workload.p4sgd.timeout_us";
constexpr char kUdpPortKey[] = "workload.p4sgd.udp_port";

}  // namespace

extern const ProtocolChecks kChecks;  // (declared for the registry: external linkage)
const ProtocolChecks kChecks = {&CheckPlacement, &StateBytes,
                                &AddSpecTimer<P4SGDSpec, &P4SGDSpec::timeout_ps, kTimerKey>,
                                &AddSpecUdpPort<P4SGDSpec, &P4SGDSpec::udp_port, kUdpPortKey>};

}  // namespace inasim::protocols::p4sgd
