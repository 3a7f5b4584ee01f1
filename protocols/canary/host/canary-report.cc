// Canary / static-tree results: per-iteration time and goodput (canary-fgcs24
// §5.2 figures), exact-sum checks, the switch counters (collisions,
// stragglers, restorations), the hosts' recovery (failures, re-issues,
// fallbacks) and the peak descriptors per switch next to §3.2.2's memory model.
#include "protocols/canary/host/canary-job.h"

#include "ina/fabric.h"
#include "ina/units.h"
#include "protocols/canary/dataplane/canary_dataplane.h"
#include "protocols/static_tree/dataplane/static_tree_dataplane.h"

#include <fmt/format.h>

#include <algorithm>

namespace inasim {

using nlohmann::json;

void CanaryJob::Report(const Scenario& s, bool finished, WorkloadReport& out) const {
  // The report's parts by the names this function has always used.
  nlohmann::json& w = out.workload;
  std::vector<std::string>& csv_names = out.csv_names;
  std::vector<std::string>& csv_texts = out.csv_texts;
  std::string& summary = out.summary;
  bool& correct = out.correct;
  uint64_t& payload_delivered = out.payload_delivered;
  const uint32_t n = num_hosts();
  const bool canary_mode = mode_ == InaTreeMode::kCanary;
  const char* proto = canary_mode ? "canary" : "static_tree";
  const double rate = s.links.host_rate_gbps * 1e9;
  const uint64_t packet_bytes = uint64_t{k_} * 4 + 19 + 8 + 20 + 14;  // Canary header over UDP/IPv4/Ethernet
  const uint64_t wire = packet_bytes + s.links.wire_overhead_bytes;
  const double goodput_fraction = static_cast<double>(k_) * 4 / static_cast<double>(wire);

  json colls = json::array();
  std::string csv = "iteration,start_s,end_s,duration_s,goodput_gbps,correct,elements_checked,mismatches\n";
  bool all_ok = true;
  uint64_t checked = 0, mism = 0, done_its = 0;
  double dur_sum = 0;
  for (const CanaryIterationRecord& r : records_) {
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
    const double goodput = static_cast<double>(spec_.bytes) * 8.0 / dur / 1e9;
    // Every host ends with every element exactly once: n * E checks.
    const bool ok = r.mismatches == 0 && r.elements_checked == uint64_t{n} * elements_;
    all_ok &= ok;
    dur_sum += dur;
    colls.push_back({{"iteration", r.iteration}, {"start_s", PsToS(start)}, {"end_s", PsToS(end)},
                     {"duration_s", dur}, {"goodput_gbps", goodput}, {"correct", ok},
                     {"elements_checked", r.elements_checked}, {"mismatches", r.mismatches}});
    csv += fmt::format("{},{:.12f},{:.12f},{:.12f},{:.6f},{},{},{}\n", r.iteration, PsToS(start), PsToS(end), dur,
                       goodput, ok ? 1 : 0, r.elements_checked, r.mismatches);
    payload_delivered += 2 * uint64_t{n} * spec_.bytes;
  }
  correct = finished && all_ok && done_its == records_.size();
  const double mean = done_its ? dur_sum / done_its : 0.0;

  CanaryHostCounters h;
  for (const auto& a : agents_) {
    const CanaryHostCounters& c = a->counters();
    h.packets_sent += c.packets_sent;
    h.noise_delayed += c.noise_delayed;
    h.nic_held += c.nic_held;
    h.retransmit_requests += c.retransmit_requests;
    h.reissues += c.reissues;
    h.fallback_sends += c.fallback_sends;
    h.results_received += c.results_received;
    h.unicast_results += c.unicast_results;
    h.duplicate_results += c.duplicate_results;
    h.leader_packets += c.leader_packets;
    h.leader_stale += c.leader_stale;
    h.collisions_recorded += c.collisions_recorded;
    h.restorations_sent += c.restorations_sent;
    h.restorations_best_effort += c.restorations_best_effort;
    h.broadcasts_sent += c.broadcasts_sent;
    h.retransmissions += c.retransmissions;
    h.failures += c.failures;
    h.fallbacks += c.fallbacks;
    h.overcounts += c.overcounts;
  }

  const topo::Topology& t = fabric_->topology();
  const uint32_t nh = t.num_hosts();
  json sw_json = json::array();
  std::string sw_csv;
  uint64_t peak_max = 0;
  std::string peak_switch;
  json switches_total;
  const std::vector<uint32_t>& reported = reported_switches_.empty() ? switch_vertices_ : reported_switches_;
  if (canary_mode) {
    sw_csv = "switch,tier,allocated,aggregated,completed,timeouts,stragglers,collisions,bypassed,broadcasts,"
             "broadcast_misses,restorations,peak_descriptors,descriptors_left\n";
    p4::canary::CanaryDataplane::Stats tot;
    for (uint32_t v : reported) {
      const auto* prog = dynamic_cast<const p4::canary::CanaryDataplane*>(fabric_->switch_node(v - nh).dataplane());
      if (!prog) continue;
      const auto& st = prog->stats();
      tot.allocated += st.allocated;
      tot.aggregated += st.aggregated;
      tot.completed += st.completed;
      tot.timeouts += st.timeouts;
      tot.stragglers += st.stragglers;
      tot.collisions += st.collisions;
      tot.bypassed += st.bypassed;
      tot.broadcasts += st.broadcasts;
      tot.broadcast_misses += st.broadcast_misses;
      tot.restorations += st.restorations;
      tot.malformed_dropped += st.malformed_dropped;
      if (prog->peak_descriptors_in_use() > peak_max) {
        peak_max = prog->peak_descriptors_in_use();
        peak_switch = t.node(v).name;
      }
      sw_csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", t.node(v).name, t.node(v).tier,
                            st.allocated, st.aggregated, st.completed, st.timeouts, st.stragglers, st.collisions,
                            st.bypassed, st.broadcasts, st.broadcast_misses, st.restorations, prog->peak_descriptors_in_use(),
                            prog->descriptors_in_use());
    }
    switches_total = {{"allocated", tot.allocated},      {"aggregated", tot.aggregated},
                      {"completed", tot.completed},      {"timeouts", tot.timeouts},
                      {"stragglers", tot.stragglers},    {"collisions", tot.collisions},
                      {"bypassed", tot.bypassed},        {"broadcasts", tot.broadcasts},
                      {"broadcast_misses", tot.broadcast_misses}, {"restorations", tot.restorations},
                      {"malformed_dropped", tot.malformed_dropped}};
  } else {
    sw_csv = "switch,tier,allocated,aggregated,sent_up,results,broadcasts,duplicates,slot_conflicts,peak_slots\n";
    uint64_t conflicts = 0, dups = 0;
    for (uint32_t v : reported) {
      const auto* prog =
          dynamic_cast<const p4::statictree::StaticTreeDataplane*>(fabric_->switch_node(v - nh).dataplane());
      if (!prog) continue;
      const auto& st = prog->stats();
      conflicts += st.slot_conflicts;
      dups += st.duplicates;
      if (st.peak_slots > peak_max) {
        peak_max = st.peak_slots;
        peak_switch = t.node(v).name;
      }
      sw_csv += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", t.node(v).name, t.node(v).tier, st.allocated,
                            st.aggregated, st.sent_up, st.results, st.broadcasts, st.duplicates, st.slot_conflicts,
                            st.peak_slots);
    }
    switches_total = {{"slot_conflicts", conflicts}, {"duplicates", dups}};
  }

  // canary-fgcs24 §3.2.2: bytes of descriptors b(2d(l+t)+r), with b the host
  // rate, d the network diameter in hops, l the one-hop latency (propagation
  // + one packet's serialisation + a pipeline pass), t the switch timeout and
  // r the leader's time (0: hosts compute instantly here).
  uint32_t max_tier = 1;
  for (uint32_t v = nh; v < t.num_vertices(); ++v) max_tier = std::max<uint32_t>(max_tier, t.node(v).tier);
  const uint32_t d = 2 * max_tier;
  const double l_s = PsToS(std::max(s.links.host_delay_ps, s.links.fabric_delay_ps)) + wire * 8.0 / rate +
                     PsToS(canary_mode ? spec_.spec<CanarySpec>().pass_latency_ps : spec_.spec<StaticTreeSpec>().pass_latency_ps);
  const double t_s = canary_mode ? PsToS(spec_.spec<CanarySpec>().timeout_ps) : 0.0;
  const double model_bytes = rate / 8.0 * (2.0 * d * (l_s + t_s));
  const double model_descriptors = model_bytes / static_cast<double>(packet_bytes);
  const uint64_t descriptor_bytes = uint64_t{k_} * 4 + 32;  // accumulator + id, counters, leader, children, time

  w = {{"type", "allreduce"},
       {"protocol", proto},
       {"ranks", n},
       {"bytes", spec_.bytes},
       {"elements", elements_},
       {"elements_per_packet", k_},
       {"blocks_per_iteration", blocks_},
       {"window_blocks", window_},
       {"nic_queue_bytes", nic_queue_bytes_},
       {"packet_wire_bytes", wire},
       {"goodput_fraction_from_framing", goodput_fraction},
       {"iterations_requested", records_.size()},
       {"iterations_completed", done_its},
       {"mean_duration_s", mean},
       {"goodput_gbps", mean > 0 ? static_cast<double>(spec_.bytes) * 8.0 / mean / 1e9 : 0.0},
       {"elements_checked", checked},
       {"mismatches", mism},
       {"correct", correct},
       {"collectives", colls},
       {"send_noise", {{"probability", spec_.spec<SendNoiseSpec>().probability},
                       {"delay_s", PsToS(spec_.spec<SendNoiseSpec>().delay_ps)}}},
       {"hosts", {{"packets_sent", h.packets_sent},
                  {"noise_delayed_packets", h.noise_delayed},
                  {"nic_held_blocks", h.nic_held},
                  {"results_received", h.results_received},
                  {"duplicate_results", h.duplicate_results}}},
       {"switches", switches_total},
       {"peak_descriptors", {{"max_per_switch", peak_max}, {"switch", peak_switch},
                             {"bytes", peak_max * descriptor_bytes}}}};
  if (canary_mode) {
    const CanarySpec& c = spec_.spec<CanarySpec>();
    w["timeout_s"] = PsToS(c.timeout_ps);
    w["timeout_mode"] = c.timeout_mode == CanaryTimeoutMode::kExact ? "exact" : "clock_scan";
    w["table_size"] = c.table_size;
    // §5.2.4: with "per_job" each job's blocks index only its own share.
    w["table_partition"] = c.partition_per_job ? "per_job" : "shared";
    w["table_share"] = table_share();
    w["hosts"]["retransmit_requests"] = h.retransmit_requests;
    w["hosts"]["reissues"] = h.reissues;
    w["hosts"]["fallback_sends"] = h.fallback_sends;
    w["hosts"]["unicast_results"] = h.unicast_results;
    w["leaders"] = {{"packets_received", h.leader_packets},
                    {"packets_per_block", total_blocks() ? static_cast<double>(h.leader_packets) / total_blocks() : 0.0},
                    {"stale_packets", h.leader_stale},
                    {"broadcasts", h.broadcasts_sent},
                    {"collisions_recorded", h.collisions_recorded},
                    {"restorations_sent", h.restorations_sent},
                    {"restorations_best_effort", h.restorations_best_effort},
                    {"retransmissions", h.retransmissions},
                    {"failures", h.failures},
                    {"fallbacks", h.fallbacks},
                    {"overcounts", h.overcounts}};
    w["memory_model"] = {{"formula", "b(2d(l+t)+r)  (canary-fgcs24 3.2.2)"},
                         {"b_bytes_per_s", rate / 8.0},
                         {"d_hops", d},
                         {"l_s", l_s},
                         {"t_s", t_s},
                         {"r_s", 0.0},
                         {"bytes", model_bytes},
                         {"descriptors", model_descriptors},
                         {"measured_peak_descriptors", peak_max},
                         {"measured_over_model", model_descriptors > 0 ? peak_max / model_descriptors : 0.0}};
  } else {
    w["trees"] = num_trees_;
    w["tree_roots"] = tree_roots_;
  }
  csv_names.push_back("collectives.csv");
  csv_texts.push_back(csv);
  csv_names.push_back(canary_mode ? "canary_switches.csv" : "static_tree_switches.csv");
  csv_texts.push_back(sw_csv);

  summary += fmt::format("{} allreduce of {} (int32) over {} hosts, {} elements/packet, window {} blocks{}: ", proto,
                         HumanBytes(spec_.bytes), n, k_, window_,
                         canary_mode ? fmt::format(", timeout {}", HumanTime(PsToS(spec_.spec<CanarySpec>().timeout_ps)))
                                     : fmt::format(", {} tree(s)", num_trees_));
  if (done_its)
    summary += fmt::format("{} per collective, {:.2f} Gb/s goodput (x{} iterations)\n", HumanTime(mean),
                           static_cast<double>(spec_.bytes) * 8.0 / mean / 1e9, done_its);
  else
    summary += "no collective finished\n";
  if (canary_mode) {
    summary += fmt::format("  switches: {} collisions, {} stragglers, {} timeouts, {} restorations; leaders got {:.2f} "
                           "packets per block\n",
                           switches_total["collisions"].get<uint64_t>(), switches_total["stragglers"].get<uint64_t>(),
                           switches_total["timeouts"].get<uint64_t>(), switches_total["restorations"].get<uint64_t>(),
                           total_blocks() ? static_cast<double>(h.leader_packets) / total_blocks() : 0.0);
    summary += fmt::format("  recovery: {} retransmission requests, {} resent results, {} failures/re-issues, {} "
                           "fallbacks\n",
                           h.retransmit_requests, h.retransmissions, h.failures, h.fallbacks);
    summary += fmt::format("  peak descriptors per switch {} ({}); memory model b(2d(l+t)+r) = {:.0f} descriptors "
                           "({})\n",
                           peak_max, peak_switch, model_descriptors, HumanBytes(static_cast<uint64_t>(model_bytes)));
  }
  summary += fmt::format("  result: {} - {} elements checked against the exact sum, {} mismatches{}\n",
                         VerdictWord(correct, s.workload.data), checked, mism,
                         finished ? "" : fmt::format(" (only {} of {} iterations finished by the time limit)",
                                                     done_its, records_.size()));
}

}  // namespace inasim
