// The ring's scenario section, also read by PANAMA (its cluster's ring jobs).
#pragma once

#include "common/spec_reader.h"
#include "ina/scenario.h"

namespace inasim::protocols::ring {

/// workload.ring: the transport of the host ring allreduce.
void ParseRingSection(spec::Reader& w, Scenario& s);

}  // namespace inasim::protocols::ring
