#include "ina/program-counters.h"

#include <fmt/format.h>

#include <stdexcept>

namespace inasim {

ProgramCounters::ProgramCounters(std::vector<Counter> counters)
    : counters_(std::move(counters)), sums_(counters_.size(), 0), csv_("switch,tier") {
  for (const Counter& c : counters_)
    if (c.shown & Shown::kCsv) csv_ += "," + c.name;
  csv_ += '\n';
}

void ProgramCounters::AddRow(std::string_view switch_name, uint32_t tier, const std::vector<uint64_t>& values) {
  if (values.size() != counters_.size())
    throw std::logic_error(fmt::format("switch {}: {} counters, {} declared", switch_name, values.size(),
                                       counters_.size()));
  csv_ += fmt::format("{},{}", switch_name, tier);
  for (size_t i = 0; i < values.size(); ++i) {
    if (counters_[i].shown & Shown::kSums) sums_[i] += values[i];
    if (counters_[i].shown & Shown::kCsv) csv_ += fmt::format(",{}", values[i]);
  }
  csv_ += '\n';
  ++switches_;
}

nlohmann::json ProgramCounters::Sums() const {
  nlohmann::json sums = nlohmann::json::object();
  for (size_t i = 0; i < counters_.size(); ++i)
    if (counters_[i].shown & Shown::kSums) sums[counters_[i].name] = sums_[i];
  return sums;
}

}  // namespace inasim
