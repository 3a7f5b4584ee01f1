// A switch program's counters, declared once: each counter's name, its member
// of the program's `Stats`, and where it is shown. DumpState's "stats" object
// (`inasim-p4 replay --dump`) and the reports' per-switch CSV and sums
// (src/ina/program-counters.h) are derived from that one list, so adding a
// counter to a program is one line next to its member, and the three views
// cannot drift apart.
//
//   struct Stats {
//     uint64_t processed = 0;  ///< Process() calls
//     uint64_t collisions = 0;
//     static constexpr StatCounter<Stats> kCounters[] = {
//         {"processed", &Stats::processed}, {"collisions", &Stats::collisions, Shown::kEverywhere}};
//   };
#pragma once

#include "p4model/common/span.h"

#include <nlohmann/json.hpp>

#include <cstdint>

namespace inasim::p4 {

/// Where a counter is shown, as bits: in DumpState's "stats", in the report's
/// per-switch CSV, in the report's sums over the switches (results.json).
/// The bits from kProgram up are a program's own (e.g. the mode a counter
/// belongs to), for DumpedCounters' `with`.
struct Shown {
  static constexpr uint8_t kDump = 1;
  static constexpr uint8_t kCsv = 2;
  static constexpr uint8_t kSums = 4;
  static constexpr uint8_t kEverywhere = kDump | kCsv | kSums;
  static constexpr uint8_t kProgram = 8;
};

template <typename Stats>
struct StatCounter {
  const char* name;
  uint64_t Stats::*member;
  uint8_t shown = Shown::kDump;  ///< Shown:: bits
};

template <typename T>
struct SameType {
  using type = T;
};

/// A program's declared counters (its `Stats::kCounters`, or a part of
/// them). As a parameter, `Stats` is not deduced from it (only from the
/// `Stats` argument), so the declared array converts.
template <typename Stats>
using StatCounters = Span<const StatCounter<typename SameType<Stats>::type>>;

/// The counters of `declared` that have every bit of `with` (by default: the
/// ones shown in the dump), by name.
template <typename Stats>
nlohmann::json DumpedCounters(const Stats& stats, StatCounters<Stats> declared, uint8_t with = Shown::kDump) {
  nlohmann::json out = nlohmann::json::object();
  for (const StatCounter<Stats>& c : declared)
    if ((c.shown & with) == with) out[c.name] = stats.*c.member;
  return out;
}

}  // namespace inasim::p4
