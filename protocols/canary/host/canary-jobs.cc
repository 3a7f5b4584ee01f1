#include "protocols/canary/host/canary-jobs.h"

#include "congestion/load_balancer.h"
#include "ina/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace inasim {

using nlohmann::json;

namespace {

// Sums the numeric counters of two results objects (non-numbers are left out).
void AddCounters(json& into, const json& from) {
  for (auto it = from.begin(); it != from.end(); ++it) {
    if (!it.value().is_number_unsigned()) continue;
    into[it.key()] = (into.contains(it.key()) ? into[it.key()].get<uint64_t>() : 0) + it.value().get<uint64_t>();
  }
}

// collectives.csv of one job with a leading `job` column.
std::string WithJobColumn(const std::string& csv, uint32_t j, bool header) {
  std::string out;
  size_t start = 0;
  bool first = true;
  while (start < csv.size()) {
    size_t end = csv.find('\n', start);
    if (end == std::string::npos) end = csv.size();
    const std::string line = csv.substr(start, end - start);
    if (first) {
      if (header) out += "job," + line + "\n";
    } else if (!line.empty()) {
      out += fmt::format("{},{}\n", j, line);
    }
    first = false;
    start = end + 1;
  }
  return out;
}

}  // namespace

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

void CanaryJobSet::Report(const Scenario& s, bool finished, WorkloadReport& out) const {
  if (jobs_.size() == 1) {
    jobs_[0]->Report(s, finished, out);
    return;
  }
  ReportSeveral(s, finished, out);
}

void CanaryJobSet::ReportSeveral(const Scenario& s, bool finished, WorkloadReport& out) const {
  // The report's parts by the names this function has always used.
  nlohmann::json& w = out.workload;
  std::vector<std::string>& csv_names = out.csv_names;
  std::vector<std::string>& csv_texts = out.csv_texts;
  std::string& summary = out.summary;
  bool& correct = out.correct;
  uint64_t& payload_delivered = out.payload_delivered;
  const bool canary_mode = jobs_[0]->mode() == InaTreeMode::kCanary;
  json per_job = json::array(), hosts = json::object(), leaders = json::object();
  std::string collectives;
  double goodput_sum = 0, duration_sum = 0;
  double goodput_min = 0, goodput_max = 0;
  uint64_t checked = 0, mism = 0, ranks = 0;
  correct = true;
  for (uint32_t j = 0; j < jobs_.size(); ++j) {
    WorkloadReport job_out;
    jobs_[j]->Report(s, finished, job_out);
    payload_delivered += job_out.payload_delivered;
    json& wj = job_out.workload;
    const std::vector<std::string>& names = job_out.csv_names;
    const std::vector<std::string>& texts = job_out.csv_texts;
    const bool ok = job_out.correct;
    correct &= ok;
    const double goodput = wj["goodput_gbps"].get<double>();
    goodput_sum += goodput;
    goodput_min = j == 0 ? goodput : std::min(goodput_min, goodput);
    goodput_max = j == 0 ? goodput : std::max(goodput_max, goodput);
    duration_sum += wj["mean_duration_s"].get<double>();
    checked += wj["elements_checked"].get<uint64_t>();
    mism += wj["mismatches"].get<uint64_t>();
    ranks += wj["ranks"].get<uint64_t>();
    AddCounters(hosts, wj["hosts"]);
    if (wj.contains("leaders")) AddCounters(leaders, wj["leaders"]);
    per_job.push_back({{"job", j}, {"ranks", wj["ranks"]}, {"mean_duration_s", wj["mean_duration_s"]},
                       {"goodput_gbps", goodput}, {"correct", ok}, {"elements_checked", wj["elements_checked"]},
                       {"mismatches", wj["mismatches"]}});
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == "collectives.csv") collectives += WithJobColumn(texts[i], j, j == 0);
      // One program per switch serves every job: job 0's table is the whole fabric's.
      if (j == 0 && (names[i] == "canary_switches.csv" || names[i] == "static_tree_switches.csv")) {
        csv_names.push_back(names[i]);
        csv_texts.push_back(texts[i]);
      }
    }
    if (j == 0) {
      w = {{"type", "allreduce"}, {"protocol", wj["protocol"]}, {"bytes", wj["bytes"]},
           {"elements", wj["elements"]}, {"elements_per_packet", wj["elements_per_packet"]},
           {"iterations_requested", wj["iterations_requested"]}};
      if (canary_mode) {
        w["timeout_s"] = wj["timeout_s"];
        w["table_partition"] = wj["table_partition"];
        w["table_share"] = wj["table_share"];  // each job's, equal
        w["switches"] = wj["switches"];  // fabric-wide: every job's blocks
        w["peak_descriptors"] = wj["peak_descriptors"];
      } else {
        w["trees_per_job"] = wj["trees"];
        w["switches"] = wj["switches"];  // fabric-wide: every job's trees
        w["peak_descriptors"] = wj["peak_descriptors"];
      }
      w["send_noise"] = wj["send_noise"];
    }
  }
  const double n = static_cast<double>(jobs_.size());
  w["jobs"] = jobs_.size();
  w["host_split"] = s.workload.jobs_contiguous ? "the selected hosts in id order, cut into equal consecutive groups"
                                     : "seeded shuffle of the selected hosts, dealt into equal groups";
  w["ranks"] = ranks;
  w["mean_duration_s"] = duration_sum / n;
  w["goodput_gbps"] = goodput_sum / n;  // canary-fgcs24 Fig. 10a: the average over the concurrent allreduces
  w["min_goodput_gbps"] = goodput_min;
  w["max_goodput_gbps"] = goodput_max;
  w["elements_checked"] = checked;
  w["mismatches"] = mism;
  w["correct"] = correct;
  w["hosts"] = hosts;
  if (canary_mode) {
    leaders.erase("packets_per_block");  // a ratio: not summed
    w["leaders"] = leaders;
  }
  w["per_job"] = per_job;
  csv_names.push_back("collectives.csv");
  csv_texts.push_back(collectives);
  summary += fmt::format("{} jobs of {} allreduce of {} over {} hosts in all: mean goodput {:.2f} Gb/s per job "
                         "(min {:.2f}, max {:.2f})\n",
                         jobs_.size(), canary_mode ? "canary" : "static_tree", HumanBytes(s.workload.bytes), ranks,
                         goodput_sum / n, goodput_min, goodput_max);
  summary += fmt::format("  result: {} - {} elements checked against the exact sums, {} mismatches\n",
                         VerdictWord(correct, s.workload.data), checked, mism);
}

}  // namespace inasim
