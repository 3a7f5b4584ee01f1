// Scenario checks that need the topology and the workload's chosen hosts
// (scenario-checks.cc): ParseScenario runs them so that `inasim validate`
// rejects everything `inasim run` would reject while building the workload.
#pragma once

#include "ina/scenario.h"
#include "topology/topology.h"

#include <string>
#include <vector>

namespace inasim {

/// Throws ScenarioError naming the scenario key when the workload cannot be
/// placed on `t` as a run would place it (too many workers on a switch,
/// workers on several switches, switches with too many ports, more jobs than
/// hosts allow, trees that cannot be built, ...).
void CheckWorkloadPlacement(const Scenario& s, const topo::Topology& t);

/// Settings that are valid but could make a run take hours or days: a
/// retransmission or timeout timer shorter than one full frame at the host
/// link rate, or periodic events (samples, Canary clock packets) adding up
/// to more than 1e9 over stop.max_sim_time_ms. One line per finding,
/// starting with the scenario key (docs/SCENARIO.md "Warnings").
std::vector<std::string> SlowRunWarnings(const Scenario& s, const topo::Topology& t);

}  // namespace inasim
