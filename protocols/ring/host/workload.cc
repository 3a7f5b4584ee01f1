// The host ring allreduce's entry in the protocol registry
// (protocols/ring/protocol.json): one ring over the selected hosts, or
// workload.jobs concurrent rings over disjoint host groups (canary-fgcs24
// Fig. 10a's baseline), split as every protocol's jobs are (ina/jobs.h).
#include "congestion/flow_generator.h"
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
    return std::make_unique<RingAllreduce>(nodes, addrs, s.workload.bytes, s.workload.dtype, s.workload.data, seed,
                                           RingConfigOf(s), s.workload.iterations, s.workload.compute_gap_ps,
                                           static_cast<uint16_t>(s.links.mtu_bytes));
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

/// Totals over the finished collectives of one ring.
struct RingTotals {
  json collectives = json::array();
  std::string csv = "iteration,start_s,end_s,duration_s,algbw_gbps,busbw_gbps,bound_s,bound_ratio,correct,"
                    "elements_checked,mismatches,retransmissions\n";
  uint64_t checked = 0, mismatches = 0;
  double total_duration = 0;
  bool all_correct = true;
};

RingTotals Collectives(const RingAllreduce& ring, const Scenario& s, double bound) {
  RingTotals t;
  const uint32_t n = ring.plan().ranks();
  for (const CollectiveRecord& c : ring.records()) {
    if (c.end_ps == 0) continue;  // unfinished
    const double dur = PsToS(c.end_ps - c.start_ps);
    const double algbw = static_cast<double>(s.workload.bytes) * 8.0 / dur / 1e9;
    const double busbw = algbw * 2.0 * (n - 1) / n;
    // Every rank must end with every element exactly once: n * E checks.
    const bool ok = c.mismatches == 0 && c.elements_checked == uint64_t{n} * ring.plan().elements();
    t.all_correct &= ok;
    t.checked += c.elements_checked;
    t.mismatches += c.mismatches;
    t.total_duration += dur;
    t.collectives.push_back({{"iteration", c.iteration}, {"start_s", PsToS(c.start_ps)}, {"end_s", PsToS(c.end_ps)},
                             {"duration_s", dur}, {"algbw_gbps", algbw}, {"busbw_gbps", busbw},
                             {"bound_ratio", bound / dur}, {"correct", ok}, {"elements_checked", c.elements_checked},
                             {"mismatches", c.mismatches}, {"retransmissions", c.retransmissions}});
    t.csv += fmt::format("{},{:.12f},{:.12f},{:.12f},{:.6f},{:.6f},{:.12f},{:.6f},{},{},{},{}\n", c.iteration,
                         PsToS(c.start_ps), PsToS(c.end_ps), dur, algbw, busbw, bound, bound / dur, ok ? 1 : 0,
                         c.elements_checked, c.mismatches, c.retransmissions);
  }
  return t;
}

/// One ring: per collective, the analytic and framing bounds.
void ReportOneRing(const RingAllreduce& ring, const Scenario& s, bool finished, WorkloadReport& out) {
  const RingPlan& plan = ring.plan();
  const uint32_t n = plan.ranks();
  const double bound = 2.0 * (n - 1) / n * static_cast<double>(s.workload.bytes) * 8.0 / (s.links.host_rate_gbps * 1e9);
  const double framing_bound = FramingBound(plan, s);
  RingTotals t = Collectives(ring, s, bound);
  const size_t done_count = t.collectives.size();
  out.payload_delivered = 2 * (uint64_t{n} - 1) * s.workload.bytes * done_count;  // summed over ranks
  out.correct = finished && t.all_correct;
  const double mean = done_count ? t.total_duration / done_count : 0.0;
  out.workload = {{"type", "allreduce"},
                  {"protocol", "ring"},
                  {"ranks", n},
                  {"bytes", s.workload.bytes},
                  {"elements", plan.elements()},
                  {"elements_per_packet", plan.epp()},
                  {"packets_per_rank", plan.stream_packets(0)},
                  {"iterations_requested", s.workload.iterations},
                  {"iterations_completed", done_count},
                  {"analytic_bound_s", bound},
                  {"analytic_bound_formula", "2(n-1)/n * S / B"},
                  {"framing_bound_s", framing_bound},
                  {"mean_duration_s", mean},
                  {"elements_checked", t.checked},
                  {"mismatches", t.mismatches},
                  {"correct", out.correct},
                  {"collectives", std::move(t.collectives)}};
  out.AddCsv("collectives.csv", std::move(t.csv));
  if (done_count) {
    out.summary += fmt::format("ring allreduce of {} ({}, {}) over {} hosts at {} Gb/s: {} per collective "
                               "(x{} iterations)\n",
                               HumanBytes(s.workload.bytes), s.workload.dtype == DType::kInt32 ? "int32" : "float32",
                               s.workload.data == DataPattern::kHashed ? "hashed data" : "all ones", n,
                               s.links.host_rate_gbps, HumanTime(mean), done_count);
    out.summary += fmt::format("  analytic bound 2(n-1)/n*S/B = {} ({:.1f} % of it reached); with framing {} "
                               "({:.1f} %)\n",
                               HumanTime(bound), 100.0 * bound / mean, HumanTime(framing_bound),
                               100.0 * framing_bound / mean);
  }
  out.summary += fmt::format("  result: {} - {} elements checked against the exact sum, {} mismatches{}\n",
                             VerdictWord(out.correct, s.workload.data), t.checked, t.mismatches,
                             finished ? "" : fmt::format(" (only {} of {} iterations finished by the time limit)",
                                                         done_count, s.workload.iterations));
}

/// One job of several: its collectives.csv rows (with a leading job column) and its per_job entry.
json ReportRingJob(const RingAllreduce& ring, uint32_t j, const Scenario& s, std::string& csv, bool& ok,
                   uint64_t& payload_delivered) {
  const uint32_t n = ring.plan().ranks();
  double dur_sum = 0;
  uint64_t done = 0, checked = 0, mism = 0;
  ok = true;
  for (const CollectiveRecord& c : ring.records()) {
    checked += c.elements_checked;
    mism += c.mismatches;
    if (c.end_ps == 0) continue;  // unfinished
    const double dur = PsToS(c.end_ps - c.start_ps);
    const bool c_ok = ring.Exact(c);
    ok &= c_ok;
    dur_sum += dur;
    ++done;
    csv += fmt::format("{},{},{:.12f},{:.12f},{:.12f},{:.6f},{},{},{},{}\n", j, c.iteration, PsToS(c.start_ps),
                       PsToS(c.end_ps), dur, static_cast<double>(s.workload.bytes) * 8.0 / dur / 1e9, c_ok ? 1 : 0,
                       c.elements_checked, c.mismatches, c.retransmissions);
  }
  ok &= done == s.workload.iterations;
  const double mean = done ? dur_sum / static_cast<double>(done) : 0.0;
  const double goodput = mean > 0 ? static_cast<double>(s.workload.bytes) * 8.0 / mean / 1e9 : 0.0;
  payload_delivered += 2 * (uint64_t{n} - 1) * s.workload.bytes * done;
  return {{"job", j}, {"ranks", n}, {"mean_duration_s", mean}, {"goodput_gbps", goodput},
          {"correct", ok}, {"elements_checked", checked}, {"mismatches", mism}};
}

/// Several concurrent rings: as CanaryJobSet's report (mean goodput over the
/// jobs, per_job, collectives.csv with a leading job column).
void ReportRings(const std::vector<std::unique_ptr<RingAllreduce>>& rings, const Scenario& s, bool finished,
                 WorkloadReport& out) {
  std::string csv = "job,iteration,start_s,end_s,duration_s,goodput_gbps,correct,elements_checked,mismatches,"
                    "retransmissions\n";
  json per_job = json::array();
  double goodput_sum = 0, duration_sum = 0, goodput_min = 0, goodput_max = 0;
  uint64_t checked = 0, mism = 0, ranks = 0;
  out.correct = finished;
  for (uint32_t j = 0; j < rings.size(); ++j) {
    bool ok = true;
    json job = ReportRingJob(*rings[j], j, s, csv, ok, out.payload_delivered);
    out.correct &= ok;
    const double goodput = job["goodput_gbps"].get<double>();
    goodput_sum += goodput;
    goodput_min = j == 0 ? goodput : std::min(goodput_min, goodput);
    goodput_max = j == 0 ? goodput : std::max(goodput_max, goodput);
    duration_sum += job["mean_duration_s"].get<double>();
    checked += job["elements_checked"].get<uint64_t>();
    mism += job["mismatches"].get<uint64_t>();
    ranks += job["ranks"].get<uint64_t>();
    per_job.push_back(std::move(job));
  }
  const double jobs = static_cast<double>(rings.size());
  out.workload = {{"type", "allreduce"},
                  {"protocol", "ring"},
                  {"bytes", s.workload.bytes},
                  {"iterations_requested", s.workload.iterations},
                  {"jobs", rings.size()},
                  {"host_split", "seeded shuffle of the selected hosts, dealt into equal groups"},
                  {"ranks", ranks},
                  {"mean_duration_s", duration_sum / jobs},
                  {"goodput_gbps", goodput_sum / jobs},
                  {"min_goodput_gbps", goodput_min},
                  {"max_goodput_gbps", goodput_max},
                  {"elements_checked", checked},
                  {"mismatches", mism},
                  {"correct", out.correct},
                  {"per_job", per_job}};
  out.AddCsv("collectives.csv", std::move(csv));
  out.summary += fmt::format("{} jobs of ring allreduce of {} over {} hosts in all: mean goodput {:.2f} Gb/s per job "
                             "(min {:.2f}, max {:.2f})\n  result: {} - {} elements checked against the exact sums, {} "
                             "mismatches\n",
                             rings.size(), HumanBytes(s.workload.bytes), ranks, goodput_sum / jobs, goodput_min,
                             goodput_max, VerdictWord(out.correct, s.workload.data), checked, mism);
}

/// One ring over the selected hosts, or workload.jobs rings over disjoint groups.
class RingJobs : public ConcurrentJobs<RingAllreduce> {
 public:
  RingJobs(const Scenario& s, Fabric& fabric, const std::vector<uint32_t>& hosts) {
    for (const JobPlacement& job : PlaceJobs(hosts, s.workload.jobs, s.seed, s.workload.jobs_contiguous))
      Add(MakeRing(s, fabric, job.hosts, job.seed));
  }
  void Report(const Scenario& s, bool finished, WorkloadReport& out) const {
    if (s.workload.jobs == 1) ReportOneRing(*jobs_[0], s, finished, out);
    else ReportRings(jobs_, s, finished, out);
  }
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
  const RingPlan plan(static_cast<uint32_t>(ranks), s.workload.bytes / 4, epp);
  if (plan.stream_packets(0) >= (1ull << 32) - 1)
    throw ScenarioError(fmt::format("workload.bytes: a ring of {} ranks sends {} packets per rank, more than its "
                                    "32-bit sequence numbers count (fewer bytes, or more "
                                    "workload.ring.elements_per_packet)", ranks, plan.stream_packets(0)));
}

void CheckPlacement(const Scenario& s, const topo::Topology&, const std::vector<uint32_t>& hosts) {
  if (s.workload.jobs == 1) {
    CheckRingStream(s, hosts.size());
    return;
  }
  // The smallest group has the longest per-rank stream (fewer ranks, larger chunks).
  const auto groups = SplitHosts(hosts, s.workload.jobs, s.seed, s.workload.jobs_contiguous);
  size_t smallest = hosts.size();
  for (const auto& g : groups) smallest = std::min(smallest, g.size());
  CheckRingStream(s, smallest);
}

/// RingRank's acked_, ready_, received_: 3 bytes x 2(n-1)/n x packets, per rank.
double StateBytes(const Scenario& s, size_t hosts) {
  const WorkloadSpec& w = s.workload;
  const double n = static_cast<double>(hosts), elements = static_cast<double>(w.bytes / 4);
  const uint32_t epp = w.spec<RingSpec>().elements_per_packet ? w.spec<RingSpec>().elements_per_packet
                                                  : (s.links.mtu_bytes - 20 - 8 - RingWire::kDataHeader) / 4;
  return 6.0 * std::max(1.0, n - w.jobs) * std::ceil(elements / epp);
}

void AddWarnings(const Scenario& s, const topo::Topology&, std::vector<NamedTimer>& timers,
                 std::vector<std::string>&) {
  timers.push_back({"workload.ring.rto_us", s.workload.spec<RingSpec>().rto_ps, 1e6, "us"});
}

void AddUdpPorts(const Scenario& s, std::vector<std::pair<const char*, uint16_t>>& ports) {
  ports.emplace_back("workload.ring.udp_port", s.workload.spec<RingSpec>().udp_port);
}

}  // namespace

extern const ProtocolChecks kChecks;  // (declared for the registry: external linkage)
const ProtocolChecks kChecks = {&CheckPlacement, &StateBytes, &AddWarnings, &AddUdpPorts};

}  // namespace inasim::protocols::ring
