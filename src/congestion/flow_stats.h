// Flow-completion-time statistics and link-utilisation histograms for
// results.json: the numbers DCTCP / pFabric / PANAMA-style evaluations plot
// (mean, median and tail FCT, slowdown, per size bucket). Pure C++.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace inasim::congestion {

struct Summary {
  uint64_t count = 0;
  double mean = 0, median = 0, p99 = 0, p999 = 0, min = 0, max = 0;
};

/// Count, mean, min, max and the 50th / 99th / 99.9th percentiles (as
/// Percentile). Empty input gives count 0 and zeros. NaN values throw
/// std::invalid_argument (they cannot be ordered).
Summary Summarize(std::vector<double> values);

/// numpy's default ("linear") percentile of an ascending vector: with
/// h = (n-1)q, x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]).
/// q in [0, 1] (std::invalid_argument otherwise); 0 for an empty vector.
double Percentile(const std::vector<double>& sorted, double q);

/// One completed flow.
struct FlowRecord {
  uint64_t bytes = 0;
  double fct_s = 0;        ///< completion time, seconds
  double ideal_fct_s = 0;  ///< the same flow alone on an idle network
};

/// FCT and slowdown (fct / ideal) per size bucket, in this key order:
///   "all"; "short" (< long_flow_bytes) and "long" (>= long_flow_bytes),
///   PANAMA's split (40 MB; a scaled scenario scales it with its flow sizes); "lt_100KB" (< 100,000 B), "100KB_10MB" ([100,000, 10,000,000)),
///   "ge_10MB" (>= 10,000,000 B); each {"count": n, "fct_s": S, "slowdown": S}
///   with S = {"mean", "median", "p99", "p999", "min", "max"}, or null when the
///   bucket is empty;
///   then "long_flow_throughput_gbps": {"mean", "median", "min", "max", "count"}
///   of bytes * 8 / fct / 1e9 over long flows (stats null when there are none).
/// A record whose fct_s or ideal_fct_s is not positive throws
/// std::invalid_argument naming its index.
nlohmann::ordered_json FctReport(const std::vector<FlowRecord>& flows, uint64_t long_flow_bytes = 40'000'000);

/// Per-link utilisation fractions in `bins` equal-width bins over [0, 1]:
/// {"bins": [{"from": 0.0, "to": 0.1, "links": n}, ...], "mean": m, "count": n}.
/// A value on a boundary goes to the bin it starts; values >= 1 go to the last
/// bin (a frame whose serialisation straddles the end of the run is counted
/// whole, so a busy link can read slightly above 1). The mean is of the values
/// as given (0 when empty). Negative or NaN values, or bins < 1, throw
/// std::invalid_argument.
nlohmann::ordered_json UtilizationHistogram(const std::vector<double>& utilization, int bins = 10);

}  // namespace inasim::congestion
