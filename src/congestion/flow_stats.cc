#include "congestion/flow_stats.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace inasim::congestion {

namespace {

using ordered_json = nlohmann::ordered_json;

constexpr uint64_t k100KB = 100'000;
constexpr uint64_t k10MB = 10'000'000;

struct Bucket {
  const char* name;
  bool (*contains)(uint64_t bytes, uint64_t long_flow_bytes);
};

constexpr Bucket kBuckets[] = {
    {"all", [](uint64_t, uint64_t) { return true; }},
    {"short", [](uint64_t b, uint64_t lf) { return b < lf; }},
    {"long", [](uint64_t b, uint64_t lf) { return b >= lf; }},
    {"lt_100KB", [](uint64_t b, uint64_t) { return b < k100KB; }},
    {"100KB_10MB", [](uint64_t b, uint64_t) { return b >= k100KB && b < k10MB; }},
    {"ge_10MB", [](uint64_t b, uint64_t) { return b >= k10MB; }},
};

ordered_json SummaryJson(const Summary& s) {
  return {{"mean", s.mean}, {"median", s.median}, {"p99", s.p99},
          {"p999", s.p999}, {"min", s.min},       {"max", s.max}};
}

// A non-positive time would turn into an infinite slowdown or throughput,
// which JSON cannot hold (nlohmann writes null) and which is always a bug
// upstream, so it is refused rather than summarised.
void CheckRecords(const std::vector<FlowRecord>& flows) {
  for (size_t i = 0; i < flows.size(); ++i) {
    const FlowRecord& f = flows[i];
    if (!(f.fct_s > 0)) {
      throw std::invalid_argument("flow " + std::to_string(i) + ": fct_s " + std::to_string(f.fct_s) +
                                  " is not positive");
    }
    if (!(f.ideal_fct_s > 0)) {
      throw std::invalid_argument("flow " + std::to_string(i) + ": ideal_fct_s " + std::to_string(f.ideal_fct_s) +
                                  " is not positive");
    }
  }
}

ordered_json BucketJson(const std::vector<FlowRecord>& flows, const Bucket& bucket, uint64_t long_flow_bytes) {
  std::vector<double> fct, slowdown;
  for (const FlowRecord& f : flows) {
    if (!bucket.contains(f.bytes, long_flow_bytes)) continue;
    fct.push_back(f.fct_s);
    slowdown.push_back(f.fct_s / f.ideal_fct_s);
  }
  ordered_json j;
  j["count"] = fct.size();
  j["fct_s"] = fct.empty() ? ordered_json(nullptr) : SummaryJson(Summarize(std::move(fct)));
  j["slowdown"] = slowdown.empty() ? ordered_json(nullptr) : SummaryJson(Summarize(std::move(slowdown)));
  return j;
}

ordered_json LongFlowThroughputJson(const std::vector<FlowRecord>& flows, uint64_t long_flow_bytes) {
  std::vector<double> gbps;
  for (const FlowRecord& f : flows) {
    if (f.bytes >= long_flow_bytes) gbps.push_back(static_cast<double>(f.bytes) * 8.0 / f.fct_s / 1e9);
  }
  const bool empty = gbps.empty();
  const Summary s = Summarize(std::move(gbps));
  const auto stat = [empty](double v) { return empty ? ordered_json(nullptr) : ordered_json(v); };
  return {{"mean", stat(s.mean)}, {"median", stat(s.median)}, {"min", stat(s.min)},
          {"max", stat(s.max)},   {"count", s.count}};
}

double BinEdge(int i, int bins) { return static_cast<double>(i) / bins; }

// floor(u * bins) can land one bin off when the product rounds across an
// integer; settle against the same edges the JSON prints, so a value equal to
// a printed "from" is always counted in that bin.
int BinOf(double u, int bins) {
  if (u >= 1) return bins - 1;
  int i = std::min(static_cast<int>(u * bins), bins - 1);
  if (i > 0 && u < BinEdge(i, bins)) {
    --i;
  } else if (i + 1 < bins && u >= BinEdge(i + 1, bins)) {
    ++i;
  }
  return i;
}

}  // namespace

double Percentile(const std::vector<double>& sorted, double q) {
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument("percentile " + std::to_string(q) + " is outside [0, 1]");
  if (sorted.empty()) return 0;
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const auto lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

Summary Summarize(std::vector<double> values) {
  Summary s;
  if (values.empty()) return s;
  // std::sort with NaN breaks its strict-weak-ordering precondition (undefined
  // behaviour), so refuse before sorting.
  if (std::any_of(values.begin(), values.end(), [](double v) { return std::isnan(v); })) {
    throw std::invalid_argument("cannot summarise NaN values");
  }
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  s.count = values.size();
  s.mean = sum / static_cast<double>(values.size());
  s.median = Percentile(values, 0.5);
  s.p99 = Percentile(values, 0.99);
  s.p999 = Percentile(values, 0.999);
  s.min = values.front();
  s.max = values.back();
  return s;
}

nlohmann::ordered_json FctReport(const std::vector<FlowRecord>& flows, uint64_t long_flow_bytes) {
  CheckRecords(flows);
  ordered_json report = ordered_json::object();
  for (const Bucket& b : kBuckets) report[b.name] = BucketJson(flows, b, long_flow_bytes);
  report["long_flow_throughput_gbps"] = LongFlowThroughputJson(flows, long_flow_bytes);
  return report;
}

nlohmann::ordered_json UtilizationHistogram(const std::vector<double>& utilization, int bins) {
  if (bins < 1) throw std::invalid_argument("utilisation histogram needs at least 1 bin, got " + std::to_string(bins));
  std::vector<uint64_t> links(static_cast<size_t>(bins), 0);
  double sum = 0;
  for (size_t i = 0; i < utilization.size(); ++i) {
    const double u = utilization[i];
    if (!(u >= 0)) {
      throw std::invalid_argument("utilisation " + std::to_string(u) + " of link " + std::to_string(i) +
                                  " is negative or NaN");
    }
    ++links[static_cast<size_t>(BinOf(u, bins))];
    sum += u;
  }
  ordered_json out = ordered_json::object();
  out["bins"] = ordered_json::array();
  for (int i = 0; i < bins; ++i) {
    out["bins"].push_back({{"from", BinEdge(i, bins)}, {"to", BinEdge(i + 1, bins)}, {"links", links[i]}});
  }
  out["mean"] = utilization.empty() ? 0.0 : sum / static_cast<double>(utilization.size());
  out["count"] = utilization.size();
  return out;
}

}  // namespace inasim::congestion
