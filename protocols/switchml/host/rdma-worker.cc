#include "protocols/switchml/host/rdma-worker.h"

#include "ina/ina-net-device.h"
#include "ina/tensor-data.h"
#include "p4model/common/frame.h"
#include "protocols/switchml/dataplane/rdma.h"
#include "protocols/switchml/host/switchml-job.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cstring>

namespace inasim {

NS_LOG_COMPONENT_DEFINE("SwitchMLRdmaThread");

using ns3::PicoSeconds;
using ns3::Simulator;
namespace sml = p4::switchml;

namespace {

uint64_t NowPs() { return static_cast<uint64_t>(Simulator::Now().GetPicoSeconds()); }

constexpr uint32_t kBth = sml::kIbBthHBytes, kReth = sml::kIbRethHBytes, kImm = sml::kIbImmediateHBytes,
                   kIcrc = sml::kIbIcrcHBytes;
// Frames the NIC may hold queued before it takes the next packet of a
// message (it streams them at line rate; a few packets of look-ahead).
constexpr uint32_t kNicQueueBytes = 8192;

bool HasReth(uint8_t op) {
  return op == static_cast<uint8_t>(sml::IbOpcode::UC_RDMA_WRITE_FIRST) ||
         op == static_cast<uint8_t>(sml::IbOpcode::UC_RDMA_WRITE_ONLY) ||
         op == static_cast<uint8_t>(sml::IbOpcode::UC_RDMA_WRITE_ONLY_IMMEDIATE);
}
bool HasImmediate(uint8_t op) {
  return op == static_cast<uint8_t>(sml::IbOpcode::UC_RDMA_WRITE_LAST_IMMEDIATE) ||
         op == static_cast<uint8_t>(sml::IbOpcode::UC_RDMA_WRITE_ONLY_IMMEDIATE);
}

}  // namespace

SwitchMLRdmaCounters& SwitchMLRdmaCounters::operator+=(const SwitchMLRdmaCounters& x) {
  messages_posted += x.messages_posted;
  retransmissions += x.retransmissions;
  completions += x.completions;
  wrong_msg_id += x.wrong_msg_id;
  packets_sent += x.packets_sent;
  packets_placed += x.packets_placed;
  packets_dropped_psn += x.packets_dropped_psn;
  packets_dropped_length += x.packets_dropped_length;
  messages_no_recv += x.messages_no_recv;
  cpu_busy_ps += x.cpu_busy_ps;
  return *this;
}

// ------------------------------------------------------------------ NIC ----

void SwitchMLRdmaNic::Setup(const SwitchMLRdmaConfig& config, InaNetDevice& nic, OnCompletion on_completion) {
  config_ = config;
  on_completion_ = std::move(on_completion);
  qps_.resize(config.queue_pairs);
  for (uint32_t g = 0; g < config.queue_pairs; ++g) {
    qps_[g].sq_psn = SwitchMLRdmaConfig::InitialPsn(g);
    qps_[g].buffer.assign(config.MessageBytes(), 0);
  }
  tx_.assign(kBth + kReth + kImm + 4 * config.k + kIcrc, 0);
  endpoint_.Open(nic, sml::kUdpPortRocev2, [this](const uint8_t* p, uint32_t len, const DatagramInfo&) {
    OnFrame(p, len);
  });
  endpoint_.set_ttl(255);  // hop_limit 255 (rdma_connection.cc:297)
  nic_queued_ = nic.TrackSourcePort(p4::kIpProtoUdp, sml::kUdpPortRocev2, kNicQueueBytes, kNicQueueBytes / 2,
                                    [this] { Pump(); });
}

void SwitchMLRdmaNic::Close() { endpoint_.Close(); }

void SwitchMLRdmaNic::PostSend(uint32_t g, uint32_t rkey, uint64_t addr, uint32_t immediate, const uint8_t* message) {
  Wqe w{g, rkey, immediate, addr, std::vector<uint8_t>(message, message + config_.MessageBytes())};
  // The NIC fetches the WQE and the message's first bytes over PCIe first.
  Simulator::Schedule(PicoSeconds(config_.nic_tx_ps), &SwitchMLRdmaNic::Enqueue, this, std::move(w));
}

void SwitchMLRdmaNic::Enqueue(Wqe wqe) {
  sq_.push_back(std::move(wqe));
  Pump();
}

void SwitchMLRdmaNic::Pump() {
  while (!sq_.empty() && *nic_queued_ < kNicQueueBytes) {
    SendPacket(sq_.front(), next_packet_);
    if (++next_packet_ == config_.ppm) {
      sq_.pop_front();
      next_packet_ = 0;
    }
  }
}

// Packet `index` of message `w`: BTH, RETH on the first, immediate on the
// last, k elements, ICRC. The ICRC is left zero: the switch forwards the
// worker's unchanged and the NICs are set to ignore it (rdma_sender.p4:113,
// client_lib README.md:117), so nothing reads it.
void SwitchMLRdmaNic::SendPacket(const Wqe& w, uint32_t index) {
  using Op = sml::IbOpcode;
  const uint32_t ppm = config_.ppm;
  const Op op = ppm == 1             ? Op::UC_RDMA_WRITE_ONLY_IMMEDIATE
                : index == 0         ? Op::UC_RDMA_WRITE_FIRST
                : index + 1 == ppm   ? Op::UC_RDMA_WRITE_LAST_IMMEDIATE
                                     : Op::UC_RDMA_WRITE_MIDDLE;
  uint8_t* b = tx_.data();
  Qp& qp = qps_[w.g];
  b[0] = static_cast<uint8_t>(op);
  b[1] = 0x40;  // SE 0, MigReq 1 (a QP without path migration is MIGRATED), pad 0, TVer 0
  p4::StoreBe16(b + 2, 0xffff);  // pkey_index 0 (rdma_connection.cc:263)
  p4::StoreBe32(b + 4, sml::SwitchQpn(static_cast<uint16_t>(config_.rank), w.g));
  p4::StoreBe32(b + 8, qp.sq_psn & 0xffffff);  // AckReq 0 (UC)
  qp.sq_psn = (qp.sq_psn + 1) & 0xffffff;
  uint32_t at = kBth;
  if (HasReth(static_cast<uint8_t>(op))) {
    p4::StoreBe64(b + at, w.addr);
    p4::StoreBe32(b + at + 8, w.rkey);
    p4::StoreBe32(b + at + 12, config_.MessageBytes());
    at += kReth;
  }
  if (HasImmediate(static_cast<uint8_t>(op))) {
    p4::StoreBe32(b + at, w.immediate);
    at += kImm;
  }
  const uint32_t data = 4 * config_.k;
  std::memcpy(b + at, w.message.data() + size_t{index} * data, data);
  at += data;
  std::memset(b + at, 0, kIcrc);
  at += kIcrc;
  endpoint_.SendTo(config_.switch_ip, sml::kUdpPortRocev2, b, at, /*tos: traffic_class 1*/ 1);
  ++counters_.packets_sent;
}

// The UC responder: a FIRST / ONLY starts a message; a MIDDLE / LAST must
// carry the next PSN, else it and the rest of the message are dropped
// (switchml-nsdi21.txt:721). A LAST / ONLY with immediate consumes a posted
// receive and completes the message.
void SwitchMLRdmaNic::OnFrame(const uint8_t* p, uint32_t len) {
  if (len < kBth) return;
  const uint8_t op = p[0];
  const uint32_t g = (p4::LoadBe32(p + 4) & 0xffffff) - SwitchMLRdmaConfig::WorkerQpn(0);
  if (g >= qps_.size()) return;  // not one of this host's queue pairs
  const uint32_t psn = p4::LoadBe32(p + 8) & 0xffffff;
  const uint32_t header = kBth + (HasReth(op) ? kReth : 0) + (HasImmediate(op) ? kImm : 0);
  const uint32_t data = 4 * config_.k;
  if (len < header + data) return;
  Qp& qp = qps_[g];
  using Op = sml::IbOpcode;
  const bool first = HasReth(op);
  if (first) {
    qp.in_message = true;
    qp.placed = 0;
    qp.resid = p4::LoadBe32(p + kBth + 12);  // the RETH's DMA length
  } else if (op == static_cast<uint8_t>(Op::UC_RDMA_WRITE_MIDDLE) ||
             op == static_cast<uint8_t>(Op::UC_RDMA_WRITE_LAST) ||
             op == static_cast<uint8_t>(Op::UC_RDMA_WRITE_LAST_IMMEDIATE)) {
    if (!qp.in_message || psn != qp.rq_epsn) {
      qp.in_message = false;
      ++counters_.packets_dropped_psn;
      return;
    }
  } else {
    return;  // not an RDMA write
  }
  // The write's length against the RETH's (IBA C9-92; rxe_resp.c
  // check_rkey): with at most an MTU left a packet carries exactly what
  // is left, and the last one ends the write. A violation drops the packet
  // and, its PSN not taken, the rest of the message (UC).
  const bool last = HasImmediate(op) || op == static_cast<uint8_t>(Op::UC_RDMA_WRITE_LAST);
  if (qp.resid < data || (last && qp.resid != data)) {
    qp.in_message = false;
    ++counters_.packets_dropped_length;
    return;
  }
  qp.resid -= data;
  qp.rq_epsn = (psn + 1) & 0xffffff;
  if (qp.placed < config_.ppm) std::memcpy(qp.buffer.data() + size_t{qp.placed} * data, p + header, data);
  ++qp.placed;
  ++counters_.packets_placed;
  if (!HasImmediate(op)) return;
  qp.in_message = false;
  if (qp.recv_posted == 0) {  // no receive posted: UC drops the message
    ++counters_.messages_no_recv;
    return;
  }
  --qp.recv_posted;
  ++counters_.completions;
  const uint32_t immediate = p4::LoadBe32(p + header - kImm);
  // The completion reaches the CPU once the data and the CQE are written.
  // (The placed bytes are snapshot now: the next write on this QP reuses the buffer.)
  Simulator::Schedule(PicoSeconds(config_.nic_rx_ps), [this, g, immediate, bytes = qp.buffer]() mutable {
    on_completion_(g, immediate, std::move(bytes));
  });
}

// --------------------------------------------------------------- thread ----

void SwitchMLRdmaThread::Setup(SwitchMLJob* owner, uint32_t rank, uint32_t tid, SwitchMLRdmaNic* nic,
                               const SwitchMLRdmaConfig& c) {
  owner_ = owner;
  spec_ = &owner->spec();
  rank_ = rank;
  tid_ = tid;
  nic_ = nic;
  config_ = c;
  q_ = c.queue_pairs / owner->threads();  // rdma_worker_thread.cc:74
  first_g_ = q_ * tid;
  msg_ids_.assign(q_, 0);
  set_.assign(q_, 1);  // flipped before the first message: set 0 first (:118-125)
  sent_ps_.assign(q_, 0);
  pending_.assign(q_, {});
  pending_imm_.assign(q_, 0);
  timers_.Reset(q_);
  message_.assign(c.MessageBytes(), 0);
  // Check(): duration_cast<milliseconds>(now - ts) > timeout, the timeout a
  // whole number of ms: a message times out a whole ms after it.
  const uint64_t ms = 1'000'000'000ULL;
  timeout_ms_ = spec_->timeout_ps / ms;
  timeout_threshold_ = spec_->timeout_threshold;
}

// p4lang/p4app-switchML@b5c74a04:dev_root/client_lib/src/backends/rdma/rdma_worker_thread.cc:143
void SwitchMLRdmaThread::BeginJob(uint32_t job) {
  job_ = job;
  running_ = true;
  data_ = &owner_->data(job);
  record_ = &owner_->record(job);
  std::tie(slice_first_, numel_) = owner_->Slice(record_->elements, tid_);
  const uint64_t per_message = uint64_t{config_.ppm} * config_.k;
  total_ = (numel_ + per_message - 1) / per_message;  // the last message goes out whole
  batch_ = std::min<uint64_t>(q_, total_);
  received_ = 0;
  for (uint32_t j = 0; j < batch_; ++j) msg_ids_[j] = j;
  record_->start_ps[rank_] = NowPs();
  if (total_ == 0) {
    FinishJob();
    return;
  }
  // The first batch, one after the other: PostRecv(j), PostSendWr(j) (:187-192).
  for (uint32_t j = 0; j < batch_; ++j) OnCpu(2, &SwitchMLRdmaThread::PostMessage, j);
}

void SwitchMLRdmaThread::OnCpu(uint32_t ops, void (SwitchMLRdmaThread::*done)(uint32_t), uint32_t j) {
  const uint64_t now = NowPs();
  const uint64_t cost = ops * config_.verbs_op_ps;
  cpu_free_ps_ = std::max(cpu_free_ps_, now) + cost;
  counters_.cpu_busy_ps += cost;
  Simulator::Schedule(PicoSeconds(cpu_free_ps_ - now), done, this, j);
}

// The int32 elements of message `msg_id` of the slice; past the slice's end
// zeros (the library sends the whole message, its tail whatever the buffer
// held, which the switch adds and the worker ignores).
void SwitchMLRdmaThread::Fill(uint64_t msg_id, uint8_t* out) const {
  const uint64_t per_message = uint64_t{config_.ppm} * config_.k;
  const uint64_t first = msg_id * per_message;
  const uint64_t count = first < numel_ ? std::min(per_message, numel_ - first) : 0;
  data_->FillBe32(rank_, slice_first_ + first, count, out);
  if (count < per_message) std::memset(out + 4 * count, 0, 4 * (per_message - count));
}

// p4lang/p4app-switchML@b5c74a04:dev_root/client_lib/src/backends/rdma/rdma_worker_thread.cc:318
void SwitchMLRdmaThread::PostMessage(uint32_t j) {
  if (!running_) return;
  nic_->PostRecv(first_g_ + j);
  set_[j] ^= 1;
  Post(j);
  ++counters_.messages_posted;
  sent_ps_[j] = NowPs();
}

// A retransmission re-posts the same work request: same set, immediate and data.
void SwitchMLRdmaThread::Retransmit(uint32_t j) {
  if (!running_) return;
  NS_LOG_LOGIC("rank " << rank_ << " thread " << tid_ << ": queue pair " << j << "'s message timed out, posted again");
  Post(j);
  ++counters_.retransmissions;
}

// ibv_post_send of queue pair j's message as it stands, and its timeout.
void SwitchMLRdmaThread::Post(uint32_t j) {
  const uint32_t g = first_g_ + j;
  const uint32_t rkey = (g * config_.ppm * 2) | set_[j];  // rdma_worker_thread.cc:121-128
  // The buffer's address (rdma_connection.cc:79-80, :109-114): 2^44, the
  // thread's share of the hugepage-rounded region, the queue pair's message.
  const uint64_t huge = 2ull << 20;
  const uint64_t region = (uint64_t{config_.queue_pairs} * config_.MessageBytes() + huge - 1) / huge * huge;
  const uint64_t addr = (1ull << 44) + tid_ * (region / owner_->threads()) + uint64_t{j} * config_.MessageBytes();
  // imm_data = msg_id & 0xFFFF stored little-endian, the exponent in its
  // third byte (0 for int32): wire bytes [id lo, id hi, exponent, 0].
  const uint32_t id = static_cast<uint32_t>(msg_ids_[j] & 0xffff);
  const uint32_t immediate = (id & 0xff) << 24 | (id >> 8) << 16;
  Fill(msg_ids_[j], message_.data());
  nic_->PostSend(g, rkey, addr, immediate, message_.data());
  timers_.Start(j, NowPs() + (timeout_ms_ + 1) * 1'000'000'000ULL);
  timers_.Arm(NowPs(), this, &SwitchMLRdmaThread::OnTimerEvent);
  record_->packets_sent += config_.ppm;
  for (uint32_t p = 0; p < config_.ppm; ++p) owner_->CountSent(rank_);
}

void SwitchMLRdmaThread::OnCompletion(uint32_t g, uint32_t immediate, std::vector<uint8_t>&& message) {
  if (!running_ || g < first_g_ || g >= first_g_ + q_) return;
  const uint32_t j = g - first_g_;
  pending_[j] = std::move(message);
  pending_imm_[j] = immediate;
  // Poll the CQE, post the receive, post the next send (:200-260).
  OnCpu(3, &SwitchMLRdmaThread::Complete, j);
}

// p4lang/p4app-switchML@b5c74a04:dev_root/client_lib/src/backends/rdma/rdma_worker_thread.cc:214
void SwitchMLRdmaThread::Complete(uint32_t j) {
  if (!running_) return;
  const uint32_t imm = pending_imm_[j];
  const uint32_t id = (imm >> 24) | ((imm >> 16) & 0xff) << 8;  // imm & 0xFFFF in host order
  if (id != (msg_ids_[j] & 0xffff)) {
    ++counters_.wrong_msg_id;
    ++record_->duplicates;
    nic_->PostRecv(first_g_ + j);
    return;
  }
  const uint64_t per_message = uint64_t{config_.ppm} * config_.k;
  const uint64_t first = msg_ids_[j] * per_message;
  const uint64_t count = first < numel_ ? std::min(per_message, numel_ - first) : 0;
  record_->mismatches += data_->CountMismatchesBe32(slice_first_ + first, count, pending_[j].data());
  record_->elements_checked += count;
  const uint64_t rtt = NowPs() - sent_ps_[j];
  record_->rtt_sum_ps += static_cast<double>(rtt);
  ++record_->rtt_count;
  record_->rtt_max_ps = std::max(record_->rtt_max_ps, rtt);
  owner_->RecordRtt(rank_, rtt);
  timers_.Stop(j);
  msg_ids_[j] += batch_;
  ++received_;
  received_packets_ += config_.ppm;
  if (msg_ids_[j] < total_) PostMessage(j);
  if (received_ == total_) FinishJob();
}

// p4lang/p4app-switchML@b5c74a04:dev_root/client_lib/src/backends/rdma/rdma_timeout_queue.cc:116
void SwitchMLRdmaThread::OnTimerEvent() {
  const uint64_t now = NowPs();
  timers_.Fired();
  uint32_t j;
  while (timers_.PopDue(now, j)) {
    // Backoff: past `threshold` timeouts the timeout doubles (:123-129).
    if (++timeouts_counter_ > timeout_threshold_) {
      timeouts_counter_ = 0;
      timeout_ms_ *= 2;  // the whole-ms timeout doubles; the check still fires a ms past it
      timeout_threshold_ += spec_->timeout_threshold_increment;
    }
    ++record_->timeouts;
    OnCpu(1, &SwitchMLRdmaThread::Retransmit, j);
  }
  timers_.Arm(now, this, &SwitchMLRdmaThread::OnTimerEvent);
}

void SwitchMLRdmaThread::FinishJob() {
  running_ = false;
  timers_.StopAll();
  owner_->ThreadJobDone(rank_, tid_, job_);
}

}  // namespace inasim
