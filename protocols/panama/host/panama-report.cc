// PANAMA results: per-iteration aggregation time and goodput of every job
// through the shared CollectiveTable, and under workload.panama the workers'
// congestion windows (Fig. 5: marked results, wnd_cap hits, mean cwnd,
// timeouts), the accelerators' counters per switch and the shared cluster's
// job completion times (§7).
#include "protocols/panama/host/panama-job.h"

#include "ina/fabric.h"
#include "ina/program-counters.h"
#include "ina/units.h"
#include "protocols/panama/dataplane/panama_dataplane.h"
#include "protocols/ring/host/ring-allreduce.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace inasim {

using nlohmann::json;
namespace pn = p4::panama;

namespace {

/// Accelerators by switch vertex (in vertex order: the CSV's rows).
using Accelerators = std::map<uint32_t, const pn::PanamaDataplane*>;

/// The accelerators' counters: summed in `totals`, one CSV row per switch.
struct AcceleratorTotals {
  nlohmann::json totals;
  std::string csv;
};

AcceleratorTotals SumAccelerators(const topo::Topology& t, const Accelerators& accelerators, double quorum,
                                  uint64_t quorum_unresolved) {
  using Stats = pn::PanamaDataplane::Stats;
  ProgramCounters counters = ProgramCounters::Of(Stats::kCounters, {{"own_wnd_cap", ProgramCounters::Shown::kCsv}});
  for (const auto& [v, acc] : accelerators)
    counters.Add(t.node(v).name, t.node(v).tier, acc->stats(), Stats::kCounters, {acc->OwnWndCap()});
  AcceleratorTotals a{counters.Sums(), counters.csv()};
  // Switch memory in use: the most packets one accelerator buffered at once
  // (its slots of slot_bytes each, panama §5 (1)), at the busiest accelerator.
  uint64_t peak = 0, slot_bytes = 0;
  std::string busiest;
  for (const auto& [v, acc] : accelerators)
    if (acc->PeakBuffered() * acc->config().slot_bytes > peak * slot_bytes || busiest.empty()) {
      peak = acc->PeakBuffered();
      slot_bytes = acc->config().slot_bytes;
      busiest = t.node(v).name;
    }
  a.totals.update({{"switches", accelerators.size()}, {"quorum", quorum},
                   {"quorum_unresolved_results", quorum_unresolved},
                   {"peak_buffered", {{"packets", peak}, {"bytes", peak * slot_bytes}, {"switch", busiest}}}});
  return a;
}

Accelerators Sorted(const std::unordered_map<uint32_t, const pn::PanamaDataplane*>& m) {
  return Accelerators(m.begin(), m.end());
}

}  // namespace

uint32_t PanamaJob::AddCollectives(CollectiveTable& table, uint64_t& payload_delivered) const {
  const uint32_t n = num_workers();
  const uint32_t j = table.AddJobRecords(n, records_, hosts_);  // every worker holds every element once
  for (const CollectiveRecord& r : records_)
    if (r.finished()) payload_delivered += 2 * uint64_t{n} * r.bytes;
  return j;
}

std::string PanamaJob::Check() const {
  if (spec_.quorum < 1)
    return "values: each partial sum bit for bit against the adder order over a set of workers that sent it and "
           "that the quorum allows at every switch: the set the switches' partial sums name, else one searched "
           "among the senders";
  return data_.front().exact_in_float() ? DataCheckDescription(data_.front().pattern())
                                        : "values: against the accelerators' adder order over per-rank random float32 "
                                          "data, bit for bit";
}

json PanamaJob::Details(const Scenario& s) const {
  const uint32_t k = spec_.elements_per_packet;
  // PANAMA header over UDP/IPv4/Ethernet (protocols/panama/dataplane/README.md "Byte layout").
  const uint64_t wire = uint64_t{k} * 4 + 14 + 8 + 20 + 14 + s.links.wire_overhead_bytes;
  PanamaWorkerCounters c;
  json per_worker = json::array();
  for (const auto& wk : workers_) {
    const PanamaWorkerCounters& x = wk->counters();
    per_worker.push_back({{"results", x.results},
                          {"results_ecn_marked", x.results_marked},
                          {"mean_cwnd", x.results ? x.cwnd_sum / static_cast<double>(x.results) : 0.0},
                          {"timeouts", x.timeouts}});
    c.packets_sent += x.packets_sent;
    c.results += x.results;
    c.results_marked += x.results_marked;
    c.unexpected_results += x.unexpected_results;
    c.timeouts += x.timeouts;
    c.skipped += x.skipped;
    c.cap_hits += x.cap_hits;
    c.cwnd_sum += x.cwnd_sum;
    c.min_wnd_cap = std::min(c.min_wnd_cap, x.min_wnd_cap);
  }
  json roots = json::array();
  for (const auto& tree : trees_) roots.push_back(fabric_->topology().node(tree.root).name);
  return {{"dtype", "float32"},
          {"elements", elements()},  // with a schedule: the first collective's
          {"elements_per_packet", k},
          {"packets_per_iteration", packets_per_iteration()},
          {"trees", trees_.size()},
          {"tree_roots", roots},
          {"congestion_control", spec_.congestion_control},
          {"float_mode", spec_.ieee_float ? "ieee" : "fpga"},
          {"packet_wire_bytes", wire},
          {"goodput_fraction_from_framing", static_cast<double>(k) * 4 / static_cast<double>(wire)},
          {"workers", {{"packets_sent", c.packets_sent},
                       {"results", c.results},
                       {"results_ecn_marked", c.results_marked},
                       {"unexpected_results", c.unexpected_results},
                       {"timeouts", c.timeouts},
                       {"skipped_by_quorum", c.skipped},
                       {"wnd_cap_hits", c.cap_hits},
                       {"min_wnd_cap", c.min_wnd_cap},
                       {"mean_cwnd", c.results ? c.cwnd_sum / static_cast<double>(c.results) : 0.0},
                       {"per_worker", per_worker}}}};
}

std::string PanamaJob::Summary(const Scenario& s, const CollectiveTable::JobTotals& t, const json& d,
                               bool finished, bool correct) const {
  const json& c = d["workers"];
  const AcceleratorTotals acc = SumAccelerators(fabric_->topology(), Sorted(accelerators_), spec_.quorum, 0);
  const uint64_t results = c["results"].get<uint64_t>(), timeouts = c["timeouts"].get<uint64_t>();
  std::string summary =
      fmt::format("panama allreduce of {} (float32) over {} workers, {} tree(s), {} values/packet, {}: ",
                  HumanBytes(elements() * 4), num_workers(), trees_.size(), spec_.elements_per_packet,
                  spec_.congestion_control ? "Fig. 5 congestion control"
                                           : fmt::format("fixed pool of {} over the trees", spec_.fixed_pool));
  if (t.completed)
    summary += fmt::format("{} per collective, {:.2f} Gb/s goodput (x{} iterations)\n", HumanTime(t.mean_duration_s()),
                           t.goodput_gbps(), t.completed);
  else
    summary += "no collective finished\n";
  summary += fmt::format("  windows: {}{} of {} results ECN-marked, {} wnd_cap hits, {} timeouts; "
                         "accelerators: {} aggregations, {} overflow / {} VID drops\n",
                         spec_.congestion_control ? fmt::format("{:.1f} mean cwnd, ", c["mean_cwnd"].get<double>())
                                                  : std::string(),
                         c["results_ecn_marked"].get<uint64_t>(), results, c["wnd_cap_hits"].get<uint64_t>(),
                         timeouts, acc.totals["aggregations"].get<uint64_t>(),
                         acc.totals["buffer_overflow_dropped"].get<uint64_t>(),
                         acc.totals["vid_mismatch_dropped"].get<uint64_t>());
  summary += fmt::format(
      "  result: {} - {} elements checked ({}), {} mismatches{}\n", VerdictWord(correct, s.workload.data),
      t.elements_checked,
      data_.front().exact_in_float() ? "against the exact sum" : "against the accelerators' adder order",
      t.mismatches,
      finished ? ""
               : fmt::format(" (only {} of {} iterations finished by the time limit{})", t.completed, records_.size(),
                             timeouts ? fmt::format("; {} tree timeouts: packets were lost", timeouts) : ""));
  return summary;
}

json PanamaJobSet::ClusterJson(const Scenario& s, const CollectiveTable& table, std::string& csv) const {
  // Job completion time = end of the last iteration - arrival (waiting for hosts included).
  const bool ring = !rings_.empty();
  csv = "job,jid,model,workers,racks,bytes,compute_s,arrival_s,start_s,end_s,jct_s,wait_s,after,correct\n";
  std::vector<double> jcts;
  double wait_sum = 0;
  json rows = json::array();
  for (size_t i = 0; i < count(); ++i) {
    const PanamaClusterJob& cj = cluster_[i];
    const bool done = ended_[i] != 0;
    const double arrival = static_cast<double>(cj.arrival_ps) / 1e12;
    const double start = static_cast<double>(started_ps_[i]) / 1e12;
    const double end = static_cast<double>(ended_ps_[i]) / 1e12;
    std::string after;
    for (size_t a : cj.after) after += (after.empty() ? "" : " ") + std::to_string(a);
    csv += fmt::format("{},{},{},{},{},{},{:.9f},{:.9f},{},{},{},{},{},{}\n", i, JobJid(s, i), cj.model,
                       cj.hosts.size(), cj.racks, cj.bytes, static_cast<double>(cj.compute_ps) / 1e12, arrival,
                       started_[i] ? fmt::format("{:.9f}", start) : "", done ? fmt::format("{:.9f}", end) : "",
                       done ? fmt::format("{:.9f}", end - arrival) : "",
                       started_[i] ? fmt::format("{:.9f}", start - arrival) : "", after,
                       table.job(static_cast<uint32_t>(i)).correct() ? 1 : 0);
    rows.push_back({{"job", i}, {"model", cj.model}, {"workers", cj.hosts.size()}, {"racks", cj.racks},
                    {"hosts", cj.hosts}, {"after", cj.after}, {"arrival_s", arrival},
                    {"start_s", started_[i] ? json(start) : json(nullptr)},
                    {"end_s", done ? json(end) : json(nullptr)},
                    {"jct_s", done ? json(end - arrival) : json(nullptr)}});
    if (done) {
      jcts.push_back(end - arrival);
      wait_sum += start - arrival;
    }
  }
  std::vector<double> sorted = jcts;
  std::sort(sorted.begin(), sorted.end());
  auto pct = [&](double q) {
    return sorted.empty() ? 0.0 : sorted[std::min(sorted.size() - 1, static_cast<size_t>(std::ceil(q * sorted.size())) - (q > 0 ? 1 : 0))];
  };
  double jct_sum = 0;
  for (double x : jcts) jct_sum += x;
  const PanamaClusterSpec& cs = s.workload.spec<PanamaSpec>().cluster;
  uint64_t partial = 0, skipped = 0;  // PANAMA-<quorum>
  for (const auto& job : jobs_) {
    partial += job->partial_aggregations();
    for (uint32_t r = 0; r < job->num_workers(); ++r) skipped += job->worker(r).counters().skipped;
  }
  return {{"allreduce", ring ? "ring" : "panama"},
          {"quorum", s.workload.spec<PanamaSpec>().quorum},
          {"partial_aggregations", partial},
          {"skipped_by_quorum", skipped},
          {"arrival_rate_per_s", cs.load > 0 ? ArrivalRateForLoad(cs, pool_hosts_, s.links.host_rate_gbps)
                                             : cs.arrival_rate_per_s},
          {"load", cs.load > 0 ? json(cs.load) : json(nullptr)},
          {"slots_per_host", cs.slots_per_host},
          {"jobs", rows},
          {"finished_jobs", jcts.size()},
          {"mean_jct_s", jcts.empty() ? 0.0 : jct_sum / static_cast<double>(jcts.size())},
          {"p50_jct_s", pct(0.5)},
          {"p99_jct_s", pct(0.99)},
          {"mean_wait_s", jcts.empty() ? 0.0 : wait_sum / static_cast<double>(jcts.size())}};
}

uint32_t PanamaJobSet::JobJid(const Scenario& s, size_t j) const {
  return rings_.empty() ? jobs_[j]->jid() : static_cast<uint32_t>(s.workload.spec<PanamaSpec>().jid + j);
}

CollectiveTable PanamaJobSet::Collectives(const Scenario& s, uint64_t& payload_delivered) const {
  const bool ring = !rings_.empty();
  CollectiveTable table(ring ? RingAllreduce::ExtraColumns() : std::vector<std::string>{});
  for (size_t i = 0; i < count(); ++i) {
    const uint32_t j = ring ? rings_[i]->AddCollectives(table, s.links.host_rate_gbps, payload_delivered)
                            : jobs_[i]->AddCollectives(table, payload_delivered);
    if (count() == 1 && cluster_.empty()) break;
    json extras = {{"jid", JobJid(s, i)},
                   {"bytes", ring ? cluster_[i].bytes : jobs_[i]->elements() * 4},
                   {"iterations_requested", table.job(j).requested}};
    if (!ring) extras["panama"] = jobs_[i]->Details(s);
    table.SetJobExtras(j, std::move(extras));
  }
  return table;
}

void PanamaJobSet::Report(const Scenario& s, bool finished, WorkloadReport& out) const {
  const bool ring = !rings_.empty(), cluster = !cluster_.empty();
  const CollectiveTable table = Collectives(s, out.payload_delivered);
  // The iterations every job finished (a finished job counts as having done them all).
  uint64_t requested = 0, completed = UINT64_MAX;
  for (uint32_t j = 0; j < table.jobs(); ++j) requested = std::max(requested, table.job(j).requested);
  for (uint32_t j = 0; j < table.jobs(); ++j) {
    const auto& t = table.job(j);
    completed = std::min(completed, t.completed == t.requested ? requested : t.completed);
  }
  out.correct = finished && table.correct();
  const uint64_t bytes = ring ? cluster_[0].bytes : jobs_[0]->elements() * 4;
  const bool scheduled = s.workload.schedule.given;
  out.workload = table.CoreJson({"panama", scheduled ? "collective" : "iteration", bytes, requested, completed},
                                out.correct);
  for (uint32_t j = 0; j < jobs_.size() && scheduled; ++j) {
    std::vector<IterationStart> starts = jobs_[j]->IterationStarts(j);
    out.iteration_starts.insert(out.iteration_starts.end(), starts.begin(), starts.end());
  }
  out.AddCsv("collectives.csv", table.Csv());
  out.rank_spans = table.rank_spans();
  json panama = json::object();
  if (!ring) {
    out.workload["check"] = jobs_[0]->Check();
    Accelerators all;
    uint64_t unresolved = 0;
    for (const auto& job : jobs_) {
      const auto m = Sorted(job->accelerators());
      all.insert(m.begin(), m.end());
      unresolved += job->quorum_unresolved();
    }
    AcceleratorTotals acc =
        SumAccelerators(jobs_[0]->fabric().topology(), all, s.workload.spec<PanamaSpec>().quorum, unresolved);
    if (table.jobs() == 1) panama = jobs_[0]->Details(s);
    panama["accelerators"] = std::move(acc.totals);
    out.AddCsv("panama_accelerators.csv", std::move(acc.csv));
    if (s.workload.spec<PanamaSpec>().window_trace) {
      std::string csv = "time_s,jid,iteration,tree,vid,cwnd,ssthresh,alpha,ecn_marked,in_flight,rtt_us\n";
      for (const auto& job : jobs_) csv += job->window_trace_rows();
      out.AddCsv("panama_windows.csv", std::move(csv));
    }
  }
  if (cluster) {
    std::string csv;
    panama["cluster"] = ClusterJson(s, table, csv);
    out.AddCsv("panama_cluster.csv", std::move(csv));
    out.summary += ClusterSummary(s, panama["cluster"], out.correct);
  } else {
    for (uint32_t j = 0; j < jobs_.size(); ++j)
      out.summary += jobs_[j]->Summary(s, table.job(j), jobs_.size() == 1 ? panama : out.workload["per_job"][j]["panama"],
                                       finished, finished && table.job(j).correct());
  }
  out.workload["panama"] = std::move(panama);
}

std::string PanamaJobSet::ClusterSummary(const Scenario& s, const json& c, bool correct) const {
  const PanamaClusterSpec& cs = s.workload.spec<PanamaSpec>().cluster;
  std::vector<std::string> models;
  for (const DnnModel& m : cs.models) models.push_back(m.name);
  return fmt::format("{} cluster: {} jobs arriving at {:g}/s ({} .. {} workers, models {}), {} finished\n"
                     "  job completion time mean {:.6f} s, p50 {:.6f}, p99 {:.6f}; mean wait for hosts {:.6f} s\n"
                     "  result: {} - every job's values checked bit for bit\n",
                     rings_.empty() ? "panama" : "ring-allreduce", count(), c["arrival_rate_per_s"].get<double>(),
                     cs.min_workers, cs.max_workers, fmt::join(models, "/"), c["finished_jobs"].get<uint64_t>(),
                     c["mean_jct_s"].get<double>(), c["p50_jct_s"].get<double>(), c["p99_jct_s"].get<double>(),
                     c["mean_wait_s"].get<double>(), VerdictWord(correct, s.workload.data));
}

}  // namespace inasim
