// The ring's scenario section, workload.ring, also read by PANAMA (its
// cluster's ring jobs; parsed by spec.cc).
#pragma once

#include "common/spec_fields.h"
#include "ina/scenario.h"

#include <cstdint>

namespace inasim {

struct RingSpec {
  uint32_t elements_per_packet = 0;
  uint32_t window_packets = 64;
  uint32_t ack_every = 8;
  uint64_t ack_delay_ps = 2'000'000;
  uint64_t rto_ps = 200'000'000;
  uint16_t udp_port = 4791;
};

namespace protocols::ring {

/// Context: the scenario parsed so far (links before the workload), for the
/// one bound that depends on it (elements_per_packet and the MTU).
using RingSection = spec::Section<RingSpec, Scenario>;
/// workload.ring, declared once (also read by PANAMA's ring jobs).
const RingSection& Section();

/// workload.ring: the transport of the host ring allreduce.
void ParseRingSection(spec::Reader& w, Scenario& s);

}  // namespace protocols::ring

}  // namespace inasim
