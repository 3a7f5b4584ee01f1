// Canary's scenario keys shared with static trees: workload.send_noise.
#pragma once

#include "common/spec_reader.h"
#include "ina/scenario.h"

namespace inasim::protocols::canary {

/// workload.send_noise (canary-fgcs24 §5.2.5, Fig. 11): read by canary and static_tree.
void ParseSendNoise(spec::Reader& w, Scenario& s);

}  // namespace inasim::protocols::canary
