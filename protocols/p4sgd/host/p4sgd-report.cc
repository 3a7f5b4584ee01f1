// P4SGDJob::Report: results.json's workload section (the core keys with one
// collective per op, and workload.p4sgd), collectives.csv, p4sgd_epochs.csv,
// p4sgd_latency.csv and the summary lines.
#include "ina/fabric.h"
#include "ina/ina-switch-node.h"
#include "protocols/p4sgd/host/p4sgd-job.h"
#include "ina/units.h"
#include "protocols/p4sgd/dataplane/p4sgd_dataplane.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace inasim {

using nlohmann::json;

/// Every result's latency at every worker (from the op's first send there to
/// its result), as a histogram: a deterministic run has few distinct values.
struct P4SGDJob::Latency {
  std::map<uint64_t, uint64_t> hist;  ///< latency ps -> results
  uint64_t count = 0;
  double mean = 0, stddev = 0;
  /// Nearest-rank quantile.
  double Quantile(double q) const {
    if (!count) return 0;
    const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(count))));
    uint64_t seen = 0;
    for (const auto& [ps, c] : hist)
      if ((seen += c) >= rank) return static_cast<double>(ps);
    return static_cast<double>(hist.rbegin()->first);
  }
  json Json() const {
    return {{"samples", count},
            {"mean_us", mean / 1e6},
            {"p50_us", Quantile(0.5) / 1e6},
            {"p99_us", Quantile(0.99) / 1e6},
            {"min_us", count ? hist.begin()->first / 1e6 : 0.0},
            {"max_us", count ? hist.rbegin()->first / 1e6 : 0.0},
            {"stddev_us", stddev / 1e6}};
  }
};

P4SGDJob::Latency P4SGDJob::LatencyOverWorkers() const {
  Latency l;
  for (const auto& wk : workers_)
    for (const auto& [ps, c] : wk->latency_histogram()) l.hist[ps] += c;
  for (const auto& [ps, c] : l.hist) {
    l.count += c;
    l.mean += static_cast<double>(ps) * static_cast<double>(c);
  }
  if (l.count) l.mean /= static_cast<double>(l.count);
  double sq = 0;
  for (const auto& [ps, c] : l.hist) sq += (static_cast<double>(ps) - l.mean) * (static_cast<double>(ps) - l.mean) * c;
  l.stddev = l.count ? std::sqrt(sq / static_cast<double>(l.count)) : 0;
  return l;
}

json P4SGDJob::Counters(const Latency& latency) const {
  uint64_t sent = 0, agg_retx = 0, ack_retx = 0, dups = 0, stalls = 0;
  for (const auto& wk : workers_) {
    sent += wk->packets_sent();
    agg_retx += wk->agg_retransmissions();
    ack_retx += wk->ack_retransmissions();
    dups += wk->duplicates();
    stalls += wk->slot_stalls();
  }
  json w = {{"mode", spec_.mode},
            {"task", spec_.task == P4SGDTask::kTrain ? "train" : "allreduce"},
            {"workers", num_workers()},
            {"packets_sent", sent},
            {"agg_retransmissions", agg_retx},
            {"ack_retransmissions", ack_retx},
            {"duplicates", dups},
            {"slot_stalls", stalls},
            {"ops_checked", checked_},
            {"ops_unfinished", ledger_open_},
            {"allreduce_latency", latency.Json()}};
  // From the start to the last worker's last ack-complete.
  if (done()) w["duration_s"] = static_cast<double>(end_ps_ - start_ps_) / 1e12;
  if (p4::Dataplane* dp = fabric_->switch_node(switch_vertex_ - fabric_->topology().num_hosts()).dataplane())
    w["switch"] = json::parse(dp->DumpState())["stats"];
  return w;
}

json P4SGDJob::Training(const Scenario& s, bool& model_match, WorkloadReport& out) const {
  const P4SGDStageTimes t =
      StageTimes(spec_, spec_.data_parallel ? data_.features : glm::FeaturesOf(data_.features, num_workers(), 0).size());
  json w = {{"parallelism", spec_.data_parallel ? "data" : "model"},
            {"arithmetic", spec_.hashed ? "hashed" : "real"},
            {"dataset", {{"source", data_.source}, {"samples", data_.samples}, {"features", data_.features},
                         {"precision_bits", data_.bits}}},
            {"loss", glm::LossName(train_.loss)},
            {"minibatch", spec_.minibatch},
            {"minibatches_per_epoch", mbs_per_epoch_},
            {"stage_cycles", {{"forward", t.forward_cycles}, {"backward", t.backward_cycles},
                              {"update", t.update_cycles}}}};
  // Reference: the same training without a network (sums done in place).
  std::vector<double> ref_loss;
  model_match = true;
  if (!spec_.hashed) {
    const std::vector<int32_t> ref = glm::ReferenceTrain(data_, train_, ref_loss);
    if (spec_.data_parallel) {
      for (const auto& m : dp_models_) model_match = model_match && m == ref;
    } else {
      model_match = model_ == ref;
    }
    model_match = model_match && ref_loss.size() == epochs_.size();
    for (size_t e = 0; model_match && e < epochs_.size(); ++e) model_match = epochs_[e].second == ref_loss[e];
    w["networkless_match"] = model_match;
  }
  json ep = json::array();
  std::string csv = "epoch,time_s,loss,networkless_loss\n";
  uint64_t prev = s.workload.start_ps;
  for (size_t e = 0; e < epochs_.size(); ++e) {
    const double loss = epochs_[e].second;
    const double ref = e < ref_loss.size() ? ref_loss[e] : std::nan("");
    ep.push_back({{"epoch", e + 1},
                  {"time_s", static_cast<double>(epochs_[e].first) / 1e12},
                  {"epoch_time_s", static_cast<double>(epochs_[e].first - prev) / 1e12},
                  {"loss", std::isnan(loss) ? json(nullptr) : json(loss)},
                  {"networkless_loss", std::isnan(ref) ? json(nullptr) : json(ref)}});
    csv += fmt::format("{},{:.9f},{},{}\n", e + 1, static_cast<double>(epochs_[e].first) / 1e12,
                       std::isnan(loss) ? "" : fmt::format("{:.9g}", loss),
                       std::isnan(ref) ? "" : fmt::format("{:.9g}", ref));
    prev = epochs_[e].first;
  }
  w["epochs"] = ep;
  if (!epochs_.empty()) {
    const double secs = static_cast<double>(epochs_.back().first - s.workload.start_ps) / 1e12;
    const double samples = static_cast<double>(mbs_per_epoch_) * spec_.minibatch * epochs_.size();
    w["epoch_time_s"] = secs / static_cast<double>(epochs_.size());
    w["iteration_time_us"] = secs * 1e6 / (static_cast<double>(mbs_per_epoch_) * epochs_.size());
    w["throughput_samples_per_s"] = samples / secs;
  }
  out.AddCsv("p4sgd_epochs.csv", std::move(csv));
  return w;
}

std::string P4SGDJob::Summary(const json& d, const Latency& latency, bool finished, bool correct) const {
  std::string summary;
  if (spec_.task == P4SGDTask::kTrain) {
    summary += fmt::format("p4sgd {}-parallel training ({} loss, {}): {} workers, {} samples x {} features, "
                           "mini-batch {}, {} epoch(s)\n",
                           spec_.data_parallel ? "data" : "model", glm::LossName(train_.loss), data_.source,
                           num_workers(), data_.samples, data_.features, spec_.minibatch, spec_.epochs);
    for (size_t e = 0; e < epochs_.size(); ++e)
      summary += fmt::format("  epoch {}: t = {}{}\n", e + 1, HumanTime(static_cast<double>(epochs_[e].first) / 1e12),
                             std::isnan(epochs_[e].second) ? "" : fmt::format(", loss {:.6f}", epochs_[e].second));
    if (d.contains("iteration_time_us"))
      summary += fmt::format("  {:.3f} us per iteration, {:.4g} samples/s\n", d["iteration_time_us"].get<double>(),
                             d["throughput_samples_per_s"].get<double>());
    if (d.contains("networkless_match"))
      summary += fmt::format("  model vs the networkless run: {}\n",
                             d["networkless_match"].get<bool>() ? "identical, bit for bit" : "DIFFERENT");
  } else {
    summary += fmt::format("p4sgd allreduce of 8 x int32 over {} workers, {} operations\n", num_workers(),
                           spec_.operations);
  }
  summary += fmt::format("  allreduce latency mean {:.3f} us, p50 {:.3f}, p99 {:.3f}, spread (max-min) {:.3f} us\n",
                         latency.mean / 1e6, latency.Quantile(0.5) / 1e6, latency.Quantile(0.99) / 1e6,
                         (latency.count ? static_cast<double>(latency.hist.rbegin()->first - latency.hist.begin()->first)
                                        : 0.0) / 1e6);
  summary += fmt::format("  {} packets, {} aggregation and {} ack retransmissions, {} duplicates\n",
                         d["packets_sent"].get<uint64_t>(), d["agg_retransmissions"].get<uint64_t>(),
                         d["ack_retransmissions"].get<uint64_t>(), d["duplicates"].get<uint64_t>());
  summary += fmt::format("  result: {} - {} results ({} elements) checked against the exact sum, {} mismatches{}\n",
                         correct ? "CORRECT" : "WRONG", checked_, checked_ * glm::kMicroBatch, mismatches_,
                         finished ? "" : " (not finished by the time limit)");
  return summary;
}

void P4SGDJob::Report(const Scenario& s, bool finished, WorkloadReport& out) const {
  const Latency latency = LatencyOverWorkers();
  // The checks of ops still open, and of results no op expected.
  CollectiveTable table = ops_;
  table.AddUnfinished(0, checked_ * glm::kMicroBatch - table.elements_checked(), mismatches_ - table.mismatches());
  json details = Counters(latency);
  bool ok = finished && done() && mismatches_ == 0 && ledger_open_ == 0 && table.correct();
  if (spec_.task == P4SGDTask::kTrain) {
    bool model_match = true;
    details.update(Training(s, model_match, out));
    ok = ok && model_match;
  }
  out.correct = ok;
  const bool train = spec_.task == P4SGDTask::kTrain;
  out.workload = table.CoreJson({"p4sgd", "op", glm::kMicroBatch * 4, train ? total_minibatches() : spec_.operations,
                                 train ? minibatches_complete_ : table.completed()},
                                ok);
  out.workload["check"] = hashed_values()
                              ? "values: every op's sum against the closed form over every rank's hashed values"
                              : "values: every op's sum against what the workers computed, and the trained model "
                                "against the networkless run, bit for bit";
  out.AddCsv("collectives.csv", table.Csv());
  // The latency distribution of every result at every worker, as a histogram
  // (1e8 operations stay small).
  std::string lat_csv = "latency_ns,results\n";
  for (const auto& [ps, c] : latency.hist) lat_csv += fmt::format("{:.3f},{}\n", ps / 1e3, c);
  out.AddCsv("p4sgd_latency.csv", std::move(lat_csv));
  out.payload_delivered = checked_ * 4 * glm::kMicroBatch;
  out.summary += Summary(details, latency, finished, ok);
  out.workload["p4sgd"] = std::move(details);
}

}  // namespace inasim
