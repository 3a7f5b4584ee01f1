#include "ina/diagnosis.h"

#include "ina/fabric.h"
#include "ina/units.h"
#include "topology/topology.h"

#include <fmt/format.h>
#include <ns3/application.h>
#include <ns3/callback.h>
#include <ns3/node.h>
#include <ns3/simulator.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <tuple>
#include <utility>

namespace inasim {

using nlohmann::json;

namespace {

constexpr size_t kTop = 5;  ///< entries per diagnosis list

json LinkJson(const LinkDirection& x) {
  return {{"link", x.link},         {"from", x.from},     {"to", x.to},
          {"max_queue_bytes", x.max_queue_bytes}, {"max_queueing_delay_s", x.max_queueing_delay_s},
          {"drops", x.drops},       {"ecn_marks", x.marks}, {"paused_s", x.paused_s}};
}

/// The top kTop link directions by `key`, those with key > 0 only, ties by link order.
template <typename Key>
json TopLinks(std::vector<LinkDirection> links, Key key) {
  std::stable_sort(links.begin(), links.end(), [&](const auto& a, const auto& b) { return key(a) > key(b); });
  json out = json::array();
  for (const LinkDirection& x : links) {
    if (out.size() == kTop || !(key(x) > 0)) break;
    out.push_back(LinkJson(x));
  }
  return out;
}

/// Per (job, collective): the earliest end over its ranks.
std::map<std::pair<uint32_t, uint32_t>, uint64_t> FirstEnds(const std::vector<RankSpan>& spans) {
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> first;
  for (const RankSpan& r : spans) {
    auto [it, fresh] = first.emplace(std::make_pair(r.job, r.collective), r.end_ps);
    if (!fresh) it->second = std::min(it->second, r.end_ps);
  }
  return first;
}

/// Per host: how often it finished a collective last, and its mean lag behind the first rank.
json Stragglers(const topo::Topology& t, const std::vector<RankSpan>& spans) {
  if (spans.empty()) return json::array();
  const auto first = FirstEnds(spans);
  std::map<std::pair<uint32_t, uint32_t>, std::pair<uint64_t, uint32_t>> last;  // (job, coll) -> (end, host)
  std::map<uint32_t, std::pair<double, uint64_t>> lag;                          // host -> (sum s, collectives)
  for (const RankSpan& r : spans) {
    auto [it, fresh] = last.emplace(std::make_pair(r.job, r.collective), std::make_pair(r.end_ps, r.host));
    if (!fresh && r.end_ps > it->second.first) it->second = {r.end_ps, r.host};
    auto& l = lag[r.host];
    l.first += PsToS(r.end_ps - first.at({r.job, r.collective}));
    ++l.second;
  }
  std::map<uint32_t, uint64_t> last_count;
  for (const auto& [key, end_host] : last) ++last_count[end_host.second];
  std::vector<std::pair<double, uint32_t>> order;  // (mean lag, host)
  for (const auto& [host, l] : lag) order.emplace_back(l.first / static_cast<double>(l.second), host);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  json out = json::array();
  for (const auto& [mean_lag, host] : order) {
    if (out.size() == kTop) break;
    out.push_back({{"host", t.node(host).name},
                   {"mean_lag_s", mean_lag},
                   {"last_to_finish", last_count.count(host) ? last_count.at(host) : 0},
                   {"collectives", lag.at(host).second}});
  }
  return out;
}

json TopTimeouts(const topo::Topology& t, const HostTimeouts& timeouts) {
  std::vector<std::pair<uint64_t, uint32_t>> order;
  for (uint32_t h = 0; h < t.num_hosts(); ++h)
    if (timeouts.Total(h) > 0) order.emplace_back(timeouts.Total(h), h);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  json out = json::array();
  for (size_t i = 0; i < order.size() && i < kTop; ++i)
    out.push_back({{"host", t.node(order[i].second).name}, {"timeouts", order[i].first}});
  return out;
}

}  // namespace

uint32_t ConnectAgentTimeouts(ns3::Node& host, const ns3::CallbackBase& callback) {
  uint32_t agents = 0;
  for (uint32_t a = 0; a < host.GetNApplications(); ++a)
    agents += host.GetApplication(a)->TraceConnectWithoutContext("Timeout", callback) ? 1 : 0;
  return agents;
}

HostTimeouts::HostTimeouts(Fabric& fabric) : times_(fabric.topology().num_hosts()) {
  for (uint32_t h = 0; h < times_.size(); ++h)
    agents_ += ConnectAgentTimeouts(*fabric.host(h), ns3::MakeBoundCallback(
                                                         +[](std::vector<uint64_t>* times, uint32_t, uint64_t) {
                                                           times->push_back(static_cast<uint64_t>(
                                                               ns3::Simulator::Now().GetPicoSeconds()));
                                                         },
                                                         &times_[h]));
}

uint64_t HostTimeouts::Count(uint32_t host, uint64_t from_ps, uint64_t to_ps) const {
  const std::vector<uint64_t>& t = times_[host];
  return static_cast<uint64_t>(std::upper_bound(t.begin(), t.end(), to_ps) -
                               std::lower_bound(t.begin(), t.end(), from_ps));
}

std::string HostsCsv(const topo::Topology& topology, const std::vector<RankSpan>& spans,
                     const HostTimeouts& timeouts) {
  const auto first = FirstEnds(spans);
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> previous_end;  // (job, rank) -> end of its last collective
  std::string csv = kHostsHeader;
  auto out = std::back_inserter(csv);
  for (const RankSpan& r : spans) {
    fmt::format_to(out, "{},{},{},{},{},{:.12f},{:.12f},{:.12f},", r.job, r.iteration, r.collective, r.rank,
                   topology.node(r.host).name, PsToS(r.start_ps), PsToS(r.end_ps), PsToS(r.end_ps - r.start_ps));
    const auto prev = previous_end.find({r.job, r.rank});
    if (prev != previous_end.end()) fmt::format_to(out, "{:.12f}", PsToS(r.start_ps - prev->second));
    fmt::format_to(out, ",{},{:.12f}\n", timeouts.Count(r.host, r.start_ps, r.end_ps),
                   PsToS(r.end_ps - first.at({r.job, r.collective})));
    previous_end[{r.job, r.rank}] = r.end_ps;
  }
  return csv;
}

namespace {

/// (job, iteration, rank) -> (its last collective's end, collectives finished).
using IterationEnds = std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::pair<uint64_t, uint32_t>>;

IterationEnds EndsOf(const std::vector<RankSpan>& spans) {
  IterationEnds ends;
  for (const RankSpan& r : spans) {
    auto& e = ends[{r.job, r.iteration, r.rank}];
    e.first = std::max(e.first, r.end_ps);
    ++e.second;
  }
  return ends;
}

}  // namespace

std::string IterationsCsv(const topo::Topology& topology, const std::vector<IterationStart>& starts,
                          const std::vector<RankSpan>& spans) {
  const IterationEnds ends = EndsOf(spans);
  std::string csv = kIterationsHeader;
  auto out = std::back_inserter(csv);
  for (const IterationStart& s : starts) {
    const auto it = ends.find({s.job, s.iteration, s.rank});
    const uint64_t compute_end = s.start_ps + s.compute_ps;
    fmt::format_to(out, "{},{},{},{},{:.12f},{:.12f},", s.job, s.iteration, s.rank, topology.node(s.host).name,
                   PsToS(s.start_ps), PsToS(compute_end));
    if (it == ends.end()) {  // not one collective of it finished
      csv += ",,,0\n";
      continue;
    }
    const uint64_t comm_end = it->second.first;
    fmt::format_to(out, "{:.12f},{:.12f},{:.12f},{}\n", PsToS(comm_end),
                   PsToS(std::max(comm_end, compute_end) - s.start_ps),
                   PsToS(comm_end > compute_end ? comm_end - compute_end : 0), it->second.second);
  }
  return csv;
}

json StepSummary(const std::vector<IterationStart>& starts, const std::vector<RankSpan>& spans, std::string& summary) {
  const IterationEnds ends = EndsOf(spans);
  uint32_t per_iteration = 0;  // every iteration has the schedule's collectives
  for (const auto& [key, e] : ends) per_iteration = std::max(per_iteration, e.second);
  uint64_t n = 0;
  double step_sum = 0, step_max = 0, exposed_sum = 0, exposed_max = 0;
  for (const IterationStart& s : starts) {
    const auto it = ends.find({s.job, s.iteration, s.rank});
    if (it == ends.end() || it->second.second < per_iteration) continue;  // not complete at this rank
    const uint64_t compute_end = s.start_ps + s.compute_ps, comm_end = it->second.first;
    const double step = PsToS(std::max(comm_end, compute_end) - s.start_ps);
    const double exposed = PsToS(comm_end > compute_end ? comm_end - compute_end : 0);
    ++n;
    step_sum += step, exposed_sum += exposed;
    step_max = std::max(step_max, step), exposed_max = std::max(exposed_max, exposed);
  }
  const double mean = n ? step_sum / n : 0, exposed_mean = n ? exposed_sum / n : 0;
  if (n)
    summary += fmt::format("  training step: {:.6g} s mean ({:.6g} s max), exposed communication {:.6g} s mean "
                           "({:.6g} s max), over {} rank-iterations (iterations.csv)\n",
                           mean, step_max, exposed_mean, exposed_max, n);
  return {{"rank_iterations", n},
          {"mean_s", mean},
          {"max_s", step_max},
          {"exposed_comm_mean_s", exposed_mean},
          {"exposed_comm_max_s", exposed_max},
          {"note", "over every rank's complete iterations: step = the later of compute end and last collective's "
                   "end, minus the iteration's start; exposed communication = the part of it after the compute"}};
}

json Diagnosis(const topo::Topology& topology, const std::vector<LinkDirection>& links,
               const std::vector<RankSpan>& spans, const HostTimeouts& timeouts, std::string& summary) {
  json d = {{"links_by_queueing_delay", TopLinks(links, [](const auto& x) { return x.max_queueing_delay_s; })},
            {"links_by_drops", TopLinks(links, [](const auto& x) { return x.drops; })},
            {"links_by_pause", TopLinks(links, [](const auto& x) { return x.paused_s; })},
            {"hosts_by_timeouts", TopTimeouts(topology, timeouts)},
            {"stragglers", Stragglers(topology, spans)},
            {"note", "top 5 of each; queueing delay = the deepest queue drained at its link's rate; lag = how long "
                     "after the collective's first rank a host finished it"}};
  summary += "  why slow:";
  if (!d["links_by_queueing_delay"].empty()) {
    const json& q = d["links_by_queueing_delay"][0];
    summary += fmt::format(" deepest queue {}->{} (link {}) {:.3g} us;", q["from"].get<std::string>(),
                           q["to"].get<std::string>(), q["link"].get<uint32_t>(),
                           q["max_queueing_delay_s"].get<double>() * 1e6);
  }
  if (!d["links_by_drops"].empty())
    summary += fmt::format(" most drops {}->{} ({});", d["links_by_drops"][0]["from"].get<std::string>(),
                           d["links_by_drops"][0]["to"].get<std::string>(),
                           d["links_by_drops"][0]["drops"].get<uint64_t>());
  if (!d["links_by_pause"].empty())
    summary += fmt::format(" longest paused {}->{} ({:.3g} us);", d["links_by_pause"][0]["from"].get<std::string>(),
                           d["links_by_pause"][0]["to"].get<std::string>(),
                           d["links_by_pause"][0]["paused_s"].get<double>() * 1e6);
  if (!d["hosts_by_timeouts"].empty())
    summary += fmt::format(" most timeouts {} ({});", d["hosts_by_timeouts"][0]["host"].get<std::string>(),
                           d["hosts_by_timeouts"][0]["timeouts"].get<uint64_t>());
  if (!d["stragglers"].empty())
    summary += fmt::format(" slowest rank {} ({:.3g} us behind the first, last in {} of {})",
                           d["stragglers"][0]["host"].get<std::string>(),
                           d["stragglers"][0]["mean_lag_s"].get<double>() * 1e6,
                           d["stragglers"][0]["last_to_finish"].get<uint64_t>(),
                           d["stragglers"][0]["collectives"].get<uint64_t>());
  summary += "\n";
  return d;
}

}  // namespace inasim
