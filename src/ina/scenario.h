// Scenario files: JSON -> a typed, validated Scenario. Every key has a unit in
// its name or in docs/SCENARIO.md, a default, and a range. Errors name the JSON
// path and the problem; validation finishes before anything is built or written.
#pragma once

#include "ina/iteration-schedule.h"
#include "common/scenario_error.h"
#include "congestion/egress_queue.h"
#include "congestion/flow_generator.h"
#include "congestion/flow_size_cdf.h"
#include "congestion/tcp_config.h"
#include "congestion/load_balancer.h"
#include "ina/tensor-data.h"
#include "topology/topology.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace inasim {

enum class TopologyType : uint8_t { kSingleRack, kLeafSpine, kFatTree };
enum class WorkloadType : uint8_t { kNone, kAllreduce, kPermutation };
enum class Placement : uint8_t { kFirst, kSpread, kRandom };

struct TopologySpec {
  TopologyType type = TopologyType::kSingleRack;
  uint32_t hosts = 8;            // single_rack
  uint32_t leaves = 0, spines = 0, hosts_per_leaf = 0;  // leaf_spine
  uint32_t k = 0, hosts_per_edge = 0;                   // fat_tree
};

struct LinksSpec {
  double host_rate_gbps = 100;
  double fabric_rate_gbps = 100;
  uint64_t host_delay_ps = 500'000;
  uint64_t fabric_delay_ps = 500'000;
  uint32_t mtu_bytes = 1500;
  uint32_t wire_overhead_bytes = 24;
};

struct SwitchSpec {
  congestion::PortConfig port;
  std::vector<std::pair<uint64_t, uint64_t>> ecn_threshold_by_rate;  ///< (bit/s, K)
  congestion::ForwardingPolicy forwarding = congestion::ForwardingPolicy::kEcmp;
  double adaptive_threshold = 0.5;
  bool adaptive_by_destination = false;  ///< `adaptive_default: "destination"`
  uint64_t hash_seed = 0;
  uint64_t forwarding_latency_ps = 0;
};

struct HostSelection {
  uint32_t count = 0;  // 0 = every host
  Placement placement = Placement::kFirst;
  std::vector<uint32_t> list;  // explicit ids (overrides count/placement)
  bool others = false;         // background only: every host the workload does not use
};

/// Each protocol's own spec, held by type (a protocol's parser fills its own;
/// the scenario core never names one). Copies are deep, so a copied Scenario
/// can be changed without touching the original.
class ProtocolSpecs {
 public:
  ProtocolSpecs() = default;
  ProtocolSpecs(const ProtocolSpecs& o) {
    for (const auto& [key, spec] : o.items_) items_.emplace_back(key, spec->Clone());
  }
  ProtocolSpecs& operator=(const ProtocolSpecs& o) {
    ProtocolSpecs copy(o);
    items_.swap(copy.items_);
    return *this;
  }
  ProtocolSpecs(ProtocolSpecs&&) noexcept = default;
  ProtocolSpecs& operator=(ProtocolSpecs&&) noexcept = default;

  /// The spec of type T, default-constructed on first use.
  template <class T>
  T& Get() {
    for (auto& [key, spec] : items_)
      if (key == Key<T>()) return static_cast<Holder<T>&>(*spec).value;
    items_.emplace_back(Key<T>(), std::make_unique<Holder<T>>());
    return static_cast<Holder<T>&>(*items_.back().second).value;
  }
  /// The spec of type T as set, or T's defaults.
  template <class T>
  const T& Get() const {
    for (const auto& [key, spec] : items_)
      if (key == Key<T>()) return static_cast<const Holder<T>&>(*spec).value;
    static const T kDefaults{};
    return kDefaults;
  }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual std::unique_ptr<Base> Clone() const = 0;
  };
  template <class T>
  struct Holder final : Base {
    T value{};
    std::unique_ptr<Base> Clone() const override { return std::make_unique<Holder<T>>(*this); }
  };
  /// One address per type (a function-local static of a template: one object per program).
  template <class T>
  static const void* Key() {
    static const char key = 0;
    return &key;
  }
  std::vector<std::pair<const void*, std::unique_ptr<Base>>> items_;
};

struct WorkloadSpec {
  WorkloadType type = WorkloadType::kAllreduce;
  HostSelection hosts;
  // allreduce
  std::string protocol;  ///< a registered protocol (the parser fills in DefaultProtocol())
  uint64_t bytes = 4ull << 20;
  DType dtype = DType::kInt32;
  DataPattern data = DataPattern::kHashed;
  uint32_t iterations = 1;
  uint64_t compute_gap_ps = 0;
  uint64_t start_ps = 0;
  ScheduleSpec schedule;  ///< workload.schedule (ina/iteration-schedule.h)
  /// Each protocol's own section (protocols/<name>/host/spec.h), by type:
  /// `s.workload.spec<SwitchMLSpec>()`. The scenario core does not know them.
  ProtocolSpecs protocol_specs;
  template <class T>
  T& spec() { return protocol_specs.Get<T>(); }
  template <class T>
  const T& spec() const { return protocol_specs.Get<T>(); }
  uint32_t jobs = 1;  ///< concurrent allreduces over disjoint host groups (canary, static_tree)
  bool jobs_contiguous = false;  ///< job_split "contiguous": groups are id ranges, not a seeded shuffle
  // permutation
  uint64_t flow_bytes = 2'000'000;
  uint32_t payload_bytes = 1472;
  double rate_gbps = 0;  // 0 = the host's line rate
};

struct LinkFault {
  uint32_t link = 0;
  double loss_rate = -1;          // < 0: unchanged
  std::optional<uint64_t> down_at_ps;
};

/// A slow host (`faults.hosts[i]`): from `at_ps` on, every frame it sends
/// arrives `delay_ps` later than its link alone would deliver it (a
/// straggling host stack or NIC).
struct HostFault {
  uint32_t host = 0;
  uint64_t delay_ps = 0;
  uint64_t at_ps = 0;
};

/// A switch that fails (`faults.switches[i]`): all its links go down at `down_at_ps`.
struct SwitchFault {
  uint32_t vertex = 0;  ///< the switch's topology vertex
  uint64_t down_at_ps = 0;
};

struct FaultSpec {
  double loss_rate = 0;           // every link, both directions
  uint64_t reconverge_ps = 1'000'000'000;  // routing recomputed this long after a link fails
  std::vector<LinkFault> links;
  std::vector<SwitchFault> switches;
  std::vector<HostFault> hosts;
};

/// Poisson TCP flows (scenario `background.flows`).
struct BackgroundFlowsSpec {
  bool enabled = false;
  /// Explicit flows (`background.flows.list`) instead of Poisson arrivals.
  std::vector<congestion::FlowSpec> list;
  HostSelection hosts;
  std::string size_distribution = "web_search";  ///< as given: a built-in name or a file
  std::shared_ptr<const congestion::FlowSizeCdf> sizes;  ///< already scaled by size_scale
  double size_scale = 1;            ///< every drawn size (and PANAMA's 40 MB short/long split) times this
  double load = 0.4;                ///< fraction of each host's link rate
  /// "short" / "long": of the drawn flows keep only those under / from the
  /// 40 MB x size_scale split (PANAMA's Ideal: each class on its own network).
  std::string only = "all";
  uint64_t start_ps = 0, stop_ps = 0;
  bool wait_for_completion = true;  ///< the run ends only when every flow has finished
  congestion::TcpConfig tcp;
};

/// Canary's moving congestion (scenario `background.congestion`).
struct CongestionSpec {
  bool enabled = false;
  HostSelection hosts;
  uint64_t message_bytes = 1 << 20;
  uint32_t payload_bytes = 1472;
  double rate_gbps = 0;   ///< 0 = host line rate
  uint64_t start_ps = 0;
  uint64_t stop_ps = 0;   ///< 0 = until the workload (and background flows) finish
  uint16_t udp_port = 7;
  uint32_t socket_buffer_bytes = 212992;  ///< SO_SNDBUF of each sender (0: unlimited)
  bool permutation = false;  ///< peers: "permutation" (one random cycle per message round) or "uniform"
};

struct BackgroundSpec {
  BackgroundFlowsSpec flows;
  CongestionSpec congestion;
};

/// outputs.pcap: Wireshark captures of chosen links (pcap-capture.h).
struct PcapSpec {
  bool enabled = false;              ///< the section was given
  std::vector<uint32_t> links;       ///< link numbers, as links.csv's `link`
  std::vector<std::string> nodes;    ///< node names: every link of each
  uint64_t from_ps = 0;              ///< frames that start on the wire in [from, until)
  uint64_t until_ps = UINT64_MAX;
  uint64_t max_bytes = 64ull << 20;  ///< per file, headers included
  uint32_t snaplen = 65535;          ///< bytes kept of each frame
};

/// outputs.trace: the structured event trace (event-trace.h).
struct TraceSpec {
  bool enabled = false;               ///< the section was given
  std::vector<uint32_t> links;        ///< link numbers; with `nodes` empty too: everything
  std::vector<std::string> nodes;     ///< node names: every link of each, its program or agents
  std::vector<std::string> events;    ///< TraceEventNames(); empty: all
  std::vector<std::string> protocols; ///< the protocol column's values kept; empty: all
  std::vector<uint64_t> ids;          ///< keyed frames with these ids only; empty: all rows
  uint64_t from_ps = 0;               ///< events in [from, until)
  uint64_t until_ps = UINT64_MAX;
  uint64_t max_rows = 1'000'000;      ///< rows kept; the rest counted
};

struct OutputSpec {
  bool links_csv = true;
  uint64_t sample_interval_ps = 0;  // 0 = no queue/utilisation time series
  /// samples.csv's links: by number and by node; both empty: every link.
  std::vector<uint32_t> sample_links;
  std::vector<std::string> sample_nodes;
  bool gzip = false;  ///< the CSV tables as <name>.csv.gz
  PcapSpec pcap;
  TraceSpec trace;
  congestion::TcpTraceSpec tcp_trace;
};

struct Scenario {
  std::string name = "scenario";
  std::string description;
  uint64_t seed = 1;
  /// The scenario file's directory (empty: the working directory): files a
  /// scenario names are relative to it.
  std::string base_dir;
  TopologySpec topology;
  LinksSpec links;
  SwitchSpec sw;
  congestion::PortConfig host_port;
  WorkloadSpec workload;
  BackgroundSpec background;
  FaultSpec faults;
  uint64_t max_sim_time_ps = 1'000'000'000'000ULL;  // 1 s
  OutputSpec outputs;
  /// The scenario as run: every key, defaults filled in (echoed in results).
  nlohmann::json resolved;
};

/// The topology graph a scenario describes.
topo::Topology BuildTopology(const Scenario& s);

/// Reads a JSON file (error: path, line and column of a syntax error).
nlohmann::json LoadScenarioJson(const std::string& file);
/// Applies one `--set a.b.c=value` override (value parsed as JSON, else string).
void ApplyOverride(nlohmann::json& doc, const std::string& assignment);
/// Validates and types a scenario document. Topology-dependent checks (host
/// counts, link indices, names) are done here too, by building the topology.
/// Relative file names inside it (flow-size CDFs) are resolved against
/// `base_dir` (the scenario file's directory; empty = the working directory).
Scenario ParseScenario(const nlohmann::json& doc, const std::string& base_dir = "");

}  // namespace inasim
