#include "protocols/switchml/host/switchml-job.h"

#include "ina/addressing.h"
#include "ina/fabric.h"
#include "ina/ina-net-device.h"
#include "protocols/switchml/host/switchml-ps.h"
#include "protocols/switchml/host/switchml-quantizer.h"
#include "p4model/common/frame.h"
#include "protocols/switchml/dataplane/config.h"
#include "protocols/switchml/dataplane/hierarchy.h"
#include "protocols/switchml/dataplane/next_step_selector.h"
#include "protocols/switchml/dataplane/switchml_dataplane.h"

#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <tuple>

namespace inasim {

NS_LOG_COMPONENT_DEFINE("SwitchMLWorker");

using ns3::PicoSeconds;
using ns3::Ptr;
using ns3::Simulator;

namespace {

uint64_t NowPs() { return static_cast<uint64_t>(Simulator::Now().GetPicoSeconds()); }

// kSwitchMLHeaderBytes, then k big-endian int32 elements.
constexpr uint32_t kHeaderBytes = kSwitchMLHeaderBytes;
static_assert(kHeaderBytes == p4::switchml::kSwitchmlHBytes + p4::switchml::kExponentsHBytes);
// p4lang/p4app-switchML@b5c74a04:dev_root/client_lib/src/backends/dpdk/dpdk_backend.cc:136
constexpr uint16_t kSwitchUdpPort = 48864;  // 0xbee0

float AsFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

// ---------------------------------------------------------------- worker ----

// Registered at load time, so `inasim trace-sources` lists it before any run.
NS_OBJECT_ENSURE_REGISTERED(SwitchMLWorker);

ns3::TypeId SwitchMLWorker::GetTypeId() {
  static ns3::TypeId tid = ns3::TypeId("inasim::SwitchMLWorker")
                               .SetParent<ns3::Application>()
                               .SetGroupName("Inasim")
                               .AddConstructor<SwitchMLWorker>()
                               .AddTraceSource("Tx", "A packet sent: job, packet id, pool index (bit 15: set), "
                                               "retransmission",
                                               ns3::MakeTraceSourceAccessor(&SwitchMLWorker::tx_trace_),
                                               "inasim::SwitchMLWorker::TxTracedCallback")
                               .AddTraceSource("Rx", "A result received: job, packet id, accepted (false: a "
                                               "duplicate or another job's)",
                                               ns3::MakeTraceSourceAccessor(&SwitchMLWorker::rx_trace_),
                                               "inasim::SwitchMLWorker::RxTracedCallback")
                               .AddTraceSource("Timeout",
                                               "A packet's retransmission timer expired (it is sent again); args: "
                                               "job, packet id",
                                               ns3::MakeTraceSourceAccessor(&SwitchMLWorker::timeout_trace_),
                                               "inasim::TimeoutTracedCallback");
  return tid;
}

void SwitchMLWorker::Setup(SwitchMLJob* owner, uint32_t rank, uint32_t tid, InaNetDevice& nic, uint32_t switch_ip) {
  owner_ = owner;
  spec_ = &owner->spec();
  rank_ = rank;
  tid_ = tid;
  switch_ip_ = switch_ip;
  timeout_threshold_ = spec_->timeout_threshold;
  // dpdk_worker_thread.cc:82, :93-94: the thread's window and its slots.
  window_ = spec_->pool_size / owner->threads();
  pool_start_ = 2 * window_ * tid;
  const uint32_t m = window_;
  timer_pkt_id_.assign(m, 0);
  timer_pool_index_.assign(m, 0);
  timer_start_ps_.assign(m, 0);
  timers_.Reset(m);
  sent_ps_.assign(m, 0);
  tx_.assign(kHeaderBytes + 4 * spec_->elements_per_packet, 0);
  block_.resize(spec_->elements_per_packet);
  // The port exists from set-up on, so a job may begin at time 0. Thread t
  // of every worker uses port worker_port + t (dpdk_worker_thread.cc:66-70):
  // the switch answers to the port of the packet that completed a slot
  // (udp_sender.p4 swaps ports), and the NIC's flow rule steers it to the
  // thread's queue (dpdk_master_thread_utils.inc:105-161).
  endpoint_.Open(nic, static_cast<uint16_t>(spec_->worker_udp_port + tid),
                 [this](const uint8_t* b, uint32_t len, const DatagramInfo&) { lcore_.OnRx(b, len); });
  endpoint_.set_ttl(128);  // BuildPacket: time_to_live = 128
  lcore_.Configure(owner->LcoreConfig(), &endpoint_, [this](const uint8_t* b, uint32_t len) { Handle(b, len); });
  if (lcore_timers()) lcore_.SetTimerManager([this](uint64_t now) { FireDueTimers(now); });
}

bool SwitchMLWorker::lcore_timers() const {
  return spec_->backend == SwitchMLBackend::kDpdk && spec_->timer_check == SwitchMLTimerCheck::kEmptyPoll;
}

void SwitchMLWorker::ArmTimers() {
  if (lcore_timers()) {
    lcore_.WantTimers(timers_.NextDeadline());
  } else {
    timers_.Arm(NowPs(), this, &SwitchMLWorker::OnTimerEvent);
  }
}

void SwitchMLWorker::StartApplication() {}

void SwitchMLWorker::StopApplication() {
  endpoint_.Close();
  lcore_.Cancel();
  timers_.CancelEvent();
}

void SwitchMLWorker::DoDispose() {
  endpoint_.Close();
  lcore_.Cancel();
  timers_.CancelEvent();
  ns3::Application::DoDispose();
}

// p4lang/p4app-switchML@b5c74a04:dev_root/client_lib/src/backends/dpdk/dpdk_worker_thread_utils.inc:42
uint16_t SwitchMLWorker::PoolIndex(uint64_t pkt_id) const {
  const uint32_t m = window_;
  const uint32_t i = static_cast<uint32_t>((pkt_id + pool_index_shift_) % (2ull * m));
  return i < m ? static_cast<uint16_t>(pool_start_ + i) : static_cast<uint16_t>((pool_start_ + i - m) | 0x8000);
}

// p4lang/p4app-switchML@b5c74a04:dev_root/client_lib/src/backends/dpdk/dpdk_worker_thread.cc:165
void SwitchMLWorker::BeginJob(uint32_t job) {
  NS_LOG_INFO("rank " << rank_ << " thread " << tid_ << ": job " << job << " begins");
  job_ = job;
  running_ = true;
  data_ = &owner_->data(job);
  record_ = &owner_->record(job);
  // This thread's job slice (fifo_scheduler.cc:93-108), packetized on its own.
  std::tie(slice_first_, numel_) = owner_->Slice(record_->elements, tid_);
  const uint32_t k = spec_->elements_per_packet;
  const uint32_t m = window_;
  // CpuExponentQuantizerPPP::SetupJobSlice: LTUs of k elements, rounded up.
  total_main_ = (numel_ + k - 1) / k;
  batch_ = std::min<uint64_t>(m, total_main_);
  total_ = total_main_ + (data_->dtype() == DType::kFloat32 ? batch_ : 0);  // NeedsExtraBatch
  received_.assign(total_, 0);
  num_received_ = 0;
  if (data_->dtype() == DType::kFloat32) scaling_factors_.assign(total_main_, 0.0f);
  timer_ps_ = spec_->timeout_ps;  // dpdk_worker_thread.cc:216: timer_cycles_ = initial each job slice
  lcore_.SetTimerPeriod(timer_ps_);
  record_->start_ps[rank_] = NowPs();
  if (total_ == 0) {
    FinishJob();
    return;
  }
  // First batch (dpdk_worker_thread.cc:222).
  for (uint64_t j = 0; j < batch_; ++j) {
    const uint16_t pool = PoolIndex(j);
    Send(j, pool, false, false);
    if (spec_->timer_mode == SwitchMLTimerMode::kPaper) {
      StartTimer(static_cast<uint32_t>(j % batch_), j, pool, timer_ps_);
    } else {
      // As written upstream: pkt_id is incremented before the timer slot and
      // the callback's packet id are taken (lines 236-248), and the first
      // batch's timers run max_outstanding_pkts times longer (line 252).
      const uint64_t next = j + 1;
      StartTimer(static_cast<uint32_t>(next % m), next, pool, timer_ps_ * m);
    }
  }
}

void SwitchMLWorker::Send(uint64_t pkt_id, uint16_t pool_index, bool retransmission, bool buffered) {
  const uint32_t k = spec_->elements_per_packet;
  uint8_t* b = tx_.data();
  // BuildPacket (dpdk_worker_thread_utils.inc:113): size category of packet_numel.
  const uint8_t size_enum = k < 64 ? 0 : k < 128 ? 1 : k < 256 ? 2 : 3;
  b[0] = static_cast<uint8_t>((1 << 4) + size_enum);
  b[1] = static_cast<uint8_t>(job_);  // short_job_id: the job id's 8 LSBs
  // pkt_id is written in host (little-endian) order: only the client reads it.
  const uint32_t id = static_cast<uint32_t>(pkt_id);
  b[2] = static_cast<uint8_t>(id), b[3] = static_cast<uint8_t>(id >> 8);
  b[4] = static_cast<uint8_t>(id >> 16), b[5] = static_cast<uint8_t>(id >> 24);
  p4::StoreBe16(b + 6, pool_index);
  Preprocess(pkt_id, b);
  const uint32_t to = switch_ip_ ? switch_ip_ : owner_->DestinationOf(pool_index);
  if (buffered) {
    lcore_.Buffer(to, kSwitchUdpPort, b, static_cast<uint32_t>(tx_.size()));
  } else {
    lcore_.SendNow(to, kSwitchUdpPort, b, static_cast<uint32_t>(tx_.size()));
  }
  // Per-packet RTT runs from the first send; each of the batch_ lanes
  // (pkt_id mod batch_) has exactly one packet outstanding.
  if (!retransmission) sent_ps_[pkt_id % batch_] = NowPs();
  ++record_->packets_sent;
  owner_->CountSent(rank_);
  tx_trace_(job_, pkt_id, pool_index, retransmission);
}

// p4lang/p4app-switchML@b5c74a04:dev_root/client_lib/src/prepostprocessors/cpu_exponent_quantizer_ppp.cc:69
void SwitchMLWorker::Preprocess(uint64_t ltu_id, uint8_t* b) {
  const uint32_t k = spec_->elements_per_packet;
  uint8_t* out = b + kHeaderBytes;
  b[8] = b[9] = 0;
  // Elements past the tensor's end (the last packet, and float32's first
  // batch) are sent as zeros; the library leaves whatever the reused buffer
  // held, which the switch adds and the client ignores just the same.
  if (data_->dtype() == DType::kInt32) {
    const uint64_t first = ltu_id * k;
    const uint64_t count = first < numel_ ? std::min<uint64_t>(k, numel_ - first) : 0;
    data_->FillBe32(rank_, slice_first_ + first, count, out);
    if (count < k) std::memset(out + 4 * count, 0, 4 * (k - count));
    return;
  }
  std::memset(out, 0, 4ull * k);
  if (ltu_id >= batch_) {
    // The data of the LTU one batch back, scaled by the factor its (already
    // received) global exponent gave.
    const uint64_t d = ltu_id - batch_;
    const uint64_t first = d * k;
    const uint32_t count = static_cast<uint32_t>(std::min<uint64_t>(k, numel_ - first));
    const float f = scaling_factors_[d];
    for (uint32_t i = 0; i < count; ++i) {
      const float x = AsFloat(data_->Contribution(rank_, slice_first_ + first + i));
      p4::StoreBe32(out + 4 * i, switchml_host::Quantize(x, f, i, count, spec_->vcl));
    }
  }
  // In both cases the exponent of LTU ltu_id travels in this packet.
  if (ltu_id < total_main_) {
    const uint64_t first = ltu_id * k;
    const uint32_t count = static_cast<uint32_t>(std::min<uint64_t>(k, numel_ - first));
    for (uint32_t i = 0; i < count; ++i) block_[i] = AsFloat(data_->Contribution(rank_, slice_first_ + first + i));
    b[8] = static_cast<uint8_t>(switchml_host::BlockExponent(block_.data(), count));
  }
}

// p4lang/p4app-switchML@b5c74a04:dev_root/client_lib/src/prepostprocessors/cpu_exponent_quantizer_ppp.cc:194
void SwitchMLWorker::Postprocess(uint64_t ltu_id, const uint8_t* b) {
  const uint32_t k = spec_->elements_per_packet;
  const uint8_t* in = b + kHeaderBytes;
  SwitchMLTensorRecord& rec = *record_;
  if (data_->dtype() == DType::kInt32) {
    const uint64_t first = ltu_id * k;
    const uint64_t count = first < numel_ ? std::min<uint64_t>(k, numel_ - first) : 0;
    rec.mismatches += data_->CountMismatchesBe32(slice_first_ + first, count, in);
    rec.elements_checked += count;
    return;
  }
  const uint16_t n = static_cast<uint16_t>(owner_->num_workers());
  if (ltu_id >= batch_) {
    const uint64_t d = ltu_id - batch_;
    const uint64_t first = d * k;
    const uint32_t count = static_cast<uint32_t>(std::min<uint64_t>(k, numel_ - first));
    const float f = scaling_factors_[d];
    // Bounds for this block: the paper's n/f, and that of the library's float
    // arithmetic (each x_i*f within 2^E*f = INT32_MAX/n, see the quantizer).
    const double paper_bound = n / static_cast<double>(f);
    const double half_ulps = n * switchml_host::HalfUlp(static_cast<float>(2147483647.0 / n));
    for (uint32_t i = 0; i < count; ++i) {
      const float result = switchml_host::Dequantize(p4::LoadBe32(in + 4 * i), f);
      const double exact = data_->ExactSum(slice_first_ + first + i);
      const double err = std::fabs(static_cast<double>(result) - exact);
      const double impl_bound = switchml_host::ImplementationErrorBound(n, half_ulps, f, std::fabs(exact));
      rec.max_abs_error = std::max(rec.max_abs_error, err);
      rec.max_paper_bound_ratio = std::max(rec.max_paper_bound_ratio, err / paper_bound);
      const double ratio = err / impl_bound;
      rec.max_impl_bound_ratio = std::max(rec.max_impl_bound_ratio, ratio);
      rec.mismatches += !(ratio <= 1.0);  // NaN counts as a mismatch
    }
    rec.elements_checked += count;
  }
  // The global exponent of LTU ltu_id gives its scaling factor.
  if (ltu_id < total_main_) scaling_factors_[ltu_id] = switchml_host::ScalingFactor(n, static_cast<int8_t>(b[8]));
}

// p4lang/p4app-switchML@b5c74a04:dev_root/client_lib/src/backends/dpdk/dpdk_worker_thread.cc:302
void SwitchMLWorker::Handle(const uint8_t* b, uint32_t len) {
  if (!running_ || len < kHeaderBytes + 4 * spec_->elements_per_packet) return;
  SwitchMLTensorRecord& rec = *record_;
  const uint64_t pkt_id = uint32_t{b[2]} | uint32_t{b[3]} << 8 | uint32_t{b[4]} << 16 | uint32_t{b[5]} << 24;
  // "Have we received this packet before?" (ids beyond this job: a stale copy).
  if (pkt_id >= total_ || received_[pkt_id]) {
    ++rec.duplicates;
    rx_trace_(job_, pkt_id, false);
    return;
  }
  // "Is this packet for the current running job?"
  if (b[1] != static_cast<uint8_t>(job_)) {
    ++rec.wrong_job;
    rx_trace_(job_, pkt_id, false);
    return;
  }
  rx_trace_(job_, pkt_id, true);
  Postprocess(pkt_id, b);
  ++num_received_;
  ++received_total_;
  received_[pkt_id] = 1;
  const uint32_t m = window_;
  const uint64_t next = pkt_id + batch_;
  uint32_t index;
  if (spec_->timer_mode == SwitchMLTimerMode::kPaper) {
    index = static_cast<uint32_t>(pkt_id % batch_);
  } else {
    index = static_cast<uint32_t>(next % m);  // line 350: the slot of the *next* packet id
  }
  const uint64_t rtt = NowPs() - sent_ps_[pkt_id % batch_];
  rec.rtt_sum_ps += static_cast<double>(rtt);
  ++rec.rtt_count;
  rec.rtt_max_ps = std::max(rec.rtt_max_ps, rtt);
  owner_->RecordRtt(rank_, rtt);
  StopTimer(index);
  if (next < total_) {
    const uint16_t pool = PoolIndex(next);
    Send(next, pool, false, true);
    StartTimer(index, next, pool, timer_ps_);
  }
  if (num_received_ == total_) FinishJob();
}

void SwitchMLWorker::StartTimer(uint32_t index, uint64_t pkt_id, uint16_t pool_index, uint64_t duration_ps) {
  timer_pkt_id_[index] = pkt_id;
  timer_pool_index_[index] = pool_index;
  timer_start_ps_[index] = NowPs();
  timers_.Start(index, NowPs() + duration_ps);
  ArmTimers();
}

// p4lang/p4app-switchML@b5c74a04:dev_root/client_lib/src/backends/dpdk/dpdk_worker_thread_utils.inc:225
void SwitchMLWorker::OnTimerEvent() {
  timers_.Fired();
  FireDueTimers(NowPs());
}

void SwitchMLWorker::FireDueTimers(uint64_t now) {
  uint32_t index;
  while (timers_.PopDue(now, index)) {
    // ResendPacketCallback: back off after timeout_threshold timeouts.
    ++timeouts_counter_;
    if (timeouts_counter_ >= timeout_threshold_) {
      timeouts_counter_ = 0;
      timeout_threshold_ += spec_->timeout_threshold_increment;
      timer_ps_ *= 2;
      lcore_.SetTimerPeriod(timer_ps_);
    }
    ++record_->timeouts;
    timeout_trace_(job_, timer_pkt_id_[index]);
    NS_LOG_LOGIC("rank " << rank_ << " thread " << tid_ << ": job " << job_ << " packet " << timer_pkt_id_[index]
                         << " timed out, sent again");
    owner_->CountStall(rank_, timer_start_ps_[index], now);
    Send(timer_pkt_id_[index], timer_pool_index_[index], true, false);
    timer_start_ps_[index] = now;
    timers_.Start(index, now + timer_ps_);
  }
  ArmTimers();
}

bool SwitchMLJob::KeyFrame(const p4::FrameView& view, inasim::Span<const uint8_t> frame, FrameKey& key) const {
  if (!view.ipv4 || !view.l4 || view.protocol != p4::kIpProtoUdp) return false;
  // The switch's ports, as its parser matches them (protocols/switchml/dataplane/types.h).
  const auto switch_port = [](uint16_t port) {
    return (port & p4::switchml::kUdpPortSwitchmlMask) == p4::switchml::kUdpPortSwitchmlBase;
  };
  const bool update = switch_port(view.dst_port);
  if (!update && !switch_port(view.src_port)) return false;
  if (frame.size() < size_t{view.l4_payload_offset} + kHeaderBytes) return false;
  const uint8_t* b = frame.data() + view.l4_payload_offset;
  key.kind = update ? "update" : "result";
  key.job = b[1];
  key.id = uint32_t{b[2]} | uint32_t{b[3]} << 8 | uint32_t{b[4]} << 16 | uint32_t{b[5]} << 24;
  key.aux = p4::LoadBe16(b + 6);
  return true;
}

void SwitchMLWorker::FinishJob() {
  NS_LOG_INFO("rank " << rank_ << " thread " << tid_ << ": job " << job_ << " done");
  running_ = false;
  // Every timer of this job slice is over (the library's are all stopped by then).
  timers_.StopAll();
  if (lcore_timers()) lcore_.WantTimers(UINT64_MAX);
  // dpdk_worker_thread.cc:392: the next job continues the pool index sequence.
  pool_index_shift_ = static_cast<uint32_t>((pool_index_shift_ + total_) % (2ull * window_));
  owner_->ThreadJobDone(rank_, tid_, job_);
}

// ------------------------------------------------------------------- job ----

SwitchMLJob::SwitchMLJob(Fabric& fabric, const std::vector<uint32_t>& hosts, DType dtype, DataPattern pattern,
                         uint64_t seed, const SwitchMLSpec& spec, std::vector<uint64_t> tensor_bytes,
                         uint32_t iterations, uint64_t compute_gap_ps, const ScheduleSpec& schedule)
    : spec_(spec), dtype_(dtype), fabric_(&fabric) {
  const uint32_t n = static_cast<uint32_t>(hosts.size());
  worker_hosts_ = hosts;
  schedule_ = IterationSchedule::Of(schedule, n, tensor_bytes.size(), compute_gap_ps, seed);
  if (n == 0) throw std::invalid_argument("switchml needs at least one worker");
  num_workers_ = n;
  if (n > 0xffff) throw std::invalid_argument("switchml: num_workers is a 16-bit field in the client library");
  const topo::Topology& topology = fabric.topology();
  host_rate_bps_ = fabric.device(hosts[0], 0).rate_bps();
  if (spec_.ps == SwitchMLPs::kNone) tree_ = CheckedTree(topology, hosts, spec_);
  threads_ = ResolveThreads(spec_, host_rate_bps_);
  CheckThreads(spec_, threads_);
  if (spec_.ps == SwitchMLPs::kNone) InstallPrograms(fabric);

  const uint32_t k = spec_.elements_per_packet;
  const TensorData run_data(dtype, pattern, seed, n);
  for (uint32_t it = 0; it < iterations; ++it) {
    for (uint32_t t = 0; t < tensor_bytes.size(); ++t) {
      const uint32_t job = static_cast<uint32_t>(records_.size());
      SwitchMLTensorRecord r;
      r.sequence = job;
      r.iteration = it;
      r.tensor = t;
      r.bytes = tensor_bytes[t];
      r.elements = tensor_bytes[t] / 4;
      // Each thread's slice is packetized on its own, with its own float32
      // extra batch; RDMA in whole messages.
      const uint64_t unit = rdma() ? uint64_t{k} * spec_.rdma_message_packets : k;
      for (uint32_t tid = 0; tid < threads_; ++tid) {
        const uint64_t main = (Slice(r.elements, tid).second + unit - 1) / unit * (unit / k);
        r.packets_per_worker += main + (dtype == DType::kFloat32 ? std::min<uint64_t>(spec_.pool_size / threads_, main) : 0);
      }
      r.Reset(n);
      records_.push_back(std::move(r));
      // Each tensor of each iteration (a SwitchML job) its own values: the
      // rank weights are the run's, the element values fresh per job.
      data_.push_back(run_data.ForIteration(job));
      expected_packets_ += records_.back().packets_per_worker * n;
    }
  }
  threads_done_.assign(n, 0);
  if (spec_.ps != SwitchMLPs::kNone) InstallParameterServers(fabric, hosts);
  if (rdma()) {
    CheckRdma(spec_, dtype, fabric.topology(), tree_);
    CreateRdmaHosts(fabric, hosts);
    return;
  }
  for (uint32_t rank = 0; rank < n; ++rank) {
    for (uint32_t tid = 0; tid < threads_; ++tid) {
      // To its ToR's program (a parameter server's: DestinationOf).
      const uint32_t to =
          spec_.ps == SwitchMLPs::kNone ? SwitchIpv4(tree_.parent[hosts[rank]] - topology.num_hosts()) : 0;
      auto w = ns3::CreateObject<SwitchMLWorker>();
      fabric.host(hosts[rank])->AddApplication(w);
      w->Setup(this, rank, tid, fabric.device(hosts[rank], 0), to);
      workers_.push_back(w);
    }
  }
}

// What the RDMA backend models: int32 tensors through one switch.
void SwitchMLJob::CheckRdma(const SwitchMLSpec& spec, DType dtype, const topo::Topology& t,
                            const topo::AggregationTree& tree) {
  if (dtype != DType::kInt32)
    throw ScenarioError("workload.switchml.backend: \"rdma\" models int32 tensors only (the paper's "
                        "microbenchmarks, switchml-nsdi21.txt:508); use workload.dtype \"int32\"");
  if (spec.ps != SwitchMLPs::kNone)
    throw ScenarioError("workload.switchml.backend: \"rdma\" has no parameter-server variant (ps must be \"none\")");
  for (uint16_t port : tree.child_ports[tree.root])
    if (!t.is_host(t.ports(tree.root)[port].peer))
      throw ScenarioError("workload.switchml.backend: \"rdma\" needs the workers under one switch: the program's "
                          "RoCE path (rdma_receiver.p4) has no hierarchy; place workload.hosts in one rack");
}

void SwitchMLJob::CreateRdmaHosts(Fabric& fabric, const std::vector<uint32_t>& hosts) {
  switch_ip_ = SwitchIpv4(tree_.parent[hosts[0]] - fabric.topology().num_hosts());
  const topo::Topology& topology = fabric.topology();
  const auto& children = tree_.child_ports[tree_.root];
  for (uint32_t rank = 0; rank < hosts.size(); ++rank) {
    SwitchMLRdmaConfig c = RdmaConfig(rank);
    // The switch knows a worker by its child index (InstallPrograms).
    for (uint32_t i = 0; i < children.size(); ++i)
      if (topology.ports(tree_.root)[children[i]].peer == hosts[rank]) c.rank = i;
    auto nic = std::make_unique<SwitchMLRdmaNic>();
    SwitchMLRdmaNic* nic_ptr = nic.get();
    const size_t first_thread = rdma_threads_.size();
    for (uint32_t tid = 0; tid < threads_; ++tid) {
      auto t = std::make_unique<SwitchMLRdmaThread>();
      t->Setup(this, rank, tid, nic_ptr, c);
      rdma_threads_.push_back(std::move(t));
    }
    // Each completion goes to the thread that owns the queue pair.
    const uint32_t per_thread = c.queue_pairs / threads_;
    nic->Setup(c, fabric.device(hosts[rank], 0), [this, first_thread, per_thread](uint32_t g, uint32_t imm,
                                                                                   std::vector<uint8_t>&& message) {
      rdma_threads_[first_thread + g / per_thread]->OnCompletion(g, imm, std::move(message));
    });
    rdma_nics_.push_back(std::move(nic));
  }
}

// What CreateRdmaSession installs (rdma_receiver.py:94, rdma_sender.py:100):
// each worker's remote key and its queue pairs' QPNs with their first PSNs.
void SwitchMLJob::AddRdmaWorkers(p4::switchml::SwitchMLConfig& c) const {
  c.transport = p4::switchml::SwitchMLTransport::kRdma;
  c.message_size = spec_.rdma_message_packets * spec_.elements_per_packet * 4;
  for (auto& w : c.workers) {
    w.rkey = 0x10000u | w.worker_id;  // the MR's rkey: any value; workers do not check it
    for (uint32_t g = 0; g < spec_.pool_size / spec_.rdma_message_packets; ++g)
      w.qpns_and_psns.emplace_back(SwitchMLRdmaConfig::WorkerQpn(g), SwitchMLRdmaConfig::InitialPsn(g));
  }
}

SwitchMLRdmaConfig SwitchMLJob::RdmaConfig(uint32_t rank) const {
  SwitchMLRdmaConfig c;
  c.k = spec_.elements_per_packet;
  c.ppm = spec_.rdma_message_packets;
  c.queue_pairs = spec_.pool_size / spec_.rdma_message_packets;
  c.switch_ip = switch_ip_;
  c.rank = rank;  // replaced by the switch's worker id in CreateRdmaHosts
  c.verbs_op_ps = spec_.rdma_verbs_op_ps;
  c.nic_tx_ps = spec_.rdma_nic_tx_ps;
  c.nic_rx_ps = spec_.rdma_nic_rx_ps;
  return c;
}

SwitchMLRdmaCounters SwitchMLJob::RdmaCounters() const {
  SwitchMLRdmaCounters sum;
  for (const auto& n : rdma_nics_) sum += n->counters();
  for (const auto& t : rdma_threads_) sum += t->counters();
  return sum;
}

void SwitchMLJob::BeginThread(uint32_t rank, uint32_t tid, uint32_t job) {
  if (rdma()) {
    rdma_threads_[rank * threads_ + tid]->BeginJob(job);
  } else {
    workers_[rank * threads_ + tid]->BeginJob(job);
  }
}

// Slot g (without the set bit) is PS g mod n's: every worker sends a slot's
// packets to the same server, and each thread's slots spread over all of them
// ("uniformly sharded", switchml-nsdi21.txt:458).
uint32_t SwitchMLJob::DestinationOf(uint16_t pool_index) const {
  return HostIpv4(ps_hosts_[(pool_index & 0x7fffu) % ps_hosts_.size()]);
}

std::vector<uint32_t> SwitchMLJob::ParameterServerHosts(const SwitchMLSpec& spec, const topo::Topology& t,
                                                        const std::vector<uint32_t>& workers) {
  if (spec.ps == SwitchMLPs::kColocated) return workers;
  std::vector<uint32_t> ps;
  for (uint32_t h = 0; h < t.num_hosts() && ps.size() < workers.size(); ++h)
    if (std::find(workers.begin(), workers.end(), h) == workers.end()) ps.push_back(h);
  if (ps.size() < workers.size())
    throw ScenarioError(fmt::format("workload.switchml.ps: \"dedicated\" needs {} hosts besides the {} workers "
                                    "(\"as many PS processes ... as workers\"); the topology has {} hosts",
                                    workers.size(), workers.size(), t.num_hosts()));
  return ps;
}

// One SwitchML program per parameter server, its workers on ports 0..n-1.
void SwitchMLJob::InstallParameterServers(Fabric& fabric, const std::vector<uint32_t>& hosts) {
  namespace sml = p4::switchml;
  ps_hosts_ = ParameterServerHosts(spec_, fabric.topology(), hosts);
  for (uint32_t j = 0; j < ps_hosts_.size(); ++j) {
    sml::SwitchMLConfig c;
    c.switch_ip = HostIpv4(ps_hosts_[j]);
    c.switch_mac = MacBytesOfIpv4(c.switch_ip);
    c.num_workers = static_cast<uint8_t>(hosts.size());
    c.elements_per_packet = spec_.elements_per_packet;
    c.pool_size = spec_.pool_size;
    c.pass_latency_ps = 0;  // software: the lcore's packet cost is the time
    c.harvest3_port = spec_.harvest3_port;
    for (uint32_t i = 0; i < hosts.size(); ++i)
      c.workers.push_back({static_cast<uint16_t>(i), static_cast<uint16_t>(i), MacBytesOfIpv4(HostIpv4(hosts[i])),
                           HostIpv4(hosts[i]), 0, {}});
    c.Validate();
    auto ps = ns3::CreateObject<SwitchMLParameterServer>();
    fabric.host(ps_hosts_[j])->AddApplication(ps);
    ps->Setup(fabric.device(ps_hosts_[j], 0), c, LcoreConfig(), spec_.ps_cores,
              static_cast<uint32_t>(hosts.size()));
    servers_.push_back(ps);
  }
}

// config.cc:156-172 wants max_outstanding_packets a multiple of the threads;
// thread t's slots are [2 m t, 2 m t + m) (dpdk_worker_thread.cc:93-94),
// below the program's 8192 per set (configuration.p4:23-26); its port is
// worker_port + t (dpdk_worker_thread.cc:66-70).
void SwitchMLJob::CheckThreads(const SwitchMLSpec& spec, uint32_t threads) {
  if (spec.backend == SwitchMLBackend::kRdma) return CheckRdmaQueuePairs(spec, threads);
  if (spec.pool_size % threads != 0)
    throw ScenarioError(fmt::format(
        "workload.switchml.pool_size: {} is not a multiple of the {} worker threads (worker_threads) that share it",
        spec.pool_size, threads));
  const uint64_t top = uint64_t{spec.pool_size / threads} * (2 * threads - 1);
  if (top > p4::switchml::kRegisterSize / 2)
    throw ScenarioError(fmt::format(
        "workload.switchml.pool_size: {} slots over {} worker threads reach slot {}, beyond the switch's {} per "
        "set (each thread's slots start at 2 x pool_size / threads x its id)",
        spec.pool_size, threads, top - 1, p4::switchml::kRegisterSize / 2 - 1));
  const uint32_t last = uint32_t{spec.worker_udp_port} + threads - 1;
  if (last > 65535 || (spec.worker_udp_port <= 0xbeef && last >= 0xbee0))
    throw ScenarioError(fmt::format(
        "workload.switchml.worker_udp_port: the {} worker threads use ports {}..{}, which must stay below 65536 "
        "and outside the switch's 0xbee0-0xbeef", threads, spec.worker_udp_port, last));
}

// One queue pair per message in flight, Q per thread (rdma_connection.cc:66-68,
// rdma_worker_thread.cc:74), at most 512 per worker (configuration.p4:36).
void SwitchMLJob::CheckRdmaQueuePairs(const SwitchMLSpec& spec, uint32_t threads) {
  const uint32_t ppm = spec.rdma_message_packets;
  if ((ppm & (ppm - 1)) != 0)
    throw ScenarioError(fmt::format("workload.switchml.rdma_message_packets: {} is not a power of two (the "
                                    "controller refuses it, rdma_sender.py:140)", ppm));
  if (spec.pool_size % (ppm * threads) != 0)
    throw ScenarioError(fmt::format("workload.switchml.pool_size: {} is not a multiple of rdma_message_packets x "
                                    "worker_threads = {} (a queue pair per message, the same number per thread)",
                                    spec.pool_size, ppm * threads));
  if (spec.pool_size / ppm > p4::switchml::kMaxNumQueuePairsPerWorker)
    throw ScenarioError(fmt::format("workload.switchml.pool_size: {} / rdma_message_packets {} = {} queue pairs, "
                                    "more than the switch's 512 per worker (configuration.p4:36)",
                                    spec.pool_size, ppm, spec.pool_size / ppm));
}

uint32_t SwitchMLJob::ResolveThreads(const SwitchMLSpec& spec, uint64_t host_rate_bps) {
  // RDMA: "even though we use a single CPU core" (switchml-nsdi21.txt:432).
  if (spec.backend == SwitchMLBackend::kIdeal || spec.backend == SwitchMLBackend::kRdma)
    return spec.worker_threads ? spec.worker_threads : 1;
  if (spec.worker_threads) return spec.worker_threads;
  return host_rate_bps <= 10'000'000'000ULL ? 1 : 8;  // switchml-nsdi21.txt:711, :424
}

std::pair<uint64_t, uint64_t> SwitchMLJob::Slice(uint64_t elements, uint32_t tid) const {
  const uint64_t q = elements / threads_, r = elements % threads_;
  if (tid < r) return {tid * (q + 1), q + 1};
  return {tid * q + r, q};
}

DpdkLcoreConfig SwitchMLJob::LcoreConfig() const {
  DpdkLcoreConfig c;
  c.ideal = spec_.backend == SwitchMLBackend::kIdeal;
  c.burst_rx = spec_.burst_rx;
  c.burst_tx = spec_.burst_tx;
  c.drain_ps = spec_.tx_drain_ps;
  c.core_bps = spec_.core_gbps * 1e9;
  c.wire_overhead_bytes = fabric_->device(0, 0).wire_overhead();
  return c;
}

SwitchMLJob::~SwitchMLJob() = default;

topo::AggregationTree SwitchMLJob::CheckedTree(const topo::Topology& topology, const std::vector<uint32_t>& hosts,
                                               const SwitchMLSpec& spec) {
  namespace sml = p4::switchml;
  topo::AggregationTree tree;
  try {
    tree = topo::BuildTrees(topology, hosts, 1).at(0);
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(fmt::format("workload.hosts: switchml: {}", e.what()));
  }
  for (uint32_t v : tree.vertices()) {
    if (topology.is_host(v)) continue;
    const size_t children = tree.child_ports[v].size();
    if (children > sml::kMaxNumWorkers)
      throw ScenarioError(fmt::format(
          "workload.hosts: protocol \"switchml\" aggregates at most {} children per switch (the worker bitmap), "
          "and {} would have {} in the aggregation tree (fewer hosts per switch, or a deeper topology)",
          sml::kMaxNumWorkers, topology.node(v).name, children));
    // 1024 B packets take the folded pipeline, whose controller entries stop
    // at worker id 15: a 17th child's packets would all be dropped and the
    // run would stall until the time limit instead of failing here.
    if (spec.elements_per_packet == 256 && children > sml::NextStepSelector::kFoldedPipeWorkers)
      throw ScenarioError(fmt::format(
          "workload.hosts: protocol \"switchml\" with 256-element (1024 B) packets aggregates at most {} children "
          "per switch, and {} would have {} in the aggregation tree: the folded pipeline leaves pipe 0's {} "
          "front-panel ports for workers and the controller installs its CONSUME0 -> CONSUME1 entries for worker "
          "ids 0..{} only (p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:93), so a "
          "packet of worker {} is dropped and no slot completes (workload.switchml.elements_per_packet=64 allows "
          "{}; or fewer hosts per switch)",
          sml::NextStepSelector::kFoldedPipeWorkers, topology.node(v).name, children,
          sml::NextStepSelector::kFoldedPipeWorkers, sml::NextStepSelector::kFoldedPipeWorkers - 1,
          sml::NextStepSelector::kFoldedPipeWorkers, sml::kMaxNumWorkers));
  }
  return tree;
}

void SwitchMLJob::InstallPrograms(Fabric& fabric) {
  namespace sml = p4::switchml;
  const topo::Topology& topology = fabric.topology();
  const uint32_t nh = topology.num_hosts();
  // Levels: 1 for switches with a worker child, parent = child level + 1.
  std::vector<uint32_t> level(topology.num_vertices(), 0);
  std::vector<uint32_t> order = tree_.vertices();  // root first, breadth-first
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const uint32_t v = *it;
    if (topology.is_host(v)) continue;
    uint32_t lv = 1;
    for (uint16_t port : tree_.child_ports[v]) {
      const uint32_t c = topology.ports(v)[port].peer;
      if (!topology.is_host(c)) lv = std::max(lv, level[c] + 1);
    }
    level[v] = lv;
  }
  for (uint32_t v : order) {
    if (topology.is_host(v)) continue;
    const uint32_t sw = v - nh;
    const auto& children = tree_.child_ports[v];  // at most 32, 16 at 1024 B (CheckedTree)
    sml::SwitchMLConfig c;
    c.switch_ip = SwitchIpv4(sw);
    c.switch_mac = MacBytesOfIpv4(c.switch_ip);
    c.num_workers = static_cast<uint8_t>(children.size());
    c.elements_per_packet = spec_.elements_per_packet;
    c.pool_size = spec_.pool_size;
    c.pass_latency_ps = spec_.pass_latency_ps;
    c.harvest3_port = spec_.harvest3_port;
    for (size_t i = 0; i < children.size(); ++i) {
      const uint32_t child = topology.ports(v)[children[i]].peer;
      const uint32_t ip = topology.is_host(child) ? HostIpv4(child) : SwitchIpv4(child - nh);
      c.workers.push_back({static_cast<uint16_t>(i), children[i], MacBytesOfIpv4(ip), ip, 0, {}});
    }
    if (rdma()) AddRdmaWorkers(c);
    try {
      c.Validate();
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("switchml program on {}: {}", topology.node(v).name, e.what()));
    }
    if (v == tree_.root) {
      fabric.switch_node(sw).SetDataplane(std::make_unique<sml::SwitchMLDataplane>(c));
    } else {
      sml::ParentLink up;
      up.uplink_port = static_cast<uint16_t>(tree_.parent_port[v]);
      up.parent_ip = SwitchIpv4(tree_.parent[v] - nh);
      up.parent_mac = MacBytesOfIpv4(up.parent_ip);
      fabric.switch_node(sw).SetDataplane(std::make_unique<sml::HierarchicalSwitchML>(c, up));
    }
    switches_.emplace_back(v, level[v]);
  }
}

p4::Dataplane* SwitchMLJob::dataplane(uint32_t v) const {
  return fabric_->switch_node(v - fabric_->topology().num_hosts()).dataplane();
}

void SwitchMLJob::Start(uint64_t at_ps) {
  for (auto& w : workers_) w->SetStartTime(PicoSeconds(0));
  for (uint32_t rank = 0; rank < num_workers(); ++rank) {
    const uint64_t first = schedule_->StartOf(rank, 0, at_ps);
    for (uint32_t t = 0; t < threads_; ++t)
      Simulator::Schedule(PicoSeconds(first), &SwitchMLJob::BeginThread, this, rank, t, 0u);
  }
}

double SwitchMLJob::progress() const {
  uint64_t got = 0;
  for (const auto& w : workers_) got += w->received_packets();
  for (const auto& t : rdma_threads_) got += t->received_packets();
  return expected_packets_ ? static_cast<double>(got) / expected_packets_ : 1.0;
}

void SwitchMLJob::CountSent(uint32_t rank) {
  if (rank != 0 || spec_.timeline_bin_ps == 0) return;
  const uint64_t bin = NowPs() / spec_.timeline_bin_ps;
  if (timeline_.size() <= bin) timeline_.resize(bin + 1, 0);
  ++timeline_[bin];
}

void SwitchMLJob::CountStall(uint32_t rank, uint64_t sent_ps, uint64_t now_ps) {
  const uint64_t bin_ps = spec_.timeline_bin_ps;
  if (rank != 0 || bin_ps == 0) return;
  const uint64_t last = now_ps / bin_ps;
  if (timeline_timeouts_.size() <= last) {
    timeline_timeouts_.resize(last + 1, 0);
    timeline_stalled_ps_.resize(last + 1, 0.0);
  }
  ++timeline_timeouts_[last];
  for (uint64_t b = sent_ps / bin_ps; b <= last; ++b) {
    const uint64_t from = std::max(sent_ps, b * bin_ps), to = std::min(now_ps, (b + 1) * bin_ps);
    timeline_stalled_ps_[b] += static_cast<double>(to - from);
  }
}

void SwitchMLJob::ThreadJobDone(uint32_t rank, uint32_t tid, uint32_t job) {
  (void)tid;
  if (++threads_done_[rank] < threads_) return;
  threads_done_[rank] = 0;
  records_[job].end_ps[rank] = NowPs();
  WorkerJobDone(rank, job);
  if (job + 1 < num_jobs()) {
    const uint64_t now = NowPs();
    const uint64_t at = schedule_->StartOf(rank, job + 1, now);
    for (uint32_t t = 0; t < threads_; ++t)
      Simulator::Schedule(PicoSeconds(at - now), &SwitchMLJob::BeginThread, this, rank, t, job + 1);
  }
}

void SwitchMLJob::WorkerJobDone(uint32_t rank, uint32_t job) {
  if (rank == 0) {
    rtt_samples_.swap(rtt_work_);
    rtt_work_.clear();
  }
  if (job + 1 == records_.size()) {
    ++workers_done_;
    if (done() && on_finished) on_finished();
  }
}

}  // namespace inasim
