// Canary end to end (canary-fgcs24 §3): the Canary switch model
// (p4model/canary) on every switch, one host agent per host; and, on the same
// substrate and host agent, the static-tree baseline the paper compares with
// (§5.2: one tree as SHARP/SwitchML/ATP, N trees with blocks round robin as
// PANAMA; p4model/statictree).
//
// Host agent (CanaryHost, one ns-3 Application per host):
//   - the tensor is cut into blocks of k elements (§3.1.3); block g (counted
//     over iterations) has leader leader_order[g mod n] (§3.1.4 "each host
//     will be the leader only for 1 block out of N"); the leader order
//     interleaves racks, so consecutive blocks also have their root switch
//     (the leader's ToR, see protocols/canary/dataplane/README.md choice 2) round robin;
//   - block id = application id << 24 | (attempt * G + g), G = blocks of the
//     whole workload (§3.4 application id + per-packet sequence; §3.3 a
//     re-issued block takes a different id);
//   - at most `window_blocks` blocks outstanding per host; a block occupies
//     the window from its issue until the host holds its final sum;
//   - issued blocks reach the NIC only while at most `nic_queue_bytes` of
//     this host's Canary packets wait in its NIC queue; the rest wait in the
//     host, so a leader's broadcast queues behind a few packets, not behind
//     its whole window (the paper's leader turns a block around in ~1 us,
//     §3.2.2 r; a FIFO of 256 blocks would take 23 us at 100 Gb/s);
//   - non-leaders send their data towards the leader with a per-block
//     retransmission timer (§3.3); the leader sends nothing, sums what arrives
//     (aggregates, stragglers, collided packets), adds its own data when the
//     counters reach n - 1, broadcasts through its ToR and sends restoration
//     packets for the recorded collisions (§3.2.1);
//   - on a retransmission request the leader resends the final block if it
//     has it, else broadcasts a failure and everybody re-issues the block with
//     the next attempt's id; after `max_failures` failures the block falls back
//     to host-based reduction (data straight to the leader, results unicast).
// Control messages (requests, failures, unicast results, fallback data) use
// UDP port 45502, which no switch claims. Every element every host ends with is
// checked against the exact sum.
#pragma once

#include "ina/collective-layout.h"
#include "ina/host-endpoint.h"
#include "ina/iteration-schedule.h"
#include "ina/lazy-timer-heap.h"
#include "ina/collective-table.h"
#include "ina/workload.h"
#include "ina/scenario.h"
#include "ina/tensor-data.h"
#include "protocols/canary/dataplane/config.h"
#include "protocols/canary/host/spec.h"
#include "protocols/static_tree/host/spec.h"
#include "topology/topology.h"

#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/packet.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace inasim::p4::canary {
class CanaryDataplane;
}  // namespace inasim::p4::canary

namespace inasim {

class Fabric;
class CanaryJob;

enum class InaTreeMode : uint8_t { kCanary, kStaticTree };

/// What one host did (summed in the report).
struct CanaryHostCounters {
  uint64_t packets_sent = 0;          ///< reduce packets (incl. re-issues)
  uint64_t noise_delayed = 0;         ///< ... of which workload.send_noise held back (§5.2.5)
  uint64_t nic_held = 0;              ///< blocks that waited in the host for room in the NIC queue
  uint64_t retransmit_requests = 0;   ///< §3.3 timer expired: request sent to the leader
  uint64_t reissues = 0;              ///< §3.3 failure received: block sent again with a new id
  uint64_t reissues_timed = 0;        ///< ... of a block this host had sent (its delay is measured)
  uint64_t reissue_delay_sum_ps = 0;  ///< §6 "Retransmission delays": failed attempt sent -> re-issued
  uint64_t reissue_delay_max_ps = 0;  ///< ... the longest (summing takes the max)
  /// ... of those, re-issued before this host's timer fired twice: §6's case,
  /// where one request reaches the leader and its failure comes back (a lost
  /// request or failure costs another timer period).
  uint64_t reissues_first_request = 0;
  uint64_t reissue_first_request_delay_max_ps = 0;
  uint64_t fallback_sends = 0;        ///< host-based reduction: data sent to the leader
  uint64_t results_received = 0;      ///< final blocks accepted (broadcast, restoration or unicast)
  uint64_t unicast_results = 0;       ///< ... of which unicast by the leader
  uint64_t duplicate_results = 0;     ///< final block already held
  // Leader side.
  uint64_t leader_packets = 0;        ///< reduce-path packets the leader received for its blocks
  uint64_t leader_stale = 0;          ///< ... for a failed attempt or a finished block (ignored)
  uint64_t collisions_recorded = 0;   ///< §3.2.1 collided packets (switch, port) recorded
  uint64_t restorations_sent = 0;     ///< §3.2.1 restoration packets
  uint64_t restorations_best_effort = 0;  ///< ... whose route may miss the switch (see README)
  uint64_t broadcasts_sent = 0;       ///< §3.1.2 broadcasts started
  uint64_t retransmissions = 0;       ///< §3.3 final block resent to a requester
  uint64_t failures = 0;              ///< §3.3 failure broadcasts (block re-issued)
  uint64_t fallbacks = 0;             ///< §3.3 blocks reduced by the hosts
  uint64_t overcounts = 0;            ///< counters summed past n - 1 (never expected)
  CanaryHostCounters& operator+=(const CanaryHostCounters& o);
};

class CanaryHost : public ns3::Application {
 public:
  static ns3::TypeId GetTypeId();
  /// Trace "Reissue": (global block, ps since the failed attempt was sent).
  using ReissueTracedCallback = void (*)(uint64_t block, uint64_t delay_ps);
  CanaryHost() = default;
  void Setup(CanaryJob* job, uint32_t rank);
  /// Collective c (counting every collective of every iteration) begins at this host.
  void BeginCollective(uint32_t c);
  const CanaryHostCounters& counters() const { return c_; }
  uint64_t blocks_done() const { return blocks_done_total_; }

 protected:
  void DoDispose() override;

 private:
  // Leader state of one block this host leads.
  struct LeadBlock {
    uint8_t attempt = 0;
    bool final = false;
    bool fallback = false;
    uint32_t counter = 0;
    std::vector<uint32_t> acc;                          ///< k sums
    std::vector<std::pair<uint16_t, uint32_t>> collisions;  ///< (switch address, port)
    std::vector<uint8_t> fallback_got;                  ///< per rank: data received (host-based reduction)
  };
  void StartApplication() override {}
  void StopApplication() override;
  void HandleData(const uint8_t* p, uint32_t len);
  void HandleControl(const uint8_t* p, uint32_t len);
  void IssueMore();
  void Issue(uint64_t g);
  void SendBlock(uint64_t g);
  /// Hands queued blocks to the NIC while its queue holds under nic_queue_bytes of ours.
  void Pump();
  /// Hands a reduce packet to the NIC, now or after the send-noise delay.
  void SendReducePacket(const uint8_t* payload, uint32_t len, uint32_t dst, uint16_t port);
  bool DrawSendNoise();
  void Complete(uint64_t g, const uint8_t* be_data);  ///< the host holds g's final sum
  void LeaderAccept(uint64_t g, uint32_t attempt, uint16_t counter, bool collided, uint16_t sw, uint32_t port,
                    const uint8_t* be_data);
  void Finalize(uint64_t g);
  void Fail(uint64_t g);
  void SendControl(uint32_t to_rank, uint8_t type, uint64_t g, uint8_t attempt, const uint32_t* data);
  void ArmTimer(uint64_t g);
  void OnTimerEvent();
  LeadBlock& Lead(uint64_t g);

  CanaryJob* job_ = nullptr;
  uint32_t rank_ = 0;
  uint32_t n_ = 0, k_ = 0;
  HostEndpoint data_port_, control_port_;
  uint32_t collective_ = 0;
  bool running_ = false;
  uint64_t first_ = 0, end_ = 0;  ///< global blocks of the current collective
  uint64_t next_issue_ = 0;
  uint64_t oldest_open_ = 0;  ///< sliding window: no block before it lacks its result
  uint32_t in_flight_ = 0;
  uint64_t done_in_collective_ = 0;
  uint64_t blocks_done_total_ = 0;
  // Per global block.
  std::vector<uint8_t> attempt_;
  std::vector<uint8_t> state_;  ///< 0 not issued, 1 issued, 2 done
  std::vector<uint8_t> queued_;  ///< issued, not yet handed to the NIC (set while in pending_)
  std::deque<uint64_t> pending_;  ///< those blocks, in issue order (finished ones are skipped)
  const uint32_t* nic_queued_ = nullptr;  ///< live bytes of our data socket's frames in the NIC queue
  std::vector<LeadBlock> lead_;  ///< blocks g with g mod n == my leader slot, at g / n
  LazyTimerHeap<uint64_t> timers_;  ///< §3.3 retransmission timers, per global block (Canary mode)
  std::vector<uint64_t> sent_at_ps_;  ///< per global block: when its current attempt was sent (timer armed)
  std::vector<uint8_t> requests_;     ///< per global block: requests this attempt (saturates at 255)
  /// A failure re-issued block g (its attempt sent at sent_at_ps_[g], a delay of `ps` ago).
  ns3::TracedCallback<uint64_t, uint64_t> reissue_trace_;
  ns3::TracedCallback<uint32_t, uint64_t> timeout_trace_;
  CanaryHostCounters c_;
  std::vector<uint8_t> tx_;
  std::vector<uint32_t> scratch_;
  uint64_t noise_state_ = 0;  ///< this host's send-noise stream (SplitMix64 counter)
};

class CanaryJob {
 public:
  /// `mode` kCanary uses spec.canary; kStaticTree uses spec.static_tree.
  /// `job_index` > 0: another concurrent job on the same fabric (CanaryJobSet):
  /// it joins the switch programs the earlier jobs installed (Canary: the same
  /// program; static trees: its trees added with ids after theirs).
  CanaryJob(Fabric& fabric, const std::vector<uint32_t>& hosts, InaTreeMode mode, DataPattern pattern,
            uint64_t seed, const WorkloadSpec& spec, uint32_t job_index = 0);
  ~CanaryJob();

  // What a job installs, built and checked without ns-3: the constructor
  // uses these, and ParseScenario runs CheckPlacement so that `validate`
  // rejects what `run` would. They throw ScenarioError naming the key.
  /// The Canary program of switch vertex `v` (every switch runs one).
  static p4::canary::CanaryConfig SwitchConfig(const topo::Topology& t, uint32_t v, const CanarySpec& cs,
                                               uint32_t elements_per_packet);
  /// Job `job_index`'s static trees over `hosts` (`seed`: the job's).
  static std::vector<topo::AggregationTree> StaticTrees(const topo::Topology& t, const std::vector<uint32_t>& hosts,
                                                        const StaticTreeSpec& st, uint64_t seed, uint32_t job_index);
  /// Every switch program the job would install, checked.
  static void CheckPlacement(const topo::Topology& t, const std::vector<uint32_t>& hosts, InaTreeMode mode,
                             uint64_t seed, const WorkloadSpec& spec, uint32_t job_index);

  void Start(uint64_t at_ps);
  double progress() const;
  bool done() const { return hosts_done_ == hosts_.size(); }
  std::function<void()> on_finished;

  // The report (canary-report.cc; CanaryJobSet::Report assembles it).
  /// "canary" or "static_tree": the protocol, its workload.<section> and CSV prefix.
  const char* protocol() const { return mode_ == InaTreeMode::kCanary ? "canary" : "static_tree"; }
  /// Its collectives into `table`, as a new job; the payload they delivered.
  void AddCollectives(CollectiveTable& table, uint64_t& payload_delivered) const;
  /// Its hosts' counters, summed.
  CanaryHostCounters HostTotals() const;
  /// workload.<protocol>: its settings, the hosts' and leaders' counters `h`
  /// (over `blocks` blocks), the switches' and the peak descriptors next to
  /// §3.2.2's memory model; `switches_csv`: <protocol>_switches.csv.
  nlohmann::json Details(const Scenario& s, const CanaryHostCounters& h, uint64_t blocks,
                         std::string& switches_csv) const;
  /// One job's summary lines.
  std::string Summary(const Scenario& s, const CollectiveTable& table, const nlohmann::json& details,
                      const CanaryHostCounters& h, bool finished, bool correct) const;

  // Read by the hosts and tests.
  InaTreeMode mode() const { return mode_; }
  uint32_t num_hosts() const { return static_cast<uint32_t>(hosts_.size()); }
  uint32_t job_index() const { return job_index_; }
  uint32_t host_id(uint32_t rank) const { return hosts_[rank]; }
  uint32_t k() const { return k_; }
  /// The blocks of every collective of the run, numbered globally (block g).
  const CollectiveLayout& layout() const { return *layout_; }
  uint64_t blocks_per_iteration() const { return layout_->units_per_iteration(); }
  uint64_t total_blocks() const { return layout_->total_units(); }
  uint32_t LeaderOf(uint64_t g) const { return leader_order_[g % leader_order_.size()]; }
  uint32_t LeaderSlot(uint32_t rank) const { return leader_slot_[rank]; }
  uint32_t BlockId(uint64_t g, uint32_t attempt) const;
  /// Decodes an id: false if it is not one of this job's.
  bool DecodeId(uint32_t id, uint64_t& g, uint32_t& attempt) const;
  /// The event trace's key of one of this job's frames (ina/frame-key.h):
  /// id = global block g, aux = attempt; kinds "reduce", "bypass", "result"
  /// (the multicast bit) for the Canary header, and the control messages'
  /// "retransmit_request", "failure", "result_unicast", "fallback_data".
  /// `job` is not set (the job set knows the job's number).
  bool KeyFrame(const p4::FrameView& view, inasim::Span<const uint8_t> frame, FrameKey& key) const;
  uint32_t TreeOf(uint64_t g) const { return tree_offset_ + static_cast<uint32_t>(g % num_trees_); }
  uint32_t TorIpv4(uint32_t rank) const { return tor_ip_[rank]; }
  const CanarySpec& canary() const { return (*canary_); }
  /// The hosts' per-block timer: retransmit_timeout_rtts x leader_rtt_ps() if
  /// that is set, else retransmit_timeout_us.
  uint64_t retransmit_timeout_ps() const { return retransmit_timeout_ps_; }
  /// The longest idle round trip of a block between a host and a leader (a
  /// reduce packet out, a result back; LeaderRttPs): canary-fgcs24 §6's RTT
  /// (Canary mode; 0 for static trees).
  uint64_t leader_rtt_ps() const { return leader_rtt_ps_; }
  const StaticTreeSpec& static_tree() const { return spec_.spec<StaticTreeSpec>(); }
  const SendNoiseSpec& send_noise() const { return spec_.spec<SendNoiseSpec>(); }
  uint64_t seed() const { return seed_; }
  uint32_t window() const { return window_; }
  /// Hosts keep the blocks in flight within window() consecutive ids (not
  /// just window() of them): static trees (slot = id mod slots_per_tree) and
  /// Canary with ids mapped directly to descriptors (§3.2.1), where a block
  /// window ids on would take the slot its predecessor still holds.
  bool sliding_window() const {
    return mode_ == InaTreeMode::kStaticTree || (*canary_).direct_index;
  }
  uint32_t nic_queue_bytes() const { return nic_queue_bytes_; }  ///< 0: no host-side limit
  const TensorData& data(uint32_t c) const { return data_[c]; }
  CollectiveRecord& record(uint32_t c) { return records_[c]; }
  uint32_t iterations() const { return layout_->iterations(); }
  uint32_t collectives() const { return static_cast<uint32_t>(records_.size()); }
  /// When `rank` may begin collective c, having ended c - 1 (or, for c = 0, the
  /// workload having started) at `now` (ina/iteration-schedule.h).
  uint64_t StartOf(uint32_t rank, uint32_t c, uint64_t now) { return schedule_->StartOf(rank, c, now); }
  CanaryHost& host(uint32_t rank) const { return *agents_[rank]; }
  /// Restoration for a collision at switch `sw_address` port `port`: the host
  /// to address it to, and whether every route from `leader_rank` crosses the switch.
  uint32_t RestorationTarget(uint16_t sw_address, uint32_t port, uint32_t leader_rank, bool& certain) const;
  uint32_t GroupOf(uint32_t port) const;
  void HostCollectiveDone(uint32_t rank, uint32_t c);
  /// With workload.schedule: every rank's iteration starts (iterations.csv).
  std::vector<IterationStart> IterationStarts() const;
  /// Switch vertices with a program, in vertex order.
  const std::vector<uint32_t>& switch_vertices() const { return switch_vertices_; }
  /// Several jobs share each switch's one program: the switches whose
  /// counters this job's report sums and lists (default: its own).
  void SetReportedSwitches(std::vector<uint32_t> v) { reported_switches_ = std::move(v); }
  Fabric& fabric() const { return *fabric_; }

 private:
  void InstallCanary();
  /// table_partition "per_job": installs this job's share on a switch's program.
  void AddPartition(p4::canary::CanaryDataplane& dp) const;
  /// Descriptors this job's ids may use on each switch (table_size unless shared out per job).
  uint32_t table_share() const;
  void InstallStaticTrees();
  /// The switches' counters: their totals, the peak descriptors and the CSV rows.
  struct SwitchTotals {
    nlohmann::json totals;
    uint64_t peak = 0;
    std::string peak_switch, csv;
  };
  SwitchTotals Switches() const;
  /// canary-fgcs24 §3.2.2's descriptor memory b(2d(l+t)+r) next to the measured peak.
  nlohmann::json MemoryModel(const Scenario& s, uint64_t peak) const;
  Fabric* fabric_;
  std::vector<uint32_t> hosts_;
  InaTreeMode mode_;
  WorkloadSpec spec_;
  const CanarySpec* canary_;  ///< spec_'s, looked up once (ids are made and read per packet)
  uint32_t k_ = 0, window_ = 0, nic_queue_bytes_ = 0, num_trees_ = 1;
  uint32_t tree_offset_ = 0;  ///< static trees: this job's first tree id (job index x trees)
  uint32_t job_index_ = 0;    ///< position among the concurrent jobs (CanaryJobSet)
  std::optional<CollectiveLayout> layout_;  ///< set once k_ is known
  std::optional<IterationSchedule> schedule_;
  std::vector<uint32_t> leader_order_, leader_slot_, tor_ip_;
  std::vector<TensorData> data_;
  std::vector<CollectiveRecord> records_;
  std::vector<ns3::Ptr<CanaryHost>> agents_;
  std::vector<uint32_t> switch_vertices_;
  std::vector<uint32_t> reported_switches_;  ///< empty: switch_vertices_
  std::vector<std::string> tree_roots_;
  uint32_t hosts_done_ = 0;
  uint64_t seed_ = 0;
  uint64_t leader_rtt_ps_ = 0, retransmit_timeout_ps_ = 0;
  uint64_t LeaderRttPs() const;
};

}  // namespace inasim
