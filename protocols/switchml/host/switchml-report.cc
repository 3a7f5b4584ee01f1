// SwitchML results: per-tensor TAT / ATE/s (paper §6 metrics), correctness,
// quantization error against the paper's bound, dataplane counters.
#include "protocols/switchml/host/switchml-job.h"

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

}  // namespace

void SwitchMLJob::Report(const Scenario& s, bool finished, WorkloadReport& out) const {
  // The report's parts by the names this function has always used.
  nlohmann::json& w = out.workload;
  std::vector<std::string>& csv_names = out.csv_names;
  std::vector<std::string>& csv_texts = out.csv_texts;
  std::string& summary = out.summary;
  bool& correct = out.correct;
  uint64_t& payload_delivered = out.payload_delivered;
  const uint32_t n = num_workers();
  const uint32_t k = spec_.elements_per_packet;
  const double rate = s.links.host_rate_gbps * 1e9;
  // Goodput from framing alone: k elements in a packet of k*4 + switchml (10)
  // + UDP/IPv4/Ethernet headers + preamble, FCS and gap.
  const uint64_t wire = uint64_t{k} * 4 + 10 + 8 + 20 + 14 + s.links.wire_overhead_bytes;
  const double goodput_fraction = static_cast<double>(k) * 4 / static_cast<double>(wire);
  const double ate_bound = rate * goodput_fraction / 32.0;

  json colls = json::array();
  std::string csv =
      "job,iteration,tensor,bytes,elements,start_s,end_s,tat_mean_s,tat_max_s,ate_per_s,goodput_gbps,"
      "framing_bound_s,bound_ratio,ring_bound_s,correct,elements_checked,mismatches,max_abs_error,"
      "paper_bound_ratio,impl_bound_ratio,packets_sent,timeouts,duplicates,rtt_mean_us,rtt_max_us\n";
  bool all_correct = true;
  uint64_t checked = 0, mism = 0, timeouts = 0, dups = 0, finished_jobs = 0;
  double max_err = 0, max_paper = 0, max_impl = 0;
  double tat_sum = 0, ate_sum = 0;
  uint32_t measured = 0;
  for (const SwitchMLTensorRecord& r : records_) {
    const bool done = r.finished();
    if (!done) {
      all_correct = false;
      continue;
    }
    ++finished_jobs;
    double tat_sum_w = 0, tat_max = 0;
    uint64_t start = UINT64_MAX, end = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const double t = PsToS(r.end_ps[i] - r.start_ps[i]);
      tat_sum_w += t;
      tat_max = std::max(tat_max, t);
      start = std::min(start, r.start_ps[i]);
      end = std::max(end, r.end_ps[i]);
    }
    const double tat = tat_sum_w / n;
    const double ate = static_cast<double>(r.elements) / tat;
    const double framing_bound = static_cast<double>(r.packets_per_worker) * wire * 8.0 / rate;
    const double ring_bound = 2.0 * (n - 1) / n * static_cast<double>(r.bytes) * 8.0 / rate;
    const bool ok = r.mismatches == 0 && r.elements_checked == uint64_t{n} * r.elements;
    all_correct &= ok;
    checked += r.elements_checked;
    mism += r.mismatches;
    timeouts += r.timeouts;
    dups += r.duplicates;
    max_err = std::max(max_err, r.max_abs_error);
    max_paper = std::max(max_paper, r.max_paper_bound_ratio);
    max_impl = std::max(max_impl, r.max_impl_bound_ratio);
    if (r.job >= spec_.warmup_tensors) {
      tat_sum += tat;
      ate_sum += ate;
      ++measured;
    }
    const double rtt_mean_us = r.rtt_count ? r.rtt_sum_ps / r.rtt_count * 1e-6 : 0.0;
    colls.push_back({{"job", r.job},
                     {"iteration", r.iteration},
                     {"tensor", r.tensor},
                     {"bytes", r.bytes},
                     {"elements", r.elements},
                     {"warmup", r.job < spec_.warmup_tensors},
                     {"start_s", PsToS(start)},
                     {"end_s", PsToS(end)},
                     {"tat_mean_s", tat},
                     {"tat_max_s", tat_max},
                     {"ate_per_s", ate},
                     {"goodput_gbps", static_cast<double>(r.bytes) * 8.0 / tat / 1e9},
                     {"framing_bound_s", framing_bound},
                     {"bound_ratio", framing_bound / tat},
                     {"ring_bound_s", ring_bound},
                     {"correct", ok},
                     {"elements_checked", r.elements_checked},
                     {"mismatches", r.mismatches},
                     {"max_abs_error", r.max_abs_error},
                     {"paper_bound_ratio", r.max_paper_bound_ratio},
                     {"impl_bound_ratio", r.max_impl_bound_ratio},
                     {"packets_sent", r.packets_sent},
                     {"timeouts", r.timeouts},
                     {"duplicates", r.duplicates},
                     {"wrong_job", r.wrong_job},
                     {"rtt_mean_us", rtt_mean_us},
                     {"rtt_max_us", r.rtt_max_ps * 1e-6}});
    csv += fmt::format("{},{},{},{},{},{:.12f},{:.12f},{:.12f},{:.12f},{:.6e},{:.6f},{:.12f},{:.6f},{:.12f},{},{},{},"
                       "{:.9e},{:.6f},{:.6f},{},{},{},{:.6f},{:.6f}\n",
                       r.job, r.iteration, r.tensor, r.bytes, r.elements, PsToS(start), PsToS(end), tat, tat_max,
                       ate, static_cast<double>(r.bytes) * 8.0 / tat / 1e9, framing_bound, framing_bound / tat,
                       ring_bound, ok ? 1 : 0, r.elements_checked, r.mismatches, r.max_abs_error,
                       r.max_paper_bound_ratio, r.max_impl_bound_ratio, r.packets_sent, r.timeouts, r.duplicates,
                       rtt_mean_us, r.rtt_max_ps * 1e-6);
    payload_delivered += 2 * uint64_t{n} * r.bytes;  // each worker sends and receives the tensor
  }
  correct = finished && all_correct && finished_jobs == records_.size();

  // The switches: one program per tree switch, counters summed per level.
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
    }
    programs.push_back(j);
  }

  const double tat_mean = measured ? tat_sum / measured : 0.0;
  const double ate_mean = measured ? ate_sum / measured : 0.0;
  std::vector<uint64_t> rtts = rtt_samples_;
  w = {{"type", "allreduce"},
       {"protocol", "switchml"},
       {"workers", n},
       {"ranks", n},
       {"bytes", records_.empty() ? 0 : records_[0].bytes},
       {"elements", records_.empty() ? 0 : records_[0].elements},
       {"mean_duration_s", tat_mean},
       {"dtype", dtype_ == DType::kInt32 ? "int32" : "float32"},
       {"elements_per_packet", k},
       {"packet_wire_bytes", wire},
       {"goodput_fraction_from_framing", goodput_fraction},
       {"ate_per_s_bound", ate_bound},
       {"pool_size", spec_.pool_size},
       {"timeout_s", PsToS(spec_.timeout_ps)},
       {"timer_mode", spec_.timer_mode == SwitchMLTimerMode::kPaper ? "paper" : "upstream"},
       {"tree", {{"root", fabric_->topology().node(tree_.root).name},
                 {"levels", switches_.empty() ? 0 : std::max_element(switches_.begin(), switches_.end(),
                                                                       [](const auto& a, const auto& b) {
                                                                         return a.second < b.second;
                                                                       })->second},
                 {"switches", switches_.size()}}},
       {"programs", programs},
       {"tensors_requested", records_.size()},
       {"tensors_completed", finished_jobs},
       {"warmup_tensors", spec_.warmup_tensors},
       {"tat_mean_s", tat_mean},
       {"ate_per_s", ate_mean},
       {"ate_bound_ratio", ate_bound > 0 ? ate_mean / ate_bound : 0.0},
       {"timeouts", timeouts},
       {"duplicates", dups},
       {"elements_checked", checked},
       {"mismatches", mism},
       {"max_abs_error", max_err},
       {"error_bound_paper", "n/f per block (appendix E, Theorem 1)"},
       {"max_paper_bound_ratio", max_paper},
       {"max_impl_bound_ratio", max_impl},
       {"rtt_worker0_last_tensor_us", {{"samples", rtts.size()},
                                       {"p50", Percentile(rtts, 0.5) * 1e-6},
                                       {"p99", Percentile(rtts, 0.99) * 1e-6},
                                       {"max", Percentile(rtts, 1.0) * 1e-6}}},
       {"correct", correct},
       {"collectives", colls}};
  csv_names.push_back("collectives.csv");
  csv_texts.push_back(csv);
  if (spec_.timeline_bin_ps > 0) {
    std::string t = "bin_start_s,packets_sent\n";
    for (size_t i = 0; i < timeline_.size(); ++i)
      t += fmt::format("{:.9f},{}\n", PsToS(i * spec_.timeline_bin_ps), timeline_[i]);
    csv_names.push_back("switchml_timeline.csv");
    csv_texts.push_back(t);
  }

  summary += fmt::format("switchml allreduce: {} workers, {} tensor(s) of {} ({}, {} elements/packet, pool {}), "
                         "tree rooted at {} ({} level{})\n",
                         n, records_.size(), records_.empty() ? "-" : HumanBytes(records_[0].bytes),
                         dtype_ == DType::kInt32 ? "int32" : "float32", k, spec_.pool_size,
                         fabric_->topology().node(tree_.root).name, w["tree"]["levels"].get<uint32_t>(),
                         w["tree"]["levels"].get<uint32_t>() == 1 ? "" : "s");
  if (measured)
    summary += fmt::format("  TAT {} mean over {} tensor(s); {:.3e} aggregated elements/s = {:.1f} % of the "
                           "framing bound {:.3e} ({:.1f} % goodput per packet)\n",
                           HumanTime(tat_mean), measured, ate_mean, 100.0 * ate_mean / ate_bound, ate_bound,
                           100.0 * goodput_fraction);
  summary += fmt::format("  {} timeouts, {} duplicate results; per-packet RTT (worker 0) p50 {} p99 {}\n", timeouts,
                         dups, HumanTime(Percentile(rtts, 0.5) * 1e-12), HumanTime(Percentile(rtts, 0.99) * 1e-12));
  if (dtype_ == DType::kFloat32)
    summary += fmt::format("  float32 quantization: max |error| {:.3e}; {:.3f} x the paper's bound n/f, {:.3f} x "
                           "the library arithmetic's bound\n",
                           max_err, max_paper, max_impl);
  summary += fmt::format("  result: {} - {} elements checked against the exact sum, {} mismatches{}\n",
                         VerdictWord(correct, s.workload.data), checked, mism,
                         finished ? "" : fmt::format(" (only {} of {} tensors finished by the time limit)",
                                                     finished_jobs, records_.size()));
}

}  // namespace inasim
