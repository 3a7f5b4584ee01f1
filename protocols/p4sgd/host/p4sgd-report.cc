// P4SGDJob::Report: results.json's workload section, p4sgd_epochs.csv,
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

void P4SGDJob::Report(const Scenario& s, bool finished, WorkloadReport& out) const {
  // The report's parts by the names this function has always used.
  nlohmann::json& w = out.workload;
  std::vector<std::string>& csv_names = out.csv_names;
  std::vector<std::string>& csv_texts = out.csv_texts;
  std::string& summary = out.summary;
  bool& correct = out.correct;
  uint64_t& payload_delivered = out.payload_delivered;
  const uint32_t n = num_workers();
  const bool train = spec_.task == P4SGDTask::kTrain;
  uint64_t sent = 0, agg_retx = 0, ack_retx = 0, dups = 0, stalls = 0;
  std::map<uint64_t, uint64_t> hist;  // latency ps -> results, all workers
  for (const auto& wk : workers_) {
    sent += wk->packets_sent();
    agg_retx += wk->agg_retransmissions();
    ack_retx += wk->ack_retransmissions();
    dups += wk->duplicates();
    stalls += wk->slot_stalls();
    for (const auto& [ps, c] : wk->latency_histogram()) hist[ps] += c;
  }
  uint64_t count = 0;
  double mean = 0, sq = 0;
  for (const auto& [ps, c] : hist) {
    count += c;
    mean += static_cast<double>(ps) * static_cast<double>(c);
  }
  if (count) mean /= static_cast<double>(count);
  for (const auto& [ps, c] : hist) sq += (static_cast<double>(ps) - mean) * (static_cast<double>(ps) - mean) * c;
  const double stddev = count ? std::sqrt(sq / static_cast<double>(count)) : 0;
  // Nearest-rank quantile of the histogram.
  auto quantile = [&](double q) -> double {
    if (!count) return 0;
    const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(count))));
    uint64_t seen = 0;
    for (const auto& [ps, c] : hist)
      if ((seen += c) >= rank) return static_cast<double>(ps);
    return static_cast<double>(hist.rbegin()->first);
  };
  const json latency = {{"samples", count},
                        {"mean_us", mean / 1e6},
                        {"p50_us", quantile(0.5) / 1e6},
                        {"p99_us", quantile(0.99) / 1e6},
                        {"min_us", count ? hist.begin()->first / 1e6 : 0.0},
                        {"max_us", count ? hist.rbegin()->first / 1e6 : 0.0},
                        {"stddev_us", stddev / 1e6}};

  bool ok = finished && done() && mismatches_ == 0 && ledger_open_ == 0;
  w = {{"protocol", "p4sgd"},
       {"mode", spec_.mode},
       {"task", train ? "train" : "allreduce"},
       {"workers", n},
       {"packets_sent", sent},
       {"agg_retransmissions", agg_retx},
       {"ack_retransmissions", ack_retx},
       {"duplicates", dups},
       {"slot_stalls", stalls},
       {"ops_checked", checked_},
       {"elements_checked", checked_ * glm::kMicroBatch},
       {"mismatches", mismatches_},
       {"ops_unfinished", ledger_open_},
       {"allreduce_latency", latency}};
  if (done()) {
    // From the start to the last worker's last ack-complete (fault_matrix.py, sweeps).
    w["duration_s"] = static_cast<double>(end_ps_ - start_ps_) / 1e12;
    w["mean_duration_s"] = w["duration_s"];
  }
  if (p4::Dataplane* dp = fabric_->switch_node(switch_vertex_ - fabric_->topology().num_hosts()).dataplane())
    w["switch"] = json::parse(dp->DumpState())["stats"];

  std::string epochs_csv = "epoch,time_s,loss,networkless_loss\n";
  if (train) {
    const P4SGDStageTimes t = StageTimes(spec_, spec_.data_parallel ? data_.features
                                                                    : glm::FeaturesOf(data_.features, n, 0).size());
    w["parallelism"] = spec_.data_parallel ? "data" : "model";
    w["arithmetic"] = spec_.hashed ? "hashed" : "real";
    w["dataset"] = {{"source", data_.source},
                    {"samples", data_.samples},
                    {"features", data_.features},
                    {"precision_bits", data_.bits}};
    w["loss"] = glm::LossName(train_.loss);
    w["minibatch"] = spec_.minibatch;
    w["minibatches_per_epoch"] = mbs_per_epoch_;
    w["stage_cycles"] = {{"forward", t.forward_cycles}, {"backward", t.backward_cycles}, {"update", t.update_cycles}};
    // Reference: the same training without a network (sums done in place).
    std::vector<double> ref_loss;
    bool model_match = true;
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
      ok = ok && model_match;
    }
    json ep = json::array();
    uint64_t prev = s.workload.start_ps;
    for (size_t e = 0; e < epochs_.size(); ++e) {
      const double loss = epochs_[e].second;
      const double ref = e < ref_loss.size() ? ref_loss[e] : std::nan("");
      ep.push_back({{"epoch", e + 1},
                    {"time_s", static_cast<double>(epochs_[e].first) / 1e12},
                    {"epoch_time_s", static_cast<double>(epochs_[e].first - prev) / 1e12},
                    {"loss", std::isnan(loss) ? json(nullptr) : json(loss)},
                    {"networkless_loss", std::isnan(ref) ? json(nullptr) : json(ref)}});
      epochs_csv += fmt::format("{},{:.9f},{},{}\n", e + 1, static_cast<double>(epochs_[e].first) / 1e12,
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
    csv_names.push_back("p4sgd_epochs.csv");
    csv_texts.push_back(epochs_csv);
  }
  // The latency distribution of every result at every worker, as a histogram
  // (a deterministic run has few distinct values; 1e8 operations stay small).
  std::string lat_csv = "latency_ns,results\n";
  for (const auto& [ps, c] : hist) lat_csv += fmt::format("{:.3f},{}\n", ps / 1e3, c);
  csv_names.push_back("p4sgd_latency.csv");
  csv_texts.push_back(lat_csv);
  w["correct"] = ok;
  w["check"] = hashed_values()
                   ? "values: every op's sum against the closed form over every rank's hashed values"
                   : "values: every op's sum against what the workers computed, and the trained model against the "
                     "networkless run, bit for bit";
  correct = ok;
  payload_delivered = checked_ * 4 * glm::kMicroBatch;

  if (train) {
    summary += fmt::format("p4sgd {}-parallel training ({} loss, {}): {} workers, {} samples x {} features, "
                           "mini-batch {}, {} epoch(s)\n",
                           spec_.data_parallel ? "data" : "model", glm::LossName(train_.loss), data_.source, n,
                           data_.samples, data_.features, spec_.minibatch, spec_.epochs);
    for (size_t e = 0; e < epochs_.size(); ++e)
      summary += fmt::format("  epoch {}: t = {}{}\n", e + 1, HumanTime(static_cast<double>(epochs_[e].first) / 1e12),
                             std::isnan(epochs_[e].second) ? "" : fmt::format(", loss {:.6f}", epochs_[e].second));
    if (w.contains("iteration_time_us"))
      summary += fmt::format("  {:.3f} us per iteration, {:.4g} samples/s\n", w["iteration_time_us"].get<double>(),
                             w["throughput_samples_per_s"].get<double>());
    if (w.contains("networkless_match"))
      summary += fmt::format("  model vs the networkless run: {}\n",
                             w["networkless_match"].get<bool>() ? "identical, bit for bit" : "DIFFERENT");
  } else {
    summary += fmt::format("p4sgd allreduce of 8 x int32 over {} workers, {} operations\n", n, spec_.operations);
  }
  summary += fmt::format("  allreduce latency mean {:.3f} us, p50 {:.3f}, p99 {:.3f}, spread (max-min) {:.3f} us\n",
                         latency["mean_us"].get<double>(), latency["p50_us"].get<double>(),
                         latency["p99_us"].get<double>(),
                         latency["max_us"].get<double>() - latency["min_us"].get<double>());
  summary += fmt::format("  {} packets, {} aggregation and {} ack retransmissions, {} duplicates\n", sent, agg_retx,
                         ack_retx, dups);
  summary += fmt::format("  result: {} - {} results checked against the exact sum, {} mismatches{}\n",
                         ok ? "CORRECT" : "WRONG", checked_, mismatches_,
                         finished ? "" : " (not finished by the time limit)");
}

}  // namespace inasim
