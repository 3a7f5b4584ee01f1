// SwitchML end to end: the upstream switch program on every switch of an
// aggregation tree (one rack, or hierarchical across racks, paper §7) and one
// DPDK-style worker per host, as p4app-switchML's client library runs it:
//
//   - one worker thread per host with `pool_size` packets in flight
//     (general.cfg max_outstanding_packets), k elements per packet;
//   - packet id -> pool index with the set bit flipping on every reuse
//     (PktId2PoolIndex), continuing across tensors (switch_pool_index_shift);
//   - one retransmission timer per outstanding packet, with the library's
//     backoff (timeout doubled every `timeout_threshold` timeouts, the
//     threshold growing by `timeout_threshold_increment`);
//   - duplicate results (packet id already received) and results of another
//     job (short job id) discarded;
//   - float32 through the library's exponent quantizer (one extra batch that
//     carries the exponents one batch ahead), int32 as is;
//   - tensors back to back as one stream, each tensor one job.
// Every element every worker receives is checked against the exact sum.
#pragma once

#include "ina/host-endpoint.h"
#include "ina/iteration-schedule.h"
#include "protocols/switchml/host/dpdk-lcore.h"
#include "protocols/switchml/host/rdma-worker.h"
#include "ina/lazy-timer-heap.h"
#include "ina/collective-table.h"
#include "ina/workload.h"
#include "ina/scenario.h"
#include "ina/tensor-data.h"
#include "protocols/switchml/host/spec.h"
#include "topology/topology.h"

#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <optional>
#include <functional>
#include <memory>
#include <vector>

namespace inasim {

class Fabric;
class SwitchMLJob;
namespace p4 {
class Dataplane;
namespace switchml {
struct SwitchMLConfig;
}
}

/// What one tensor (a SwitchML job: the library's name for one allreduce)
/// did: the shared per-collective record (per-worker start and end, the
/// checks) and SwitchML's own counts, summed over workers unless per-worker.
/// Bytes ahead of a packet's elements: the client library's 8-byte header
/// (DpdkPacketHdr, dpdk_backend.h:56), which the switch parses as switchml_h
/// (headers.p4:72), then the 2-byte exponents header.
inline constexpr uint32_t kSwitchMLHeaderBytes = 10;

struct SwitchMLTensorRecord : CollectiveRecord {
  uint32_t sequence = 0;  ///< the SwitchML job: iteration x tensors per iteration + tensor
  uint32_t tensor = 0;    ///< its tensor within the iteration
  uint64_t elements = 0;
  uint64_t packets_per_worker = 0;      ///< incl. the float32 extra batch
  double max_abs_error = 0;             ///< float32: max |result - exact sum|
  double max_paper_bound_ratio = 0;     ///< max |err| / (n / f) (paper appendix E)
  double max_impl_bound_ratio = 0;      ///< max |err| / bound of the library's arithmetic
  uint64_t packets_sent = 0, timeouts = 0, duplicates = 0, wrong_job = 0;
  double rtt_sum_ps = 0;
  uint64_t rtt_count = 0, rtt_max_ps = 0;
};

/// One worker thread (a DPDK lcore) of a worker host: an ns-3 Application
/// with its UDP port (worker_udp_port + tid, a HostEndpoint: the NIC's flow
/// rule to its queue), its share of the pool and its slice of every tensor
/// (docs/research/switchml-dpdk-threads.md §1-2).
class SwitchMLWorker : public ns3::Application {
 public:
  static ns3::TypeId GetTypeId();
  SwitchMLWorker() = default;
  void Setup(SwitchMLJob* owner, uint32_t rank, uint32_t tid, InaNetDevice& nic, uint32_t switch_ip);
  void BeginJob(uint32_t job);
  uint64_t received_packets() const { return received_total_; }
  const DpdkLcoreCounters& lcore() const { return lcore_.counters(); }

 protected:
  void DoDispose() override;

 private:
  void StartApplication() override;
  void StopApplication() override;
  void Handle(const uint8_t* p, uint32_t len);
  /// `buffered`: a reply's reuse goes through the tx buffer; the first batch
  /// and retransmissions go straight out.
  void Send(uint64_t pkt_id, uint16_t pool_index, bool retransmission, bool buffered);
  uint16_t PoolIndex(uint64_t pkt_id) const;
  void Preprocess(uint64_t pkt_id, uint8_t* payload);
  void Postprocess(uint64_t pkt_id, const uint8_t* payload);
  void StartTimer(uint32_t index, uint64_t pkt_id, uint16_t pool_index, uint64_t duration_ps);
  void StopTimer(uint32_t index) { timers_.Stop(index); }
  void OnTimerEvent();
  /// Fires the timers due by `now` (the lcore's timer manager, or the event).
  void FireDueTimers(uint64_t now);
  /// After a timer change: the next firing, by the lcore or an event.
  void ArmTimers();
  bool lcore_timers() const;
  void FinishJob();

  SwitchMLJob* owner_ = nullptr;
  const SwitchMLSpec* spec_ = nullptr;
  uint32_t rank_ = 0;
  uint32_t tid_ = 0;
  uint32_t window_ = 0;       ///< max_outstanding_packets / threads (m_t)
  uint32_t pool_start_ = 0;   ///< 2 m_t tid: this thread's slots
  uint64_t slice_first_ = 0;  ///< the first element of this job's slice
  HostEndpoint endpoint_;
  DpdkLcore lcore_;
  uint32_t switch_ip_ = 0;

  // Per job (dpdk_worker_thread.cc operator()).
  uint32_t job_ = 0;
  bool running_ = false;
  SwitchMLTensorRecord* record_ = nullptr;
  const TensorData* data_ = nullptr;
  uint64_t numel_ = 0;
  uint64_t total_main_ = 0;  ///< packets carrying data (LTUs)
  uint64_t batch_ = 0;       ///< min(pool size, total_main)
  uint64_t total_ = 0;       ///< + one extra batch for float32
  uint64_t num_received_ = 0;
  std::vector<uint8_t> received_;   ///< rte_bitmap of received packet ids
  std::vector<float> scaling_factors_;
  uint32_t pool_index_shift_ = 0;   ///< switch_pool_index_shift, kept across jobs

  // Timers: per index the packet it resends (ResendPacketCallbackArgs), on
  // one lazy heap (one ns-3 event for the earliest live deadline).
  std::vector<uint64_t> timer_pkt_id_;
  std::vector<uint16_t> timer_pool_index_;
  std::vector<uint64_t> timer_start_ps_;  ///< when each timer was (re)started: its packet's last send
  std::vector<uint64_t> sent_ps_;  ///< first send time per lane (pkt_id mod batch), for the RTT
  LazyTimerHeap<uint32_t> timers_;
  uint64_t timer_ps_ = 0;           ///< timer_cycles_, reset per job
  uint64_t timeouts_counter_ = 0;   ///< static thread_local in the library: kept across jobs
  uint64_t timeout_threshold_ = 0;

  uint64_t received_total_ = 0;
  /// (job, packet id, pool index with set bit, retransmission?)
  ns3::TracedCallback<uint32_t, uint64_t, uint16_t, bool> tx_trace_;
  /// (job, packet id, accepted?) for every result packet; rejected = duplicate or other job
  ns3::TracedCallback<uint32_t, uint64_t, bool> rx_trace_;
  /// (job, packet id) of a packet whose timer expired (it is sent again)
  ns3::TracedCallback<uint32_t, uint64_t> timeout_trace_;
  std::vector<uint8_t> tx_;
  std::vector<float> block_;
};

/// Owns the workers and the switch programs of one SwitchML collective stream.
class SwitchMLJob {
 public:
  /// `tensor_bytes`: the tensors of one iteration, aggregated in order.
  SwitchMLJob(Fabric& fabric, const std::vector<uint32_t>& hosts, DType dtype, DataPattern pattern,
              uint64_t seed, const SwitchMLSpec& spec, std::vector<uint64_t> tensor_bytes, uint32_t iterations,
              uint64_t compute_gap_ps, const ScheduleSpec& schedule = {});
  ~SwitchMLJob();

  /// The aggregation tree over `hosts`, checked as a run needs it (at most
  /// 32 children per switch: the worker bitmap; at most 16 with 1024 B
  /// packets: the folded pipeline's next_step entries). Shared with
  /// ParseScenario so that `validate` rejects what `run` would; throws
  /// ScenarioError naming workload.hosts.
  static topo::AggregationTree CheckedTree(const topo::Topology& topology, const std::vector<uint32_t>& hosts,
                                           const SwitchMLSpec& spec);

  /// Worker threads per host: worker_threads, or the paper's rule (0).
  static uint32_t ResolveThreads(const SwitchMLSpec& spec, uint64_t host_rate_bps);
  /// With parameter servers: the one that owns a packet's slot.
  uint32_t DestinationOf(uint16_t pool_index) const;
  /// The parameter servers' hosts (ps dedicated or colocated); ScenarioError when there are too few.
  static std::vector<uint32_t> ParameterServerHosts(const SwitchMLSpec& spec, const topo::Topology& t,
                                                    const std::vector<uint32_t>& workers);
  /// The pool, slot range and ports `threads` threads need; throws
  /// ScenarioError naming the key (shared with validation).
  static void CheckThreads(const SwitchMLSpec& spec, uint32_t threads);
  static void CheckRdmaQueuePairs(const SwitchMLSpec& spec, uint32_t threads);
  /// What the RDMA backend models: int32 tensors through one switch, no PS;
  /// ScenarioError naming workload.switchml.backend (shared with validation).
  static void CheckRdma(const SwitchMLSpec& spec, DType dtype, const topo::Topology& t,
                        const topo::AggregationTree& tree);
  void Start(uint64_t at_ps);
  double progress() const;
  bool done() const { return workers_done_ == num_workers(); }
  std::function<void()> on_finished;

  uint32_t num_workers() const { return num_workers_; }
  /// Thread `tid` of worker `rank`.
  SwitchMLWorker& worker(uint32_t rank, uint32_t tid = 0) const { return *workers_[rank * threads_ + tid]; }
  uint32_t threads() const { return threads_; }
  /// Thread tid's slice of a tensor of `elements`: (first element, count);
  /// fifo_scheduler.cc:93-108 (the first numel % T threads get one more).
  std::pair<uint64_t, uint64_t> Slice(uint64_t elements, uint32_t tid) const;
  uint32_t num_jobs() const { return static_cast<uint32_t>(records_.size()); }
  const std::vector<SwitchMLTensorRecord>& records() const { return records_; }
  const topo::AggregationTree& tree() const { return tree_; }
  /// Switch vertices of the tree with their level (1 = next to the workers).
  const std::vector<std::pair<uint32_t, uint32_t>>& switches() const { return switches_; }
  const SwitchMLSpec& spec() const { return spec_; }
  DType dtype() const { return dtype_; }
  /// Packets sent per timeline bin by worker 0 (spec.timeline_bin_ps > 0).
  const std::vector<uint64_t>& timeline() const { return timeline_; }
  /// Worker `rank`'s timer for a packet sent (or resent) at `sent_ps` fired
  /// at `now_ps`: worker 0's timeouts per bin, and the slot-time its slots
  /// spent waiting on a timer that fired, spread over the bins it covers.
  void CountStall(uint32_t rank, uint64_t sent_ps, uint64_t now_ps);
  /// Worker 0's per-packet RTTs of the last job it finished (ps).
  const std::vector<uint64_t>& rtt_samples() const { return rtt_samples_; }
  /// The dataplane hosted on tree switch vertex v.
  p4::Dataplane* dataplane(uint32_t v) const;

  /// Fills results.json's "workload" (the core keys, one collective per
  /// tensor, and workload.switchml), adds collectives.csv and, if asked,
  /// switchml_timeline.csv, and the summary lines. `correct`: every tensor
  /// finished and every element every worker got matched the exact sum
  /// (float32: within the quantizer's error bound).
  void Report(const Scenario& s, bool finished, WorkloadReport& out) const;
  /// The event trace's key of a frame (ina/frame-key.h): a DPDK-mode
  /// SwitchML packet (UDP to or from 0xbee0-0xbeef) is job = the header's
  /// job number (the SwitchML job's 8 low bits), id = packet id (the
  /// worker's own numbering, little-endian in the header, as the library
  /// writes it), aux = pool index (bit 15: set); kind "update" (to the
  /// switch) or "result" (from it). RoCE (`rdma`) frames are not keyed.
  bool KeyFrame(const p4::FrameView& view, inasim::Span<const uint8_t> frame, FrameKey& key) const;

  // For the workers.
  const TensorData& data(uint32_t job) const { return data_[job]; }
  SwitchMLTensorRecord& record(uint32_t job) { return records_[job]; }
  /// Thread tid of worker rank finished its slice of `job`; when all of the
  /// host's threads have, the job is done there and they take the next one
  /// together (fifo_scheduler.cc:63-65: the per-host barrier).
  void ThreadJobDone(uint32_t rank, uint32_t tid, uint32_t job);
  DpdkLcoreConfig LcoreConfig() const;
  /// The RDMA backend's NIC and thread parameters for worker `rank`.
  SwitchMLRdmaConfig RdmaConfig(uint32_t rank) const;
  bool rdma() const { return spec_.backend == SwitchMLBackend::kRdma; }
  /// The RDMA NICs' and threads' counters, summed.
  SwitchMLRdmaCounters RdmaCounters() const;
  void CountSent(uint32_t rank);
  void RecordRtt(uint32_t rank, uint64_t rtt_ps) {
    if (rank == 0) rtt_work_.push_back(rtt_ps);
  }

 private:
  void InstallPrograms(Fabric& fabric);
  void InstallParameterServers(Fabric& fabric, const std::vector<uint32_t>& hosts);
  // The report's parts (switchml-report.cc).
  struct TensorTotals;
  void AddTensors(const Scenario& s, CollectiveTable& table, TensorTotals& t) const;
  uint32_t IterationsCompleted() const;
  nlohmann::json Programs() const;
  nlohmann::json Host() const;
  nlohmann::json RdmaHost() const;
  std::string Aggregator() const;
  nlohmann::json Details(const Scenario& s, const TensorTotals& t) const;
  std::string Summary(const Scenario& s, const CollectiveTable& table, const TensorTotals& t,
                      const nlohmann::json& details, bool finished, bool correct) const;
  SwitchMLSpec spec_;
  DType dtype_;
  /// When each rank starts each tensor: an iteration's tensors back to back
  /// and compute_gap_us between iterations, or workload.schedule's step.
  std::optional<IterationSchedule> schedule_;
  topo::AggregationTree tree_;
  std::vector<std::pair<uint32_t, uint32_t>> switches_;
  std::vector<TensorData> data_;
  std::vector<SwitchMLTensorRecord> records_;
  void WorkerJobDone(uint32_t rank, uint32_t job);
  /// Thread tid of worker rank begins `job` (DPDK / ideal or RDMA thread).
  void BeginThread(uint32_t rank, uint32_t tid, uint32_t job);
  void CreateRdmaHosts(Fabric& fabric, const std::vector<uint32_t>& hosts);
  void AddRdmaWorkers(p4::switchml::SwitchMLConfig& c) const;
  uint32_t num_workers_ = 0;
  std::vector<std::unique_ptr<SwitchMLRdmaNic>> rdma_nics_;         ///< [rank]
  std::vector<std::unique_ptr<SwitchMLRdmaThread>> rdma_threads_;   ///< [rank * threads + tid]
  uint32_t switch_ip_ = 0;  ///< RDMA: the workers' one switch
  std::vector<ns3::Ptr<SwitchMLWorker>> workers_;  ///< [rank * threads + tid]
  uint32_t threads_ = 1;
  uint64_t host_rate_bps_ = 0;
  std::vector<uint32_t> threads_done_;  ///< per rank: threads done with its current job
  std::vector<uint32_t> ps_hosts_;
  std::vector<uint32_t> worker_hosts_;  ///< by rank
  std::vector<ns3::Ptr<class SwitchMLParameterServer>> servers_;
  Fabric* fabric_;
  uint32_t workers_done_ = 0;
  uint64_t expected_packets_ = 0;
  std::vector<uint64_t> timeline_;
  std::vector<uint64_t> timeline_timeouts_;
  std::vector<double> timeline_stalled_ps_;
  std::vector<uint64_t> rtt_samples_, rtt_work_;
};

}  // namespace inasim
