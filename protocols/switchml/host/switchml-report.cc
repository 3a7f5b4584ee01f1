// SwitchML results: one collective per tensor through the shared
// CollectiveTable, and under workload.switchml the paper's §6 metrics (TAT,
// ATE/s against the framing bound), the quantization error against the
// paper's bound and the dataplane counters.
#include "protocols/switchml/host/switchml-job.h"
#include "protocols/switchml/host/switchml-ps.h"

#include "ina/fabric.h"
#include "ina/units.h"
#include "protocols/switchml/dataplane/hierarchy.h"
#include "protocols/switchml/dataplane/switchml_dataplane.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace inasim {

using nlohmann::json;

namespace {

double Percentile(std::vector<uint64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(q * (v.size() - 1) + 0.5);
  return static_cast<double>(v[std::min(i, v.size() - 1)]);
}

/// Bytes of one packet of k elements on the wire: the switchml header (10),
/// UDP/IPv4/Ethernet headers, preamble, FCS and gap. RDMA: a message's mean,
/// every packet with its BTH (12) and ICRC (4), the first with a RETH (16),
/// the last with an immediate (4) (docs/research/switchml-rdma.md §1).
double WireBytes(const SwitchMLSpec& spec, const Scenario& s) {
  const uint64_t k = spec.elements_per_packet;
  if (spec.backend != SwitchMLBackend::kRdma) return static_cast<double>(k * 4 + 10 + 8 + 20 + 14 + s.links.wire_overhead_bytes);
  const uint64_t ppm = spec.rdma_message_packets;
  const uint64_t message = ppm * (k * 4 + 12 + 4 + 8 + 20 + 14 + s.links.wire_overhead_bytes) + 16 + 4;
  return static_cast<double>(message) / static_cast<double>(ppm);
}

}  // namespace

/// Over the finished tensors: the counters, the worst quantization errors,
/// and the TAT and ATE/s of the measured (non-warm-up) ones.
struct SwitchMLJob::TensorTotals {
  uint64_t timeouts = 0, duplicates = 0;
  double max_err = 0, max_paper = 0, max_impl = 0;
  double tat_sum = 0, ate_sum = 0;
  uint32_t measured = 0;
  double tat_mean() const { return measured ? tat_sum / measured : 0.0; }
  double ate_mean() const { return measured ? ate_sum / measured : 0.0; }
};

void SwitchMLJob::AddTensors(const Scenario& s, CollectiveTable& table, TensorTotals& t) const {
  const uint32_t n = num_workers();
  const double rate = s.links.host_rate_gbps * 1e9;
  const double wire = WireBytes(spec_, s);
  table.SetJobHosts(table.AddJob(n, records_.size()), worker_hosts_);
  for (const SwitchMLTensorRecord& r : records_) {
    if (!r.finished()) {
      table.AddUnfinished(0, r.elements_checked, r.mismatches);
      continue;
    }
    // TAT (paper §6): per worker, from it being ready to it holding the whole result.
    double tat_sum_w = 0, tat_max = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const double tat_w = PsToS(r.end_ps[i] - r.start_ps[i]);
      tat_sum_w += tat_w;
      tat_max = std::max(tat_max, tat_w);
    }
    const double tat = tat_sum_w / n;
    const double ate = static_cast<double>(r.elements) / tat;
    const double framing_bound = static_cast<double>(r.packets_per_worker) * wire * 8.0 / rate;
    CollectiveRow row = CollectiveRow::Of(r, uint64_t{n} * r.elements);
    row.warmup = r.sequence < spec_.warmup_tensors;
    t.timeouts += r.timeouts;
    t.duplicates += r.duplicates;
    t.max_err = std::max(t.max_err, r.max_abs_error);
    t.max_paper = std::max(t.max_paper, r.max_paper_bound_ratio);
    t.max_impl = std::max(t.max_impl, r.max_impl_bound_ratio);
    if (!row.warmup) {
      t.tat_sum += tat;
      t.ate_sum += ate;
      ++t.measured;
    }
    RowExtras x;
    x.Add("sequence", uint64_t{r.sequence}).Add("tensor", uint64_t{r.tensor}).Add("bytes", r.bytes)
        .Add("elements", r.elements).Add("tat_mean_s", tat, "{:.12f}").Add("tat_max_s", tat_max, "{:.12f}")
        .Add("ate_per_s", ate, "{:.6e}").Add("framing_bound_s", framing_bound, "{:.12f}")
        .Add("bound_ratio", framing_bound / tat, "{:.6f}")
        .Add("ring_bound_s", 2.0 * (n - 1) / n * static_cast<double>(r.bytes) * 8.0 / rate, "{:.12f}")
        .Add("max_abs_error", r.max_abs_error, "{:.9e}").Add("paper_bound_ratio", r.max_paper_bound_ratio, "{:.6f}")
        .Add("impl_bound_ratio", r.max_impl_bound_ratio, "{:.6f}").Add("packets_sent", r.packets_sent)
        .Add("timeouts", r.timeouts).Add("duplicates", r.duplicates)
        .Add("rtt_mean_us", r.rtt_count ? r.rtt_sum_ps / r.rtt_count * 1e-6 : 0.0, "{:.6f}")
        .Add("rtt_max_us", r.rtt_max_ps * 1e-6, "{:.6f}").Add("warmup", row.warmup)
        .JsonOnly("wrong_job", r.wrong_job);
    table.Add(row, std::move(x));
  }
}

uint32_t SwitchMLJob::IterationsCompleted() const {
  uint32_t done = 0;
  for (size_t i = 0; i < records_.size();) {
    size_t j = i;
    bool all = true;
    for (; j < records_.size() && records_[j].iteration == records_[i].iteration; ++j) all &= records_[j].finished();
    done += all ? 1 : 0;
    i = j;
  }
  return done;
}

json SwitchMLJob::Programs() const {
  // One program per tree switch, counters summed per level.
  json programs = json::array();
  for (const auto& [v, level] : switches_) {
    const p4::Dataplane* dp = dataplane(v);
    const p4::switchml::SwitchMLDataplane* prog = nullptr;
    json j = {{"switch", fabric_->topology().node(v).name}, {"level", level}, {"root", v == tree_.root}};
    if (const auto* h = dynamic_cast<const p4::switchml::HierarchicalSwitchML*>(dp)) {
      prog = &h->level();
      j["partials_up"] = h->stats().partials_up;
      j["retransmissions_up"] = h->stats().retransmissions_up;
      j["results_down"] = h->stats().results_down;
    } else {
      prog = dynamic_cast<const p4::switchml::SwitchMLDataplane*>(dp);
    }
    if (prog) {
      const auto& st = prog->stats();
      j["workers"] = prog->config().workers.size();
      j["processed"] = st.processed;
      j["consumed"] = st.consumed;
      j["dropped_duplicates"] = st.dropped;
      j["broadcasts"] = st.broadcasts;
      j["retransmits"] = st.retransmits;
      j["copies_sent"] = st.copies_sent;
      j["forwarded"] = st.forwarded;
      j["malformed_dropped"] = st.malformed_dropped;
      if (rdma()) j["rdma_sequence_drops"] = st.rdma_sequence_drops;
    }
    programs.push_back(j);
  }
  return programs;
}

json SwitchMLJob::Details(const Scenario& s, const TensorTotals& t) const {
  const uint32_t k = spec_.elements_per_packet;
  const double wire = WireBytes(spec_, s);
  const double goodput_fraction = static_cast<double>(k) * 4 / wire;
  const double ate_bound = s.links.host_rate_gbps * 1e9 * goodput_fraction / 32.0;
  const auto deepest = std::max_element(switches_.begin(), switches_.end(),
                                        [](const auto& a, const auto& b) { return a.second < b.second; });
  const std::vector<uint64_t>& rtts = rtt_samples_;
  return {{"workers", num_workers()},
          {"elements", records_.empty() ? 0 : records_[0].elements},
          {"dtype", dtype_ == DType::kInt32 ? "int32" : "float32"},
          {"elements_per_packet", k},
          {"packet_wire_bytes", rdma() ? json(wire) : json(static_cast<uint64_t>(wire))},
          {"goodput_fraction_from_framing", goodput_fraction},
          {"ate_per_s_bound", ate_bound},
          {"pool_size", spec_.pool_size},
          // The value registers the job occupies at each switch of its tree:
          // pool_size slots and their shadow copies (SwitchML §3.3), k
          // 32-bit values each; bitmaps and counters not counted.
          {"pool_value_bytes", uint64_t{spec_.pool_size} * 2 * k * 4},
          {"timeout_s", PsToS(spec_.timeout_ps)},
          {"timer_mode", spec_.timer_mode == SwitchMLTimerMode::kPaper ? "paper" : "upstream"},
          {"tree", {{"root", Aggregator()},
                    {"levels", deepest == switches_.end() ? 0 : deepest->second},
                    {"switches", switches_.size()}}},
          {"programs", Programs()},
          {"warmup_tensors", spec_.warmup_tensors},
          {"tat_mean_s", t.tat_mean()},
          {"ate_per_s", t.ate_mean()},
          {"ate_bound_ratio", ate_bound > 0 ? t.ate_mean() / ate_bound : 0.0},
          {"timeouts", t.timeouts},
          {"duplicates", t.duplicates},
          {"max_abs_error", t.max_err},
          {"error_bound_paper", "n/f per block (appendix E, Theorem 1)"},
          {"max_paper_bound_ratio", t.max_paper},
          {"max_impl_bound_ratio", t.max_impl},
          {"host", Host()},
          {"rtt_worker0_last_tensor_us", {{"samples", rtts.size()},
                                          {"p50", Percentile(rtts, 0.5) * 1e-6},
                                          {"p99", Percentile(rtts, 0.99) * 1e-6},
                                          {"max", Percentile(rtts, 1.0) * 1e-6}}}};
}

// The RDMA backend's hosts: messages, queue pairs, what the NICs and CPUs did.
json SwitchMLJob::RdmaHost() const {
  const SwitchMLRdmaCounters c = RdmaCounters();
  return {{"backend", "rdma"},
          {"worker_threads", threads_},
          {"message_packets", spec_.rdma_message_packets},
          {"queue_pairs_per_host", spec_.pool_size / spec_.rdma_message_packets},
          {"verbs_op_us", spec_.rdma_verbs_op_ps * 1e-6},
          {"nic_tx_us", spec_.rdma_nic_tx_ps * 1e-6},
          {"nic_rx_us", spec_.rdma_nic_rx_ps * 1e-6},
          {"messages_posted", c.messages_posted},
          {"retransmissions", c.retransmissions},
          {"completions", c.completions},
          {"wrong_msg_id", c.wrong_msg_id},
          {"packets_sent", c.packets_sent},
          {"packets_placed", c.packets_placed},
          {"packets_dropped_psn_gap", c.packets_dropped_psn},
          {"packets_dropped_length", c.packets_dropped_length},
          {"messages_without_receive", c.messages_no_recv},
          {"cpu_busy_s", PsToS(c.cpu_busy_ps)}};
}

// Who aggregates: the tree's root switch, or the parameter servers.
std::string SwitchMLJob::Aggregator() const {
  if (spec_.ps == SwitchMLPs::kNone) return fabric_->topology().node(tree_.root).name;
  return fmt::format("{} parameter servers ({})", ps_hosts_.size(),
                     spec_.ps == SwitchMLPs::kDedicated ? "dedicated" : "colocated");
}

// The workers' host side as run: the backend, the threads the pool and the
// tensors are split over, and what the lcores did (summed over every worker).
json SwitchMLJob::Host() const {
  if (rdma()) return RdmaHost();
  DpdkLcoreCounters sum;
  for (const auto& w : workers_) sum += w->lcore();
  const bool ideal = spec_.backend == SwitchMLBackend::kIdeal;
  json h = {{"backend", ideal ? "ideal" : "dpdk"}, {"worker_threads", threads_}, {"window_per_thread", spec_.pool_size / threads_}};
  if (spec_.ps != SwitchMLPs::kNone) {
    json servers = json::array();
    for (const auto& ps : servers_) {
      DpdkLcoreCounters cores;
      for (uint32_t c = 0; c < ps->cores(); ++c) cores += ps->lcore(c);
      servers.push_back({{"packets", ps->packets()}, {"busy_s", PsToS(cores.busy_ps)}, {"rx_bursts", cores.bursts}});
    }
    h["parameter_servers"] = {{"placement", spec_.ps == SwitchMLPs::kDedicated ? "dedicated" : "colocated"},
                              {"cores", spec_.ps_cores},
                              {"hosts", [&] {
                                 json a = json::array();
                                 for (uint32_t x : ps_hosts_) a.push_back(fabric_->topology().node(x).name);
                                 return a;
                               }()},
                              {"servers", std::move(servers)}};
  }
  if (ideal) return h;
  const DpdkLcoreConfig c = LcoreConfig();
  h.update({{"burst_rx", c.burst_rx},
            {"burst_tx", c.burst_tx},
            {"tx_drain_us", c.drain_ps * 1e-6},
            {"core_gbps", c.core_bps * 1e-9},
            {"packet_cost_ns", c.PacketBits(spec_.elements_per_packet * 4 + kSwitchMLHeaderBytes) / c.core_bps * 1e9},
            {"rx_bursts", sum.bursts},
            {"packets_processed", sum.packets},
            {"mean_burst", sum.bursts ? static_cast<double>(sum.packets) / sum.bursts : 0.0},
            {"busy_s", PsToS(sum.busy_ps)},
            {"drain_flushes", sum.drain_flushes},
            {"full_flushes", sum.full_flushes},
            {"rx_ring_drops", sum.ring_drops},
            {"max_rx_ring", sum.max_ring}});
  return h;
}

std::string SwitchMLJob::Summary(const Scenario& s, const CollectiveTable& table, const TensorTotals& t, const json& d,
                                 bool finished, bool correct) const {
  const uint32_t levels = d["tree"]["levels"].get<uint32_t>();
  std::string summary = fmt::format(
      "switchml allreduce: {} workers, {} tensor(s) of {} ({}, {} elements/packet, pool {}), tree rooted at {} ({} "
      "level{})\n",
      num_workers(), records_.size(), records_.empty() ? "-" : HumanBytes(records_[0].bytes),
      dtype_ == DType::kInt32 ? "int32" : "float32", spec_.elements_per_packet, spec_.pool_size,
      Aggregator(), levels, levels == 1 ? "" : "s");
  const double ate_bound = d["ate_per_s_bound"].get<double>();
  if (t.measured)
    summary += fmt::format("  TAT {} mean over {} tensor(s); {:.3e} aggregated elements/s = {:.1f} % of the "
                           "framing bound {:.3e} ({:.1f} % goodput per packet)\n",
                           HumanTime(t.tat_mean()), t.measured, t.ate_mean(), 100.0 * t.ate_mean() / ate_bound,
                           ate_bound, 100.0 * d["goodput_fraction_from_framing"].get<double>());
  summary += fmt::format("  {} timeouts, {} duplicate results; per-packet RTT (worker 0) p50 {} p99 {}\n", t.timeouts,
                         t.duplicates, HumanTime(Percentile(rtt_samples_, 0.5) * 1e-12),
                         HumanTime(Percentile(rtt_samples_, 0.99) * 1e-12));
  if (dtype_ == DType::kFloat32)
    summary += fmt::format("  float32 quantization: max |error| {:.3e}; {:.3f} x the paper's bound n/f, {:.3f} x "
                           "the library arithmetic's bound\n",
                           t.max_err, t.max_paper, t.max_impl);
  summary += fmt::format("  result: {} - {} elements checked against the exact sum, {} mismatches{}\n",
                         VerdictWord(correct, s.workload.data), table.elements_checked(), table.mismatches(),
                         finished ? "" : fmt::format(" (only {} of {} tensors finished by the time limit)",
                                                     table.completed(), records_.size()));
  return summary;
}

void SwitchMLJob::Report(const Scenario& s, bool finished, WorkloadReport& out) const {
  CollectiveTable table({"sequence", "tensor", "bytes", "elements", "tat_mean_s", "tat_max_s", "ate_per_s",
                         "framing_bound_s", "bound_ratio", "ring_bound_s", "max_abs_error", "paper_bound_ratio",
                         "impl_bound_ratio", "packets_sent", "timeouts", "duplicates", "rtt_mean_us", "rtt_max_us",
                         "warmup"});
  TensorTotals t;
  AddTensors(s, table, t);
  for (const SwitchMLTensorRecord& r : records_)
    if (r.finished()) out.payload_delivered += 2 * uint64_t{num_workers()} * r.bytes;  // each worker sends and receives it
  out.correct = finished && table.correct();
  const uint32_t iterations = records_.empty() ? 0 : records_.back().iteration + 1;
  out.workload = table.CoreJson({"switchml", "tensor", records_.empty() ? 0 : records_[0].bytes, iterations,
                                 IterationsCompleted()},
                                out.correct);
  out.workload["switchml"] = Details(s, t);
  out.AddCsv("collectives.csv", table.Csv());
  out.rank_spans = table.rank_spans();
  out.iteration_starts = schedule_->Starts(0, worker_hosts_);
  if (spec_.timeline_bin_ps > 0) {
    // Per bin, worker 0's packets sent, its timeouts, and the mean number of
    // its slots waiting on a timer that then fired (Fig. 7's rate, decomposed).
    std::string csv = "bin_start_s,packets_sent,timeouts,stalled_slots\n";
    const size_t bins = std::max(timeline_.size(), timeline_timeouts_.size());
    auto at = [](const auto& v, size_t i) { return i < v.size() ? v[i] : 0; };
    for (size_t i = 0; i < bins; ++i)
      csv += fmt::format("{:.9f},{},{},{:.6f}\n", PsToS(i * spec_.timeline_bin_ps), at(timeline_, i),
                         at(timeline_timeouts_, i),
                         at(timeline_stalled_ps_, i) / static_cast<double>(spec_.timeline_bin_ps));
    out.AddCsv("switchml_timeline.csv", std::move(csv));
  }
  out.summary += Summary(s, table, t, out.workload["switchml"], finished, out.correct);
}

}  // namespace inasim
