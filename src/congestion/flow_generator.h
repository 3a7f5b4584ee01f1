// Background flow arrivals: Poisson in time, sizes from a FlowSizeCdf, source
// and destination uniform over a host set (DCTCP / pFabric / PANAMA
// methodology). Pure C++: the whole list is drawn up front from the seed, so
// the same scenario always offers the same flows whatever the network does.
#pragma once

#include "congestion/flow_size_cdf.h"

#include <cstdint>
#include <vector>

namespace inasim::congestion {

struct FlowSpec {
  uint32_t src = 0, dst = 0;  ///< host ids
  uint64_t bytes = 0;         ///< application payload
  uint64_t start_ps = 0;
};

struct PoissonFlowParams {
  std::vector<uint32_t> hosts;  ///< sources and destinations (at least 2)
  double load = 0.4;            ///< offered load per host, fraction of host_rate_bps
  double host_rate_bps = 100e9;
  uint64_t start_ps = 0, stop_ps = 0;  ///< arrivals in [start, stop)
  uint64_t seed = 1;
};

/// Aggregate arrival rate (flows per second) that offers `load` of every
/// host's link on average: load * n * rate / (8 * mean size).
double PoissonArrivalRate(const PoissonFlowParams& p, const FlowSizeCdf& sizes);

/// Flows in start order. Deterministic for (params, cdf): one std::mt19937_64
/// stream, inversion sampling only (no std:: distributions, whose output is
/// implementation-defined).
std::vector<FlowSpec> GeneratePoissonFlows(const PoissonFlowParams& p, const FlowSizeCdf& sizes);

/// Payload bytes offered per host-second divided by the host link rate, over
/// [start, stop): what GeneratePoissonFlows actually drew.
double RealizedLoad(const std::vector<FlowSpec>& flows, const PoissonFlowParams& p);

}  // namespace inasim::congestion
