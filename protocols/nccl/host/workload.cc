// NCCL's entry in the protocol registry (protocols/nccl/protocol.json): one
// NCCL ring over the selected hosts, over RoCE queue pairs or TCP.
#include "ina/fabric.h"
#include "ina/job-workload.h"
#include "ina/protocol-checks.h"
#include "ina/scenario.h"
#include "ina/workload.h"
#include "protocols/nccl/host/nccl-ring.h"

#include <fmt/format.h>

#include <algorithm>

namespace inasim::protocols::nccl {

class NcclJob : public NcclRing {
 public:
  using NcclRing::NcclRing;
};

std::unique_ptr<Workload> MakeWorkload(const WorkloadContext& context) {
  const Scenario& s = context.scenario;
  return MakeJobWorkload<NcclJob>(context, [&] {
    return std::make_unique<NcclJob>(context.fabric, context.hosts,
                                     CollectiveElements(s.workload.schedule, s.workload.bytes), s.workload.dtype,
                                     s.workload.data, s.seed, s.workload.spec<NcclSpec>(), s.workload.iterations,
                                     s.workload.compute_gap_ps, s.workload.schedule);
  });
}

namespace {

// ncclReduceScatter and ncclAllGather take a count per rank.
bool TakesCountPerRank(CollectiveKind k) {
  return k == CollectiveKind::kReduceScatter || k == CollectiveKind::kAllGather;
}

void CheckPlacement(const Scenario& s, const topo::Topology&, const std::vector<uint32_t>& hosts) {
  if (hosts.size() < 2) throw ScenarioError("workload.hosts: an NCCL ring needs at least 2 hosts");
  CheckEqualSegments(s, hosts.size(), &TakesCountPerRank, "an NCCL");
  try {  // communicators partition the ranks, a broadcast's root is one (as RankCollectives checks when built)
    CheckCommunicators(s.workload.schedule, static_cast<uint32_t>(hosts.size()));
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(e.what());
  }
  const NcclSpec& spec = s.workload.spec<NcclSpec>();
  // Every communicator has its own rings (ncclCommSplit): channels connections each.
  const uint32_t conns = spec.channels * (1 + static_cast<uint32_t>(s.workload.schedule.communicator_names.size()));
  if (conns > NcclRing::kMaxConnections)
    throw ScenarioError(fmt::format("workload.schedule.communicators: {} communicators and the world's ring with "
                                    "workload.nccl.channels {} make {} connections per rank, more than {}",
                                    s.workload.schedule.communicator_names.size(), spec.channels, conns,
                                    NcclRing::kMaxConnections));
  if (spec.transport == NcclTransport::kTcp) {  // RoCE's MTU and PSN limits do not apply
    if (uint32_t{spec.tcp_port} + conns - 1 > 65535)
      throw ScenarioError(fmt::format("workload.nccl.tcp_port: connections listen on tcp_port .. tcp_port + {} = {}, "
                                      "beyond 65535", conns - 1, uint32_t{spec.tcp_port} + conns - 1));
    return;
  }
  // A rank's op that sends step 1 frees a receive slot only once a send slot
  // is free, and a send slot frees only once the next rank granted (freed a
  // receive slot): with fewer send slots than a chunk's slices every rank
  // waits for the next (NCCL's own 8 / 2 = 4 never does).
  if (spec.slots < NcclPlan::kSlicesPerChunk)
    throw ScenarioError(fmt::format("workload.nccl.slots: {} over RoCE deadlocks the ring: a chunk's {} slices need "
                                    "as many send slots while the next rank holds its receive slots",
                                    spec.slots, NcclPlan::kSlicesPerChunk));
  if (s.links.mtu_bytes < spec.mtu_payload_bytes + 20 + 8 + 12 + 16 + 4)
    throw ScenarioError(fmt::format("workload.nccl.mtu_payload_bytes: {} B of payload and 60 B of IPv4, UDP and "
                                    "RoCE headers exceed links.mtu_bytes {}", spec.mtu_payload_bytes,
                                    s.links.mtu_bytes));
  // PSNs are 24 bits: a queue pair's packets of one run must not wrap.
  double iteration_bytes = 0;  // every collective of an iteration
  for (uint64_t e : CollectiveElements(s.workload.schedule, s.workload.bytes)) iteration_bytes += 4.0 * e;
  const double per_qp = iteration_bytes * 2.0 / spec.channels / spec.mtu_payload_bytes *
                        std::max<uint32_t>(1, s.workload.iterations);
  if (per_qp >= (1u << 24))
    throw ScenarioError(fmt::format("workload.bytes: about {:.0f} packets per queue pair, beyond the 24-bit PSN "
                                    "space (more channels, fewer iterations or a smaller tensor)", per_qp));
}

/// Each rank holds at most its receive and its send slots' slices per channel.
double StateBytes(const Scenario& s, size_t) {
  const NcclSpec& spec = s.workload.spec<NcclSpec>();
  return static_cast<double>(spec.channels) * spec.slots * (spec.buffer_bytes / 4) * 2.0;
}

// RoCE's reliable connections recover a drop by going back N packets (or a
// tens-of-ms ACK timeout), so deployments run them lossless: on drop-tail
// queues a few colliding rings collapse (measured: tp-dp-ring.json's DP
// pairs, 172,896 drops, 0.46 s steps against the UDP ring's 4.9 ms).
void AddWarnings(const Scenario& s, const topo::Topology&, std::vector<NamedTimer>&,
                 std::vector<std::string>& warnings) {
  const NcclSpec& spec = s.workload.spec<NcclSpec>();
  if (spec.transport == NcclTransport::kRoce && !s.sw.port.pfc_enabled && !s.sw.port.credit_enabled)
    warnings.push_back("workload.nccl.transport: RoCE on a fabric without switch.pfc (or switch.credit): a drop "
                       "costs a go-back-N or the ACK timeout, as on a lossy RoCE network; deployments enable PFC "
                       "(protocols/nccl/protocol.json \"network\")");
}

constexpr char kPortKey[] = "workload.nccl.port";

}  // namespace

extern const ProtocolChecks kChecks;  // (declared for the registry: external linkage)
const ProtocolChecks kChecks = {&CheckPlacement, &StateBytes, &AddWarnings,
                                &AddSpecUdpPort<NcclSpec, &NcclSpec::port, kPortKey>};

}  // namespace inasim::protocols::nccl
