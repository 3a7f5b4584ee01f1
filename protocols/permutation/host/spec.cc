// The permutation workload's scenario keys (workload.flow_bytes,
// payload_bytes, rate_gbps; docs/SCENARIO.md), through the registry (Protocol::parse).
#include "ina/scenario-sections.h"

namespace inasim::protocols::permutation {

void ParseWorkload(spec::Reader& w, Scenario& s) {
  s.workload.flow_bytes = w.U64("flow_bytes", 2'000'000, 1, 1ull << 40);
  s.workload.payload_bytes = w.U32("payload_bytes", s.links.mtu_bytes - 28, 12, s.links.mtu_bytes - 28);
  s.workload.rate_gbps = w.Num("rate_gbps", 0, 0, 10'000);
}

}  // namespace inasim::protocols::permutation
