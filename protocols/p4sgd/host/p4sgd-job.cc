#include "protocols/p4sgd/host/p4sgd-job.h"

#include "topology/split_mix64.h"

#include "ina/addressing.h"
#include "ina/fabric.h"
#include "ina/ina-switch-node.h"
#include "ina/units.h"
#include "protocols/p4sgd/dataplane/p4sgd_dataplane.h"

#include "ns3/log.h"
#include "ns3/ipv4-address.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace inasim {

NS_LOG_COMPONENT_DEFINE("P4SGDWorker");

namespace sg = p4::p4sgd;
using ns3::Simulator;

namespace {

uint64_t NowPs() { return static_cast<uint64_t>(Simulator::Now().GetPicoSeconds()); }
ns3::Time Ps(uint64_t ps) { return ns3::PicoSeconds(static_cast<int64_t>(ps)); }

/// Memory a real-arithmetic run may take (dataset + models + gradients), bytes.
constexpr double kMaxTrainingBytes = 8.0 * (1ull << 30);

}  // namespace

P4SGDStageTimes StageTimes(const P4SGDSpec& spec, uint32_t features) {
  P4SGDStageTimes t;
  // Each engine holds ceil(F / engines) features (§4.1: the worker's model
  // split over N engines in lock step). A bank reads one bit of 64 features
  // per cycle (§4.1.3), so a p-bit sample costs ceil(F_e / 64) * p cycles; the
  // 8 banks work on the micro-batch's 8 samples at once (§4.1.2).
  const uint64_t fe = CeilDiv(features, spec.engines);
  const uint64_t bit_serial = CeilDiv(fe, spec.bank_features) * spec.precision_bits;
  // HBM: an engine reads 8 samples x F_e features x p bits per micro-batch.
  const double bits = static_cast<double>(glm::kMicroBatch) * static_cast<double>(fe) * spec.precision_bits;
  const double cycle_s = 1e-6 / spec.clock_mhz;
  const uint64_t hbm = static_cast<uint64_t>(std::ceil(bits / (spec.hbm_gbps_per_engine * 1e9) / cycle_s));
  t.forward_cycles = std::max(bit_serial, hbm) + spec.pipeline_cycles;
  // Backward reads the bits back from the bank's FIFO, not HBM (§4.1.3).
  t.backward_cycles = bit_serial + spec.pipeline_cycles;
  // Model update: 64 weights per cycle per engine (2048-bit gradient words, §4.1.2).
  t.update_cycles = CeilDiv(fe, 64) + spec.pipeline_cycles;
  const double ps_per_cycle = 1e6 / spec.clock_mhz;
  t.forward_ps = static_cast<uint64_t>(std::llround(t.forward_cycles * ps_per_cycle));
  t.backward_ps = static_cast<uint64_t>(std::llround(t.backward_cycles * ps_per_cycle));
  t.update_ps = static_cast<uint64_t>(std::llround(t.update_cycles * ps_per_cycle));
  return t;
}

// --- worker -------------------------------------------------------------------

// Registered at load time, so `inasim trace-sources` lists it before any run.
NS_OBJECT_ENSURE_REGISTERED(P4SGDWorker);

ns3::TypeId P4SGDWorker::GetTypeId() {
  static ns3::TypeId tid =
      ns3::TypeId("inasim::P4SGDWorker")
          .SetParent<ns3::Application>()
          .SetGroupName("Inasim")
          .AddTraceSource("Tx", "An aggregation packet was sent (op, retransmission?).",
                          ns3::MakeTraceSourceAccessor(&P4SGDWorker::tx_trace_), "inasim::P4SGDWorker::TxTrace")
          .AddTraceSource("Rx", "A result was accepted (op, latency in ps from the op's first send).",
                          ns3::MakeTraceSourceAccessor(&P4SGDWorker::rx_trace_), "inasim::P4SGDWorker::RxTrace")
          .AddTraceSource("Timeout",
                          "A slot's timer expired with its packet outstanding (Algorithm 3 lines 31-34: it is sent "
                          "again); args: job (0), slot index",
                          ns3::MakeTraceSourceAccessor(&P4SGDWorker::timeout_trace_), "inasim::TimeoutTracedCallback");
  return tid;
}

void P4SGDWorker::Setup(P4SGDJob* owner, uint32_t rank, InaNetDevice& nic, uint32_t switch_ip) {
  owner_ = owner;
  spec_ = &owner->spec();
  rank_ = rank;
  slot_mask_ = spec_->slots - 1;
  switch_ip_ = switch_ip;
  endpoint_.Open(nic, spec_->udp_port, [this](const uint8_t* b, uint32_t len, const DatagramInfo&) { OnDatagram(b, len); });
  const glm::Dataset& d = owner->dataset();
  const uint32_t W = owner->num_workers_planned();
  range_ = spec_->data_parallel ? glm::FeatureRange{0, d.features} : glm::FeaturesOf(d.features, W, rank);
  times_ = StageTimes(*spec_, range_.size());
  micros_ = spec_->data_parallel ? static_cast<uint32_t>(CeilDiv(spec_->minibatch / W, glm::kMicroBatch))
                                 : spec_->minibatch / glm::kMicroBatch;
  if (!spec_->hashed) grad_.assign(range_.size(), 0);
}

void P4SGDWorker::StopApplication() {
  endpoint_.Close();
  for (auto& [i, s] : slots_) s.timer.Cancel();
}

void P4SGDWorker::DoDispose() {
  endpoint_.Close();
  for (auto& [i, s] : slots_) s.timer.Cancel();
  ns3::Application::DoDispose();
}

void P4SGDWorker::Begin() {
  if (spec_->task == P4SGDTask::kAllreduce) {
    IssueBenchOp();
  } else if (owner_->total_minibatches() == 0) {
    work_done_ = true;
    MaybeDone();
  } else {
    StartMinibatch();
  }
}

// --- protocol (Algorithm 3) ---------------------------------------------------

void P4SGDWorker::Issue(uint64_t op, std::array<int32_t, glm::kMicroBatch> values) {
  if (testing_hooks::InjectedFault() != testing_hooks::ContributionFault::kNone) {
    const auto honest = values;
    values = owner_->InjectFault(rank_, op, values, last_issued_);
    last_issued_ = honest;
  }
  const uint32_t index = static_cast<uint32_t>(op) & slot_mask_;
  Slot& s = slots_[index];
  if (s.state != SlotState::kIdle || !waiting_.empty()) {
    // Algorithm 3 lines 26-29: a slot is reused only after its ack-complete.
    ++slot_stalls_;
    waiting_.emplace_back(op, values);
    return;
  }
  s.state = SlotState::kAgg;
  s.op = op;
  s.values = values;
  s.first_send_ps = NowPs();
  SendAgg(s, index, false);
}

void P4SGDWorker::Transmit(uint8_t flags, uint32_t index, const std::array<int32_t, glm::kMicroBatch>* values) {
  // The 64-byte load header (protocols/p4sgd/dataplane/types.h): byte 0 flags, index at
  // 2..3, bitmap at 8..11 (one bit: this worker, §3.3), values at 32..63.
  tx_.fill(0);
  tx_[sg::kOffPad0] = flags;
  p4::StoreBe16(&tx_[sg::kOffIndex], static_cast<uint16_t>(index));
  p4::StoreBe32(&tx_[sg::kOffBitmap], 1u << rank_);
  if (values)
    for (uint32_t k = 0; k < glm::kMicroBatch; ++k)
      p4::StoreBe32(&tx_[sg::kOffValues + 4 * k], static_cast<uint32_t>((*values)[k]));
  ++packets_sent_;
  // The FPGA's send path (network module, CMAC) before the wire.
  Simulator::Schedule(Ps(spec_->fpga_tx_ps), [this, frame = tx_] {
    endpoint_.SendTo(switch_ip_, spec_->udp_port, frame.data(), static_cast<uint32_t>(frame.size()));
  });
}

void P4SGDWorker::SendAgg(Slot& s, uint32_t index, bool retransmission) {
  if (retransmission) ++agg_retx_;
  else owner_->Contribute(s.op, s.values);
  tx_trace_(s.op, retransmission);
  Transmit(0, index, &s.values);
  s.timer.Cancel();
  s.timer = Simulator::Schedule(Ps(spec_->timeout_ps), &P4SGDWorker::OnTimeout, this, index);
}

void P4SGDWorker::SendAck(Slot& s, uint32_t index, bool retransmission) {
  if (retransmission) ++ack_retx_;
  Transmit(sg::kAckFlag, index, nullptr);
  s.timer.Cancel();
  s.timer = Simulator::Schedule(Ps(spec_->timeout_ps), &P4SGDWorker::OnTimeout, this, index);
}

void P4SGDWorker::OnTimeout(uint32_t index) {
  // Algorithm 3 lines 31-34: resend whatever is outstanding in the slot.
  Slot& s = slots_[index];
  if (s.state == SlotState::kAgg || s.state == SlotState::kAck) {
    timeout_trace_(0, index);
    NS_LOG_LOGIC("rank " << rank_ << ": slot " << index << " timed out, sent again");
  }
  if (s.state == SlotState::kAgg) SendAgg(s, index, true);
  else if (s.state == SlotState::kAck) SendAck(s, index, true);
}

bool P4SGDJob::KeyFrame(const p4::FrameView& view, inasim::Span<const uint8_t> frame, FrameKey& key) const {
  if (!view.ipv4 || !view.l4 || view.protocol != p4::kIpProtoUdp) return false;
  if (view.dst_port != spec_.udp_port && view.src_port != spec_.udp_port) return false;
  if (frame.size() < size_t{view.l4_payload_offset} + sg::kOffBitmap) return false;
  const uint8_t* h = frame.data() + view.l4_payload_offset;
  const bool ack = h[sg::kOffPad0] & sg::kAckFlag;
  if (view.dst_ip == switch_ip_) key.kind = ack ? "ack" : "agg";
  else key.kind = (h[sg::kOffPad0] & sg::kAckCompleteFlag) ? "ack_complete" : "result";
  key.job = 0;
  key.id = p4::LoadBe16(h + sg::kOffIndex);
  key.aux = p4::LoadBe32(h + sg::kOffSeqNo);
  return true;
}

void P4SGDWorker::OnDatagram(const uint8_t* b, uint32_t len) {
  std::array<uint8_t, 64> rx{};
  std::memcpy(rx.data(), b, std::min<size_t>(len, rx.size()));
  // The FPGA's receive path before the worker sees the packet.
  Simulator::Schedule(Ps(spec_->fpga_rx_ps), [this, rx, len] { Handle(rx, len); });
}

void P4SGDWorker::Handle(const std::array<uint8_t, 64>& rx, uint32_t len) {
  if (len < rx.size()) {
    ++duplicates_;
    return;
  }
  const uint8_t flags = rx[sg::kOffPad0];
  const uint32_t index = p4::LoadBe16(&rx[sg::kOffIndex]) & slot_mask_;
  auto it = slots_.find(index);
  if (it == slots_.end()) {
    ++duplicates_;
    return;
  }
  Slot& s = it->second;
  if (flags & sg::kAckCompleteFlag) {
    // Algorithm 3 lines 26-29: the switch confirmed every ack; the slot is free.
    if (s.state != SlotState::kAck) {
      ++duplicates_;
      return;
    }
    s.timer.Cancel();
    s.state = SlotState::kIdle;
    // Ops that waited for a slot go out in order as their slots free up.
    while (!waiting_.empty()) {
      const uint32_t next = static_cast<uint32_t>(waiting_.front().first) & slot_mask_;
      Slot& n = slots_[next];
      if (n.state != SlotState::kIdle) break;
      n.state = SlotState::kAgg;
      n.op = waiting_.front().first;
      n.values = waiting_.front().second;
      n.first_send_ps = NowPs();
      waiting_.pop_front();
      SendAgg(n, next, false);
    }
    MaybeDone();
    return;
  }
  if (flags & sg::kAckFlag) {  // an ack echoed to us: not for a worker
    ++duplicates_;
    return;
  }
  if (s.state != SlotState::kAgg) {  // a second copy of a result we have
    ++duplicates_;
    return;
  }
  std::array<int32_t, glm::kMicroBatch> values{};
  for (uint32_t k = 0; k < glm::kMicroBatch; ++k)
    values[k] = static_cast<int32_t>(p4::LoadBe32(&rx[sg::kOffValues + 4 * k]));
  const uint64_t op = s.op;
  const uint64_t latency = NowPs() - s.first_send_ps;
  ++latency_hist_[latency];
  ++results_;
  rx_trace_(op, latency);
  owner_->Check(rank_, op, values);
  // Algorithm 3 lines 20-24: cancel the timer, acknowledge, keep the slot until confirmed.
  s.state = SlotState::kAck;
  SendAck(s, index, false);
  OnResult(op, values);
}

void P4SGDWorker::MaybeDone() {
  if (done_ || !work_done_ || !waiting_.empty()) return;
  for (const auto& [i, s] : slots_)
    if (s.state != SlotState::kIdle) return;
  done_ = true;
  owner_->WorkerDone();
}

void P4SGDWorker::OnResult(uint64_t op, const std::array<int32_t, glm::kMicroBatch>& values) {
  if (spec_->task == P4SGDTask::kAllreduce) {
    if (bench_next_ < spec_->operations) {
      if (spec_->gap_ps) Simulator::Schedule(Ps(spec_->gap_ps), &P4SGDWorker::IssueBenchOp, this);
      else IssueBenchOp();
    } else {
      work_done_ = true;
    }
    return;
  }
  if (spec_->data_parallel) {
    const uint64_t p = op - dp_base_;
    if (!spec_->hashed)
      for (uint32_t k = 0; k < glm::kMicroBatch; ++k)
        if (p * glm::kMicroBatch + k < dp_summed_.size()) dp_summed_[p * glm::kMicroBatch + k] = values[k];
    ++dp_received_;
    IssueDpOps();
    if (dp_received_ == dp_ops_) Simulator::Schedule(Ps(times_.update_ps), &P4SGDWorker::OnUpdateDone, this);
    return;
  }
  const uint32_t micro = static_cast<uint32_t>(op - static_cast<uint64_t>(minibatch_) * micros_);
  bwd_queue_.emplace_back(micro, values);
  TryBackward();
}

// --- model-parallel pipeline (Fig. 2c) ----------------------------------------

void P4SGDWorker::StartMinibatch() {
  fwd_next_ = 0;
  bwd_done_ = 0;
  if (spec_->data_parallel) {
    // Forward and backward of different samples overlap (§2.1): the stages
    // stream the worker's micro-batches back to back, one more pass to drain.
    const uint64_t t = (static_cast<uint64_t>(micros_) + 1) * std::max(times_.forward_ps, times_.backward_ps);
    Simulator::Schedule(Ps(t), &P4SGDWorker::OnDpComputeDone, this);
    return;
  }
  TryForward();
}

void P4SGDWorker::TryForward() {
  if (fwd_busy_ || fwd_next_ >= micros_) return;
  fwd_busy_ = true;
  Simulator::Schedule(Ps(times_.forward_ps), &P4SGDWorker::OnForwardDone, this, fwd_next_);
}

void P4SGDWorker::OnForwardDone(uint32_t micro) {
  fwd_busy_ = false;
  ++fwd_next_;
  const uint64_t op = static_cast<uint64_t>(minibatch_) * micros_ + micro;
  const uint32_t mb_in_epoch = minibatch_ % owner_->minibatches_per_epoch();
  const uint32_t first = mb_in_epoch * spec_->minibatch + micro * glm::kMicroBatch;
  const auto values = spec_->hashed ? owner_->HashedValues(rank_, op)
                                    : glm::PartialActivations(owner_->dataset(), owner_->model(rank_), range_, first);
  Issue(op, values);
  TryForward();
}

void P4SGDWorker::TryBackward() {
  if (bwd_busy_ || bwd_queue_.empty()) return;
  bwd_busy_ = true;
  const auto item = bwd_queue_.front();
  bwd_queue_.pop_front();
  Simulator::Schedule(Ps(times_.backward_ps), &P4SGDWorker::OnBackwardDone, this, item.first, item.second);
}

void P4SGDWorker::OnBackwardDone(uint32_t micro, std::array<int32_t, glm::kMicroBatch> full) {
  bwd_busy_ = false;
  if (!spec_->hashed) {
    const glm::Dataset& d = owner_->dataset();
    const uint32_t first = (minibatch_ % owner_->minibatches_per_epoch()) * spec_->minibatch + micro * glm::kMicroBatch;
    std::array<int32_t, glm::kMicroBatch> g{};
    for (uint32_t k = 0; k < glm::kMicroBatch; ++k)
      g[k] = first + k < d.samples ? glm::SampleGradient(owner_->train_spec().loss, full[k], d.y[first + k]) : 0;
    glm::AccumulateGradient(d, range_, first, g, grad_);
  }
  if (++bwd_done_ == micros_) {
    Simulator::Schedule(Ps(times_.update_ps), &P4SGDWorker::OnUpdateDone, this);
    return;
  }
  TryBackward();
}

void P4SGDWorker::OnUpdateDone() {
  if (!spec_->hashed) {
    if (spec_->data_parallel)
      glm::ApplySummedUpdate(owner_->model(rank_), dp_summed_, spec_->learning_rate, spec_->minibatch);
    else
      glm::ApplyUpdate(owner_->model(rank_), range_, grad_, spec_->learning_rate, spec_->minibatch,
                       owner_->dataset().bits);
  }
  owner_->MinibatchDone(rank_, minibatch_);
  if (++minibatch_ == owner_->total_minibatches()) {
    work_done_ = true;
    MaybeDone();
    return;
  }
  StartMinibatch();
}

// --- data-parallel ------------------------------------------------------------

void P4SGDWorker::OnDpComputeDone() {
  const glm::Dataset& d = owner_->dataset();
  const uint32_t W = owner_->num_workers_planned();
  dp_ops_ = CeilDiv(d.features, glm::kMicroBatch);
  dp_base_ = minibatch_ * dp_ops_;
  dp_next_ = 0;
  dp_received_ = 0;
  if (!spec_->hashed) {
    const uint32_t mb = minibatch_ % owner_->minibatches_per_epoch();
    const uint32_t lo = mb * spec_->minibatch + rank_ * spec_->minibatch / W;
    const uint32_t hi = mb * spec_->minibatch + (rank_ + 1) * spec_->minibatch / W;
    const glm::FeatureRange all{0, d.features};
    const std::vector<int32_t>& model = owner_->model(rank_);
    std::fill(grad_.begin(), grad_.end(), 0);
    for (uint32_t first = lo; first < hi; first += glm::kMicroBatch) {
      const auto a = glm::PartialActivations(d, model, all, first);
      std::array<int32_t, glm::kMicroBatch> g{};
      for (uint32_t l = 0; l < glm::kMicroBatch && first + l < hi; ++l)
        g[l] = glm::SampleGradient(owner_->train_spec().loss, a[l], d.y[first + l]);
      glm::AccumulateGradient(d, all, first, g, grad_);
    }
    dp_words_.assign(dp_ops_ * glm::kMicroBatch, 0);
    for (uint32_t j = 0; j < d.features; ++j) dp_words_[j] = glm::GradientWord(grad_[j], d.bits);
    dp_summed_.assign(d.features, 0);
  }
  IssueDpOps();
}

void P4SGDWorker::IssueDpOps() {
  while (dp_next_ < dp_ops_ && dp_next_ - dp_received_ < spec_->window) {
    const uint64_t op = dp_base_ + dp_next_;
    std::array<int32_t, glm::kMicroBatch> v{};
    if (spec_->hashed) v = owner_->HashedValues(rank_, op);
    else std::copy_n(dp_words_.begin() + dp_next_ * glm::kMicroBatch, glm::kMicroBatch, v.begin());
    ++dp_next_;
    Issue(op, v);
  }
}

// --- allreduce benchmark (Fig. 8) ---------------------------------------------

void P4SGDWorker::IssueBenchOp() {
  const uint64_t op = bench_next_++;
  Issue(op, owner_->HashedValues(rank_, op));
}

// --- job ------------------------------------------------------------------------

void P4SGDJob::CheckWorkers(const topo::Topology& topology, const std::vector<uint32_t>& hosts) {
  const size_t W = hosts.size();
  if (W < 1 || W > sg::kMaxWorkers)
    throw ScenarioError(fmt::format("workload.hosts: protocol \"p4sgd\" takes 1..32 workers (the switch's bitmaps "
                                    "hold 32), got {}", W));
  const uint32_t sw = topology.tor_of(hosts[0]);
  for (uint32_t h : hosts)
    if (topology.tor_of(h) != sw)
      throw ScenarioError(fmt::format(
          "workload.hosts: p4sgd runs on one switch (p4sgd §5.1: the FPGAs hang off one Tofino); host {} is on {}, "
          "host {} on {}",
          topology.node(hosts[0]).name, topology.node(sw).name, topology.node(h).name,
          topology.node(topology.tor_of(h)).name));
}

void P4SGDJob::CheckTrainingShape(const P4SGDSpec& spec, uint32_t W, uint64_t samples, uint64_t features) {
  if (spec.task != P4SGDTask::kTrain) return;
  if (spec.dataset == "synthetic" && !spec.hashed && samples * features > (1ull << 32))
    throw ScenarioError(fmt::format(
        "workload.p4sgd.samples: samples x features = {} x {} exceeds 4 GiB of quantized features; use arithmetic "
        "\"hashed\" for timing-only runs at that size", samples, features));
  if (!spec.hashed) {
    // The dataset (one byte per feature), the models and int64 gradients
    // (one per worker when data-parallel), the networkless run's copies.
    const double f = static_cast<double>(features);
    const double bytes = static_cast<double>(samples) * f + (spec.data_parallel ? W * f * 24.0 + f * 16.0 : f * 24.0);
    if (bytes > kMaxTrainingBytes)
      throw ScenarioError(fmt::format(
          "workload.p4sgd.features: real arithmetic on {} samples x {} features ({} workers) needs {:.1f} GiB, more "
          "than the {:.0f} GiB allowed; use arithmetic \"hashed\" for timing-only runs at this size",
          samples, features, W, bytes / (1ull << 30), kMaxTrainingBytes / (1ull << 30)));
  }
  if (!spec.data_parallel && features < W)
    throw ScenarioError(fmt::format(
        "workload.p4sgd.features: {} features cannot be split over {} workers (model parallelism)", features, W));
  if (spec.data_parallel && spec.minibatch % W)
    throw ScenarioError(fmt::format(
        "workload.p4sgd.minibatch: {} must split evenly over {} workers (data parallelism)", spec.minibatch, W));
  if (samples / spec.minibatch == 0)  // glm::TrainSpec::MinibatchesPerEpoch
    throw ScenarioError(fmt::format("workload.p4sgd.samples: {} samples make no mini-batch of {}", samples,
                                    spec.minibatch));
}

P4SGDJob::P4SGDJob(Fabric& fabric, const std::vector<uint32_t>& hosts, const P4SGDSpec& spec, uint64_t seed)
    : spec_(spec), seed_(seed), fabric_(&fabric) {
  CheckWorkers(fabric.topology(), hosts);
  const uint32_t W = static_cast<uint32_t>(hosts.size());
  planned_workers_ = W;
  train_.loss = glm::ParseLoss(spec_.loss);
  train_.workers = W;
  train_.minibatch = spec_.minibatch;
  train_.epochs = spec_.epochs;
  train_.learning_rate = spec_.learning_rate;
  train_.data_parallel = spec_.data_parallel;
  if (spec_.task == P4SGDTask::kTrain) {
    if (spec_.hashed) {
      data_.samples = spec_.samples;
      data_.features = spec_.features;
      data_.bits = spec_.precision_bits;
      data_.source = "hashed";
    } else if (spec_.dataset == "synthetic") {
      CheckTrainingShape(spec_, W, spec_.samples, spec_.features);  // before the data is allocated
      data_ = glm::Dataset::Synthetic(spec_.samples, spec_.features, spec_.precision_bits, train_.loss, seed,
                                      spec_.density);
    } else {
      try {
        data_ = glm::Dataset::FromLibsvm(spec_.dataset, spec_.precision_bits, train_.loss, spec_.max_samples);
      } catch (const std::invalid_argument& e) {
        throw ScenarioError(std::string("workload.p4sgd.dataset: ") + e.what());  // its own key, not "workload"
      }
    }
    CheckTrainingShape(spec_, W, data_.samples, data_.features);
    mbs_per_epoch_ = train_.MinibatchesPerEpoch(data_);
    if (!spec_.hashed) {
      if (spec_.data_parallel) dp_models_.assign(W, std::vector<int32_t>(data_.features, 0));
      else model_.assign(data_.features, 0);
    }
  }
  ledger_.resize(spec_.slots);
  ops_.set_max_listed(kListedOps);
  const uint64_t iterations = spec_.task == P4SGDTask::kAllreduce ? spec_.operations : total_minibatches();
  ops_.AddJob(W, iterations * OpsPerIteration());
  InstallProgram(fabric, hosts);
  const topo::Topology& topology = fabric.topology();
  switch_ip_ = SwitchIpv4(switch_vertex_ - topology.num_hosts());
  for (uint32_t rank = 0; rank < W; ++rank) {
    auto w = ns3::CreateObject<P4SGDWorker>();
    fabric.host(hosts[rank])->AddApplication(w);
    w->Setup(this, rank, fabric.device(hosts[rank], 0), switch_ip_);
    workers_.push_back(w);
  }
}

P4SGDJob::~P4SGDJob() = default;

void P4SGDJob::InstallProgram(Fabric& fabric, const std::vector<uint32_t>& hosts) {
  const topo::Topology& topology = fabric.topology();
  switch_vertex_ = topology.tor_of(hosts[0]);
  sg::P4SGDConfig c;
  c.mode = sg::Mode::kPaper;
  c.encap = sg::Encap::kUdp;
  c.udp_port = spec_.udp_port;
  c.num_workers = static_cast<uint32_t>(hosts.size());
  c.slots = spec_.slots;
  c.pass_latency_ps = spec_.pass_latency_ps;
  const uint32_t sw = switch_vertex_ - topology.num_hosts();
  c.switch_ip = SwitchIpv4(sw);
  c.switch_mac = MacBytesOfIpv4(c.switch_ip);
  for (uint32_t rank = 0; rank < hosts.size(); ++rank) {
    const uint32_t h = hosts[rank];  // on switch_vertex_ (CheckWorkers)
    const uint16_t port = topology.ports(h).at(0).peer_port;
    c.workers.push_back({static_cast<uint16_t>(rank), port, MacBytesOfIpv4(HostIpv4(h)), HostIpv4(h)});
  }
  c.Finalize();
  fabric.switch_node(sw).SetDataplane(std::make_unique<sg::P4SGDDataplane>(c));
}

void P4SGDJob::Start(uint64_t at_ps) {
  start_ps_ = at_ps;
  for (auto& w : workers_) {
    P4SGDWorker* p = ns3::PeekPointer(w);
    Simulator::Schedule(Ps(at_ps), [p] { p->Begin(); });
  }
}

double P4SGDJob::progress() const {
  if (spec_.task == P4SGDTask::kAllreduce) {
    double sum = 0;
    for (const auto& w : workers_) sum += static_cast<double>(w->results());
    return sum / (static_cast<double>(spec_.operations) * workers_.size());
  }
  return static_cast<double>(minibatches_done_) /
         (static_cast<double>(total_minibatches()) * static_cast<double>(workers_.size()) + 1e-300);
}

std::array<int32_t, glm::kMicroBatch> P4SGDJob::HashedValues(uint32_t rank, uint64_t op) const {
  std::array<int32_t, glm::kMicroBatch> v{};
  for (uint32_t k = 0; k < glm::kMicroBatch; ++k) {
    const uint64_t h = topo::SplitMix64Hash(seed_ ^ topo::SplitMix64Hash((op << 8) | k) ^ (uint64_t{rank} << 40));
    v[k] = static_cast<int32_t>(static_cast<uint32_t>(h));
  }
  return v;
}

void P4SGDJob::Contribute(uint64_t op, const std::array<int32_t, glm::kMicroBatch>& values) {
  Ledger& l = ledger_[op & (ledger_.size() - 1)];
  if (!l.open) {
    l = Ledger{};
    l.op = op;
    l.open = true;
    l.first_send_ps = NowPs();
    ++ledger_open_;
    if (hashed_values())  // the oracle: every rank's values, whatever the workers sent
      for (uint32_t r = 0; r < num_workers(); ++r) {
        const auto v = HashedValues(r, op);
        for (uint32_t k = 0; k < glm::kMicroBatch; ++k) l.sum[k] += static_cast<uint32_t>(v[k]);
      }
  } else if (l.op != op) {  // never: the slot discipline frees an entry first
    ++unmatched_;
    ++mismatches_;
    return;
  }
  if (!hashed_values())
    for (uint32_t k = 0; k < glm::kMicroBatch; ++k) l.sum[k] += static_cast<uint32_t>(values[k]);
  ++l.contributions;
}

std::array<int32_t, glm::kMicroBatch> P4SGDJob::InjectFault(uint32_t rank, uint64_t op,
                                                            std::array<int32_t, glm::kMicroBatch> values,
                                                            const std::array<int32_t, glm::kMicroBatch>& previous) const {
  using F = testing_hooks::ContributionFault;
  const uint32_t n = num_workers_planned();
  switch (testing_hooks::InjectedFault()) {
    case F::kOtherRank:  // another rank's values exist only as hashed values
      if (hashed_values() && rank == 0 && n > 1) return HashedValues(1, op);
      if (hashed_values() && rank == n - 1 && n > 2) return HashedValues(n - 2, op);
      break;
    case F::kStaleIteration:
      if (op > 0) return previous;
      break;
    case F::kShiftedElement:
      if (rank == 0) values[1] = values[2];
      break;
    case F::kLostContribution:
      if (rank == 0) values.fill(0);
      break;
    case F::kNone: break;
  }
  return values;
}

void P4SGDJob::Check(uint32_t /*rank*/, uint64_t op, const std::array<int32_t, glm::kMicroBatch>& values) {
  Ledger& l = ledger_[op & (ledger_.size() - 1)];
  if (!l.open || l.op != op) {
    ++unmatched_;
    mismatches_ += glm::kMicroBatch;
    return;
  }
  uint32_t bad = 0;
  for (uint32_t k = 0; k < glm::kMicroBatch; ++k) bad += static_cast<uint32_t>(values[k]) != l.sum[k];
  if (l.contributions != num_workers()) bad = glm::kMicroBatch;  // then no element is the exact sum
  ++checked_;
  mismatches_ += bad;
  l.mismatches += bad;
  l.last_result_ps = NowPs();
  if (++l.checks == num_workers()) {
    l.open = false;
    --ledger_open_;
    AddOp(l);
  }
}

uint64_t P4SGDJob::OpsPerIteration() const {
  if (spec_.task == P4SGDTask::kAllreduce) return 1;
  return spec_.data_parallel ? CeilDiv(data_.features, glm::kMicroBatch) : spec_.minibatch / glm::kMicroBatch;
}

void P4SGDJob::AddOp(const Ledger& l) {
  CollectiveRow row;
  row.iteration = static_cast<uint32_t>(l.op / OpsPerIteration());
  row.start_ps = l.first_send_ps;
  row.end_ps = l.last_result_ps;
  row.bytes = glm::kMicroBatch * 4;
  row.elements_checked = uint64_t{l.checks} * glm::kMicroBatch;
  row.mismatches = l.mismatches;
  row.correct = l.mismatches == 0;
  RowExtras extras;
  if (!ops_.full()) extras.Add("op", l.op);
  ops_.Add(row, std::move(extras));
}

void P4SGDJob::MinibatchDone(uint32_t /*rank*/, uint32_t minibatch) {
  ++minibatches_done_;
  uint32_t& count = minibatch_count_[minibatch % minibatch_count_.size()];
  if (++count != num_workers()) return;
  count = 0;
  ++minibatches_complete_;
  if ((minibatch + 1) % mbs_per_epoch_) return;
  // The last worker finished the epoch's last update; no worker has applied
  // the next mini-batch's update yet (it needs everyone's next forward pass).
  double loss = std::numeric_limits<double>::quiet_NaN();
  if (!spec_.hashed) loss = glm::MeanLoss(data_, spec_.data_parallel ? dp_models_[0] : model_, train_.loss);
  epochs_.emplace_back(NowPs(), loss);
}

void P4SGDJob::WorkerDone() {
  if (++workers_done_ != workers_.size()) return;
  end_ps_ = NowPs();
  if (on_finished) on_finished();
}

}  // namespace inasim
