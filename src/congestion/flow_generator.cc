#include "congestion/flow_generator.h"

#include <cmath>
#include <random>
#include <stdexcept>

namespace inasim::congestion {

namespace {

// [0, 1) with 53 random bits: the same double on every platform.
double Uniform01(std::mt19937_64& g) { return static_cast<double>(g() >> 11) * 0x1.0p-53; }

uint32_t UniformBelow(std::mt19937_64& g, uint32_t n) {
  return static_cast<uint32_t>(Uniform01(g) * n);  // n << 2^53: bias below 2^-20
}

}  // namespace

double PoissonArrivalRate(const PoissonFlowParams& p, const FlowSizeCdf& sizes) {
  return p.load * static_cast<double>(p.hosts.size()) * p.host_rate_bps / (8.0 * sizes.Mean());
}

std::vector<FlowSpec> GeneratePoissonFlows(const PoissonFlowParams& p, const FlowSizeCdf& sizes) {
  if (p.hosts.size() < 2) throw std::invalid_argument("background flows need at least 2 hosts");
  if (!(p.load > 0) || !(p.host_rate_bps > 0)) throw std::invalid_argument("load and rate must be positive");
  const double lambda_per_ps = PoissonArrivalRate(p, sizes) * 1e-12;
  std::mt19937_64 g(p.seed * 0x9e3779b97f4a7c15ULL + 0x0b5c6f10a7ULL);
  std::vector<FlowSpec> flows;
  double t = static_cast<double>(p.start_ps);
  const auto n = static_cast<uint32_t>(p.hosts.size());
  while (true) {
    t += -std::log1p(-Uniform01(g)) / lambda_per_ps;
    if (t >= static_cast<double>(p.stop_ps)) break;
    FlowSpec f;
    f.start_ps = static_cast<uint64_t>(std::llround(t));
    const uint32_t si = UniformBelow(g, n);
    uint32_t di = UniformBelow(g, n - 1);
    if (di >= si) ++di;  // uniform over the other n-1 hosts
    f.src = p.hosts[si];
    f.dst = p.hosts[di];
    f.bytes = sizes.Sample(Uniform01(g));
    flows.push_back(f);
  }
  return flows;
}

double RealizedLoad(const std::vector<FlowSpec>& flows, const PoissonFlowParams& p) {
  double bytes = 0;
  for (const FlowSpec& f : flows) bytes += static_cast<double>(f.bytes);
  const double seconds = static_cast<double>(p.stop_ps - p.start_ps) * 1e-12;
  return bytes * 8.0 / (seconds * p.host_rate_bps * static_cast<double>(p.hosts.size()));
}

}  // namespace inasim::congestion
