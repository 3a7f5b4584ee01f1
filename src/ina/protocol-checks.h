// What a protocol tells the scenario checks (src/ina/scenario-checks.cc, run
// by `validate` and `run` alike) about a scenario that uses it. Each protocol
// defines `inasim::protocols::<name>::kChecks` (in its host/workload.cc, next
// to the constructors whose checks it calls); the registry points to it.
#pragma once

#include "ina/scenario.h"
#include "topology/topology.h"

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace inasim {

/// A timer a scenario sets (slow-run warnings: one shorter than a frame fires
/// before a packet can be answered).
struct NamedTimer {
  const char* path;  ///< the scenario key
  uint64_t ps;
  double unit_ps;    ///< of the key: 1e6 for _us, 1e3 for _ns
  const char* unit;
};

/// Periodic events counted over the whole simulated-time limit above this are
/// a run of hours (bench/README.md: 0.1 - 0.3 M events/s).
inline constexpr double kSlowRunEvents = 1e9;

struct ProtocolChecks {
  /// Throws ScenarioError when building the workload on `hosts` (selected,
  /// in order) of `t` would fail: the same functions its constructors call.
  void (*check_placement)(const Scenario& s, const topo::Topology& t, const std::vector<uint32_t>& hosts);
  /// Bytes its hosts size up front for a collective (the memory estimate);
  /// 0 when windows bound them.
  double (*state_bytes)(const Scenario& s, size_t hosts);
  /// Its timers, and warnings of its own about runs that could take hours.
  void (*add_warnings)(const Scenario& s, const topo::Topology& t, std::vector<NamedTimer>& timers,
                       std::vector<std::string>& warnings);
  /// The UDP ports its hosts receive on that a scenario key sets (key, port):
  /// background traffic must not be sent to them.
  void (*add_udp_ports)(const Scenario& s, std::vector<std::pair<const char*, uint16_t>>& ports);
};

/// add_warnings of a protocol whose one timer is its spec's `kTimerPs`, set
/// in microseconds by the scenario key `kKey`:
///   constexpr char kTimeoutKey[] = "workload.<name>.timeout_us";
///   ... &AddSpecTimer<MySpec, &MySpec::timeout_ps, kTimeoutKey> ...
template <typename Spec, uint64_t Spec::*kTimerPs, const char* kKey>
void AddSpecTimer(const Scenario& s, const topo::Topology&, std::vector<NamedTimer>& timers,
                  std::vector<std::string>&) {
  timers.push_back({kKey, s.workload.spec<Spec>().*kTimerPs, 1e6, "us"});
}

/// add_udp_ports of a protocol whose hosts receive on its spec's `kPort`, set
/// by the scenario key `kKey`.
template <typename Spec, uint16_t Spec::*kPort, const char* kKey>
void AddSpecUdpPort(const Scenario& s, std::vector<std::pair<const char*, uint16_t>>& ports) {
  ports.emplace_back(kKey, s.workload.spec<Spec>().*kPort);
}

/// check_placement's part for a schedule's collectives that take a count per
/// rank (those whose kind `per_rank` accepts): each must split into `ranks`
/// equal segments, else ScenarioError naming
/// workload.schedule.collectives[i].bytes. `who`: "an NCCL", "a Gloo".
inline void CheckEqualSegments(const Scenario& s, size_t ranks, bool (*per_rank)(CollectiveKind), const char* who) {
  const std::vector<CollectiveKind> kinds = CollectiveKinds(s.workload.schedule);
  const std::vector<uint64_t> elements = CollectiveElements(s.workload.schedule, s.workload.bytes);
  for (size_t i = 0; i < kinds.size() && i < elements.size(); ++i) {
    if (!per_rank(kinds[i]) || elements[i] % ranks == 0) continue;
    throw ScenarioError(fmt::format("workload.schedule.collectives[{}].bytes: {} {} takes a count per rank, so its "
                                    "{} elements must split into {} equal segments (one per rank)",
                                    i, who, CollectiveKindName(kinds[i]), elements[i], ranks));
  }
}

}  // namespace inasim
