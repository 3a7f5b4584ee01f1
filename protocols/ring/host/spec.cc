// The ring's scenario keys: the workload.ring section of a scenario -> RingSpec
// (docs/SCENARIO.md), through the registry (Protocol::parse).
#include "ina/scenario-sections.h"
#include "protocols/ring/host/spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace inasim::protocols::ring {

using nlohmann::json;
using spec::Reader;

void ParseRingSection(Reader& w, Scenario& s) {
  Reader r = w.Obj("ring");
  RingSpec& ring = s.workload.spec<RingSpec>();
  const uint32_t max_epp = (s.links.mtu_bytes - 20 - 8 - 16) / 4;
  ring.elements_per_packet = r.U32("elements_per_packet", 0, 0, max_epp);
  ring.window_packets = r.U32("window_packets", 64, 1, 1 << 20);
  ring.ack_every = r.U32("ack_every", 8, 1, 1 << 16);
  ring.ack_delay_ps = r.TimePs("ack_delay_us", 2, 0, 1e6, kPsPerUs);
  ring.rto_ps = r.TimePs("rto_us", 200, 0.001, 1e9, kPsPerUs);
  ring.udp_port = static_cast<uint16_t>(r.U32("udp_port", 4791, 1, 65535));
  r.Done();
}

void ParseWorkload(Reader& w, Scenario& s) { ParseRingSection(w, s); }

}  // namespace inasim::protocols::ring
