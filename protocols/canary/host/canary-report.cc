// Canary / static-tree results: per-iteration time and goodput (canary-fgcs24
// §5.2 figures) through the shared CollectiveTable, and under
// workload.canary / workload.static_tree the switch counters (collisions,
// stragglers, restorations), the hosts' recovery (failures, re-issues,
// fallbacks) and the peak descriptors per switch next to §3.2.2's memory model.
#include "protocols/canary/host/canary-job.h"

#include "ina/fabric.h"
#include "ina/program-counters.h"
#include "ina/units.h"
#include "protocols/canary/dataplane/canary_dataplane.h"
#include "protocols/static_tree/dataplane/static_tree_dataplane.h"

#include <fmt/format.h>

#include <algorithm>

namespace inasim {

using nlohmann::json;

namespace {

/// Bytes of one reduce packet up to Ethernet: k elements, the Canary header, UDP, IPv4.
uint64_t PacketBytes(uint32_t k) { return uint64_t{k} * 4 + 19 + 8 + 20 + 14; }

}  // namespace

CanaryHostCounters& CanaryHostCounters::operator+=(const CanaryHostCounters& c) {
  packets_sent += c.packets_sent;
  noise_delayed += c.noise_delayed;
  nic_held += c.nic_held;
  retransmit_requests += c.retransmit_requests;
  reissues += c.reissues;
  reissues_timed += c.reissues_timed;
  reissue_delay_sum_ps += c.reissue_delay_sum_ps;
  reissue_delay_max_ps = std::max(reissue_delay_max_ps, c.reissue_delay_max_ps);
  reissues_first_request += c.reissues_first_request;
  reissue_first_request_delay_max_ps = std::max(reissue_first_request_delay_max_ps, c.reissue_first_request_delay_max_ps);
  fallback_sends += c.fallback_sends;
  results_received += c.results_received;
  unicast_results += c.unicast_results;
  duplicate_results += c.duplicate_results;
  leader_packets += c.leader_packets;
  leader_stale += c.leader_stale;
  collisions_recorded += c.collisions_recorded;
  restorations_sent += c.restorations_sent;
  restorations_best_effort += c.restorations_best_effort;
  broadcasts_sent += c.broadcasts_sent;
  retransmissions += c.retransmissions;
  failures += c.failures;
  fallbacks += c.fallbacks;
  overcounts += c.overcounts;
  return *this;
}

void CanaryJob::AddCollectives(CollectiveTable& table, uint64_t& payload_delivered) const {
  const uint32_t n = num_hosts();
  table.AddJobRecords(n, records_, hosts_);  // every host ends with every element exactly once
  for (const CollectiveRecord& r : records_)
    if (r.finished()) payload_delivered += 2 * uint64_t{n} * r.bytes;
}

std::vector<IterationStart> CanaryJob::IterationStarts() const {
  return spec_.schedule.given ? schedule_->Starts(job_index_, hosts_) : std::vector<IterationStart>{};
}

CanaryHostCounters CanaryJob::HostTotals() const {
  CanaryHostCounters h;
  for (const auto& a : agents_) h += a->counters();
  return h;
}

CanaryJob::SwitchTotals CanaryJob::Switches() const {
  using CanaryStats = p4::canary::CanaryDataplane::Stats;
  using StaticTreeStats = p4::statictree::StaticTreeDataplane::Stats;
  const bool canary_mode = mode_ == InaTreeMode::kCanary;
  const topo::Topology& t = fabric_->topology();
  ProgramCounters counters = canary_mode ? ProgramCounters::Of(CanaryStats::kCounters,
                                                               {{"peak_descriptors", ProgramCounters::Shown::kCsv},
                                                                {"descriptors_left", ProgramCounters::Shown::kCsv}})
                                         : ProgramCounters::Of(StaticTreeStats::kCounters);
  SwitchTotals out;
  for (uint32_t v : reported_switches_.empty() ? switch_vertices_ : reported_switches_) {
    const p4::Dataplane* dp = fabric_->switch_node(v - t.num_hosts()).dataplane();
    uint64_t peak = 0;  // descriptors (Canary) or slots (static trees) in use at once
    if (const auto* c = canary_mode ? dynamic_cast<const p4::canary::CanaryDataplane*>(dp) : nullptr) {
      peak = c->peak_descriptors_in_use();
      counters.Add(t.node(v).name, t.node(v).tier, c->stats(), CanaryStats::kCounters,
                   {peak, c->descriptors_in_use()});
    } else if (const auto* p = canary_mode ? nullptr : dynamic_cast<const p4::statictree::StaticTreeDataplane*>(dp)) {
      peak = p->stats().peak_slots;
      counters.Add(t.node(v).name, t.node(v).tier, p->stats(), StaticTreeStats::kCounters);
    }
    if (peak > out.peak) {
      out.peak = peak;
      out.peak_switch = t.node(v).name;
    }
  }
  out.totals = counters.Sums();
  out.csv = counters.csv();
  return out;
}

json CanaryJob::MemoryModel(const Scenario& s, uint64_t peak) const {
  // canary-fgcs24 §3.2.2: bytes of descriptors b(2d(l+t)+r), with b the host
  // rate, d the network diameter in hops, l the one-hop latency (propagation
  // + one packet's serialisation + a pipeline pass), t the switch timeout and
  // r the leader's time (0: hosts compute instantly here).
  const topo::Topology& t = fabric_->topology();
  const double rate = s.links.host_rate_gbps * 1e9;
  const uint64_t wire = PacketBytes(k_) + s.links.wire_overhead_bytes;
  uint32_t max_tier = 1;
  for (uint32_t v = t.num_hosts(); v < t.num_vertices(); ++v) max_tier = std::max<uint32_t>(max_tier, t.node(v).tier);
  const uint32_t d = 2 * max_tier;
  const double l_s = PsToS(std::max(s.links.host_delay_ps, s.links.fabric_delay_ps)) + wire * 8.0 / rate +
                     PsToS(spec_.spec<CanarySpec>().pass_latency_ps);
  const double t_s = PsToS(spec_.spec<CanarySpec>().timeout_ps);
  const double model_bytes = rate / 8.0 * (2.0 * d * (l_s + t_s));
  const double model_descriptors = model_bytes / static_cast<double>(PacketBytes(k_));
  return {{"formula", "b(2d(l+t)+r)  (canary-fgcs24 3.2.2)"},
          {"b_bytes_per_s", rate / 8.0},
          {"d_hops", d},
          {"l_s", l_s},
          {"t_s", t_s},
          {"r_s", 0.0},
          {"bytes", model_bytes},
          {"descriptors", model_descriptors},
          {"measured_peak_descriptors", peak},
          {"measured_over_model", model_descriptors > 0 ? peak / model_descriptors : 0.0}};
}

json CanaryJob::Details(const Scenario& s, const CanaryHostCounters& h, uint64_t blocks,
                        std::string& switches_csv) const {
  const bool canary_mode = mode_ == InaTreeMode::kCanary;
  const uint64_t wire = PacketBytes(k_) + s.links.wire_overhead_bytes;
  const SwitchTotals sw = Switches();
  switches_csv = sw.csv;
  const uint64_t descriptor_bytes = uint64_t{k_} * 4 + 32;  // accumulator + id, counters, leader, children, time
  json w = {{"elements", layout_->elements()[0]},  // with a schedule: the first collective's
            {"elements_per_packet", k_},
            {"blocks_per_iteration", blocks_per_iteration()},
            {"window_blocks", window_},
            {"nic_queue_bytes", nic_queue_bytes_},
            {"packet_wire_bytes", wire},
            {"goodput_fraction_from_framing", static_cast<double>(k_) * 4 / static_cast<double>(wire)},
            {"send_noise", {{"probability", send_noise().probability}, {"delay_s", PsToS(send_noise().delay_ps)}}},
            {"hosts", {{"packets_sent", h.packets_sent},
                       {"noise_delayed_packets", h.noise_delayed},
                       {"nic_held_blocks", h.nic_held},
                       {"results_received", h.results_received},
                       {"duplicate_results", h.duplicate_results}}},
            {"switches", sw.totals},
            {"peak_descriptors", {{"max_per_switch", sw.peak}, {"switch", sw.peak_switch},
                                  {"bytes", sw.peak * descriptor_bytes}}}};
  if (!canary_mode) {
    w["trees"] = num_trees_;
    w["tree_roots"] = tree_roots_;
    return w;
  }
  const CanarySpec& c = spec_.spec<CanarySpec>();
  w["timeout_s"] = PsToS(c.timeout_ps);
  w["timeout_mode"] = c.timeout_mode == CanaryTimeoutMode::kExact ? "exact" : "clock_scan";
  w["table_size"] = c.table_size;
  // §5.2.4: with "per_job" each job's blocks index only its own share.
  w["table_partition"] = c.partition_per_job ? "per_job" : "shared";
  w["table_share"] = table_share();
  // canary-fgcs24 §6 "Retransmission delays": a lost packet's block is
  // re-issued at most 3 RTT after it was sent, with a 2 RTT timer.
  w["leader_rtt_s"] = PsToS(leader_rtt_ps_);
  w["retransmit_timeout_s"] = PsToS(retransmit_timeout_ps_);
  w["hosts"].update({{"retransmit_requests", h.retransmit_requests},
                     {"reissues", h.reissues},
                     {"reissues_timed", h.reissues_timed},
                     {"reissue_delay_mean_s", h.reissues_timed ? PsToS(h.reissue_delay_sum_ps) / h.reissues_timed : 0.0},
                     {"reissue_delay_max_s", PsToS(h.reissue_delay_max_ps)},
                     {"reissues_first_request", h.reissues_first_request},
                     {"reissue_first_request_delay_max_s", PsToS(h.reissue_first_request_delay_max_ps)},
                     {"fallback_sends", h.fallback_sends},
                     {"unicast_results", h.unicast_results}});
  w["leaders"] = {{"packets_received", h.leader_packets},
                  {"packets_per_block", blocks ? static_cast<double>(h.leader_packets) / blocks : 0.0},
                  {"stale_packets", h.leader_stale},
                  {"broadcasts", h.broadcasts_sent},
                  {"collisions_recorded", h.collisions_recorded},
                  {"restorations_sent", h.restorations_sent},
                  {"restorations_best_effort", h.restorations_best_effort},
                  {"retransmissions", h.retransmissions},
                  {"failures", h.failures},
                  {"fallbacks", h.fallbacks},
                  {"overcounts", h.overcounts}};
  w["memory_model"] = MemoryModel(s, sw.peak);
  return w;
}

std::string CanaryJob::Summary(const Scenario& s, const CollectiveTable& table, const json& details,
                               const CanaryHostCounters& h, bool finished, bool correct) const {
  const bool canary_mode = mode_ == InaTreeMode::kCanary;
  const uint64_t done = table.completed();
  std::string summary =
      fmt::format("{} allreduce of {} (int32) over {} hosts, {} elements/packet, window {} blocks{}: ", protocol(),
                  HumanBytes(spec_.bytes), num_hosts(), k_, window_,
                  canary_mode ? fmt::format(", timeout {}", HumanTime(PsToS(spec_.spec<CanarySpec>().timeout_ps)))
                              : fmt::format(", {} tree(s)", num_trees_));
  if (done)
    summary += fmt::format("{} per collective, {:.2f} Gb/s goodput (x{} iterations)\n",
                           HumanTime(table.mean_duration_s()), table.goodput_gbps(), done);
  else
    summary += "no collective finished\n";
  if (canary_mode) {
    const json& sw = details["switches"];
    const json& model = details["memory_model"];
    summary += fmt::format("  switches: {} collisions, {} stragglers, {} timeouts, {} restorations; leaders got {:.2f} "
                           "packets per block\n",
                           sw["collisions"].get<uint64_t>(), sw["stragglers"].get<uint64_t>(),
                           sw["timeouts"].get<uint64_t>(), sw["restorations"].get<uint64_t>(),
                           details["leaders"]["packets_per_block"].get<double>());
    summary += fmt::format("  recovery: {} retransmission requests, {} resent results, {} failures/re-issues, {} "
                           "fallbacks\n",
                           h.retransmit_requests, h.retransmissions, h.failures, h.fallbacks);
    summary += fmt::format("  peak descriptors per switch {} ({}); memory model b(2d(l+t)+r) = {:.0f} descriptors "
                           "({})\n",
                           details["peak_descriptors"]["max_per_switch"].get<uint64_t>(),
                           details["peak_descriptors"]["switch"].get<std::string>(),
                           model["descriptors"].get<double>(),
                           HumanBytes(static_cast<uint64_t>(model["bytes"].get<double>())));
  }
  summary += fmt::format("  result: {} - {} elements checked against the exact sum, {} mismatches{}\n",
                         VerdictWord(correct, s.workload.data), table.elements_checked(), table.mismatches(),
                         finished ? "" : fmt::format(" (only {} of {} iterations finished by the time limit)",
                                                     done, records_.size()));
  return summary;
}

}  // namespace inasim
