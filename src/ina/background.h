// Background traffic of a scenario: Poisson DCTCP flows and Canary's moving
// congestion, installed on a Fabric next to the workload, and their metrics
// (FCT and slowdown by size bucket, congestion goodput) for results.json and
// flows.csv.
#pragma once

#include "congestion/flow_generator.h"
#include "congestion/tcp-flows.h"
#include "congestion/tcp-trace.h"
#include "congestion/uniform-congestion.h"
#include "ina/fabric.h"
#include "ina/scenario.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace inasim {

/// What a flow alone on an empty network would take: the handshake's round
/// trip, the first full segment's store-and-forward latency along the path,
/// and every remaining byte (with per-segment headers) at the path's
/// bottleneck rate. Slow start is not part of it, as in pFabric/HPCC.
/// The path and its latencies are Fabric::IdleOneWayPs's.
uint64_t IdealFctPs(const Fabric& fabric, uint32_t src, uint32_t dst, uint64_t bytes, uint32_t mss);

class Background {
 public:
  /// `workload_hosts`: resolves host sets given as "others".
  Background(const Scenario& s, Fabric& fabric, const std::vector<uint32_t>& workload_hosts);

  /// Installs everything; `on_flows_done` runs when the last flow completes.
  void Install(std::function<void()> on_flows_done);
  /// The measured work is over: congestion senders stop.
  void Stop();

  bool has_flows() const { return flows_ != nullptr; }
  /// Completed flows / flows, for progress.
  double flow_progress() const;

  /// Payload bytes background traffic delivered to receiving applications.
  uint64_t payload_delivered() const;

  /// Adds "background" to results.json (and outputs.tcp_trace's counts), flows.csv (and
  /// tcp_trace.csv) to the tables and lines to the summary.
  void Report(nlohmann::json& results, std::vector<std::string>& csv_names, std::vector<std::string>& csv_texts,
              std::string& summary) const;

  /// The generated flows and what the generator offered (for tests).
  const std::vector<congestion::FlowSpec>& flow_specs() const { return specs_; }

 private:
  void InstallTcpTrace(const congestion::TcpTraceSpec& spec);

  const Scenario& s_;
  Fabric& fabric_;
  congestion::PoissonFlowParams poisson_;
  std::vector<congestion::FlowSpec> specs_;
  std::unique_ptr<congestion::TcpFlowSet> flows_;
  std::unique_ptr<congestion::TcpTrace> tcp_trace_;  // outputs.tcp_trace
  std::unique_ptr<congestion::UniformCongestion> congestion_;
  std::vector<uint32_t> congestion_hosts_;
};

/// The hosts of each background part, as Background selects them: the
/// flows' (with a `list`, its flows' endpoints in first-seen order) and the
/// congestion's; empty for a part that is not enabled. Shared by Background,
/// the scenario checks and the traffic-link analysis (traffic-links.h).
struct BackgroundHosts {
  std::vector<uint32_t> flows;
  std::vector<uint32_t> congestion;
};
BackgroundHosts SelectBackgroundHosts(const Scenario& s, uint32_t num_hosts,
                                      const std::vector<uint32_t>& workload_hosts);

/// Resolves a HostSelection against the topology (and, for "others", the
/// workload's hosts). Shared by the workload and the background.
std::vector<uint32_t> SelectHosts(const HostSelection& sel, uint32_t num_hosts, uint64_t seed,
                                  const std::vector<uint32_t>& workload_hosts = {});

}  // namespace inasim
