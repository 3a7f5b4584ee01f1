// Which links the workload and the background traffic can use, from the
// routing tables the switches forward with (RoutingTable: every equal-cost
// shortest path, which ECMP, spraying and adaptive forwarding choose among).
// `inasim compare` uses it to warn when the two never share a link, so that
// no protocol can disturb the background or be disturbed by it.
#pragma once

#include "ina/scenario.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace inasim {

/// The hosts a run uses, selected exactly as the runner and Background do.
struct RunHostSets {
  std::vector<uint32_t> workload;
  std::vector<uint32_t> flows;       ///< background.flows' hosts (list flows: their endpoints)
  std::vector<uint32_t> congestion;  ///< background.congestion's hosts
};
RunHostSets SelectRunHosts(const Scenario& s, uint32_t num_hosts);

/// {"hosts": {"workload", "flows", "congestion"}, "links": {"directed",
/// "workload", "background", "shared"}, "shared_examples": ["h3->leaf0", ...],
/// "note"}: counts of directed links (a link's two directions count apart).
/// Workload links: the routes between any two workload hosts (ring and
/// host-to-host traffic; an aggregation tree's routes to its root, which lie
/// on them whenever the workload spans two leaves). Background links: the
/// routes of every source -> destination pair the flows can draw (Poisson:
/// any two hosts of the set; a list: its flows) and of congestion senders to
/// their peers (any two of its hosts).
nlohmann::json TrafficLinksJson(const Scenario& s);

}  // namespace inasim
