// The toy protocol's scenario keys: workload.toy -> ToySpec, through the
// registry (Protocol::parse). Declared once with spec::Section: the parse,
// the resolved echo and the key table all come from these lines.
#include "common/spec_fields.h"
#include "tests/toy/protocols/toy/host/spec.h"

namespace inasim::protocols::toy {

const spec::Section<ToySpec>& ToySection() {
  static const spec::Section<ToySpec> section =
      spec::Section<ToySpec>("workload.toy", "Toy in-network sum (tests/toy)")
          .U32("elements_per_packet", &ToySpec::elements_per_packet, 64, 1, 256, "elements",
               "int32 elements per packet.")
          .U32("window_packets", &ToySpec::window_packets, 16, 1, 65536, "packets",
               "Packets each worker has in flight; the switch has as many slots.")
          .U16("udp_port", &ToySpec::udp_port, 47000, 1, 65535, "", "UDP port of the workers and the switch.")
          .TimePs("pass_latency_ns", &ToySpec::pass_latency_ps, 500, 0, 1e6, spec::TimeUnit::kNs,
                  "Switch pipeline time per packet.");
  return section;
}

void ParseWorkload(spec::Reader& workload, Scenario& s) {
  spec::Reader r = workload.Obj("toy");
  ToySection().Parse(r, s.workload.spec<ToySpec>());
  r.Done();
}

}  // namespace inasim::protocols::toy
