// The host ring allreduce's entry in the protocol registry
// (protocols/ring/protocol.json): one ring over the selected hosts, or
// workload.jobs concurrent rings over disjoint host groups (canary-fgcs24
// Fig. 10a's baseline), split as every protocol's jobs are (ina/jobs.h).
#include "congestion/flow_generator.h"
#include "ina/collective-table.h"
#include "ina/fabric.h"
#include "ina/job-workload.h"
#include "ina/jobs.h"
#include "ina/protocol-checks.h"
#include "ina/scenario.h"
#include "ina/units.h"
#include "ina/workload.h"
#include "protocols/ring/host/ring-allreduce.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace inasim::protocols::ring {
namespace {

using nlohmann::json;

std::unique_ptr<RingAllreduce> MakeRing(const Scenario& s, Fabric& fabric, const std::vector<uint32_t>& hosts,
                                        uint64_t seed) {
  ns3::NodeContainer nodes;
  std::vector<ns3::Ipv4Address> addrs;
  for (uint32_t h : hosts) {
    nodes.Add(fabric.host(h));
    addrs.push_back(fabric.host_address(h));
  }
  try {
    auto ring = std::make_unique<RingAllreduce>(nodes, addrs, CollectiveElements(s.workload.schedule, s.workload.bytes),
                                                s.workload.dtype, s.workload.data, seed, RingConfigOf(s),
                                                s.workload.iterations, s.workload.compute_gap_ps,
                                                static_cast<uint16_t>(s.links.mtu_bytes), s.workload.schedule);
    ring->SetHosts(hosts);
    return ring;
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(fmt::format("workload: {}", e.what()));
  }
}

/// Framing bound: the busiest rank's stream with every header and wire byte, in seconds.
double FramingBound(const RingPlan& plan, const Scenario& s) {
  uint64_t worst_wire = 0;
  for (uint32_t rk = 0; rk < plan.ranks(); ++rk) {
    uint64_t elems = 0;
    for (uint32_t t = 0; t < plan.steps(); ++t) {
      const uint32_t c = plan.chunk_sent(rk, t);
      const uint64_t g0 = plan.chunk_first(c), g1 = plan.chunk_first(c) + plan.chunk_packets(c);
      const uint64_t e1 = std::min<uint64_t>(g1 * plan.epp(), plan.elements());
      elems += e1 - std::min<uint64_t>(g0 * plan.epp(), plan.elements());
    }
    const uint64_t pkts = plan.stream_packets(rk);
    const uint64_t wb = elems * 4 + pkts * (RingWire::kDataHeader + 8 + 20 + 14 + s.links.wire_overhead_bytes);
    worst_wire = std::max(worst_wire, wb);
  }
  return static_cast<double>(worst_wire) * 8.0 / (s.links.host_rate_gbps * 1e9);
}

/// Every ring's collectives (one job, or workload.jobs concurrent rings, split
/// as every protocol's jobs are, ina/jobs.h): the core keys, `workload.ring` (one ring: its
/// bounds; several: each job's in per_job), collectives.csv, the summary.
void ReportRings(const std::vector<std::unique_ptr<RingAllreduce>>& rings, const Scenario& s, bool finished,
                 WorkloadReport& out) {
  CollectiveTable table(RingAllreduce::ExtraColumns());
  json ring = {{"elements", rings[0]->plan().elements()},
               {"elements_per_packet", rings[0]->plan().epp()},
               {"analytic_bound_formula", rings[0]->plan().bound_formula()}};
  const bool scheduled = s.workload.schedule.given;
  uint64_t iterations_done = rings[0]->records().size();
  for (uint32_t j = 0; j < rings.size(); ++j) {
    rings[j]->AddCollectives(table, s.links.host_rate_gbps, out.payload_delivered);
    std::vector<IterationStart> starts = rings[j]->IterationStarts(j);
    out.iteration_starts.insert(out.iteration_starts.end(), starts.begin(), starts.end());
    iterations_done = std::min(iterations_done, table.job(j).completed);
    json bounds = {{"packets_per_rank", rings[j]->plan().stream_packets(0)},
                   {"analytic_bound_s", rings[j]->AnalyticBound(s.links.host_rate_gbps)},
                   {"framing_bound_s", FramingBound(rings[j]->plan(), s)}};
    if (rings.size() == 1) ring.update(bounds);
    else table.SetJobExtras(j, std::move(bounds));
  }
  out.correct = finished && table.correct();
  out.workload = table.CoreJson({"ring", scheduled ? "collective" : "iteration", rings[0]->plan().elements() * 4,
                                 rings[0]->records().size(), iterations_done},
                                out.correct);
  out.workload["ring"] = std::move(ring);
  out.AddCsv("collectives.csv", table.Csv());
  out.rank_spans = table.rank_spans();
  if (rings.size() > 1) {
    out.workload["host_split"] = s.workload.jobs_contiguous
                                     ? "the selected hosts in id order, cut into equal consecutive groups"
                                     : "seeded shuffle of the selected hosts, dealt into equal groups";
    out.summary += table.JobsSummary(fmt::format("ring allreduce of {}", HumanBytes(rings[0]->plan().elements() * 4)),
                                     VerdictWord(out.correct, s.workload.data));
    return;
  }
  const uint32_t n = rings[0]->plan().ranks();
  const double mean = table.mean_duration_s(), bound = rings[0]->AnalyticBound(s.links.host_rate_gbps);
  const double framing_bound = out.workload["ring"]["framing_bound_s"].get<double>();
  if (iterations_done)
    out.summary += fmt::format("ring allreduce of {} ({}, {}) over {} hosts at {} Gb/s: {} per collective "
                               "(x{} iterations)\n  analytic bound {} = {} ({:.1f} % of it reached); "
                               "with framing {} ({:.1f} %)\n",
                               HumanBytes(rings[0]->plan().elements() * 4),
                               s.workload.dtype == DType::kInt32 ? "int32" : "float32",
                               s.workload.data == DataPattern::kHashed ? "hashed data" : "all ones", n,
                               s.links.host_rate_gbps, HumanTime(mean), iterations_done,
                               rings[0]->plan().bound_formula(), HumanTime(bound),
                               100.0 * bound / mean, HumanTime(framing_bound), 100.0 * framing_bound / mean);
  const std::vector<CollectiveKind> kinds = CollectiveKinds(s.workload.schedule);
  const bool gathers = std::count(kinds.begin(), kinds.end(), CollectiveKind::kAllGather) > 0;
  out.summary += fmt::format("  result: {} - {} elements checked against the exact sum{}, {} mismatches{}\n",
                             VerdictWord(out.correct, s.workload.data), table.elements_checked(),
                             gathers ? " (an all-gather's: each chunk's owner's values)" : "", table.mismatches(),
                             finished ? "" : fmt::format(" (only {} of {} iterations finished by the time limit)",
                                                         iterations_done, s.workload.iterations));
}

/// One ring over the selected hosts, or workload.jobs rings over disjoint groups.
class RingJobs : public ConcurrentJobs<RingAllreduce> {
 public:
  RingJobs(const Scenario& s, Fabric& fabric, const std::vector<uint32_t>& hosts) {
    for (const JobPlacement& job : PlaceJobs(hosts, s.workload.jobs, s.seed, s.workload.jobs_contiguous))
      Add(MakeRing(s, fabric, job.hosts, job.seed));
  }
  void Report(const Scenario& s, bool finished, WorkloadReport& out) const { ReportRings(jobs_, s, finished, out); }
};

}  // namespace

std::unique_ptr<Workload> MakeWorkload(const WorkloadContext& context) {
  return MakeJobWorkload<RingJobs>(
      context, [&] { return std::make_unique<RingJobs>(context.scenario, context.fabric, context.hosts); });
}

namespace {

/// A ring's per-rank packet stream must fit its 32-bit sequence numbers (RingAllreduce).
void CheckRingStream(const Scenario& s, size_t ranks) {
  const uint32_t epp = s.workload.spec<RingSpec>().elements_per_packet
                           ? s.workload.spec<RingSpec>().elements_per_packet
                           : (s.links.mtu_bytes - 20 - 8 - RingWire::kDataHeader) / 4;
  // The largest collective has the longest stream.
  const RingPlan plan(static_cast<uint32_t>(ranks), LargestCollectiveBytes(s.workload.schedule, s.workload.bytes) / 4,
                      epp);
  if (plan.stream_packets(0) >= (1ull << 32) - 1)
    throw ScenarioError(fmt::format("workload.bytes: a ring of {} ranks sends {} packets per rank, more than its "
                                    "32-bit sequence numbers count (fewer bytes, or more "
                                    "workload.ring.elements_per_packet)", ranks, plan.stream_packets(0)));
}

/// The schedule's communicators must partition each ring's ranks (as
/// RankCollectives checks when it is built).
void CheckRingCommunicators(const Scenario& s, size_t ranks) {
  try {
    CheckCommunicators(s.workload.schedule, static_cast<uint32_t>(ranks));
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(e.what());
  }
}

void CheckPlacement(const Scenario& s, const topo::Topology&, const std::vector<uint32_t>& hosts) {
  if (s.workload.jobs == 1) {
    CheckRingStream(s, hosts.size());
    CheckRingCommunicators(s, hosts.size());
    return;
  }
  // The smallest group has the longest per-rank stream (fewer ranks, larger chunks).
  const auto groups = SplitHosts(hosts, s.workload.jobs, s.seed, s.workload.jobs_contiguous);
  size_t smallest = hosts.size();
  for (const auto& g : groups) {
    smallest = std::min(smallest, g.size());
    CheckRingCommunicators(s, g.size());
  }
  CheckRingStream(s, smallest);
}

/// RingRank's acked_, ready_, received_: 3 bytes x 2(n-1)/n x packets, per rank.
double StateBytes(const Scenario& s, size_t hosts) {
  const WorkloadSpec& w = s.workload;
  const double n = static_cast<double>(hosts);
  const double elements = static_cast<double>(LargestCollectiveBytes(w.schedule, w.bytes) / 4);
  const uint32_t epp = w.spec<RingSpec>().elements_per_packet ? w.spec<RingSpec>().elements_per_packet
                                                  : (s.links.mtu_bytes - 20 - 8 - RingWire::kDataHeader) / 4;
  return 6.0 * std::max(1.0, n - w.jobs) * std::ceil(elements / epp);
}

constexpr char kTimerKey[] = "workload.ring.rto_us";
constexpr char kUdpPortKey[] = "workload.ring.udp_port";

}  // namespace

extern const ProtocolChecks kChecks;  // (declared for the registry: external linkage)
const ProtocolChecks kChecks = {&CheckPlacement, &StateBytes,
                                &AddSpecTimer<RingSpec, &RingSpec::rto_ps, kTimerKey>,
                                &AddSpecUdpPort<RingSpec, &RingSpec::udp_port, kUdpPortKey>};

}  // namespace inasim::protocols::ring
