// What a run's results say about why it was slow, and each host's timeline:
//   hosts.csv: one row per rank per listed collective (start, end, the
//   communication time, the gap before it, the host's timeouts in it, how far
//   it finished behind the collective's first rank);
//   results.json "diagnosis" and the summary's "why slow" lines: the link
//   directions with the deepest queues (as queueing delay), the most drops
//   and the longest pauses; the hosts with the most timeouts; the ranks that
//   finished last most often.
// Timeouts come from the host agents' `Timeout` trace sources (SwitchML,
// Canary, PANAMA, P4SGD, the UDP ring), connected by name to every host
// application.
#pragma once

#include "ina/collective-table.h"
#include "ina/iteration-schedule.h"

#include <nlohmann/json.hpp>
#include <ns3/callback.h>
#include <ns3/node.h>

#include <cstdint>
#include <string>
#include <vector>

namespace inasim {

class Fabric;
namespace topo {
class Topology;
}

/// One link direction's congestion, for the rankings (the runner fills one
/// per direction as it writes links.csv).
struct LinkDirection {
  uint32_t link = 0;
  std::string from, to;
  double max_queueing_delay_s = 0;  ///< its deepest queue drained at its rate
  uint64_t max_queue_bytes = 0, drops = 0, marks = 0;
  double paused_s = 0;
};

/// Connects `callback` (job, id: `inasim::TimeoutTracedCallback`) to the
/// `Timeout` source of every application on `host` that has one; returns
/// how many had one.
uint32_t ConnectAgentTimeouts(ns3::Node& host, const ns3::CallbackBase& callback);

/// Every host agent's retransmission-timer expiries, per host, in time order.
class HostTimeouts {
 public:
  /// Connects to the `Timeout` source of every application on every host
  /// (call after the workload has built its agents).
  explicit HostTimeouts(Fabric& fabric);
  /// Host h's timeouts in [from_ps, to_ps].
  uint64_t Count(uint32_t host, uint64_t from_ps, uint64_t to_ps) const;
  uint64_t Total(uint32_t host) const { return times_[host].size(); }
  uint32_t agents() const { return agents_; }

 private:
  std::vector<std::vector<uint64_t>> times_;
  uint32_t agents_ = 0;
};

/// hosts.csv (kHostsHeader, then a row per span, in the spans' order).
std::string HostsCsv(const topo::Topology& topology, const std::vector<RankSpan>& spans, const HostTimeouts& timeouts);
inline constexpr const char* kHostsHeader =
    "job,iteration,collective,rank,host,start_s,end_s,comm_s,gap_before_s,timeouts,lag_s\n";

/// iterations.csv (kIterationsHeader, a row per rank per iteration begun):
/// its start, compute end, last collective's end, step time and the
/// communication the compute did not hide.
std::string IterationsCsv(const topo::Topology& topology, const std::vector<IterationStart>& starts,
                          const std::vector<RankSpan>& spans);
/// results.json's workload.step: the mean and largest step and exposed
/// communication over every rank's complete iterations; adds a summary line.
nlohmann::json StepSummary(const std::vector<IterationStart>& starts, const std::vector<RankSpan>& spans,
                           std::string& summary);
inline constexpr const char* kIterationsHeader =
    "job,iteration,rank,host,start_s,compute_end_s,comm_end_s,step_s,exposed_comm_s,collectives\n";

/// results.json's "diagnosis"; appends the "why slow" lines to `summary`.
nlohmann::json Diagnosis(const topo::Topology& topology, const std::vector<LinkDirection>& links,
                         const std::vector<RankSpan>& spans, const HostTimeouts& timeouts, std::string& summary);

}  // namespace inasim
