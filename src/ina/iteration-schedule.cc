#include "ina/iteration-schedule.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <stdexcept>
#include <utility>

namespace inasim {

namespace {

/// splitmix64: the seeded, platform-independent stream of the draws.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// A uniform in (0, 1) from a 64-bit draw (53 bits, never 0).
double Unit(uint64_t x) { return (static_cast<double>(x >> 11) + 0.5) / 9007199254740992.0; }

}  // namespace

std::vector<uint64_t> CollectiveElements(const ScheduleSpec& schedule, uint64_t bytes) {
  if (!schedule.given) return {bytes / 4};
  std::vector<uint64_t> out;
  for (uint64_t b : schedule.bytes) out.push_back(b / 4);
  return out;
}

const char* CollectiveKindName(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kBroadcast: return "broadcast";
    default: return "allreduce";
  }
}

uint64_t CollectiveChecks(CollectiveKind kind, uint32_t n, uint64_t elements) {
  switch (kind) {
    case CollectiveKind::kReduceScatter: return elements;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kBroadcast: return (uint64_t{n} - 1) * elements;
    default: return uint64_t{n} * elements;
  }
}

double TrafficFactor(CollectiveKind kind, uint32_t n) {
  switch (kind) {
    case CollectiveKind::kAllreduce: return static_cast<double>(2 * (n - 1)) / n;
    case CollectiveKind::kBroadcast: return 1.0;
    default: return static_cast<double>(n - 1) / n;
  }
}

const char* BoundFormula(CollectiveKind kind) {
  if (kind == CollectiveKind::kAllreduce) return "2(n-1)/n * S / B";
  return kind == CollectiveKind::kBroadcast ? "S / B" : "(n-1)/n * S / B";
}

std::string CompactBoundFormula(CollectiveKind kind) {
  std::string out = BoundFormula(kind);
  out.erase(std::remove(out.begin(), out.end(), ' '), out.end());
  return out;
}

std::vector<CollectiveKind> CollectiveKinds(const ScheduleSpec& schedule) {
  if (!schedule.given) return {CollectiveKind::kAllreduce};
  return schedule.kinds;
}

bool ScheduleSpec::has_communicators() const {
  return std::any_of(communicator.begin(), communicator.end(), [](int32_t i) { return i != kWorld; });
}

uint32_t CommunicatorSet(const ScheduleSpec& schedule, size_t c) {
  if (!schedule.given || c >= schedule.communicator.size() || schedule.communicator[c] == ScheduleSpec::kWorld)
    return 0;
  return static_cast<uint32_t>(schedule.communicator[c]) + 1;
}

std::vector<std::vector<uint32_t>> GroupsOf(const ScheduleSpec& schedule, size_t c, uint32_t ranks) {
  if (const uint32_t set = CommunicatorSet(schedule, c); set > 0) return schedule.communicator_groups[set - 1];
  std::vector<uint32_t> all(ranks);
  for (uint32_t r = 0; r < ranks; ++r) all[r] = r;
  return {all};
}

void CheckCommunicators(const ScheduleSpec& schedule, uint32_t ranks) {
  for (size_t c = 0; c < schedule.roots.size(); ++c) {
    size_t smallest = ranks;
    if (c < schedule.communicator.size() && schedule.communicator[c] != ScheduleSpec::kWorld)
      for (const auto& group : schedule.communicator_groups[schedule.communicator[c]])
        smallest = std::min(smallest, group.size());
    if (schedule.roots[c] >= smallest)
      throw std::invalid_argument("workload.schedule.collectives[" + std::to_string(c) + "].root: " +
                                  std::to_string(schedule.roots[c]) + ", but the smallest group it runs in has " +
                                  std::to_string(smallest) + " ranks (places 0.." + std::to_string(smallest - 1) + ")");
  }
  for (size_t i = 0; i < schedule.communicator_groups.size(); ++i) {
    const std::string key = "workload.schedule.communicators." + schedule.communicator_names[i];
    std::vector<int> seen(ranks, 0);
    for (const auto& group : schedule.communicator_groups[i])
      for (uint32_t r : group) {
        if (r >= ranks)
          throw std::invalid_argument(key + ": rank " + std::to_string(r) + ", but the job has " +
                                      std::to_string(ranks) + " ranks (0.." + std::to_string(ranks - 1) + ")");
        ++seen[r];
      }
    for (uint32_t r = 0; r < ranks; ++r)
      if (seen[r] != 1)
        throw std::invalid_argument(key + ": rank " + std::to_string(r) + " is in " + std::to_string(seen[r]) +
                                    " groups; a communicator puts every rank of the job (0.." +
                                    std::to_string(ranks - 1) + ") in exactly one");
  }
}

uint64_t LargestCollectiveBytes(const ScheduleSpec& schedule, uint64_t bytes) {
  if (!schedule.given) return bytes;
  return *std::max_element(schedule.bytes.begin(), schedule.bytes.end());
}

double ComputeFactor(const ScheduleSpec& spec, uint64_t seed, uint32_t rank, uint32_t iteration) {
  double f = 1;
  if (spec.jitter_cv > 0) {
    // Box-Muller on two draws of (seed, rank, iteration).
    const uint64_t key = Mix(Mix(seed ^ 0x6a09e667f3bcc909ull) ^ (uint64_t{rank} << 32 | iteration));
    const double z = std::sqrt(-2 * std::log(Unit(Mix(key)))) * std::cos(2 * M_PI * Unit(Mix(key + 1)));
    f = std::max(0.1, 1 + spec.jitter_cv * z);
  }
  if (std::find(spec.straggler_ranks.begin(), spec.straggler_ranks.end(), rank) != spec.straggler_ranks.end())
    f *= spec.straggler_factor;
  return f;
}

IterationSchedule::IterationSchedule(uint32_t ranks, uint64_t compute_ps, uint64_t after_ps,
                                     std::vector<uint64_t> ready_ps, std::function<double(uint32_t, uint32_t)> factor,
                                     std::vector<int64_t> after)
    : compute_ps_(compute_ps),
      after_ps_(after_ps),
      ready_ps_(std::move(ready_ps)),
      after_(std::move(after)),
      ends_(ranks, std::vector<uint64_t>(ready_ps_.size())),
      factor_(std::move(factor)),
      starts_(ranks) {
  if (ready_ps_.empty()) throw std::invalid_argument("an iteration needs at least one collective");
  if (after_.empty()) after_.assign(ready_ps_.size(), kAfterStart);
  if (after_.size() != ready_ps_.size()) throw std::invalid_argument("IterationSchedule: one `after` per collective");
  for (size_t c = 0; c < after_.size(); ++c)
    if (after_[c] < kAfterCompute || after_[c] >= static_cast<int64_t>(c))
      throw std::invalid_argument("IterationSchedule: collective " + std::to_string(c) +
                                  " waits for one that is not before it");
}

IterationSchedule IterationSchedule::Of(const ScheduleSpec& spec, uint32_t ranks, size_t collectives,
                                        uint64_t gap_ps, uint64_t seed) {
  if (!spec.given) return IterationSchedule(ranks, 0, gap_ps, std::vector<uint64_t>(collectives, 0));
  CheckCommunicators(spec, ranks);
  for (size_t i = 0; i < spec.straggler_ranks.size(); ++i)
    if (spec.straggler_ranks[i] >= ranks)
      throw std::invalid_argument("workload.schedule.stragglers.ranks[" + std::to_string(i) + "]: rank " +
                                  std::to_string(spec.straggler_ranks[i]) + ", but the job has " +
                                  std::to_string(ranks) + " ranks (0.." + std::to_string(ranks - 1) + ")");
  std::function<double(uint32_t, uint32_t)> factor;
  if (spec.jitter_cv > 0 || !spec.straggler_ranks.empty())
    factor = [spec, seed](uint32_t rank, uint32_t it) { return ComputeFactor(spec, seed, rank, it); };
  return IterationSchedule(ranks, spec.compute_ps, spec.after_ps, spec.ready_ps, std::move(factor), spec.after);
}

uint64_t IterationSchedule::Scaled(uint64_t ps, uint32_t rank, uint32_t iteration) const {
  if (!factor_) return ps;
  return static_cast<uint64_t>(std::llround(static_cast<double>(ps) * factor_(rank, iteration)));
}

uint64_t IterationSchedule::StartOf(uint32_t rank, uint64_t next, uint64_t now) {
  std::vector<uint64_t>& starts = starts_.at(rank);
  const uint64_t c = next % ready_ps_.size();
  const uint64_t it = next / ready_ps_.size();
  const auto iteration = static_cast<uint32_t>(it);
  if (c == 0) {
    if (it != starts.size()) throw std::logic_error("IterationSchedule: collectives asked for out of order");
    // The previous step ends when its compute and its last collective are
    // both done; the optimizer step follows.
    const uint64_t begin =
        it == 0 ? now : std::max(now, starts.back() + Scaled(compute_ps_, rank, iteration - 1)) + after_ps_;
    starts.push_back(begin);
  } else {
    ends_[rank][c - 1] = now;
  }
  // A slower rank is slower at every compute: its ready times scale too.
  const int64_t after = after_[c];
  const uint64_t from = after == kAfterStart     ? starts.back()
                        : after == kAfterCompute ? starts.back() + Scaled(compute_ps_, rank, iteration)
                                                 : ends_[rank][static_cast<size_t>(after)];
  return std::max(now, from + Scaled(ready_ps_[c], rank, iteration));
}

std::vector<IterationStart> IterationSchedule::Starts(uint32_t job, const std::vector<uint32_t>& hosts) const {
  std::vector<IterationStart> out;
  for (uint32_t rank = 0; rank < starts_.size() && rank < hosts.size(); ++rank)
    for (uint32_t it = 0; it < starts_[rank].size(); ++it)
      out.push_back({job, it, rank, hosts[rank], starts_[rank][it], Scaled(compute_ps_, rank, it), after_ps_});
  return out;
}

}  // namespace inasim
