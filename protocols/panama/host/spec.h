// PANAMA's scenario section, workload.panama (parsed by spec.cc).
#pragma once

#include "ina/dnn-models.h"

#include "ina/scenario.h"

#include <cstdint>
#include <string>
#include <vector>

namespace inasim {

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
/// (data/models/dnn-models.csv, src/ina/dnn-models.h: gradient bytes and P100 compute time per
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
  std::vector<DnnModel> models;  ///< the models drawn from (built-in, or merged with models_file)
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
  /// Without congestion control (SwitchML*): packets a worker keeps in flight
  /// over all its trees, SwitchML's slot pool (switchml-nsdi21 App. C: "we
  /// use 128 and 512 as the pool size for 10 and 100 Gbps"), spread evenly.
  uint32_t fixed_pool = 128;
  /// fixed_pool's share of tree t (the first fixed_pool mod trees get one more).
  uint32_t FixedWindow(uint32_t t) const { return fixed_pool / trees + (t < fixed_pool % trees ? 1 : 0); }
  double initial_cwnd = 2, initial_ssthresh = 64, initial_alpha = 1;  ///< Fig. 5 initialisation
  double g = 1.0 / 16;                         ///< Fig. 5's weight (DCTCP's default)
  bool reset_ecn_count_per_window = true;      ///< false: Fig. 5 read literally (see panama_window.h)
  bool increase_in_marked_windows = false;     ///< true: an additive increase in marked windows too (panama_window.h)
  bool cut_once_per_flight = false;            ///< true: DCTCP's CWR, one cut per window of packets sent (panama_window.h)
  /// §4.1's round robin: packet g to tree g mod N, sent in index order (a
  /// tree whose window is full holds the packets after it); false: each tree
  /// sends its own packets as its window allows (trees run independently).
  bool round_robin_in_order = true;
  bool window_trace = false;                   ///< every job's rank 0 logs each result's window (panama_windows.csv)
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

}  // namespace inasim
