// P4SGD end to end: FPGA workers (p4sgd §3.2, §4.1; Algorithm 1 and 3) around
// one switch running the P4SGD program (p4model/p4sgd, the single source of
// truth for the switch). Each worker is an ns-3 Application with one UDP
// socket; the 64-byte load header travels as the UDP payload (the model's
// `encap: udp`).
//
//   - Timing: the worker's forward, communication and backward stages overlap
//     across micro-batches of 8 samples (Fig. 2c); a pass over F_e features
//     per engine costs ceil(F_e / bank_features) * precision_bits cycles
//     (bit-serial, 64 features per cycle per bank, §4.1.3), or the HBM read
//     time if longer, plus a fill latency; the next mini-batch's forward waits
//     for the model update (synchronous SGD).
//   - Protocol (Algorithm 3): aggregation packet with the worker's bitmap bit
//     and the slot index, a timer per packet, ack on the result, the slot
//     reused only after the switch's ack-complete; retransmission of whichever
//     packet timed out.
//   - Arithmetic: real GLM training (p4sgd-glm.h) on a synthetic or LIBSVM
//     dataset, or hashed values for timing-only runs. Every result a worker
//     receives is checked against the exact sum of what the workers sent, and
//     a trained model is compared bit for bit with the networkless run.
#pragma once

#include "ina/collective-table.h"
#include "ina/host-endpoint.h"
#include "ina/workload.h"
#include "ina/scenario.h"
#include "ina/tensor-data.h"
#include "protocols/p4sgd/glm/p4sgd-glm.h"
#include "protocols/p4sgd/host/spec.h"

#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/packet.h"
#include "ns3/traced-callback.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace inasim {

class Fabric;
class P4SGDJob;

/// Cycle counts of one worker's stages (p4sgd §4.1), picoseconds.
struct P4SGDStageTimes {
  uint64_t forward_ps = 0;   ///< one micro-batch through the forward stage
  uint64_t backward_ps = 0;  ///< one micro-batch through the backward stage
  uint64_t update_ps = 0;    ///< model update at the end of a mini-batch
  uint64_t forward_cycles = 0, backward_cycles = 0, update_cycles = 0;
};
/// The stage times of a worker holding `features` features (all engines).
P4SGDStageTimes StageTimes(const P4SGDSpec& spec, uint32_t features);

/// One FPGA worker.
class P4SGDWorker : public ns3::Application {
 public:
  static ns3::TypeId GetTypeId();
  P4SGDWorker() = default;
  void Setup(P4SGDJob* owner, uint32_t rank, InaNetDevice& nic, uint32_t switch_ip);
  void Begin();
  bool done() const { return done_; }
  uint64_t packets_sent() const { return packets_sent_; }
  uint64_t agg_retransmissions() const { return agg_retx_; }
  uint64_t ack_retransmissions() const { return ack_retx_; }
  uint64_t duplicates() const { return duplicates_; }
  uint64_t slot_stalls() const { return slot_stalls_; }
  /// Latency (ps, from an op's first send to its result) -> results, this worker.
  const std::map<uint64_t, uint64_t>& latency_histogram() const { return latency_hist_; }
  uint64_t results() const { return results_; }

 protected:
  void DoDispose() override;

 private:
  enum class SlotState : uint8_t { kIdle, kAgg, kAck };
  struct Slot {
    SlotState state = SlotState::kIdle;
    uint64_t op = 0;
    uint64_t first_send_ps = 0;
    std::array<int32_t, glm::kMicroBatch> values{};
    ns3::EventId timer;
  };
  void StartApplication() override {}
  void StopApplication() override;
  void OnDatagram(const uint8_t* b, uint32_t len);
  void Handle(const std::array<uint8_t, 64>& rx, uint32_t len);
  /// Op `op` with these values: sent now if its slot is free, else queued.
  void Issue(uint64_t op, std::array<int32_t, glm::kMicroBatch> values);
  void SendAgg(Slot& s, uint32_t index, bool retransmission);
  void SendAck(Slot& s, uint32_t index, bool retransmission);
  void Transmit(uint8_t flags, uint32_t index, const std::array<int32_t, glm::kMicroBatch>* values);
  void OnTimeout(uint32_t index);
  void OnResult(uint64_t op, const std::array<int32_t, glm::kMicroBatch>& values);
  void MaybeDone();

  // Model-parallel pipeline (Fig. 2c).
  void StartMinibatch();
  void TryForward();
  void OnForwardDone(uint32_t micro);
  void TryBackward();
  void OnBackwardDone(uint32_t micro, std::array<int32_t, glm::kMicroBatch> full);
  void OnUpdateDone();
  // Data-parallel (Fig. 2a).
  void OnDpComputeDone();
  void IssueDpOps();
  // Allreduce benchmark.
  void IssueBenchOp();

  P4SGDJob* owner_ = nullptr;
  const P4SGDSpec* spec_ = nullptr;
  uint32_t rank_ = 0;
  HostEndpoint endpoint_;
  uint32_t switch_ip_ = 0;
  std::unordered_map<uint32_t, Slot> slots_;
  std::deque<std::pair<uint64_t, std::array<int32_t, glm::kMicroBatch>>> waiting_;  ///< ops whose slot is busy
  uint32_t slot_mask_ = 0;
  bool done_ = false, work_done_ = false;

  // Training progress.
  glm::FeatureRange range_;
  P4SGDStageTimes times_;
  uint32_t minibatch_ = 0;  ///< global mini-batch counter
  uint32_t micros_ = 0;     ///< micro-batches per mini-batch (MP) or per worker share (DP)
  uint32_t fwd_next_ = 0, bwd_done_ = 0;
  bool fwd_busy_ = false, bwd_busy_ = false;
  std::deque<std::pair<uint32_t, std::array<int32_t, glm::kMicroBatch>>> bwd_queue_;
  std::vector<int64_t> grad_;
  // Data-parallel.
  std::vector<int32_t> dp_words_, dp_summed_;
  uint64_t dp_ops_ = 0, dp_next_ = 0, dp_received_ = 0, dp_base_ = 0;
  // Allreduce benchmark.
  uint64_t bench_next_ = 0;

  uint64_t packets_sent_ = 0, agg_retx_ = 0, ack_retx_ = 0, duplicates_ = 0, slot_stalls_ = 0;
  std::array<int32_t, glm::kMicroBatch> last_issued_{};  ///< test hook only: the previous op's values
  std::map<uint64_t, uint64_t> latency_hist_;  ///< as many entries as distinct latencies
  uint64_t results_ = 0;
  std::array<uint8_t, 64> tx_{};
  /// (op, retransmission?) for every aggregation packet sent.
  ns3::TracedCallback<uint64_t, bool> tx_trace_;
  /// (op, latency ps) for every result accepted.
  ns3::TracedCallback<uint64_t, uint64_t> rx_trace_;
  ns3::TracedCallback<uint32_t, uint64_t> timeout_trace_;  ///< (0, slot index)
};

/// Owns the workers, the switch program and the training state of one job.
class P4SGDJob {
 public:
  /// Throws std::invalid_argument naming the problem (hosts on several
  /// switches, bad dataset, ...).
  P4SGDJob(Fabric& fabric, const std::vector<uint32_t>& hosts, const P4SGDSpec& spec, uint64_t seed);
  ~P4SGDJob();

  // The checks a run makes before it builds anything, shared with
  // ParseScenario so that `inasim validate` rejects what `run` would. Both
  // throw ScenarioError naming the scenario key.
  /// 1..32 workers, all on one switch (p4sgd §5.1).
  static void CheckWorkers(const topo::Topology& topology, const std::vector<uint32_t>& hosts);
  /// The training data (`samples` x `features`, as generated or read)
  /// against the workers: memory, model split, mini-batch split.
  static void CheckTrainingShape(const P4SGDSpec& spec, uint32_t workers, uint64_t samples, uint64_t features);

  void Start(uint64_t at_ps);
  double progress() const;
  bool done() const { return workers_done_ == workers_.size(); }
  std::function<void()> on_finished;

  uint32_t num_workers() const { return static_cast<uint32_t>(workers_.size()); }
  /// Workers of the job (known before they are all created).
  uint32_t num_workers_planned() const { return planned_workers_; }
  P4SGDWorker& worker(uint32_t rank) const { return *workers_[rank]; }
  const P4SGDSpec& spec() const { return spec_; }
  const glm::Dataset& dataset() const { return data_; }
  const glm::TrainSpec& train_spec() const { return train_; }
  uint32_t minibatches_per_epoch() const { return mbs_per_epoch_; }
  uint32_t total_minibatches() const { return mbs_per_epoch_ * spec_.epochs; }
  /// Per epoch (after the last worker's last update): simulated time and loss (NaN when hashed).
  const std::vector<std::pair<uint64_t, double>>& epochs() const { return epochs_; }
  uint64_t checked_ops() const { return checked_; }
  /// Ops listed in results.json / collectives.csv at most (later ones count in every total and mean).
  static constexpr size_t kListedOps = 10'000;
  uint64_t mismatches() const { return mismatches_; }

  /// results.json "workload" (the core keys, one collective per op, and
  /// workload.p4sgd), collectives.csv, p4sgd_epochs.csv / p4sgd_latency.csv,
  /// summary. `correct`: every op's result equals the exact sum at every
  /// worker and a trained model equals the networkless run's, bit for bit.
  void Report(const Scenario& s, bool finished, WorkloadReport& out) const;
  /// The event trace's key of a frame (ina/frame-key.h): a load header on
  /// UDP port udp_port is job 0, id = slot index (the op itself is not on
  /// the wire), aux = seq_no; kind "agg" / "ack" (a worker's, to the switch),
  /// "result" / "ack_complete" (the switch's reply).
  bool KeyFrame(const p4::FrameView& view, inasim::Span<const uint8_t> frame, FrameKey& key) const;

  // For the workers.
  std::vector<int32_t>& model(uint32_t rank) { return spec_.data_parallel ? dp_models_[rank] : model_; }
  std::array<int32_t, glm::kMicroBatch> HashedValues(uint32_t rank, uint64_t op) const;
  /// Workers send HashedValues (the allreduce benchmark, or arithmetic "hashed").
  bool hashed_values() const { return spec_.hashed || spec_.task == P4SGDTask::kAllreduce; }
  /// Test hook (tensor-data.h testing_hooks): rank's values of op, faulted;
  /// `previous` is the values the rank issued before (for a stale op).
  std::array<int32_t, glm::kMicroBatch> InjectFault(uint32_t rank, uint64_t op,
                                                    std::array<int32_t, glm::kMicroBatch> values,
                                                    const std::array<int32_t, glm::kMicroBatch>& previous) const;
  /// A worker sent op's values for the first time (the exact-sum ledger).
  void Contribute(uint64_t op, const std::array<int32_t, glm::kMicroBatch>& values);
  /// A worker received op's result: checked against the ledger.
  void Check(uint32_t rank, uint64_t op, const std::array<int32_t, glm::kMicroBatch>& values);
  void MinibatchDone(uint32_t rank, uint32_t minibatch);
  void WorkerDone();

 private:
  /// The exact sum of one op's contributions, until every worker checked its
  /// result. Hashed values: the closed form over every rank's HashedValues,
  /// not what the workers sent; real training: what they computed (the final
  /// model is then checked against the networkless run).
  struct Ledger {
    uint64_t op = 0;
    std::array<uint32_t, glm::kMicroBatch> sum{};
    uint32_t contributions = 0, checks = 0;
    uint32_t mismatches = 0;  ///< elements of its results that differed, over the workers
    uint64_t first_send_ps = 0, last_result_ps = 0;
    bool open = false;
  };
  void InstallProgram(Fabric& fabric, const std::vector<uint32_t>& hosts);
  /// Ops of one iteration: 1 (the allreduce task), else the ops of one mini-batch.
  uint64_t OpsPerIteration() const;
  /// A closed op into ops_ (one collective).
  void AddOp(const Ledger& l);
  // The report's parts (p4sgd-report.cc).
  struct Latency;
  Latency LatencyOverWorkers() const;
  nlohmann::json Counters(const Latency& latency) const;
  /// Training: the dataset, stages, epochs, loss against the networkless run
  /// (`model_match`: the trained model equals it); adds p4sgd_epochs.csv.
  nlohmann::json Training(const Scenario& s, bool& model_match, WorkloadReport& out) const;
  std::string Summary(const nlohmann::json& details, const Latency& latency, bool finished, bool correct) const;

  P4SGDSpec spec_;
  uint64_t seed_;
  glm::Dataset data_;
  glm::TrainSpec train_;
  uint32_t mbs_per_epoch_ = 0;
  std::vector<int32_t> model_;                  ///< model-parallel: one vector, disjoint ranges per worker
  std::vector<std::vector<int32_t>> dp_models_;  ///< data-parallel: each worker's copy
  std::vector<ns3::Ptr<P4SGDWorker>> workers_;
  /// Indexed like the switch's slots (op mod slots): an op goes out only once
  /// its slot is free at its worker, i.e. after every worker acked (and so
  /// checked) the op before it in that slot; no allocation per op.
  std::vector<Ledger> ledger_;
  uint64_t ledger_open_ = 0;
  /// Workers that finished mini-batch k, at k mod 4: no worker gets more
  /// than one mini-batch ahead of another (the next one needs everyone's
  /// contribution), so four entries are plenty.
  std::array<uint32_t, 4> minibatch_count_{};
  uint64_t minibatches_done_ = 0;  ///< summed over workers
  std::vector<std::pair<uint64_t, double>> epochs_;
  uint64_t checked_ = 0, mismatches_ = 0, unmatched_ = 0;  ///< results checked; elements that differed
  uint64_t minibatches_complete_ = 0;  ///< mini-batches every worker finished
  /// One collective per op (first send at any worker to the last result).
  CollectiveTable ops_{{"op"}};
  uint32_t workers_done_ = 0;
  uint64_t start_ps_ = 0, end_ps_ = 0;  ///< the job's start, and when its last worker was done
  uint32_t planned_workers_ = 0;
  uint32_t switch_vertex_ = 0;
  uint32_t switch_ip_ = 0;  ///< the workers' switch (SwitchIpv4)
  Fabric* fabric_;
};

}  // namespace inasim
