#include "ina/iteration-schedule.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace inasim {

IterationSchedule::IterationSchedule(uint32_t ranks, uint64_t compute_ps, uint64_t after_ps,
                                     std::vector<uint64_t> ready_ps)
    : compute_ps_(compute_ps), after_ps_(after_ps), ready_ps_(std::move(ready_ps)), starts_(ranks) {
  if (ready_ps_.empty()) throw std::invalid_argument("an iteration needs at least one collective");
}

IterationSchedule IterationSchedule::Of(const ScheduleSpec& spec, uint32_t ranks, size_t collectives,
                                        uint64_t gap_ps) {
  if (spec.given) return IterationSchedule(ranks, spec.compute_ps, spec.after_ps, spec.ready_ps);
  return IterationSchedule(ranks, 0, gap_ps, std::vector<uint64_t>(collectives, 0));
}

uint64_t IterationSchedule::StartOf(uint32_t rank, uint64_t next, uint64_t now) {
  std::vector<uint64_t>& starts = starts_.at(rank);
  const uint64_t c = next % ready_ps_.size();
  const uint64_t it = next / ready_ps_.size();
  if (c == 0) {
    if (it != starts.size()) throw std::logic_error("IterationSchedule: collectives asked for out of order");
    // The previous step ends when its compute and its last collective are
    // both done; the optimizer step follows.
    const uint64_t begin = it == 0 ? now : std::max(now, starts.back() + compute_ps_) + after_ps_;
    starts.push_back(begin);
  }
  return std::max(now, starts.back() + ready_ps_[c]);
}

std::vector<IterationStart> IterationSchedule::Starts(uint32_t job, const std::vector<uint32_t>& hosts) const {
  std::vector<IterationStart> out;
  for (uint32_t rank = 0; rank < starts_.size() && rank < hosts.size(); ++rank)
    for (uint32_t it = 0; it < starts_[rank].size(); ++it)
      out.push_back({job, it, rank, hosts[rank], starts_[rank][it], compute_ps_, after_ps_});
  return out;
}

}  // namespace inasim
