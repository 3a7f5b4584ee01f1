// SwitchML's RDMA backend (docs/research/switchml-rdma.md): RDMA UC writes
// over RoCEv2, one queue pair per message in flight.
//
//   - SwitchMLRdmaNic: the host's RDMA NIC. It segments each posted message
//     into packets (FIRST with RETH .. LAST with immediate, or one ONLY) and
//     sends them at line rate, message after message in posting order; it
//     places result writes by queue pair with UC's receive rule (a PSN gap
//     drops the rest of the message) and raises one completion per message.
//     No CPU time is spent per packet.
//   - SwitchMLRdmaThread: one worker thread (rdma_worker_thread.cc): its Q
//     queue pairs, message j, j+B, j+2B ... on queue pair j, the set bit
//     flipping per new message, a timeout per queue pair with the library's
//     backoff; its CPU is a serial server paying `verbs_op` per verbs call.
// Every element of every result message is checked against the exact sum.
#pragma once

#include "ina/host-endpoint.h"
#include "ina/lazy-timer-heap.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

namespace inasim {

class InaNetDevice;
class SwitchMLJob;
struct SwitchMLSpec;
struct SwitchMLTensorRecord;
class TensorData;

/// The RoCE parameters one host's NIC and threads share.
struct SwitchMLRdmaConfig {
  uint32_t k = 256;               ///< elements per packet (path MTU 4k bytes)
  uint32_t ppm = 16;              ///< packets per message
  uint32_t queue_pairs = 32;      ///< per host: pool_size / ppm
  uint32_t switch_ip = 0;
  uint32_t rank = 0;              ///< the worker's rank (the switch QPNs' bits 23..16)
  uint64_t verbs_op_ps = 100'000;  ///< CPU time of one verbs call (post_send, post_recv, a CQ poll)
  uint64_t nic_tx_ps = 0;          ///< doorbell to the message's first packet on the NIC's queue
  uint64_t nic_rx_ps = 0;          ///< last packet placed to its completion visible to the CPU
  uint32_t MessageBytes() const { return ppm * k * 4; }
  /// The worker's QPN of host-global queue pair g, and its PSN start
  /// (qp_num / 2, rdma_connection.cc:319).
  static uint32_t WorkerQpn(uint32_t g) { return 0x1000 + g; }
  static uint32_t InitialPsn(uint32_t g) { return WorkerQpn(g) / 2; }
};

struct SwitchMLRdmaCounters {
  uint64_t messages_posted = 0, retransmissions = 0, completions = 0, wrong_msg_id = 0;
  uint64_t packets_sent = 0, packets_placed = 0, packets_dropped_psn = 0, packets_dropped_length = 0;
  uint64_t messages_no_recv = 0;
  uint64_t cpu_busy_ps = 0;
  SwitchMLRdmaCounters& operator+=(const SwitchMLRdmaCounters& x);
};

class SwitchMLRdmaNic {
 public:
  /// (queue pair g, immediate as on the wire (big-endian value), the message's
  /// bytes as placed: a snapshot the receiver takes over)
  using OnCompletion = std::function<void(uint32_t g, uint32_t immediate, std::vector<uint8_t>&& message)>;
  void Setup(const SwitchMLRdmaConfig& config, InaNetDevice& nic, OnCompletion on_completion);
  /// ibv_post_send of an RDMA write with immediate of one message on queue
  /// pair g: `rkey` carries the pool index (rdma_worker_thread.cc:121-128).
  void PostSend(uint32_t g, uint32_t rkey, uint64_t addr, uint32_t immediate, const uint8_t* message);
  /// ibv_post_recv on queue pair g (no SGE: it only yields the completion).
  void PostRecv(uint32_t g) { ++qps_[g].recv_posted; }
  const SwitchMLRdmaCounters& counters() const { return counters_; }
  void Close();

 private:
  struct Wqe {
    uint32_t g, rkey, immediate;
    uint64_t addr;
    std::vector<uint8_t> message;
  };
  struct Qp {
    uint32_t sq_psn = 0;       ///< next PSN to send
    uint32_t rq_epsn = 0;      ///< next PSN expected within a message
    bool in_message = false;   ///< a FIRST was taken and no gap since
    uint32_t placed = 0;       ///< packets of the current message placed
    uint32_t resid = 0;        ///< bytes of the write still to come
    uint32_t recv_posted = 0;
    std::vector<uint8_t> buffer;
  };
  void Enqueue(Wqe wqe);
  void Pump();
  void SendPacket(const Wqe& w, uint32_t index);
  void OnFrame(const uint8_t* p, uint32_t len);

  SwitchMLRdmaConfig config_;
  HostEndpoint endpoint_;
  const uint32_t* nic_queued_ = nullptr;
  OnCompletion on_completion_;
  std::vector<Qp> qps_;
  std::deque<Wqe> sq_;          ///< messages on the NIC, in posting order
  uint32_t next_packet_ = 0;    ///< of sq_.front()
  std::vector<uint8_t> tx_;
  SwitchMLRdmaCounters counters_;
};

class SwitchMLRdmaThread {
 public:
  void Setup(SwitchMLJob* owner, uint32_t rank, uint32_t tid, SwitchMLRdmaNic* nic, const SwitchMLRdmaConfig& c);
  void BeginJob(uint32_t job);
  /// A message completed on host-global queue pair g (from the NIC).
  void OnCompletion(uint32_t g, uint32_t immediate, std::vector<uint8_t>&& message);
  uint64_t received_packets() const { return received_packets_; }
  const SwitchMLRdmaCounters& counters() const { return counters_; }
  void Cancel() { timers_.CancelEvent(); }

 private:
  /// Runs `done` once the CPU has spent `ops` verbs calls after its earlier work.
  void OnCpu(uint32_t ops, void (SwitchMLRdmaThread::*done)(uint32_t), uint32_t j);
  void PostMessage(uint32_t j);     ///< PostSendWr(j, false) after its CPU time
  void Retransmit(uint32_t j);      ///< PostSendWr(j, true)
  void Post(uint32_t j);
  void Complete(uint32_t j);        ///< the completion's work after its CPU time
  void Fill(uint64_t msg_id, uint8_t* out) const;
  void OnTimerEvent();
  void FinishJob();

  SwitchMLJob* owner_ = nullptr;
  const SwitchMLSpec* spec_ = nullptr;
  SwitchMLRdmaNic* nic_ = nullptr;
  SwitchMLRdmaConfig config_;
  uint32_t rank_ = 0, tid_ = 0, q_ = 0, first_g_ = 0;
  uint64_t cpu_free_ps_ = 0;
  // Per queue pair j (thread-local index).
  std::vector<uint64_t> msg_ids_;
  std::vector<uint8_t> set_;        ///< last set bit used; flips before each new message
  std::vector<uint64_t> sent_ps_;   ///< first post of the message in flight
  std::vector<std::vector<uint8_t>> pending_;  ///< completed message bytes awaiting the CPU
  std::vector<uint32_t> pending_imm_;
  LazyTimerHeap<uint32_t> timers_;
  /// The timeout in whole milliseconds (rdma_worker_thread.cc:52); a message
  /// times out once more than that many whole ms passed (rdma_timeout_queue.cc:119-121).
  uint64_t timeout_ms_ = 0;
  uint64_t timeouts_counter_ = 0, timeout_threshold_ = 0;  ///< kept for the thread's lifetime
  // Per job slice.
  uint32_t job_ = 0;
  bool running_ = false;
  SwitchMLTensorRecord* record_ = nullptr;
  const TensorData* data_ = nullptr;
  uint64_t slice_first_ = 0, numel_ = 0, total_ = 0, batch_ = 0, received_ = 0;
  uint64_t received_packets_ = 0;
  std::vector<uint8_t> message_;
  SwitchMLRdmaCounters counters_;
};

}  // namespace inasim
