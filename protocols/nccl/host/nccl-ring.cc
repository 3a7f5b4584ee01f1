#include "protocols/nccl/host/nccl-ring.h"

#include "ina/addressing.h"
#include "ina/fabric.h"
#include "ina/ina-net-device.h"
#include "ina/scenario.h"
#include "ina/units.h"
#include "ina/workload.h"
#include "p4model/common/frame.h"

#include "congestion/tcp-flows.h"

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/tcp-l4-protocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace inasim {

NS_LOG_COMPONENT_DEFINE("NcclRank");

using ns3::PicoSeconds;
using ns3::Simulator;

namespace {
constexpr uint32_t kSlicesPerChunk = NcclPlan::kSlicesPerChunk;
constexpr uint32_t kSliceHeader = 8;     // iteration, message index (ours: a check, not NCCL's)
constexpr uint32_t kGrantBytes = 24;     // struct ncclIbSendFifo (net_ib.cc:289-295)
constexpr uint16_t kSourcePortBase = 50000;
}  // namespace

// all_reduce.h:20-36: chunk = buffer / NCCL_STEPS x CHUNKSTEPS = buffer / 2;
// loops of n x channels x realChunkSize. reduce_scatter.h:20-36 and
// all_gather.h:20-36: the same chunk, loops of channels x realChunkSize over
// one rank's segment (count = elements / n).
// broadcast.h:20-31: chunk = buffer / NCCL_STEPS x BROADCAST_CHUNKSTEPS = buffer / 8.
NcclPlan::NcclPlan(uint32_t ranks, uint64_t elems, const NcclSpec& spec, CollectiveKind k, uint32_t root_rank)
    : n(ranks), channels(spec.channels), elements(elems), kind(k), root(root_rank), streams(spec.channels) {
  if (ranks < 2) throw std::invalid_argument("an NCCL ring needs at least 2 ranks");
  if (root >= n) throw std::invalid_argument("an NCCL broadcast's root must be one of its ranks");
  const bool allreduce = kind == CollectiveKind::kAllreduce;
  const bool segmented = kind == CollectiveKind::kReduceScatter || kind == CollectiveKind::kAllGather;
  if (segmented && elements % n != 0)
    throw std::invalid_argument("an NCCL reduce-scatter or all-gather needs a multiple of the ranks' count");
  segment = segmented ? elements / n : 0;
  slots = spec.slots * (kSlicesPerChunk / slices());
  const uint64_t size = segmented ? segment : elements;               // what a loop walks
  const uint64_t ways = allreduce ? uint64_t{n} * channels : channels;  // a loop's chunks per step
  chunk_elements = std::max<uint64_t>(1, spec.buffer_bytes / (broadcast() ? 8 : 2) / 4);
  const uint64_t chunk = chunk_elements;
  uint32_t loop = 0;
  for (uint64_t grid = 0; grid < size || (size == 0 && loop == 0); grid += ways * chunk, ++loop) {
    const uint64_t real = std::max<uint64_t>(1, std::min(chunk, CeilDiv(size - grid, ways)));
    for (uint32_t c = 0; c < channels; ++c) {
      const uint64_t first = grid + c * (allreduce ? uint64_t{n} : 1) * real;
      for (uint32_t t = 0; t < SendSteps(); ++t)
        for (uint32_t s = 0; s < slices(); ++s) streams[c].push_back({loop, t, s, first, real, CeilDiv(real, slices())});
    }
    if (size == 0) break;
  }
}

uint32_t NcclPlan::SendSteps() const {
  switch (kind) {
    case CollectiveKind::kAllreduce: return 2 * (n - 1);
    case CollectiveKind::kBroadcast: return 1;
    default: return n - 1;
  }
}

uint32_t NcclPlan::Take(const TensorData& data, uint32_t rank, uint32_t t, uint64_t element, uint32_t v,
                        uint64_t& checked, uint64_t& mismatches) const {
  switch (kind) {
    case CollectiveKind::kReduceScatter:  // recvReduceSend, then recvReduceCopy at the last step
      v = AddElements(data.dtype(), v, data.Contribution(rank, element));
      if (t + 2 == n) {
        ++checked;
        mismatches += v != data.Expected(element);
      }
      return v;
    case CollectiveKind::kAllGather:  // directRecvCopySend / directRecv: the segment owner's values
      ++checked;
      mismatches += v != data.Contribution(static_cast<uint32_t>(element / segment), element);
      return v;
    case CollectiveKind::kBroadcast:  // recvCopySend / recv: the root's values
      ++checked;
      mismatches += v != data.Contribution(root, element);
      return v;
    default:
      // Steps 0..n-2 reduce (the last of them completes this rank's chunk), the rest copy.
      if (t + 1 < n) v = AddElements(data.dtype(), v, data.Contribution(rank, element));
      if (t + 2 >= n) {
        ++checked;
        mismatches += v != data.Expected(element);
      }
      return v;
  }
}

NcclPlan::Op NcclPlan::OpAt(size_t op, uint32_t rank) const {
  if (broadcast()) {
    Op o;
    o.recv = rank != root;
    o.send = (rank + 1) % n != root;
    o.sent_message = o.received_message = op;
    return o;
  }
  const size_t k = kSlicesPerChunk, ops_per_loop = (size_t{SendSteps()} + 1) * k;
  const size_t loop = op / ops_per_loop, u = op % ops_per_loop / k, s = op % k;
  Op o;
  o.recv = u >= 1;
  o.send = u < SendSteps();
  o.sent_message = loop * MessagesPerLoop() + u * k + s;
  o.received_message = o.recv ? o.sent_message - k : 0;
  return o;
}

uint64_t NcclPlan::checks() const { return CollectiveChecks(kind, n, elements); }

void NcclPlan::RunGpuOp(const TensorData& data, uint32_t rank, uint32_t c, const Op& op, const uint8_t* in,
                        uint8_t* out, uint64_t& checked, uint64_t& mismatches) const {
  if (!op.recv) {
    const auto [first, count] = Range(rank, c, op.sent_message, false);
    data.FillBe32(rank, first, count, out);
    return;
  }
  const auto [first, count] = Range(rank, c, op.received_message, true);
  const uint32_t t = streams[c][op.received_message].step;  // the sender's step
  if (!in) mismatches += count;
  for (uint64_t e = 0; e < count; ++e) {
    const uint32_t v = Take(data, rank, t, first + e, in ? p4::LoadBe32(in + 4 * e) : 0, checked, mismatches);
    if (op.send) p4::StoreBe32(out + 4 * e, v);
  }
}

// At step t a rank sends: allreduce chunk (rank - t) mod n; reduce-scatter
// segment ring->devUserRanks[n-1-t], i.e. (rank - 1 - t) mod n
// (reduce_scatter.h:42-51); all-gather devUserRanks[0] at step 0, then
// devUserRanks[n-t], i.e. (rank - t) mod n (all_gather.h:43-56).
uint32_t NcclPlan::SegmentSent(uint32_t sender, uint32_t t) const {
  const uint32_t back = kind == CollectiveKind::kReduceScatter ? t + 1 : t;
  return (sender + 2 * n - back % n) % n;
}

std::pair<uint64_t, uint64_t> NcclPlan::Range(uint32_t r, uint32_t c, size_t m, bool received) const {
  const NcclSlice& x = streams[c][m];
  const uint32_t sender = received ? (r + n - 1) % n : r;
  const uint32_t part = broadcast() ? 0 : SegmentSent(sender, x.step % n);  // a broadcast: every rank the same chunk
  uint64_t offset = 0, nelem = 0;
  if (kind == CollectiveKind::kAllreduce || broadcast()) {
    offset = x.chunk_first + part * x.real_chunk;
    nelem = offset < elements ? std::min(x.real_chunk, elements - offset) : 0;
  } else {
    offset = part * segment + x.chunk_first;
    nelem = x.chunk_first < segment ? std::min(x.real_chunk, segment - x.chunk_first) : 0;
  }
  const uint64_t lo = std::min(nelem, x.slice * x.slice_elements), hi = std::min(nelem, lo + x.slice_elements);
  return {offset + lo, hi - lo};
}

// ------------------------------------------------------------------ rank ----

// Registered at load time, so `inasim trace-sources` lists it before any run.
NS_OBJECT_ENSURE_REGISTERED(NcclRank);

ns3::TypeId NcclRank::GetTypeId() {
  static ns3::TypeId tid =
      ns3::TypeId("inasim::NcclRank").SetParent<ns3::Application>().SetGroupName("Inasim").AddConstructor<NcclRank>();
  return tid;
}

// Per connection set, `channels` queue pairs to the set's next rank and as
// many from its previous one (connection c = set x channels + channel).
void NcclRank::Setup(NcclRing* owner, uint32_t rank) {
  owner_ = owner;
  rank_ = rank;
  const uint32_t channels = owner->plan().channels;
  InaNetDevice& nic = owner->fabric().device(owner->host(rank), 0);
  roce_.Open(nic, owner->spec().port, [this](const uint8_t* b, uint32_t len, const DatagramInfo&) { Deliver(b, len); });
  const RcConfig rc = owner->rc();
  for (uint32_t set = 0; set < owner->connection_sets(); ++set) {
    const auto [next, prev] = owner->NeighboursIn(set, rank);
    for (uint32_t i = 0; i < channels; ++i) {
      const uint32_t c = set * channels + i;
      auto ch = std::make_unique<Channel>();
      ch->channel = i;
      ch->to_next.Setup(rc, nic, static_cast<uint16_t>(kSourcePortBase + 2 * c), NcclRing::QpnToNext(rank, c),
                        HostIpv4(owner->host(next)), NcclRing::QpnFromPrev(next, c),
                        [this, c](std::vector<uint8_t>&& m) { OnGrant(c, std::move(m)); },
                        [this] { owner_->QpFailed(); }, [this, c](uint32_t messages) { OnAcknowledged(c, messages); });
      ch->from_prev.Setup(rc, nic, static_cast<uint16_t>(kSourcePortBase + 2 * c + 1), NcclRing::QpnFromPrev(rank, c),
                          HostIpv4(owner->host(prev)), NcclRing::QpnToNext(prev, c),
                          [this, c](std::vector<uint8_t>&& m) { OnSlice(c, std::move(m)); },
                          [this] { owner_->QpFailed(); });
      channels_.push_back(std::move(ch));
    }
  }
}

void NcclRank::StopApplication() {
  for (auto& ch : channels_) {
    ch->to_next.Cancel();
    ch->from_prev.Cancel();
  }
}

void NcclRank::DoDispose() {
  StopApplication();
  roce_.Close();
  ns3::Application::DoDispose();
}

// The destination QPN names the connection (NcclRing::QpnToNext /
// QpnFromPrev): no search over the rank's connections per packet.
void NcclRank::Deliver(const uint8_t* p, uint32_t len) {
  if (len < RcQp::kBth) return;
  const uint32_t qpn = RcQp::DestQpn(p);
  if (qpn < NcclRing::QpnToNext(rank_, 0)) return;
  const uint32_t c = (qpn - NcclRing::QpnToNext(rank_, 0)) / 2;
  if (c >= channels_.size()) return;
  if (qpn == NcclRing::QpnToNext(rank_, c)) channels_[c]->to_next.Deliver(p, len);
  else channels_[c]->from_prev.Deliver(p, len);
}

void NcclRank::BeginIteration(uint32_t iteration) {
  NS_LOG_LOGIC("rank " << rank_ << ": iteration " << iteration << " begins");
  iteration_ = iteration;
  running_ = true;
  checked_ = mismatches_ = 0;
  const NcclRing::Seat seat = owner_->SeatOf(iteration, rank_);
  const NcclPlan& plan = owner_->plan_of(iteration, seat.group);
  conns_ = plan.channels;
  first_conn_ = seat.set * conns_;
  for (uint32_t c = first_conn_; c < first_conn_ + conns_; ++c) {
    Channel& ch = *channels_[c];
    // Every rank of the group ended the set's last collective, so nothing of
    // it waits here; its last slices may still be unacknowledged (send_slots).
    ch.collective = iteration;
    ch.place = seat.place;
    ch.plan = &plan;
    ch.data = &owner_->data(iteration, seat.group);
    ch.op = ch.sent = ch.granted = ch.received = 0;
    ch.outbox.clear();
    ch.inbox.clear();
    // The receive proxy posts its first `slots` receives at once
    // (net.cc:345-348); a broadcast's root has no receive proxy (proxy.cc:14-26).
    if (!plan.Receives(seat.place)) continue;
    for (size_t m = 0; m < std::min<size_t>(plan.slots, plan.streams[ch.channel].size()); ++m) Grant(c, m);
  }
  for (uint32_t c = first_conn_; c < first_conn_ + conns_; ++c) Advance(c);
}

// A clear-to-send for message m, back to the previous rank on the same queue pair.
void NcclRank::Grant(uint32_t c, size_t message) {
  std::vector<uint8_t> g(kGrantBytes, 0);
  p4::StoreBe32(g.data(), channels_[c]->collective);
  p4::StoreBe32(g.data() + 4, static_cast<uint32_t>(message));
  channels_[c]->from_prev.Post(std::move(g));
}

void NcclRank::OnGrant(uint32_t c, std::vector<uint8_t>&& msg) {
  if (msg.size() < 8 || p4::LoadBe32(msg.data()) != channels_[c]->collective) return;
  Channel& ch = *channels_[c];
  ch.granted = std::max<size_t>(ch.granted, p4::LoadBe32(msg.data() + 4) + 1u);
  TrySend(c);
}

// The next rank's NIC acknowledged slices: their send slots are free (net.cc:307-315).
void NcclRank::OnAcknowledged(uint32_t c, uint32_t messages) {
  Channel& ch = *channels_[c];
  ch.send_slots -= std::min(ch.send_slots, messages);
  Advance(c);
}

void NcclRank::OnSlice(uint32_t c, std::vector<uint8_t>&& msg) {
  Channel& ch = *channels_[c];
  const size_t m = ch.received;
  if (!ch.plan || m >= ch.plan->streams[ch.channel].size() || msg.size() < kSliceHeader ||
      p4::LoadBe32(msg.data()) != ch.collective || p4::LoadBe32(msg.data() + 4) != m)
    return;
  if (msg.size() != kSliceHeader + 4 * ch.plan->Range(ch.place, ch.channel, m, true).second) return;
  ch.inbox.push_back(std::move(msg));  // the values stay behind the header: no copy
  ch.max_held = std::max(ch.max_held, ch.inbox.size() + ch.send_slots);
  ++ch.received;
  Advance(c);
}

void NcclRank::Advance(uint32_t c) {
  while (RunOp(c)) {
  }
  TrySend(c);
  MaybeDone();
}

// The GPU's next op on channel c (primitives.h:182-209): it waits for a free
// send slot (if it sends) and for its slice (if it receives), reduces or
// copies the slice (NcclPlan::Take checks what completes the result), frees
// its receive slot and writes the send slot.
bool NcclRank::RunOp(uint32_t c) {
  Channel& ch = *channels_[c];
  if (!ch.plan) return false;
  const NcclPlan& plan = *ch.plan;
  const uint32_t i = ch.channel;
  if (ch.op >= plan.Ops(i)) return false;
  const NcclPlan::Op op = plan.OpAt(ch.op, ch.place);
  if (op.recv && ch.received <= op.received_message) return false;
  if (op.send && ch.send_slots >= plan.slots) return false;
  std::vector<uint8_t> out;
  if (op.send) {
    out.resize(kSliceHeader + 4 * plan.Range(ch.place, i, op.sent_message, false).second);
    p4::StoreBe32(out.data(), ch.collective);
    p4::StoreBe32(out.data() + 4, static_cast<uint32_t>(op.sent_message));
  }
  const uint8_t* in = op.recv ? ch.inbox.front().data() + kSliceHeader : nullptr;
  uint8_t* values = op.send ? out.data() + kSliceHeader : nullptr;
  plan.RunGpuOp(*ch.data, ch.place, i, op, in, values, checked_, mismatches_);
  if (op.recv) {
    ch.inbox.pop_front();
    const size_t again = op.received_message + plan.slots;
    if (again < plan.streams[i].size()) Grant(c, again);
  }
  if (op.send) {
    ch.outbox.push_back(std::move(out));
    ++ch.send_slots;
    ch.max_held = std::max(ch.max_held, ch.inbox.size() + ch.send_slots);
  }
  ++ch.op;
  return true;
}

// Written slices leave in order as the next rank grants them (net_ib.cc:631-633).
void NcclRank::TrySend(uint32_t c) {
  Channel& ch = *channels_[c];
  while (!ch.outbox.empty() && ch.sent < ch.granted) {
    ch.to_next.Post(std::move(ch.outbox.front()));
    ch.outbox.pop_front();
    ++ch.sent;
  }
}

void NcclRank::MaybeDone() {
  if (!running_) return;
  for (uint32_t c = first_conn_; c < first_conn_ + conns_; ++c)
    if (channels_[c]->op < channels_[c]->plan->Ops(channels_[c]->channel)) return;
  running_ = false;  // its result is complete (it may still owe the next rank slices)
  NS_LOG_LOGIC("rank " << rank_ << ": iteration " << iteration_ << "'s result complete");
  owner_->RankDone(rank_, iteration_, checked_, mismatches_);
}

size_t NcclRank::max_slices_held() const {
  size_t held = 0;
  for (const auto& ch : channels_) held = std::max(held, ch->max_held);
  return held;
}

RcCounters NcclRank::counters() const {
  RcCounters s;
  for (const auto& ch : channels_)
    for (const RcQp* q : {&ch->to_next, &ch->from_prev}) s += q->counters();
  return s;
}

// ------------------------------------------------------------------ ring ----

NcclRing::NcclRing(Fabric& fabric, const std::vector<uint32_t>& hosts, std::vector<uint64_t> elements, DType dtype,
                   DataPattern pattern, uint64_t seed, const NcclSpec& spec, uint32_t iterations,
                   uint64_t compute_gap_ps, const ScheduleSpec& schedule)
    : fabric_(&fabric),
      hosts_(hosts),
      spec_(spec),
      coll_(static_cast<uint32_t>(hosts.size()), elements, dtype, pattern, seed, iterations, compute_gap_ps,
            schedule) {
  const std::vector<CollectiveKind> kinds = CollectiveKinds(schedule);
  for (uint32_t i = 0; i < elements.size(); ++i) {
    plans_.emplace_back();
    for (const std::vector<uint32_t>& group : coll_.groups(i))
      plans_.back().emplace_back(static_cast<uint32_t>(group.size()), elements[i], spec,
                                 i < kinds.size() ? kinds[i] : CollectiveKind::kAllreduce,
                                 i < schedule.roots.size() ? schedule.roots[i] : 0);
    set_of_.push_back(CommunicatorSet(schedule, i));
  }
  SetNeighbours(schedule);
  coll_.hosts = hosts;
  coll_.begin = [this](uint32_t c) {
    for (auto& r : ranks_) r->BeginIteration(c);
    for (auto& r : tcp_ranks_) r->BeginIteration(c);
  };
  coll_.begin_group = [this](uint32_t c, uint32_t g) {
    for (uint32_t r : coll_.groups(c)[g]) {
      if (tcp()) tcp_ranks_[r]->BeginIteration(c);
      else ranks_[r]->BeginIteration(c);
    }
  };
  coll_.on_finished = [this] {
    if (on_finished) on_finished();
  };
  CreateRanks(fabric, hosts);
}

// Set 0: the ring of every rank; set k: each group of communicator k-1 its
// own ring, in the group's order (ncclCommSplit's new communicator).
void NcclRing::SetNeighbours(const ScheduleSpec& schedule) {
  const auto n = static_cast<uint32_t>(hosts_.size());
  neighbours_.emplace_back();
  for (uint32_t r = 0; r < n; ++r) neighbours_[0].emplace_back((r + 1) % n, (r + n - 1) % n);
  for (const auto& groups : schedule.communicator_groups) {
    neighbours_.emplace_back(n);
    for (const std::vector<uint32_t>& group : groups)
      for (size_t p = 0; p < group.size(); ++p)
        neighbours_.back()[group[p]] = {group[(p + 1) % group.size()], group[(p + group.size() - 1) % group.size()]};
  }
}

NcclRing::Seat NcclRing::SeatOf(uint32_t c, uint32_t rank) const {
  return {set_of_[coll_.kind(c)], coll_.group_of(c, rank), coll_.place_in_group(c, rank)};
}

// RoCE ranks on kernel-bypass endpoints; TCP ranks on ns-3's stack with the
// spec's congestion control.
void NcclRing::CreateRanks(Fabric& fabric, const std::vector<uint32_t>& hosts) {
  for (uint32_t r = 0; r < hosts.size(); ++r) {
    if (tcp()) {
      ns3::Ptr<ns3::Node> node = fabric.ip_host(hosts[r]);
      node->GetObject<ns3::TcpL4Protocol>()->SetAttribute(
          "SocketType", ns3::TypeIdValue(congestion::VariantTypeId(spec_.tcp_variant)));
      auto rank = ns3::CreateObject<NcclTcpRank>();
      node->AddApplication(rank);
      rank->Setup(this, r);
      tcp_ranks_.push_back(rank);
    } else {
      auto rank = ns3::CreateObject<NcclRank>();
      fabric.host(hosts[r])->AddApplication(rank);
      rank->Setup(this, r);
      ranks_.push_back(rank);
    }
  }
}

void NcclRing::TcpConnectionUp() {
  // Every rank's connections to its next rank and from its previous one.
  if (++tcp_connections_ == connections() && start_due_) coll_.Start();
}

NcclTcpCounters NcclRing::tcp_counters() const {
  NcclTcpCounters sum;
  for (const auto& r : tcp_ranks_) sum += r->counters();
  return sum;
}

NcclRing::~NcclRing() = default;

RcConfig NcclRing::rc() const {
  RcConfig c;
  c.mtu_payload = spec_.mtu_payload_bytes;
  c.ack_every = spec_.ack_every;
  c.timeout_ps = 4'096'000ULL << spec_.ib_timeout;  // 4.096 us x 2^ib_timeout
  c.retry_count = spec_.retry_count;
  c.nic_queue_bytes = spec_.nic_queue_bytes;
  c.port = spec_.port;
  return c;
}

void NcclRing::Start(uint64_t at_ps) {
  if (!tcp()) {
    Simulator::Schedule(PicoSeconds(at_ps), &RankCollectives::Start, &coll_);
    return;
  }
  // NCCL connects its rings when the communicator is made, before any collective.
  for (auto& r : tcp_ranks_) r->Connect();
  Simulator::Schedule(PicoSeconds(at_ps), [this] {
    start_due_ = true;
    if (tcp_connections_ == connections()) coll_.Start();
  });
}

size_t NcclRing::max_slices_held() const {
  size_t held = 0;
  for (const auto& r : ranks_) held = std::max(held, r->max_slices_held());
  return held;
}

RcCounters NcclRing::counters() const {
  RcCounters q;
  for (const auto& r : ranks_) q += r->counters();
  return q;
}

void NcclRing::Report(const Scenario& s, bool finished, WorkloadReport& out) const {
  std::vector<uint64_t> checks;  // per collective of an iteration
  for (const std::vector<NcclPlan>& groups : plans_) {  // every group of the collective's communicator
    checks.push_back(0);
    for (const NcclPlan& p : groups) checks.back() += p.checks();
  }
  const CollectiveTable table = coll_.Report("nccl", finished, qp_failures_ == 0, out, checks);
  const NcclPlan& first = plans_[0][0];  // with a schedule: the first collective's (its first group's)
  const double bound = first.traffic_factor() * first.elements * 4 * 8 / (s.links.host_rate_gbps * 1e9);
  const char* formula = BoundFormula(first.kind);
  nlohmann::json& j = out.workload["nccl"];
  j = {{"transport", tcp() ? "tcp" : "roce"},
       {"channels", first.channels},
       {"chunk_bytes", first.chunk_elements * 4},
       {"slice_bytes", first.chunk_elements * 4 / first.slices()},
       {"messages_per_channel", first.streams.empty() ? 0 : first.streams[0].size()},
       {"analytic_bound_s", bound},
       {"analytic_bound_formula", formula}};
  std::string transport;
  if (tcp()) {
    const NcclTcpCounters t = tcp_counters();
    j.update({{"tcp_variant", spec_.tcp_variant},
              {"min_rto_s", PsToS(spec_.min_rto_ps)},
              {"tcp_timeouts", t.tcp_timeouts},
              {"tcp_fast_recoveries", t.tcp_recoveries},
              {"max_unread_bytes", t.max_unread_bytes},
              {"stream_bytes", t.bytes_written}});
    transport = fmt::format("  TCP {}: {} retransmission timeouts, {} fast recoveries\n", spec_.tcp_variant,
                            t.tcp_timeouts, t.tcp_recoveries);
  } else {
    const RcCounters q = counters();
    j.update({{"ack_timeout_s", PsToS(rc().timeout_ps)},
              {"packets_sent", q.packets_sent},
              {"packets_retransmitted", q.retransmitted},
              {"naks_sent", q.naks_sent},
              {"go_backs", q.go_backs},
              {"ack_timeouts", q.timeouts},
              {"dropped_out_of_order", q.dropped_out_of_order},
              {"qp_failures", qp_failures_},
              {"max_slices_held", max_slices_held()}});
    transport = fmt::format("  RoCE: {} packets, {} retransmitted, {} NAKs, {} ACK timeouts, {} queue pairs failed\n",
                            q.packets_sent, q.retransmitted, q.naks_sent, q.timeouts, qp_failures_);
  }
  out.summary += fmt::format(
      "nccl ring {} of {} over {} ranks ({} channels, {}): {} per collective, {} completed\n{}"
      "  analytic bound {} = {}; result: {} - {} elements checked against the exact sum, {} mismatches\n",
      CollectiveKindName(first.kind), HumanBytes(first.elements * 4), first.n, first.channels,
      tcp() ? "TCP sockets" : "RoCE RC go-back-N", HumanTime(table.mean_duration_s()), table.completed(), transport,
      CompactBoundFormula(first.kind), HumanTime(bound),
      VerdictWord(out.correct, s.workload.data), table.elements_checked(), table.mismatches());
}

}  // namespace inasim
