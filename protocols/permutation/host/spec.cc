// The permutation workload's scenario keys (workload.flow_bytes,
// payload_bytes, rate_gbps; docs/SCENARIO.md), declared once (spec::Section)
// and read through the registry (Protocol::parse).
#include "ina/scenario-sections.h"
#include "common/spec_fields.h"

namespace inasim::protocols::permutation {

namespace {

using PermutationSection = spec::Section<WorkloadSpec, Scenario>;

// IPv4 20 + UDP 8 bytes of headers within the MTU.
uint32_t MaxPayload(const Scenario& s) { return s.links.mtu_bytes - 28; }

const PermutationSection& Permutation() {
  static const PermutationSection section =
      PermutationSection("workload", "Permutation traffic: one paced UDP flow per host")
          .Named("workload:permutation")
          .U64("flow_bytes", &WorkloadSpec::flow_bytes, 2'000'000, 1, 1ull << 40, "bytes", "Payload bytes per flow.")
          .U32("payload_bytes", &WorkloadSpec::payload_bytes, 1472, 12, 9216 - 28, "bytes", "UDP payload per packet.")
          .MaxFrom([](const Scenario& s) -> uint64_t { return MaxPayload(s); }, "mtu_bytes - 28")
          .DefaultFrom([](const WorkloadSpec&, const Scenario& s) { return MaxPayload(s); }, "`mtu_bytes - 28` (1472)")
          .Num("rate_gbps", &WorkloadSpec::rate_gbps, 0, 0, 10'000, "Gb/s",
               "Sending rate of each flow, counting IP, UDP, Ethernet and wire overhead; `0` = the host link rate.");
  return section;
}

}  // namespace

void ParseWorkload(spec::Reader& w, Scenario& s) { Permutation().Parse(w, s.workload, s); }

std::vector<const spec::Doc*> WorkloadSections() { return {&Permutation()}; }

}  // namespace inasim::protocols::permutation
