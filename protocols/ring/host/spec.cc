// The ring's scenario keys: the workload.ring section of a scenario -> RingSpec
// (docs/SCENARIO.md), declared once (spec::Section), read through the
// registry (Protocol::parse).
#include "ina/scenario-sections.h"
#include "protocols/ring/host/spec.h"

namespace inasim::protocols::ring {

using spec::Reader;

const RingSection& Section() {
  // IP 20 + UDP 8 + ring header 16 bytes; 2293 is the bound at the largest MTU
  // (9216), the schema's maximum.
  static const RingSection section =
      RingSection("workload.ring", "Ring allreduce transport")
          .U32("elements_per_packet", &RingSpec::elements_per_packet, 0, 0, (9216 - 44) / 4, "elements",
               "Elements per data packet; `0` fills the MTU (IP 20 + UDP 8 + ring header 16 = 44 bytes of headers).")
          .MaxFrom([](const Scenario& s) -> uint64_t { return (s.links.mtu_bytes - 20 - 8 - 16) / 4; },
                   "(mtu_bytes - 44) / 4 (364 at MTU 1500)")
          .U32("window_packets", &RingSpec::window_packets, 64, 1, 1 << 20, "packets",
               "Unacknowledged packets allowed per stream.")
          .U32("ack_every", &RingSpec::ack_every, 8, 1, 1 << 16, "packets",
               "One (cumulative + 64-bit selective) ACK per this many data packets.")
          .TimePs("ack_delay_us", &RingSpec::ack_delay_ps, 2, 0, 1e6, spec::TimeUnit::kUs,
                  "A partial ACK batch is flushed after this long.")
          .TimePs("rto_us", &RingSpec::rto_ps, 200, 0.001, 1e9, spec::TimeUnit::kUs, "Retransmission timeout.")
          .U16("udp_port", &RingSpec::udp_port, 4791, 1, 65535, "", "UDP port of the ring traffic.");
  return section;
}

void ParseRingSection(Reader& w, Scenario& s) {
  Section().ParseObject(w, "ring", s.workload.spec<RingSpec>(), s);
}

void ParseWorkload(Reader& w, Scenario& s) { ParseRingSection(w, s); }

std::vector<const spec::Doc*> WorkloadSections() { return {&Section()}; }

}  // namespace inasim::protocols::ring
