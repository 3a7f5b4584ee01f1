// Scenario files: JSON -> a typed, validated Scenario. Every key has a unit in
// its name or in docs/SCENARIO.md, a default, and a range. Errors name the JSON
// path and the problem; validation finishes before anything is built or written.
#pragma once

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

struct RingSpec {
  uint32_t elements_per_packet = 0;
  uint32_t window_packets = 64;
  uint32_t ack_every = 8;
  uint64_t ack_delay_ps = 2'000'000;
  uint64_t rto_ps = 200'000'000;
  uint16_t udp_port = 4791;
};

/// SwitchML workers (scenario `workload.switchml`); defaults are the client
/// library's (p4app-switchML@b5c74a04 dev_root/client_lib/src/configs).
enum class SwitchMLTimerMode : uint8_t {
  kPaper,     ///< Algorithm 4: one timer per outstanding packet, from its first send
  kUpstream,  ///< dpdk_worker_thread.cc as written (first batch: timer slot and packet id off by one)
};
struct SwitchMLSpec {
  uint32_t elements_per_packet = 256;            ///< general.cfg packet_numel: 64 or 256
  uint32_t pool_size = 512;                      ///< max_outstanding_packets of the one worker thread
  uint64_t timeout_ps = 10'000'000'000ULL;       ///< general.cfg timeout = 10 ms
  uint64_t timeout_threshold = 100;              ///< timeouts before the timeout doubles
  uint64_t timeout_threshold_increment = 100;
  SwitchMLTimerMode timer_mode = SwitchMLTimerMode::kPaper;
  bool vcl = true;                               ///< quantize as the VCL (vector) build does
  uint16_t harvest3_port = 320;                  ///< 1024 B HARVEST3 recirculation port (448 = upstream as written)
  uint16_t worker_udp_port = 4000;               ///< dpdk.cfg worker_port
  uint64_t pass_latency_ps = 520'000;            ///< per pipeline pass (paper: ~520 ns)
  std::vector<uint64_t> tensors;                 ///< bytes of each tensor of an iteration (empty: workload.bytes)
  uint32_t warmup_tensors = 0;                   ///< left out of the summary means
  uint64_t timeline_bin_ps = 0;                  ///< worker 0's packets sent per bin (0 = off)
};

/// Canary hosts and switches (scenario `workload.canary`; canary-fgcs24 §3-§5).
enum class CanaryTimeoutMode : uint8_t { kExact, kClockScan };
struct CanarySpec {
  uint32_t elements_per_packet = 256;          ///< k (§5.1: 256 in the simulations)
  uint64_t timeout_ps = 1'000'000;             ///< switch timeout t (§5.2.5: 1..3 us)
  CanaryTimeoutMode timeout_mode = CanaryTimeoutMode::kExact;  ///< §4.3
  uint64_t clock_period_ps = 10'000;           ///< clock_scan: packet-generator period
  uint32_t scan_entries_per_clock = 1;         ///< clock_scan: entries checked per clock packet
  uint32_t table_size = 32768;                 ///< descriptors per switch (§5.1: 32K)
  bool direct_index = false;                   ///< id -> entry without hashing (§3.2.1)
  /// table_partition "per_job": each job's application id gets its own
  /// 1/jobs of the table (a power of two), as §5.2.4 runs concurrent jobs.
  bool partition_per_job = false;
  uint32_t multicast_shard_ports = 16;         ///< §4.2
  uint64_t pass_latency_ps = 520'000;          ///< per switch pipeline pass
  uint32_t window_blocks = 1024;               ///< outstanding blocks per host (above the BDP with timeouts)
  uint32_t nic_queue_bytes = 8192;             ///< host's reduce packets queued in its NIC at most (0: no limit)
  uint64_t retransmit_timeout_ps = 500'000'000;  ///< host per-block timer (§3.3)
  uint32_t max_failures = 3;                   ///< re-issues before host-based reduction (§3.3)
  uint32_t application_id = 1;                 ///< high 8 bits of every block id (§3.4)
  /// Tests only (not a scenario key): leaders in this rank order instead of
  /// the default (racks interleaved).
  std::vector<uint32_t> leader_order;
};

/// P4SGD: FPGA workers and the P4SGD switch (scenario `workload.p4sgd`; p4sgd §3-§5).
enum class P4SGDTask : uint8_t { kTrain, kAllreduce };
struct P4SGDSpec {
  std::string mode = "paper";            ///< switch program: "paper" (Algorithm 2/3)
  P4SGDTask task = P4SGDTask::kTrain;
  bool data_parallel = false;            ///< §2.1 / Fig. 9: gradients summed instead of activations
  bool hashed = false;                   ///< arithmetic "hashed": timing only, hashed values (sums still checked)
  std::string dataset = "synthetic";     ///< "synthetic" or a LIBSVM file
  uint32_t samples = 2048, features = 2048;  ///< synthetic / hashed dimensions
  uint32_t max_samples = 0;              ///< LIBSVM: first N samples (0 = all)
  double density = 0.1;                  ///< synthetic: fraction of non-zero features
  std::string loss = "logistic";         ///< linear | logistic | hinge
  uint32_t precision_bits = 4;           ///< §5.1: 4-bit features
  uint32_t minibatch = 64;               ///< B; micro-batches of 8 (§4.1.2)
  uint32_t epochs = 2;
  double learning_rate = 1.0;
  // The FPGA worker (§4.1): engines x banks, bit-serial over 64 features per cycle.
  uint32_t engines = 8;                  ///< §4.1.1: up to 8 per U280
  double clock_mhz = 250;                ///< Table III
  uint32_t bank_features = 64;           ///< §4.1.3: 64 bit-serial multipliers per bank
  double hbm_gbps_per_engine = 460;      ///< 4 HBM channels per engine (§4.1.1), Gb/s
  uint32_t pipeline_cycles = 32;         ///< fill latency of a forward or backward pass (ours)
  uint64_t fpga_tx_ps = 300'000;         ///< FPGA send path, ns (ours: calibrated, see README)
  uint64_t fpga_rx_ps = 300'000;         ///< FPGA receive path
  // Protocol (Algorithm 3).
  uint64_t timeout_ps = 50'000'000;      ///< retransmission timer per packet
  uint32_t slots = 65536;                ///< switch register cells (§4.2: 64K)
  uint32_t window = 256;                 ///< data-parallel: packets in flight per worker
  uint16_t udp_port = 20050;
  uint64_t pass_latency_ps = 520'000;
  uint32_t operations = 1000;            ///< task allreduce: sequential 8-element allreduces
  uint64_t gap_ps = 0;                   ///< task allreduce: pause between operations
};

/// Static reduction trees (scenario `workload.static_tree`; canary-fgcs24 §5.2).
struct StaticTreeSpec {
  uint32_t trees = 1;                          ///< 1: SHARP/SwitchML/ATP; N: PANAMA (blocks round robin)
  bool random_roots = false;                   ///< roots drawn at random (seeded), not spread evenly
  uint32_t elements_per_packet = 256;
  uint32_t window_blocks = 256;
  uint32_t nic_queue_bytes = 8192;             ///< as CanarySpec::nic_queue_bytes
  uint32_t slots_per_tree = 4096;              ///< power of two, >= window_blocks
  uint64_t pass_latency_ps = 520'000;
};

/// One of several concurrent PANAMA jobs (`workload.panama.jobs[i]`): its
/// own workers (disjoint from every other job's), gradient size, iterations
/// and start; the accelerators on shared switches hold all of them (§5 (2)).
struct PanamaJobSpec {
  HostSelection hosts;
  uint64_t bytes = 0;
  uint32_t iterations = 1;
  uint64_t start_ps = 0;
  uint64_t compute_gap_ps = 0;
};

/// A shared cluster (`workload.panama.cluster`; panama-mlsys21 §7): jobs
/// arrive as a Poisson process, each with a uniform number of workers in
/// [min_workers, max_workers] and a DNN drawn uniformly from `models`
/// (src/ina/dnn-models.h: gradient bytes and P100 compute time per
/// iteration, both multiplied by `scale`), run `iterations` and leave. The
/// controller places each job at its arrival (PanamaJobSet).
struct PanamaClusterSpec {
  uint32_t jobs = 0;                 ///< 0: no cluster
  double arrival_rate_per_s = 10;    ///< given, or derived from `load`
  double load = 0;                   ///< offered aggregation load (0: arrival_rate_per_s given)
  /// How each job allreduces: through PANAMA's accelerators, or a host ring
  /// (Ring-AllReduce, §7's baseline) on the same hosts and placement.
  enum class Allreduce : uint8_t { kPanama, kRing } allreduce = Allreduce::kPanama;
  uint32_t slots_per_host = 1;       ///< jobs a host runs at once (one per GPU)
  uint32_t min_workers = 16, max_workers = 96;
  std::vector<std::string> models;  ///< names in kDnnModels
  uint32_t iterations = 10;
  double scale = 1;                  ///< on gradient bytes and compute time alike
  uint64_t start_ps = 0;             ///< the arrival process starts here
  uint64_t window_ps = 0;            ///< > 0: arrivals only in [start, start + window), at most `jobs`
};

/// PANAMA workers and accelerators (scenario `workload.panama`; panama-mlsys21
/// §4-§5): fp32 gradients over N aggregation trees, Fig. 5 congestion control.
struct PanamaSpec {
  uint32_t trees = 4;                          ///< aggregation trees (§4.1: the controller picks N, default 4)
  uint32_t elements_per_packet = 256;          ///< fp32 values per packet
  bool congestion_control = true;              ///< Fig. 5; false: a fixed window (SwitchML*-like, Fig. 10b)
  /// §7 PANAMA-0.88 / 0.94: an accelerator sums a vector once this fraction
  /// of the job's workers below it sent theirs (1: every worker, the FPGA).
  double quorum = 1.0;
  uint32_t fixed_window = 64;                  ///< packets in flight per tree without congestion control
  double initial_cwnd = 2, initial_ssthresh = 64, initial_alpha = 1;  ///< Fig. 5 initialisation
  double g = 1.0 / 16;                         ///< Fig. 5's weight (DCTCP's default)
  bool reset_ecn_count_per_window = true;      ///< false: Fig. 5 read literally (see panama_window.h)
  bool increase_in_marked_windows = false;     ///< true: DCTCP's increase in marked windows too (panama_window.h)
  uint64_t accelerator_buffer_bytes = 64ull << 20;  ///< §7: 64 MB per accelerator
  bool ieee_float = false;                     ///< false: the FPGA's adder (subnormals flushed); true: IEEE
  bool latency_table1 = false;                 ///< accelerator latency from Table 1 instead of eq. (3)
  uint64_t timeout_ps = 10'000'000'000ULL;     ///< per tree: no result for this long = loss (reported)
  uint16_t udp_port = 6000;                    ///< workers' UDP port
  uint16_t jid = 1;                            ///< job id (JID)
  /// Root switch of each tree by name (PANAMA-Agg_i of Fig. 9); empty: the
  /// lowest common tier's switches, spread. Given, it sets the tree count.
  std::vector<std::string> tree_roots;
  /// Concurrent jobs; empty: one job of workload.hosts / bytes / iterations.
  std::vector<PanamaJobSpec> jobs;
  /// Jobs arriving over time instead (exclusive with `jobs`).
  PanamaClusterSpec cluster;
};

/// Host noise on the reduce path (scenario `workload.send_noise`; canary-fgcs24
/// §5.2.5, Fig. 11): each reduce packet a host sends waits `delay_ps` before it
/// reaches the socket with probability `probability`, drawn from the host's
/// own seeded stream. canary and static_tree only.
struct SendNoiseSpec {
  double probability = 0;
  uint64_t delay_ps = 1'000'000;
};

struct WorkloadSpec {
  WorkloadType type = WorkloadType::kAllreduce;
  HostSelection hosts;
  // allreduce
  std::string protocol = "ring";
  uint64_t bytes = 4ull << 20;
  DType dtype = DType::kInt32;
  DataPattern data = DataPattern::kHashed;
  uint32_t iterations = 1;
  uint64_t compute_gap_ps = 0;
  uint64_t start_ps = 0;
  RingSpec ring;
  SwitchMLSpec switchml;
  CanarySpec canary;
  StaticTreeSpec static_tree;
  PanamaSpec panama;
  P4SGDSpec p4sgd;
  SendNoiseSpec send_noise;
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

struct FaultSpec {
  double loss_rate = 0;           // every link, both directions
  uint64_t reconverge_ps = 1'000'000'000;  // routing recomputed this long after a link fails
  std::vector<LinkFault> links;
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

struct OutputSpec {
  bool links_csv = true;
  uint64_t sample_interval_ps = 0;  // 0 = no queue/utilisation time series
};

struct Scenario {
  std::string name = "scenario";
  std::string description;
  uint64_t seed = 1;
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
