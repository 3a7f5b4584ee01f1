#include "ina/program-counters.h"

#include <fmt/format.h>

#include <stdexcept>

namespace inasim {

ProgramCounters::ProgramCounters(std::vector<Counter> counters)
    : counters_(std::move(counters)), sums_(counters_.size(), 0), csv_("switch,tier") {
  for (const Counter& c : counters_)
    if (c.where != Where::kSum) csv_ += "," + c.name;
  csv_ += '\n';
}

void ProgramCounters::Add(std::string_view switch_name, uint32_t tier, std::initializer_list<uint64_t> values) {
  if (values.size() != counters_.size())
    throw std::logic_error(fmt::format("switch {}: {} counters, {} declared", switch_name, values.size(),
                                       counters_.size()));
  csv_ += fmt::format("{},{}", switch_name, tier);
  size_t i = 0;
  for (uint64_t v : values) {
    if (counters_[i].where != Where::kCsv) sums_[i] += v;
    if (counters_[i].where != Where::kSum) csv_ += fmt::format(",{}", v);
    ++i;
  }
  csv_ += '\n';
  ++switches_;
}

nlohmann::json ProgramCounters::Sums() const {
  nlohmann::json sums = nlohmann::json::object();
  for (size_t i = 0; i < counters_.size(); ++i)
    if (counters_[i].where != Where::kCsv) sums[counters_[i].name] = sums_[i];
  return sums;
}

}  // namespace inasim
