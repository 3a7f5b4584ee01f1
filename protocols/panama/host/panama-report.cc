// PANAMA results: per-iteration aggregation time and goodput, the bit-exact
// checks, the workers' congestion windows (Fig. 5: marked results, wnd_cap
// hits, mean cwnd, timeouts) and the accelerators' counters per switch.
#include "protocols/panama/host/panama-job.h"

#include "ina/fabric.h"
#include "ina/units.h"
#include "protocols/panama/dataplane/panama_dataplane.h"

#include <fmt/format.h>

#include <algorithm>

namespace inasim {

using nlohmann::json;
namespace pn = p4::panama;

void PanamaJob::Report(const Scenario& s, bool finished, WorkloadReport& out) const {
  // The report's parts by the names this function has always used.
  nlohmann::json& w = out.workload;
  std::vector<std::string>& csv_names = out.csv_names;
  std::vector<std::string>& csv_texts = out.csv_texts;
  std::string& summary = out.summary;
  bool& correct = out.correct;
  uint64_t& payload_delivered = out.payload_delivered;
  const uint32_t n = num_workers();
  const uint64_t bytes = elements_ * 4;
  const uint32_t k = spec_.elements_per_packet;
  // PANAMA header over UDP/IPv4/Ethernet (protocols/panama/dataplane/README.md "Byte layout").
  const uint64_t packet_bytes = uint64_t{k} * 4 + 14 + 8 + 20 + 14;
  const uint64_t wire = packet_bytes + s.links.wire_overhead_bytes;

  json colls = json::array();
  std::string csv = "iteration,start_s,end_s,duration_s,goodput_gbps,correct,elements_checked,mismatches\n";
  bool all_ok = true;
  uint64_t checked = 0, mism = 0, done_its = 0;
  double dur_sum = 0;
  for (const PanamaIterationRecord& r : records_) {
    checked += r.elements_checked;
    mism += r.mismatches;
    if (!r.finished()) {
      all_ok = false;
      continue;
    }
    ++done_its;
    const uint64_t start = *std::min_element(r.start_ps.begin(), r.start_ps.end());
    const uint64_t end = *std::max_element(r.end_ps.begin(), r.end_ps.end());
    const double dur = PsToS(end - start);
    const double goodput = static_cast<double>(bytes) * 8.0 / dur / 1e9;
    // Every worker holds every element exactly once: n * E checks.
    const bool ok = r.mismatches == 0 && r.elements_checked == uint64_t{n} * elements_;
    all_ok &= ok;
    dur_sum += dur;
    colls.push_back({{"iteration", r.iteration}, {"start_s", PsToS(start)}, {"end_s", PsToS(end)},
                     {"duration_s", dur}, {"goodput_gbps", goodput}, {"correct", ok},
                     {"elements_checked", r.elements_checked}, {"mismatches", r.mismatches}});
    csv += fmt::format("{},{:.12f},{:.12f},{:.12f},{:.6f},{},{},{}\n", r.iteration, PsToS(start), PsToS(end), dur,
                       goodput, ok ? 1 : 0, r.elements_checked, r.mismatches);
    payload_delivered += 2 * uint64_t{n} * bytes;
  }
  correct = finished && all_ok && done_its == records_.size();
  const double mean = done_its ? dur_sum / done_its : 0.0;

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

  const topo::Topology& t = fabric_->topology();
  std::string sw_csv =
      "switch,tier,buffered,aggregations,result_packets,forwarded,buffer_overflow_dropped,vid_mismatch_dropped,"
      "vids_skipped,length_mismatch_dropped,fin_resets,own_wnd_cap\n";
  pn::PanamaDataplane::Stats tot;
  std::vector<uint32_t> vertices;
  for (const auto& [v, acc] : accelerators_) vertices.push_back(v);
  std::sort(vertices.begin(), vertices.end());
  for (uint32_t v : vertices) {
    const pn::PanamaDataplane* acc = accelerators_.at(v);
    const auto& st = acc->stats();
    tot.buffered += st.buffered;
    tot.aggregations += st.aggregations;
    tot.partial_aggregations += st.partial_aggregations;
    tot.result_packets += st.result_packets;
    tot.forwarded += st.forwarded;
    tot.buffer_overflow_dropped += st.buffer_overflow_dropped;
    tot.vid_mismatch_dropped += st.vid_mismatch_dropped;
    tot.vids_skipped += st.vids_skipped;
    tot.length_mismatch_dropped += st.length_mismatch_dropped;
    tot.fin_resets += st.fin_resets;
    tot.malformed_dropped += st.malformed_dropped;
    sw_csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", t.node(v).name, t.node(v).tier, st.buffered,
                          st.aggregations, st.result_packets, st.forwarded, st.buffer_overflow_dropped,
                          st.vid_mismatch_dropped, st.vids_skipped, st.length_mismatch_dropped, st.fin_resets,
                          acc->OwnWndCap());
  }
  json roots = json::array();
  for (const auto& tree : trees_) roots.push_back(t.node(tree.root).name);

  w = {{"type", "allreduce"},
       {"protocol", "panama"},
       {"ranks", n},
       {"bytes", bytes},
       {"dtype", "float32"},
       {"elements", elements_},
       {"elements_per_packet", k},
       {"packets_per_iteration", packets_per_iteration_},
       {"trees", trees_.size()},
       {"tree_roots", roots},
       {"congestion_control", spec_.congestion_control},
       {"float_mode", spec_.ieee_float ? "ieee" : "fpga"},
       {"check", spec_.quorum < 1 ? "values: each partial sum against the adder order over a set of senders the quorum "
                                    "allows, found from the hosts' sends, not the switches' record"
                 : data_.front().exact_in_float() ? DataCheckDescription(data_.front().pattern())
                                                  : "values: against the accelerators' adder order over per-rank random "
                                                    "float32 data, bit for bit"},
       {"packet_wire_bytes", wire},
       {"goodput_fraction_from_framing", static_cast<double>(k) * 4 / static_cast<double>(wire)},
       {"iterations_requested", records_.size()},
       {"iterations_completed", done_its},
       {"mean_duration_s", mean},
       {"goodput_gbps", mean > 0 ? static_cast<double>(bytes) * 8.0 / mean / 1e9 : 0.0},
       {"elements_checked", checked},
       {"mismatches", mism},
       {"correct", correct},
       {"collectives", colls},
       {"workers", {{"packets_sent", c.packets_sent},
                    {"results", c.results},
                    {"results_ecn_marked", c.results_marked},
                    {"unexpected_results", c.unexpected_results},
                    {"timeouts", c.timeouts},
                    {"skipped_by_quorum", c.skipped},
                    {"wnd_cap_hits", c.cap_hits},
                    {"min_wnd_cap", c.min_wnd_cap},
                    {"mean_cwnd", c.results ? c.cwnd_sum / static_cast<double>(c.results) : 0.0},
                    {"per_worker", per_worker}}},
       {"accelerators", {{"switches", vertices.size()},
                         {"buffered", tot.buffered},
                         {"aggregations", tot.aggregations},
                         {"quorum", spec_.quorum},
                         {"quorum_unresolved_results", quorum_unresolved_},
                         {"partial_aggregations", tot.partial_aggregations},
                         {"result_packets", tot.result_packets},
                         {"forwarded", tot.forwarded},
                         {"buffer_overflow_dropped", tot.buffer_overflow_dropped},
                         {"vid_mismatch_dropped", tot.vid_mismatch_dropped},
                         {"vids_skipped", tot.vids_skipped},
                         {"length_mismatch_dropped", tot.length_mismatch_dropped},
                         {"malformed_dropped", tot.malformed_dropped},
                         {"fin_resets", tot.fin_resets}}}};
  csv_names.push_back("collectives.csv");
  csv_texts.push_back(csv);
  csv_names.push_back("panama_accelerators.csv");
  csv_texts.push_back(sw_csv);

  summary += fmt::format("panama allreduce of {} (float32) over {} workers, {} tree(s), {} values/packet, {}: ",
                         HumanBytes(bytes), n, trees_.size(), k,
                         spec_.congestion_control ? "Fig. 5 congestion control"
                                                  : fmt::format("fixed window {}", spec_.fixed_window));
  if (done_its)
    summary += fmt::format("{} per collective, {:.2f} Gb/s goodput (x{} iterations)\n", HumanTime(mean),
                           static_cast<double>(bytes) * 8.0 / mean / 1e9, done_its);
  else
    summary += "no collective finished\n";
  summary += fmt::format("  windows: {}{} of {} results ECN-marked, {} wnd_cap hits, {} timeouts; "
                         "accelerators: {} aggregations, {} overflow / {} VID drops\n",
                         spec_.congestion_control
                             ? fmt::format("{:.1f} mean cwnd, ", c.results ? c.cwnd_sum / static_cast<double>(c.results) : 0.0)
                             : std::string(),
                         c.results_marked, c.results, c.cap_hits, c.timeouts, tot.aggregations,
                         tot.buffer_overflow_dropped, tot.vid_mismatch_dropped);
  summary += fmt::format("  result: {} - {} elements checked ({}), {} mismatches{}\n", VerdictWord(correct, s.workload.data),
                         checked, data_.front().exact_in_float() ? "against the exact sum" : "against the accelerators' adder order",
                         mism,
                         finished ? "" : fmt::format(" (only {} of {} iterations finished by the time limit{})", done_its,
                                                     records_.size(),
                                                     c.timeouts ? fmt::format("; {} tree timeouts: packets were lost",
                                                                              c.timeouts)
                                                                : ""));
}

}  // namespace inasim
