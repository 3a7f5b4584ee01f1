#include "protocols/ring/host/ring-allreduce.h"

#include "ina/scenario.h"

#include "p4model/common/frame.h"

#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"

#include <algorithm>
#include <stdexcept>

namespace inasim {

NS_LOG_COMPONENT_DEFINE("RingRank");

using namespace ns3;
using p4::LoadBe16;
using p4::LoadBe32;
using p4::StoreBe16;
using p4::StoreBe32;

namespace {
uint64_t NowPs() { return static_cast<uint64_t>(Simulator::Now().GetPicoSeconds()); }
}  // namespace

// ------------------------------------------------------------------ RingPlan
RingPlan::RingPlan(uint32_t ranks, uint64_t elements, uint32_t elements_per_packet, CollectiveKind kind,
                   uint32_t root)
    : n_(ranks), elements_(elements), epp_(elements_per_packet), kind_(kind), root_(root) {
  if (ranks < 2) throw std::invalid_argument("ring allreduce needs at least 2 ranks");
  if (elements == 0 || elements_per_packet == 0) throw std::invalid_argument("empty ring allreduce");
  if (root >= ranks) throw std::invalid_argument("a broadcast's root must be one of the ring's ranks");
  total_ = (elements + epp_ - 1) / epp_;
  chunks_ = broadcast() ? 1 : n_;
  first_ = kind == CollectiveKind::kAllGather ? n_ - 1 : 0;
  last_ = broadcast() ? 1 : kind == CollectiveKind::kReduceScatter ? n_ - 1 : 2 * (n_ - 1);
}

bool RingPlan::Forwards(uint32_t r, uint32_t step, uint32_t& out_step) const {
  if (broadcast()) {
    out_step = 0;
    return (r + 1) % n_ != root_;  // the root's previous rank ends the chain
  }
  out_step = step + 1;
  return out_step < steps();
}

uint32_t RingPlan::chunk_sent(uint32_t r, uint32_t step) const {
  if (broadcast()) return 0;
  const uint32_t t = first_ + step;
  if (t < n_ - 1) return (r + n_ - t) % n_;
  const uint32_t u = t - (n_ - 1);
  return (r + 1 + n_ - u) % n_;
}

uint64_t RingPlan::CyclicSum(uint32_t lo, uint32_t len) const {
  const uint64_t hi = uint64_t{lo} + len;
  if (hi <= n_) return chunk_first(static_cast<uint32_t>(hi)) - chunk_first(lo);
  return (total_ - chunk_first(lo)) + chunk_first(static_cast<uint32_t>(hi - n_));
}

uint64_t RingPlan::step_base(uint32_t r, uint32_t step) const {
  if (broadcast()) return step == 0 || (r + 1) % n_ == root_ ? 0 : total_;
  return AllreduceBase(r, first_ + step) - AllreduceBase(r, first_);
}

// After reduce-scatter's last step (n-2) rank r holds the sum of chunk
// (r + 1) mod n, the chunk it sends first in the all-gather.
uint32_t RingPlan::Expected(const TensorData& data, uint32_t chunk, uint64_t e) const {
  if (broadcast()) return data.Contribution(root_, e);
  if (kind_ != CollectiveKind::kAllGather) return data.Expected(e);
  return data.Contribution((chunk + n_ - 1) % n_, e);
}

uint64_t RingPlan::checks() const { return CollectiveChecks(kind_, n_, elements_); }

uint64_t RingPlan::AllreduceBase(uint32_t r, uint32_t t) const {
  // Steps 0..t-1 of reduce-scatter send chunks r, r-1, ..., r-t+1: a cyclic
  // range, so the packet count telescopes to two chunk_first() lookups.
  if (t <= n_ - 1) return t == 0 ? 0 : CyclicSum((r + 1 + n_ - t) % n_, t);
  const uint64_t rs = CyclicSum((r + 2) % n_, n_ - 1);
  const uint32_t u = t - (n_ - 1);
  return rs + CyclicSum((r + 2 + n_ - u) % n_, u);
}

uint32_t RingPlan::packet_elements(uint64_t g) const {
  const uint64_t first = g * epp_;
  return static_cast<uint32_t>(std::min<uint64_t>(epp_, elements_ - first));
}

RingConfig RingConfigOf(const Scenario& s) {
  RingConfig rc;
  rc.elements_per_packet = s.workload.spec<RingSpec>().elements_per_packet;
  rc.window_packets = s.workload.spec<RingSpec>().window_packets;
  rc.ack_every = s.workload.spec<RingSpec>().ack_every;
  rc.ack_delay_ps = s.workload.spec<RingSpec>().ack_delay_ps;
  rc.rto_ps = s.workload.spec<RingSpec>().rto_ps;
  rc.udp_port = s.workload.spec<RingSpec>().udp_port;
  return rc;
}

// ------------------------------------------------------------- RingAllreduce
RingAllreduce::RingAllreduce(const NodeContainer& hosts, const std::vector<Ipv4Address>& addresses,
                             const std::vector<uint64_t>& elements, DType dtype, DataPattern pattern,
                             uint64_t data_seed, const RingConfig& config, uint32_t iterations,
                             uint64_t compute_gap_ps, uint16_t mtu_bytes, const ScheduleSpec& schedule)
    : config_(config),
      coll_(hosts.GetN(), elements, dtype, pattern, data_seed, iterations, compute_gap_ps, schedule) {
  const uint32_t n = hosts.GetN();
  const uint32_t epp = config.elements_per_packet ? config.elements_per_packet
                                                  : (mtu_bytes - 20 - 8 - RingWire::kDataHeader) / 4;
  addresses_ = addresses;
  const std::vector<CollectiveKind> kinds = CollectiveKinds(schedule);
  for (size_t i = 0; i < elements.size(); ++i) {
    const CollectiveKind kind = i < kinds.size() ? kinds[i] : CollectiveKind::kAllreduce;
    plans_.emplace_back();
    const uint32_t root = i < schedule.roots.size() ? schedule.roots[i] : 0;
    for (const std::vector<uint32_t>& group : coll_.groups(static_cast<uint32_t>(i))) {
      plans_.back().emplace_back(static_cast<uint32_t>(group.size()), elements[i], epp, kind, root);
      if (plans_.back().back().stream_packets(0) >= (1ull << 32) - 1)
        throw std::invalid_argument("ring stream longer than 2^32 packets");
    }
  }
  retransmissions_.assign(coll_.records().size(), 0);
  coll_.begin = [this](uint32_t c) {
    current_ = c;
    for (auto& r : ranks_) r->BeginCollective(c);
  };
  coll_.begin_group = [this](uint32_t c, uint32_t g) {
    current_ = c;
    for (uint32_t r : coll_.groups(c)[g]) ranks_[r]->BeginCollective(c);
  };
  coll_.on_finished = [this] {
    if (on_finished) on_finished();
  };
  for (uint32_t r = 0; r < n; ++r) {
    auto rank = CreateObject<RingRank>();
    hosts.Get(r)->AddApplication(rank);
    rank->Setup(this, r);
    ranks_.push_back(rank);
  }
}

RingAllreduce::~RingAllreduce() = default;

RingAllreduce::Seat RingAllreduce::SeatOf(uint32_t c, uint32_t rank) const {
  Seat s;
  s.group = coll_.group_of(c, rank);
  s.place = coll_.place_in_group(c, rank);
  const std::vector<uint32_t>& group = coll_.groups(c)[s.group];
  const auto m = static_cast<uint32_t>(group.size());
  s.succ = addresses_[group[(s.place + 1) % m]];
  s.pred = addresses_[group[(s.place + m - 1) % m]];
  return s;
}

void RingAllreduce::Start(uint64_t at_ps) {
  Simulator::Schedule(PicoSeconds(at_ps), &RankCollectives::Start, &coll_);
}

void RingAllreduce::RankDone(uint32_t rank, uint32_t c, uint64_t checked, uint64_t mismatches,
                             uint64_t retransmissions) {
  retransmissions_[c] += retransmissions;
  coll_.RankDone(rank, c, checked, mismatches);
}

double RingAllreduce::AnalyticBound(const RingPlan& plan, double host_rate_gbps) {
  return plan.traffic_factor() * static_cast<double>(plan.elements() * 4) * 8.0 / (host_rate_gbps * 1e9);
}

std::vector<std::string> RingAllreduce::ExtraColumns() {
  return {"busbw_gbps", "bound_s", "bound_ratio", "retransmissions"};
}

uint32_t RingAllreduce::AddCollectives(CollectiveTable& table, double host_rate_gbps,
                                       uint64_t& payload_delivered) const {
  const uint32_t n = plan().ranks();
  const std::vector<CollectiveRecord>& records = coll_.records();
  const uint32_t j = table.AddJob(n, records.size());
  table.SetJobHosts(j, coll_.hosts);
  for (uint32_t c = 0; c < records.size(); ++c) {
    const CollectiveRecord& rec = records[c];
    if (!rec.finished()) {
      table.AddUnfinished(j, rec.elements_checked, rec.mismatches);
      continue;
    }
    // Every rank ends with every element (n x E checks), or its chunk, or
    // the others' chunks, in each group of the collective's communicator.
    const RingPlan& plan = plan_of(c);
    uint64_t checks = 0;
    for (uint32_t g = 0; g < coll_.groups(c).size(); ++g) checks += plan_of(c, g).checks();
    CollectiveRow row = CollectiveRow::Of(rec, checks);
    row.job = j;
    const double bound = AnalyticBound(plan_of(c), host_rate_gbps);
    RowExtras extras;
    extras.Add("busbw_gbps", row.goodput_gbps() * plan.traffic_factor(), "{:.6f}")
        .Add("bound_s", bound, "{:.12f}")
        .Add("bound_ratio", bound / row.duration_s(), "{:.6f}")
        .Add("retransmissions", retransmissions_[c]);
    table.Add(row, std::move(extras));
    for (uint32_t g = 0; g < coll_.groups(c).size(); ++g) payload_delivered += uint64_t{plan_of(c, g).steps()} * rec.bytes;
  }
  return j;
}

double RingAllreduce::progress() const {
  const size_t total = coll_.records().size();
  if (total == 0) return 1.0;
  const uint32_t done = coll_.collectives_done();
  double in_current = 0;
  if (done < total && !coll_.grouped()) {
    uint64_t have = 0, want = 0;
    const RingPlan& p = plan_of(current_);
    for (uint32_t r = 0; r < ranks_.size(); ++r) {
      have += ranks_[r]->progress_packets();
      want += 2 * p.stream_packets(r);
    }
    in_current = want ? std::min(1.0, static_cast<double>(have) / static_cast<double>(want)) : 0.0;
  }
  return std::min(1.0, (done + in_current) / static_cast<double>(total));
}

uint64_t RingAllreduce::packets_sent() const {
  uint64_t s = 0;
  for (auto& r : ranks_) s += r->packets_sent();
  return s;
}

// ------------------------------------------------------------------ RingRank
NS_OBJECT_ENSURE_REGISTERED(RingRank);

TypeId RingRank::GetTypeId() {
  static TypeId tid = TypeId("inasim::RingRank")
                          .SetParent<Application>()
                          .SetGroupName("Ina")
                          .AddConstructor<RingRank>()
                          .AddTraceSource("Timeout",
                                          "A packet's retransmission timer (rto_us) expired unacknowledged; it is "
                                          "sent again; args: job (0), packet sequence number",
                                          MakeTraceSourceAccessor(&RingRank::timeout_trace_),
                                          "inasim::TimeoutTracedCallback");
  return tid;
}

void RingRank::Setup(RingAllreduce* owner, uint32_t rank) {
  owner_ = owner;
  plan_ = &owner->plan();  // until the first collective begins
  rank_ = rank;
  port_ = owner->config().udp_port;
  // The port exists from set-up on, so an iteration may begin at t = 0.
  endpoint_.Open(HostNic(*GetNode()), port_,
                 [this](const uint8_t* b, uint32_t len, const DatagramInfo&) { OnDatagram(b, len); });
  buf_.resize(RingWire::kDataHeader + 4 * plan_->epp());
}

void RingRank::StartApplication() {}
void RingRank::StopApplication() {}

void RingRank::DoDispose() {
  rto_event_.Cancel();
  ack_event_.Cancel();
  endpoint_.Close();
  Application::DoDispose();
}

void RingRank::BeginCollective(uint32_t c) {
  NS_LOG_INFO("rank " << rank_ << ": collective " << c << " begins");
  collective_ = c;
  const RingAllreduce::Seat seat = owner_->SeatOf(c, rank_);
  group_ = seat.group;
  me_ = seat.place;
  succ_ = seat.succ.Get();
  pred_ = seat.pred.Get();
  plan_ = &owner_->plan_of(c, group_);
  checked_before_ = checked_;
  mismatches_before_ = mismatches_;
  retransmissions_before_ = retransmissions_;
  const uint32_t n = plan_->ranks();
  snd_total_ = plan_->stream_packets(me_);
  rcv_total_ = plan_->stream_packets((me_ + n - 1) % n);
  snd_una_ = snd_next_ = snd_acked_ = 0;
  in_flight_ = 0;
  cur_step_ = 0;
  cur_step_end_ = plan_->step_base(me_, 1);
  acked_.assign(snd_total_, 0);
  ready_.assign(snd_total_, 0);
  retx_.clear();
  uint64_t want = 1;
  while (want < uint64_t{2} * owner_->config().window_packets) want *= 2;
  if (store_slots_ < want) {
    store_slots_ = want;
    store_.assign(store_slots_ * plan_->epp(), 0);
    sent_ps_.assign(store_slots_, 0);
  }
  rcv_cum_ = rcv_count_ = 0;
  unacked_rx_ = 0;
  received_.assign(rcv_total_, 0);
  rto_event_.Cancel();
  ack_event_.Cancel();
  reported_done_ = false;
  TrySend();
  CheckDone();
}

uint32_t* RingRank::Slot(uint64_t seq) {
  // The store is a ring over [snd_una_, snd_una_ + slots); grow (keeping live
  // entries in place modulo the new size) when a ready packet lies beyond it.
  if (seq - snd_una_ >= store_slots_) {
    uint64_t slots = store_slots_;
    while (seq - snd_una_ >= slots) slots *= 2;
    std::vector<uint32_t> bigger(slots * plan_->epp());
    std::vector<uint64_t> sent(slots);
    const uint64_t end = std::min<uint64_t>(snd_una_ + store_slots_, snd_total_);
    for (uint64_t s = snd_una_; s < end; ++s) {
      const uint64_t from = s & (store_slots_ - 1), to = s & (slots - 1);
      std::copy_n(&store_[from * plan_->epp()], plan_->epp(), &bigger[to * plan_->epp()]);
      sent[to] = sent_ps_[from];
    }
    store_ = std::move(bigger);
    sent_ps_ = std::move(sent);
    store_slots_ = slots;
  }
  return &store_[(seq & (store_slots_ - 1)) * plan_->epp()];
}

void RingRank::TrySend() {
  for (uint64_t seq : retx_) {
    if (acked_[seq]) continue;
    SendData(seq);
    ++retransmissions_;
    NS_LOG_LOGIC("rank " << rank_ << ": packet " << seq << " sent again");
  }
  retx_.clear();
  const uint32_t window = owner_->config().window_packets;
  const TensorData& data = owner_->data(collective_, group_);
  while (in_flight_ < window && snd_next_ < snd_total_) {
    while (snd_next_ >= cur_step_end_) cur_step_end_ = plan_->step_base(me_, ++cur_step_ + 1);
    if (plan_->OwnData(me_, cur_step_) && !ready_[snd_next_]) {
      // Step 0 (a broadcast's root) sends the rank's own chunk: generate it now.
      const uint64_t g = plan_->chunk_first(plan_->chunk_sent(me_, 0)) + snd_next_;
      uint32_t* slot = Slot(snd_next_);
      const uint32_t count = plan_->packet_elements(g);
      for (uint32_t k = 0; k < count; ++k) slot[k] = data.Contribution(me_, g * plan_->epp() + k);
      ready_[snd_next_] = 1;
    }
    if (!ready_[snd_next_]) break;
    SendData(snd_next_);
    ++in_flight_;
    ++snd_next_;
  }
  if (in_flight_ > 0 && !rto_event_.IsRunning())
    rto_event_ = Simulator::Schedule(PicoSeconds(owner_->config().rto_ps), &RingRank::OnRto, this);
}

void RingRank::SendData(uint64_t seq) {
  // Locate seq's step: binary search over step bases (O(log n), O(1) each).
  uint32_t lo = 0, hi = plan_->steps();  // invariant: base(lo) <= seq < base(hi)
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    if (plan_->step_base(me_, mid) <= seq) lo = mid; else hi = mid;
  }
  const uint32_t step = lo;
  const uint64_t index = seq - plan_->step_base(me_, step);
  const uint64_t g = plan_->chunk_first(plan_->chunk_sent(me_, step)) + index;
  const uint32_t count = plan_->packet_elements(g);
  uint8_t* b = buf_.data();
  b[0] = RingWire::kData;
  b[1] = static_cast<uint8_t>(owner_->data(collective_, group_).dtype());
  StoreBe16(b + 2, static_cast<uint16_t>(collective_));
  StoreBe16(b + 4, static_cast<uint16_t>(step));
  StoreBe16(b + 6, static_cast<uint16_t>(count));
  StoreBe32(b + 8, static_cast<uint32_t>(seq));
  StoreBe32(b + 12, static_cast<uint32_t>(index));
  const uint32_t* slot = Slot(seq);
  for (uint32_t k = 0; k < count; ++k) StoreBe32(b + RingWire::kDataHeader + 4 * k, slot[k]);
  sent_ps_[seq & (store_slots_ - 1)] = NowPs();
  ++packets_sent_;
  endpoint_.SendTo(succ_, port_, b, RingWire::kDataHeader + 4 * count);
}

void RingRank::OnDatagram(const uint8_t* p, uint32_t len) {
  if (len > buf_.size()) return;  // not ours
  if (len >= RingWire::kAckBytes && p[0] == RingWire::kAck) OnAck(p, len);
  else if (len >= RingWire::kDataHeader && p[0] == RingWire::kData) OnData(p, len);
}

void RingRank::OnData(const uint8_t* p, uint32_t len) {
  if (LoadBe16(p + 2) != static_cast<uint16_t>(collective_)) return;  // stale duplicate
  const uint32_t n = plan_->ranks();
  const uint32_t pred = (me_ + n - 1) % n;
  const uint32_t step = LoadBe16(p + 4);
  const uint32_t count = LoadBe16(p + 6);
  const uint64_t seq = LoadBe32(p + 8);
  const uint64_t index = LoadBe32(p + 12);
  if (step >= plan_->steps() || seq >= rcv_total_ || len != RingWire::kDataHeader + 4 * count) return;
  const uint32_t chunk = plan_->chunk_sent(pred, step);
  if (index >= plan_->chunk_packets(chunk) || seq != plan_->step_base(pred, step) + index) return;
  const uint64_t g = plan_->chunk_first(chunk) + index;
  if (count != plan_->packet_elements(g)) return;
  if (received_[seq]) {  // duplicate: the sender missed our ACK
    SendAck();
    return;
  }
  received_[seq] = 1;
  ++rcv_count_;
  while (rcv_cum_ < rcv_total_ && received_[rcv_cum_]) ++rcv_cum_;

  const TensorData& data = owner_->data(collective_, group_);
  const bool reduce = plan_->Reduces(step);
  const bool final = plan_->Completes(step);
  uint32_t out_step = 0;
  const bool forward = plan_->Forwards(me_, step, out_step);
  uint32_t* out = nullptr;
  if (forward) {
    const uint64_t out_seq = plan_->step_base(me_, out_step) + index;
    out = Slot(out_seq);
    ready_[out_seq] = 1;
  }
  const uint64_t e0 = g * plan_->epp();
  for (uint32_t k = 0; k < count; ++k) {
    uint32_t v = LoadBe32(p + RingWire::kDataHeader + 4 * k);
    if (reduce) v = AddElements(data.dtype(), v, data.Contribution(me_, e0 + k));
    if (final) {
      ++checked_;
      if (v != plan_->Expected(data, chunk, e0 + k)) ++mismatches_;
    }
    if (out) out[k] = v;
  }

  ++unacked_rx_;
  if (rcv_cum_ <= seq || unacked_rx_ >= owner_->config().ack_every || rcv_count_ == rcv_total_) {
    SendAck();
  } else if (!ack_event_.IsRunning()) {
    ack_event_ = Simulator::Schedule(PicoSeconds(owner_->config().ack_delay_ps), &RingRank::OnAckTimer, this);
  }
  if (forward) TrySend();
  CheckDone();
}

void RingRank::SendAck() {
  ack_event_.Cancel();
  unacked_rx_ = 0;
  uint8_t b[RingWire::kAckBytes] = {};
  b[0] = RingWire::kAck;
  StoreBe16(b + 2, static_cast<uint16_t>(collective_));
  StoreBe32(b + 4, static_cast<uint32_t>(rcv_cum_));
  uint64_t sack = 0;
  for (uint32_t k = 0; k < 64 && rcv_cum_ + 1 + k < rcv_total_; ++k)
    if (received_[rcv_cum_ + 1 + k]) sack |= uint64_t{1} << k;
  StoreBe32(b + 8, static_cast<uint32_t>(sack >> 32));
  StoreBe32(b + 12, static_cast<uint32_t>(sack));
  endpoint_.SendTo(pred_, port_, b, sizeof b);
}

void RingRank::OnAckTimer() {
  if (unacked_rx_ > 0) SendAck();
}

void RingRank::OnAck(const uint8_t* p, uint32_t len) {
  if (LoadBe16(p + 2) != static_cast<uint16_t>(collective_)) return;
  const uint64_t cum = std::min<uint64_t>(LoadBe32(p + 4), snd_next_);
  const uint64_t sack = uint64_t{LoadBe32(p + 8)} << 32 | LoadBe32(p + 12);
  auto ack_one = [this](uint64_t s) {
    if (acked_[s]) return;
    acked_[s] = 1;
    --in_flight_;
    ++snd_acked_;
  };
  for (uint64_t s = snd_una_; s < cum; ++s) ack_one(s);
  for (uint32_t k = 0; k < 64; ++k) {
    const uint64_t s = cum + 1 + k;
    if (s >= snd_next_) break;
    if (sack >> k & 1) ack_one(s);
  }
  while (snd_una_ < snd_next_ && acked_[snd_una_]) ++snd_una_;
  if (in_flight_ == 0) rto_event_.Cancel();
  TrySend();
  CheckDone();
}

void RingRank::OnRto() {
  const uint64_t now = NowPs();
  const uint64_t rto = owner_->config().rto_ps;
  uint64_t earliest = UINT64_MAX;
  for (uint64_t s = snd_una_; s < snd_next_; ++s) {
    if (acked_[s]) continue;
    const uint64_t sent = sent_ps_[s & (store_slots_ - 1)];
    if (sent + rto <= now) {
      retx_.push_back(s);
      timeout_trace_(0, s);
    }
    else earliest = std::min(earliest, sent + rto);
  }
  TrySend();  // sends retx_; arms the timer at now + rto if anything is in flight
  if (earliest != UINT64_MAX && (!rto_event_.IsRunning() || earliest < now + rto)) {
    rto_event_.Cancel();
    rto_event_ = Simulator::Schedule(PicoSeconds(earliest - now), &RingRank::OnRto, this);
  }
}

void RingRank::CheckDone() {
  if (reported_done_ || rcv_count_ != rcv_total_ || snd_acked_ != snd_total_) return;
  reported_done_ = true;
  owner_->RankDone(rank_, collective_, checked_ - checked_before_, mismatches_ - mismatches_before_,
                   retransmissions_ - retransmissions_before_);
}

}  // namespace inasim
