// Per-switch counters of a protocol's switch programs, for its report: one
// CSV row per switch (`switch,tier,` then the counters) and the sums over
// the switches (results.json), from one declaration of the counters' names
// and one list of values per switch. Pure C++ (no ns-3).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace inasim {

class ProgramCounters {
 public:
  /// Where a counter goes: the CSV and the sums, the CSV only (a peak or a
  /// state, not summed), or the sums only.
  enum class Where : uint8_t { kBoth, kCsv, kSum };
  struct Counter {
    std::string name;
    Where where = Where::kBoth;
  };
  explicit ProgramCounters(std::vector<Counter> counters);

  /// One switch: its values, one per declared counter, in their order.
  /// Throws std::logic_error on another count.
  void Add(std::string_view switch_name, uint32_t tier, std::initializer_list<uint64_t> values);
  size_t switches() const { return switches_; }
  /// "switch,tier,<the CSV counters>" and a row per switch.
  const std::string& csv() const { return csv_; }
  /// The summed counters by name.
  nlohmann::json Sums() const;

 private:
  std::vector<Counter> counters_;
  std::vector<uint64_t> sums_;
  std::string csv_;
  size_t switches_ = 0;
};

}  // namespace inasim
