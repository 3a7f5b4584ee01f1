#include "protocols/canary/host/canary-jobs.h"

#include "ina/job-workload.h"
#include "ina/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace inasim {

using nlohmann::json;

void CanaryJobSet::CheckPlacement(const topo::Topology& t, const std::vector<uint32_t>& hosts, InaTreeMode mode,
                                  uint64_t seed, const WorkloadSpec& spec, uint32_t jobs) {
  const std::vector<JobPlacement> placed = PlaceJobs(hosts, jobs, seed, spec.jobs_contiguous);
  for (uint32_t j = 0; j < jobs; ++j) CanaryJob::CheckPlacement(t, placed[j].hosts, mode, placed[j].seed, spec, j);
}

CanaryJobSet::CanaryJobSet(Fabric& fabric, const std::vector<uint32_t>& hosts, InaTreeMode mode, DataPattern pattern,
                           uint64_t seed, const WorkloadSpec& spec, uint32_t jobs) {
  const std::vector<JobPlacement> placed = PlaceJobs(hosts, jobs, seed, spec.jobs_contiguous);
  for (uint32_t j = 0; j < jobs; ++j) {
    WorkloadSpec js = spec;
    js.spec<CanarySpec>().application_id = spec.spec<CanarySpec>().application_id + j;  // §3.4: each application its own ids
    if (js.spec<CanarySpec>().application_id > 255)
      throw std::invalid_argument(fmt::format("job {}: application id {} does not fit 8 bits", j,
                                              js.spec<CanarySpec>().application_id));
    Add(std::make_unique<CanaryJob>(fabric, placed[j].hosts, mode, pattern, placed[j].seed, js, j));
  }
  if (jobs_.size() > 1 && mode == InaTreeMode::kStaticTree) {
    // Each job's trees cover some switches; the one program on a switch holds
    // every job's trees, so job 0 reports the counters of all of them.
    std::vector<uint32_t> all;
    for (const auto& job : jobs_) all.insert(all.end(), job->switch_vertices().begin(), job->switch_vertices().end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    jobs_[0]->SetReportedSwitches(std::move(all));
  }
}

std::unique_ptr<Workload> CanaryJobSet::MakeWorkload(const WorkloadContext& context, InaTreeMode mode) {
  const Scenario& s = context.scenario;
  return MakeJobWorkload<CanaryJobSet>(context, [&] {
    return std::make_unique<CanaryJobSet>(context.fabric, context.hosts, mode, s.workload.data, s.seed, s.workload,
                                          s.workload.jobs);
  });
}

/// results.json diagnosis.protocol: where a block's packets went (canary-fgcs24
/// §3.1.1 stragglers, §3.2.1 collisions, §3.3 recovery), per block of every job.
json CanaryJobSet::Diagnosis(const json& details, uint64_t blocks) {
  const json& sw = details["switches"];
  const json& h = details["hosts"];
  const double b = blocks ? static_cast<double>(blocks) : 1.0;
  return {{"protocol", "canary"},
          {"blocks", blocks},
          {"stragglers_per_block", sw["stragglers"].get<double>() / b},
          {"switch_timeouts_per_block", sw["timeouts"].get<double>() / b},
          {"collisions_per_block", sw["collisions"].get<double>() / b},
          {"leader_packets_per_block", details["leaders"]["packets_per_block"]},
          {"retransmit_requests_per_block", h["retransmit_requests"].get<double>() / b},
          {"reissues_per_block", h["reissues"].get<double>() / b},
          {"note", "stragglers: packets a switch forwarded because its descriptor had already sent the aggregate "
                   "up (canary-fgcs24 §3.1.1); every count per block of every job and iteration"}};
}

void CanaryJobSet::Report(const Scenario& s, bool finished, WorkloadReport& out) const {
  const CanaryJob& first = *jobs_[0];
  CollectiveTable table;
  CanaryHostCounters hosts;
  uint64_t blocks = 0, iterations_done = s.workload.schedule.given ? first.collectives() : first.iterations();
  for (uint32_t j = 0; j < jobs_.size(); ++j) {
    jobs_[j]->AddCollectives(table, out.payload_delivered);
    hosts += jobs_[j]->HostTotals();
    blocks += jobs_[j]->total_blocks();
    iterations_done = std::min(iterations_done, table.job(j).completed);
  }
  out.correct = finished && table.correct();
  const bool scheduled = s.workload.schedule.given;
  out.workload = table.CoreJson({first.protocol(), scheduled ? "collective" : "iteration",
                                 scheduled ? s.workload.schedule.bytes[0] : s.workload.bytes,
                                 scheduled ? first.collectives() : first.iterations(), iterations_done},
                                out.correct);
  for (const auto& job : jobs_) {
    std::vector<IterationStart> starts = job->IterationStarts();
    out.iteration_starts.insert(out.iteration_starts.end(), starts.begin(), starts.end());
  }
  // One program per switch serves every job: job 0 reports the whole fabric's
  // (CanaryJobSet's constructor); the hosts' and leaders' counters are summed.
  std::string switches_csv;
  json details = first.Details(s, hosts, blocks, switches_csv);
  if (first.mode() == InaTreeMode::kCanary) out.diagnosis = Diagnosis(details, blocks);
  out.AddCsv("collectives.csv", table.Csv());
  out.rank_spans = table.rank_spans();
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
