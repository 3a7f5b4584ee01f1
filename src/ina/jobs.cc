#include "ina/jobs.h"

#include "congestion/load_balancer.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace inasim {

std::vector<std::vector<uint32_t>> SplitHosts(const std::vector<uint32_t>& hosts, uint32_t jobs, uint64_t seed,
                                              bool contiguous) {
  if (jobs == 0 || hosts.size() < 2ull * jobs)
    throw std::invalid_argument(fmt::format("{} jobs need at least 2 hosts each; {} hosts are selected", jobs,
                                            hosts.size()));
  std::vector<uint32_t> order = hosts;
  if (jobs > 1 && !contiguous) {
    // Fisher-Yates with SplitMix64: the same on every platform.
    uint64_t state = congestion::Mix64(seed ^ 0x73706c6974ull);
    for (size_t i = order.size() - 1; i > 0; --i) {
      state += 0x9e3779b97f4a7c15ull;
      std::swap(order[i], order[congestion::Mix64(state) % (i + 1)]);
    }
  }
  std::vector<std::vector<uint32_t>> groups(jobs);
  const size_t base = order.size() / jobs, extra = order.size() % jobs;
  size_t next = 0;
  for (uint32_t j = 0; j < jobs; ++j) {
    const size_t n = base + (j < extra ? 1 : 0);
    groups[j].assign(order.begin() + static_cast<std::ptrdiff_t>(next),
                     order.begin() + static_cast<std::ptrdiff_t>(next + n));
    std::sort(groups[j].begin(), groups[j].end());
    next += n;
  }
  return groups;
}

uint64_t JobSeed(uint64_t seed, uint32_t j) { return j == 0 ? seed : seed ^ congestion::Mix64(0x6a6f6273ull + j); }

std::vector<JobPlacement> PlaceJobs(const std::vector<uint32_t>& hosts, uint32_t jobs, uint64_t seed,
                                    bool contiguous) {
  if (jobs == 1) return {{hosts, seed}};
  std::vector<JobPlacement> out;
  std::vector<std::vector<uint32_t>> groups = SplitHosts(hosts, jobs, seed, contiguous);
  for (uint32_t j = 0; j < jobs; ++j) out.push_back({std::move(groups[j]), JobSeed(seed, j)});
  return out;
}

}  // namespace inasim
