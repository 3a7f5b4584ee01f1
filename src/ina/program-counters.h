// Per-switch counters of a protocol's switch programs, for its report: one
// CSV row per switch (`switch,tier,` then the counters) and the sums over
// the switches (results.json). Which counters, in which order, and where
// each goes come from the program's own declaration of its counters
// (`Stats::kCounters`, p4model/common/counters.h), the one place a counter
// is named; a report adds only the values a program keeps outside its Stats
// (peaks, state). Pure C++ (no ns-3).
#pragma once

#include "p4model/common/counters.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace inasim {

class ProgramCounters {
 public:
  using Shown = p4::Shown;
  /// A column: its name, and whether it goes to the CSV, the sums, or both
  /// (Shown::kCsv for a peak or a state, not summed).
  struct Counter {
    std::string name;
    uint8_t shown = Shown::kCsv | Shown::kSums;
  };

  /// The counters `declared` shows in a report (CSV or sums), in its order,
  /// then `extras`.
  template <typename Stats, size_t N>
  static ProgramCounters Of(const p4::StatCounter<Stats> (&declared)[N], std::vector<Counter> extras = {}) {
    std::vector<Counter> columns;
    for (const p4::StatCounter<Stats>& c : declared)
      if (c.shown & kReported) columns.push_back({c.name, static_cast<uint8_t>(c.shown & kReported)});
    columns.insert(columns.end(), extras.begin(), extras.end());
    return ProgramCounters(std::move(columns));
  }

  /// One switch: the counters of `stats` that `declared` reports, then the
  /// `extras`' values in their order. `declared` is the list the table was
  /// made `Of`; throws std::logic_error if the count differs.
  template <typename Stats>
  void Add(std::string_view switch_name, uint32_t tier, const Stats& stats, p4::StatCounters<Stats> declared,
           std::initializer_list<uint64_t> extras = {}) {
    std::vector<uint64_t> values;
    for (const p4::StatCounter<Stats>& c : declared)
      if (c.shown & kReported) values.push_back(stats.*c.member);
    values.insert(values.end(), extras.begin(), extras.end());
    AddRow(switch_name, tier, values);
  }
  size_t switches() const { return switches_; }
  /// "switch,tier,<the CSV counters>" and a row per switch.
  const std::string& csv() const { return csv_; }
  /// The summed counters by name.
  nlohmann::json Sums() const;

 private:
  static constexpr uint8_t kReported = Shown::kCsv | Shown::kSums;
  explicit ProgramCounters(std::vector<Counter> counters);
  void AddRow(std::string_view switch_name, uint32_t tier, const std::vector<uint64_t>& values);

  std::vector<Counter> counters_;
  std::vector<uint64_t> sums_;
  std::string csv_;
  size_t switches_ = 0;
};

}  // namespace inasim
