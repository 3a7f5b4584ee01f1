#include "protocols/canary/host/canary-jobs.h"

#include "congestion/load_balancer.h"
#include "ina/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace inasim {

using nlohmann::json;

namespace {

// Job j's data seed: job 0 keeps the scenario's seed, so one job is the plain run.
uint64_t JobSeed(uint64_t seed, uint32_t j) { return j == 0 ? seed : seed ^ congestion::Mix64(0x6a6f6273ull + j); }

}  // namespace

std::vector<std::vector<uint32_t>> CanaryJobSet::SplitHosts(const std::vector<uint32_t>& hosts, uint32_t jobs,
                                                            uint64_t seed, bool contiguous) {
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

void CanaryJobSet::CheckPlacement(const topo::Topology& t, const std::vector<uint32_t>& hosts, InaTreeMode mode,
                                  uint64_t seed, const WorkloadSpec& spec, uint32_t jobs) {
  if (jobs == 1) {
    CanaryJob::CheckPlacement(t, hosts, mode, seed, spec, 0);
    return;
  }
  const auto groups = SplitHosts(hosts, jobs, seed, spec.jobs_contiguous);
  for (uint32_t j = 0; j < jobs; ++j) CanaryJob::CheckPlacement(t, groups[j], mode, JobSeed(seed, j), spec, j);
}

CanaryJobSet::CanaryJobSet(Fabric& fabric, const std::vector<uint32_t>& hosts, InaTreeMode mode, DataPattern pattern,
                           uint64_t seed, const WorkloadSpec& spec, uint32_t jobs) {
  if (jobs == 1) {
    jobs_.push_back(std::make_unique<CanaryJob>(fabric, hosts, mode, pattern, seed, spec));
  } else {
    const auto groups = SplitHosts(hosts, jobs, seed, spec.jobs_contiguous);
    for (uint32_t j = 0; j < jobs; ++j) {
      WorkloadSpec js = spec;
      js.spec<CanarySpec>().application_id = spec.spec<CanarySpec>().application_id + j;  // §3.4: each application its own ids
      if (js.spec<CanarySpec>().application_id > 255)
        throw std::invalid_argument(fmt::format("job {}: application id {} does not fit 8 bits", j,
                                                js.spec<CanarySpec>().application_id));
      jobs_.push_back(std::make_unique<CanaryJob>(fabric, groups[j], mode, pattern, JobSeed(seed, j), js, j));
    }
  }
  if (jobs_.size() > 1 && mode == InaTreeMode::kStaticTree) {
    // Each job's trees cover some switches; the last program on a switch holds
    // every job's trees, so job 0 reports the counters of all of them.
    std::vector<uint32_t> all;
    for (const auto& job : jobs_) all.insert(all.end(), job->switch_vertices().begin(), job->switch_vertices().end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    jobs_[0]->SetReportedSwitches(std::move(all));
  }
  for (auto& job : jobs_)
    job->on_finished = [this] {
      if (++jobs_done_ == jobs_.size() && on_finished) on_finished();
    };
}

void CanaryJobSet::Start(uint64_t at_ps) {
  for (auto& job : jobs_) job->Start(at_ps);
}

double CanaryJobSet::progress() const {
  double sum = 0;
  for (const auto& job : jobs_) sum += job->progress();
  return sum / static_cast<double>(jobs_.size());
}

void CanaryJobSet::Report(const Scenario& s, bool finished, WorkloadReport& out) const {
  const CanaryJob& first = *jobs_[0];
  CollectiveTable table;
  CanaryHostCounters hosts;
  uint64_t blocks = 0, iterations_done = first.iterations();
  for (uint32_t j = 0; j < jobs_.size(); ++j) {
    jobs_[j]->AddCollectives(table, out.payload_delivered);
    hosts += jobs_[j]->HostTotals();
    blocks += jobs_[j]->total_blocks();
    iterations_done = std::min(iterations_done, table.job(j).completed);
  }
  out.correct = finished && table.correct();
  out.workload = table.CoreJson({first.protocol(), "iteration", s.workload.bytes, first.iterations(), iterations_done},
                                out.correct);
  // One program per switch serves every job: job 0 reports the whole fabric's
  // (CanaryJobSet's constructor); the hosts' and leaders' counters are summed.
  std::string switches_csv;
  json details = first.Details(s, hosts, blocks, switches_csv);
  out.AddCsv("collectives.csv", table.Csv());
  out.AddCsv(fmt::format("{}_switches.csv", first.protocol()), std::move(switches_csv));
  if (jobs_.size() == 1) {
    out.summary += first.Summary(s, table, details, hosts, finished, out.correct);
    out.workload[first.protocol()] = std::move(details);
    return;
  }
  details.erase("memory_model");  // one job's model
  out.workload[first.protocol()] = std::move(details);
  out.workload["host_split"] = s.workload.jobs_contiguous
                                   ? "the selected hosts in id order, cut into equal consecutive groups"
                                   : "seeded shuffle of the selected hosts, dealt into equal groups";
  out.summary += table.JobsSummary(fmt::format("{} allreduce of {}", first.protocol(), HumanBytes(s.workload.bytes)),
                                   VerdictWord(out.correct, s.workload.data));
}

}  // namespace inasim
