// PANAMA end to end (panama-mlsys21 §3-§5): the accelerator model
// (p4model/panama) on every switch of a job's aggregation trees, one worker
// per host.
//
// Worker (PanamaWorker, one ns-3 Application per host, UDP socket):
//   - the gradient (fp32) is cut into packets of k values; packet g of the run
//     (counted over iterations) goes to tree g mod N with vector id g div N
//     (§4.1: round robin over the trees, so every worker puts the same values
//     under the same (TID, VID) without coordination, and each tree's VIDs
//     are consecutive as the accelerators' Expected_VID needs);
//   - each tree has its own congestion window (congestion/panama_window.h,
//     Fig. 5) and sends its packets in VID order as the window allows; a
//     result is the implicit ACK of the worker's packet with that (TID, VID);
//   - packets are IPv4 DSCP 56 + ECT(0) (§5 (1), §4.2.2), to the tree's
//     group address; the last packet of each tree carries FIN (§5 (2));
//   - a tree with packets in flight and no result for `timeout` is a loss:
//     counted and reported (PFC keeps the fabric lossless, §4.2.2; recovery
//     would need new VIDs agreed by every worker, which the paper leaves
//     open), and the run ends unfinished at the time limit.
// Switch (PanamaTreeSwitch, the Dataplane hosted by each tree switch): the
// accelerator model with the job installed (ports bitmap = the switch's child
// ports), its results routed up the tree to the parent, and at the root (or
// coming down from the parent) replicated to the children: switches by the
// group address, hosts by their own address ("individual entries in
// forwarding tables", §3 (2)). Every value every worker receives is checked
// bit for bit: against the exact sum (hashed / ones data, whose partial sums
// are exact in fp32) or against the accelerators' adder order replayed over
// the tree (uniform data).
#pragma once

#include "protocols/panama/host/panama_window.h"
#include "ina/collective-table.h"
#include "ina/collective-layout.h"
#include "ina/host-endpoint.h"
#include "ina/iteration-schedule.h"
#include "ina/scenario.h"
#include "ina/tensor-data.h"
#include "ina/workload.h"
#include "p4model/common/dataplane.h"
#include "protocols/panama/host/spec.h"
#include "protocols/ring/host/spec.h"
#include "topology/topology.h"

#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/socket.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace inasim {

struct DnnModel;
class Fabric;
class RingAllreduce;
class PanamaJob;
namespace p4::panama {
class PanamaDataplane;
struct PanamaJob;
}

/// The group address of tree `tid` of job `jid`: 239.<jid mod 256>.<tid: 16 bits> (administratively scoped).
inline uint32_t PanamaGroupIpv4(uint16_t jid, uint32_t tid) {
  return 0xEF000000u | (uint32_t{jid} & 0xffu) << 16 | (tid & 0xffffu);
}
/// Whether `ip` is one of those group addresses (a worker's packet up a tree).
inline bool IsPanamaGroupIpv4(uint32_t ip) { return (ip >> 24) == 0xEFu; }

/// What one worker's trees did (summed in the report).
struct PanamaWorkerCounters {
  uint64_t packets_sent = 0;
  uint64_t results = 0;
  uint64_t results_marked = 0;      ///< ECN CE on the result (the OR over the tree)
  uint64_t unexpected_results = 0;  ///< not in flight (duplicate, other job or tree)
  uint64_t timeouts = 0;
  uint64_t skipped = 0;             ///< PANAMA-<quorum>: results of packets never sent (the worker was behind)
  uint64_t elements_checked = 0, mismatches = 0;
  uint64_t cap_hits = 0;
  double cwnd_sum = 0;              ///< cwnd after each result, for the mean
  uint32_t min_wnd_cap = 0xffff;
};

class PanamaWorker : public ns3::Application {
 public:
  static ns3::TypeId GetTypeId();
  PanamaWorker() = default;
  void Setup(PanamaJob* owner, uint32_t rank, InaNetDevice& nic);
  /// Collective c (counting every collective of every iteration) begins at this worker.
  void BeginCollective(uint32_t c);
  const PanamaWorkerCounters& counters() const { return counters_; }
  /// The window of tree t (read by tests).
  const congestion::PanamaWindow& window(uint32_t t) const { return trees_[t].window; }

 protected:
  void DoDispose() override;

 private:
  struct Tree {
    explicit Tree(const congestion::PanamaWindow& w) : window(w) {}
    congestion::PanamaWindow window;
    uint64_t next = 0;          ///< next packet index of this tree to send (global over iterations)
    uint64_t end = 0;           ///< one past this iteration's last
    uint32_t in_flight = 0;
    uint64_t last_progress_ps = 0;
    uint64_t skip_below = 0;    ///< PANAMA-<quorum>: results came for every packet below this
    bool timed_out = false;
    std::deque<uint64_t> sent_ps;  ///< window_trace: send times of the packets in flight, oldest first
  };
  /// window_trace: one panama_windows.csv row for the result of tree t's oldest packet.
  void TraceResult(uint32_t t, uint64_t g, bool marked);
  /// Checks result g's values and counts it (its iteration's record, the counters).
  void CheckAndCount(uint64_t g, const uint8_t* p, uint32_t len);
  /// One result of this iteration fewer to wait for; the iteration ends at 0.
  void ResultDone();
  void StartApplication() override;
  void StopApplication() override;
  void Handle(const uint8_t* p, uint32_t len, uint8_t tos);
  /// Sends what the windows allow after tree t moved.
  void Pump(uint32_t t);
  /// Packets tree tr may have in flight.
  uint32_t Allowed(const Tree& tr) const;
  /// Sends tree tr's next packet.
  void SendOn(Tree& tr);
  /// `round_robin: "per_tree"`: tree t sends its own packets as its window allows.
  void TrySend(uint32_t t);
  /// `round_robin: "in_order"` (§4.1): packets leave in index order; a full window holds the rest.
  void SendInOrder();
  void SendPacket(uint64_t g);
  void ArmTimeoutCheck();
  void CheckTimeouts();

  PanamaJob* owner_ = nullptr;
  const PanamaSpec* spec_ = nullptr;
  uint32_t rank_ = 0;
  InaNetDevice* nic_ = nullptr;
  HostEndpoint endpoint_;
  std::vector<Tree> trees_;
  uint32_t collective_ = 0;
  uint64_t outstanding_ = 0;    ///< results of this iteration still to come
  bool running_ = false;
  ns3::EventId timeout_event_;
  PanamaWorkerCounters counters_;
  std::vector<uint8_t> tx_;
  bool tracing_ = false;  ///< window_trace and rank 0
  /// (tree, VID, cwnd after) on every result.
  ns3::TracedCallback<uint32_t, uint32_t, double> window_trace_;
  ns3::TracedCallback<uint32_t, uint64_t> timeout_trace_;  ///< (jid, tree)
};

/// Owns the workers and the switch programs of one PANAMA job.
class PanamaJob {
 public:
  /// One job (JID `jid`) on `hosts`; its accelerator state is installed by
  /// InstallAccelerators, once every job of the run exists.
  /// `elements`: per collective of an iteration (one, or workload.schedule's);
  /// `schedule`: when each collective starts (not given: back to back, the
  /// gap between iterations).
  PanamaJob(Fabric& fabric, const std::vector<uint32_t>& hosts, DataPattern pattern, uint64_t seed,
            const PanamaSpec& spec, uint16_t jid, const std::vector<uint64_t>& elements, uint32_t iterations,
            uint64_t compute_gap_ps, const ScheduleSpec& schedule = {});
  ~PanamaJob();

  /// Puts one accelerator on every switch of any job's trees, holding every
  /// job that uses that switch (the controller's installation, §3 (2)): the
  /// first job there installs it, the others join it, in `jobs` order.
  static void InstallAccelerators(Fabric& fabric, const std::vector<PanamaJob*>& jobs);
  uint16_t jid() const { return spec_.jid; }

  // Built and checked without ns-3, by the constructors and by ParseScenario
  // (PanamaJobSet::CheckPlacement), so that `validate` rejects what `run`
  // would. They throw ScenarioError naming the scenario key.
  /// The job's aggregation trees over `hosts` (§4.1: roots spread over the
  /// lowest common tier, or spec.tree_roots).
  static std::vector<topo::AggregationTree> BuildJobTrees(const topo::Topology& topology, const PanamaSpec& spec,
                                                          const std::vector<uint32_t>& hosts);
  /// Every switch of every job's trees can hold an accelerator: at most 64
  /// ports, and one ports bitmap per job (the same children in each of its trees).
  static void CheckAccelerators(const topo::Topology& topology,
                                const std::vector<const std::vector<topo::AggregationTree>*>& job_trees);

  void Start(uint64_t at_ps);
  double progress() const;
  bool done() const { return workers_done_ == workers_.size(); }
  std::function<void()> on_finished;

  uint32_t num_workers() const { return static_cast<uint32_t>(workers_.size()); }
  PanamaWorker& worker(uint32_t rank) const { return *workers_[rank]; }
  const std::vector<topo::AggregationTree>& trees() const { return trees_; }
  const std::vector<CollectiveRecord>& records() const { return records_; }
  /// The accelerator model on switch vertex v (nullptr if v is in no tree).
  const p4::panama::PanamaDataplane* accelerator(uint32_t v) const;
  /// The accelerators this job's trees cross, by switch vertex.
  const std::unordered_map<uint32_t, const p4::panama::PanamaDataplane*>& accelerators() const {
    return accelerators_;
  }
  Fabric& fabric() const { return *fabric_; }

  // The report (panama-report.cc; PanamaJobSet::Report assembles it).
  /// Its iterations into `table` as a new job; the payload they delivered. Returns the job's index.
  uint32_t AddCollectives(CollectiveTable& table, uint64_t& payload_delivered) const;
  /// What its verdict checks (results.json `check`).
  std::string Check() const;
  /// Its own keys (workload.panama, or per_job[j].panama): settings, trees, the workers' windows.
  nlohmann::json Details(const Scenario& s) const;
  /// Its summary lines (`t`: its numbers in the table, `details`: Details()).
  std::string Summary(const Scenario& s, const CollectiveTable::JobTotals& t, const nlohmann::json& details,
                      bool finished, bool correct) const;

  // For the workers.
  const PanamaSpec& spec() const { return spec_; }
  uint32_t k() const { return spec_.elements_per_packet; }
  /// The packets of every collective of the run, numbered globally (packet g).
  const CollectiveLayout& layout() const { return layout_; }
  uint64_t packets_per_iteration() const { return layout_.units_per_iteration(); }
  /// Packets of the whole run (every collective of every iteration).
  uint64_t total_packets() const { return layout_.total_units(); }
  /// The first collective's elements (the only one without a schedule).
  uint64_t elements() const { return layout_.elements()[0]; }
  uint32_t collectives() const { return static_cast<uint32_t>(records_.size()); }
  /// With workload.schedule: every rank's iteration starts (iterations.csv), as job `job` of the table.
  std::vector<IterationStart> IterationStarts(uint32_t job) const;
  uint32_t host(uint32_t rank) const { return hosts_[rank]; }
  const TensorData& data(uint32_t c) const { return data_[c]; }
  /// Mismatching values among `count` big-endian fp32 results of packet g.
  uint64_t CheckResult(uint64_t g, const uint8_t* values, uint32_t count);
  void WorkerCollectiveDone(uint32_t rank, uint32_t c);
  CollectiveRecord& record(uint32_t c) { return records_[c]; }
  /// window_trace: rank 0's rows (no header), in result order.
  std::string& window_trace_rows() { return window_trace_rows_; }
  const std::string& window_trace_rows() const { return window_trace_rows_; }
  /// PANAMA-<quorum>: the accelerator on switch v summed vector `vid` of tree
  /// `tid` from these member ports only (counted; kept as the oracle's hint).
  void RecordPartial(uint32_t v, uint8_t tid, uint32_t vid, inasim::Span<const uint16_t> ports);
  uint64_t partial_aggregations() const { return partial_aggregations_; }
  /// PANAMA-<quorum>: results whose contributors no allowed set of senders explains.
  uint64_t quorum_unresolved() const { return quorum_unresolved_; }
  /// Rank `rank` sent packet g (PANAMA-<quorum>'s oracle: who can be in its sum).
  void NoteSent(uint64_t g, uint32_t rank);
  /// Workers of this job below vertex v in tree `tree`.
  uint32_t SubtreeWorkers(uint32_t tree, uint32_t v) const;

 private:
  /// Installs this job's state and trees on switch vertex v (InstallOrJoin).
  void JoinAccelerator(Fabric& fabric, uint32_t v, const PanamaSpec& run);
  /// What the controller installs for this job on the accelerator of v.
  p4::panama::PanamaJob AcceleratorJob(const topo::Topology& topology, uint32_t v) const;
  /// Candidate sets of contributors tried per partial result before it counts as wrong.
  static constexpr uint64_t kMaxQuorumCandidates = 1u << 14;
  struct QuorumWalk {
    bool ok;           ///< every switch below has its quorum
    bool any;          ///< some worker below is in the set
    uint32_t workers;  ///< workers below
  };
  /// Values of packet g's first `count` elements as the accelerators add them
  /// over the workers in `in` (rank-indexed; null: all).
  std::vector<uint32_t> TreeOrderSum(uint64_t g, uint64_t count, const std::vector<uint8_t>* in);
  uint32_t ReduceAt(const TensorData& data, uint32_t tree, uint32_t v, uint64_t element,
                    const std::vector<uint8_t>* in);
  QuorumWalk QuorumHolds(uint32_t tree, uint32_t v, const std::vector<uint8_t>& in) const;
  bool ResolveContributors(uint64_t g, const uint8_t* values, uint32_t count, std::vector<uint32_t>& want);
  /// Whether packet g's result `values` is the sum over the workers in `in`:
  /// the quorum holds at every switch and the adder-order sum (into `want`)
  /// matches bit for bit.
  bool Explains(uint64_t g, const uint8_t* values, uint32_t count, const std::vector<uint8_t>& in,
                std::vector<uint32_t>& want);
  struct Expected;
  /// Packet g's expected values (cached until every worker checked it); none
  /// when no allowed set of contributors explains the result.
  Expected& ExpectedValues(uint64_t g, const uint8_t* values, uint32_t count);
  std::unordered_map<uint64_t, std::vector<uint8_t>> senders_;  ///< PANAMA-<quorum>: per packet, rank sent it
  /// PANAMA-<quorum>: per packet, (switch, member ports summed) of every partial sum on its tree.
  std::unordered_map<uint64_t, std::vector<std::pair<uint32_t, std::vector<uint16_t>>>> partial_ports_;
  /// The contributors the accelerators' partial sums name for packet g: its
  /// senders minus every worker below a port a switch left out. Only a hint:
  /// the caller checks the quorum rule and the sum over them bit for bit.
  std::vector<uint8_t> HintedContributors(uint64_t g) const;
  void ExcludeBelow(uint32_t tree, uint32_t v, std::vector<uint8_t>& in) const;
  uint64_t partial_aggregations_ = 0, quorum_unresolved_ = 0;

  PanamaSpec spec_;
  std::vector<uint32_t> hosts_;
  std::vector<TensorData> data_;  ///< per iteration
  CollectiveLayout layout_;
  bool scheduled_ = false;
  std::optional<IterationSchedule> schedule_;
  std::vector<topo::AggregationTree> trees_;
  std::vector<uint32_t> rank_of_vertex_;  ///< host vertex -> rank (or ~0)
  std::vector<CollectiveRecord> records_;
  std::vector<ns3::Ptr<PanamaWorker>> workers_;
  /// The accelerators this job's trees cross, by switch vertex (shared with other jobs).
  std::unordered_map<uint32_t, const p4::panama::PanamaDataplane*> accelerators_;
  Fabric* fabric_;
  uint32_t workers_done_ = 0;
  uint64_t results_total_ = 0;
  std::string window_trace_rows_;
  // Uniform data and PANAMA-<quorum>: the expected values of packets some
  // worker has not checked yet, computed once (adder order replayed over the
  // contributors) and dropped after the n-th check.
  struct Expected {
    std::vector<uint32_t> values;
    uint32_t checks_left;
  };
  std::unordered_map<uint64_t, Expected> expected_;
  friend class PanamaWorker;
};

/// One job of a shared cluster (`workload.panama.cluster`) as the controller
/// placed it.
struct PanamaClusterJob {
  std::string model;
  uint64_t arrival_ps = 0;
  uint64_t bytes = 0, compute_ps = 0;
  std::vector<uint32_t> hosts;  ///< ascending (the ranks)
  std::vector<size_t> after;    ///< jobs that held some of these hosts before: it starts when they are done
  uint32_t racks = 0;           ///< racks the hosts span
};

/// The PANAMA jobs of one run (scenario `workload.panama.jobs`, or one job of
/// workload.hosts / bytes / iterations): each a PanamaJob on its own hosts
/// (disjoint), JID jid + i, sharing one accelerator per switch.
///
/// With `workload.panama.cluster` the jobs arrive over time (panama-mlsys21
/// §7) and the controller places each at its arrival: the hosts free by the
/// controller's own estimate (every earlier job's iterations x (P100 compute +
/// the gradient sent and received at line rate)), as few racks as possible
/// (racks with the most free hosts first); when too few are free, the hosts
/// the estimate frees first. A job starts at its arrival or, if the jobs that
/// held its hosts before it are still running (the estimate was short), when
/// they end: no host ever runs two jobs at once, and the wait is part of the
/// job's completion time. All jobs' accelerator state is installed up front;
/// an accelerator counts a job only while its packets flow (first packet to
/// FIN), which is what installing at arrival and removing at the end does.
class PanamaJobSet {
 public:
  /// Throws ScenarioError naming the field (overlapping hosts, bad trees).
  PanamaJobSet(Fabric& fabric, const Scenario& s, const std::vector<uint32_t>& workload_hosts);
  /// The constructor's checks without ns-3 (placement, hosts, trees,
  /// accelerators), for ParseScenario; throws ScenarioError naming the key.
  static void CheckPlacement(const topo::Topology& topology, const Scenario& s,
                             const std::vector<uint32_t>& workload_hosts);
  /// The hosts of each fixed job (workload.panama.jobs, or one job of
  /// workload.hosts): disjoint, or ScenarioError.
  static std::vector<std::vector<uint32_t>> FixedJobHosts(const Scenario& s, uint32_t num_hosts,
                                                          const std::vector<uint32_t>& workload_hosts);

  /// Each job begins at its own start time.
  void Start();
  double progress() const;
  /// Called once, when every job has finished.
  std::function<void()> on_finished;

  /// results.json "workload": the core keys of every job's iterations
  /// (CollectiveTable; several jobs: per_job with each one's jid, bytes,
  /// iterations and own keys, the means over the jobs), workload.panama (one
  /// job: its own keys; the accelerators, every one once; the cluster's job
  /// completion times); collectives.csv, panama_accelerators.csv, panama_cluster.csv.
  void Report(const Scenario& s, bool finished, WorkloadReport& out) const;
  /// The event trace's key of a frame (ina/frame-key.h): a PANAMA packet
  /// (IPv4 DSCP 56, UDP, the 14-byte header) of one of these jobs is job =
  /// JID, id = the job's packet number g = VID x trees + tree (the worker's
  /// g, §4.1's round robin), aux = tree; kind "update" (to the tree's group
  /// address) or "result" (the accelerators' reply to a worker).
  bool KeyFrame(const p4::FrameView& view, inasim::Span<const uint8_t> frame, FrameKey& key) const;

  ~PanamaJobSet();
  /// PANAMA jobs (empty when the cluster's jobs are host rings).
  size_t size() const { return jobs_.size(); }
  PanamaJob& job(size_t j) const { return *jobs_[j]; }
  /// Ring-AllReduce cluster jobs (`cluster.allreduce = "ring"`).
  const std::vector<std::unique_ptr<RingAllreduce>>& rings() const { return rings_; }
  /// Every job, PANAMA or ring.
  size_t count() const { return jobs_.size() + rings_.size(); }
  /// Cluster runs: the placement of job j, and when it started and ended (started(j), ended(j)).
  const std::vector<PanamaClusterJob>& cluster() const { return cluster_; }
  uint64_t started_ps(size_t j) const { return started_ps_[j]; }
  uint64_t ended_ps(size_t j) const { return ended_ps_[j]; }
  bool started(size_t j) const { return started_[j] != 0; }
  bool ended(size_t j) const { return ended_[j] != 0; }

  /// The controller's placement (pure: topology and spec in, jobs out), for tests.
  static std::vector<PanamaClusterJob> PlaceCluster(const topo::Topology& topology, const PanamaClusterSpec& spec,
                                                    const std::vector<uint32_t>& pool, double host_rate_gbps,
                                                    uint64_t seed);
  /// The Poisson arrival rate (jobs/s) at which the cluster's jobs offer
  /// `spec.load` of the pool's host link capacity: lambda x E[workers] x
  /// iterations x E[gradient bytes] x 8 = load x hosts x rate (each worker
  /// sends its gradient once per iteration; models drawn uniformly).
  static double ArrivalRateForLoad(const PanamaClusterSpec& spec, size_t pool_hosts, double host_rate_gbps);
  /// A model's gradient bytes times `scale`, whole fp32 values, at least one.
  static uint64_t ScaledGradientBytes(const DnnModel& m, double scale);

 private:
  void StartJob(size_t j, uint64_t at_ps);
  void JobDone(size_t j);
  // The report's parts (panama-report.cc).
  uint32_t JobJid(const Scenario& s, size_t j) const;
  CollectiveTable Collectives(const Scenario& s, uint64_t& payload_delivered) const;
  nlohmann::json ClusterJson(const Scenario& s, const CollectiveTable& table, std::string& csv) const;
  std::string ClusterSummary(const Scenario& s, const nlohmann::json& cluster, bool correct) const;
  size_t pool_hosts_ = 0;
  std::vector<std::unique_ptr<PanamaJob>> jobs_;
  std::vector<std::unique_ptr<RingAllreduce>> rings_;
  std::vector<uint64_t> start_ps_;
  std::vector<PanamaClusterJob> cluster_;
  std::vector<std::vector<size_t>> dependents_;
  std::vector<size_t> waiting_on_;
  std::vector<uint64_t> started_ps_, ended_ps_;
  std::vector<uint8_t> started_, ended_;
  size_t jobs_done_ = 0;
};

}  // namespace inasim
