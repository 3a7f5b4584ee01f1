#include "protocols/gloo/host/gloo-ring.h"

#include "congestion/linux-tcp.h"
#include "congestion/tcp-flows.h"
#include "ina/addressing.h"
#include "ina/fabric.h"
#include "ina/scenario.h"
#include "ina/units.h"
#include "ina/workload.h"
#include "p4model/common/frame.h"

#include "ns3/log.h"
#include "ns3/inet-socket-address.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/uinteger.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace inasim {

NS_LOG_COMPONENT_DEFINE("GlooRank");

using ns3::PicoSeconds;
using ns3::Ptr;
using ns3::Simulator;
using ns3::Socket;

namespace {

// tcp/pair.h Op::preamble: 6 x 8 bytes before every message.
constexpr uint32_t kPreamble = 48;
constexpr uint64_t kRecvReady = 1, kData = 2;
// ns-3's socket copies what it is given: write in pieces of this size.
constexpr uint32_t kWriteChunk = 64 * 1024;

}  // namespace

// allreduce.cc:196-218; allgather.cc:44-61 (each rank's inBytes = out / n).
GlooPlan::GlooPlan(uint32_t ranks, uint64_t bytes, uint64_t max_segment_bytes, CollectiveKind k)
    : n(ranks), elements(bytes / 4), kind(k) {
  if (ranks < 2) throw std::invalid_argument("a Gloo ring needs at least 2 ranks");
  if (all_gather()) {
    if (elements % n != 0) throw std::invalid_argument("a Gloo all-gather needs a multiple of the ranks' count");
    segments = n;
    per_rank = 1;
    segment_elements = elements / n;
    return;
  }
  const uint64_t at_least = std::max<uint64_t>(CeilDiv(bytes, max_segment_bytes), 2ull * ranks);
  const uint64_t count = CeilDiv(at_least, ranks) * ranks;
  if (count > (1u << 30)) throw std::invalid_argument("workload.gloo.max_segment_bytes: too many segments");
  segments = static_cast<uint32_t>(count);
  per_rank = segments / n;
  segment_elements = std::max<uint64_t>(1, CeilDiv(elements, segments));
}

// An all-gather's piece 2s + h is half h of rank s's part: chunkSize[0] =
// inBytes / 2 (allgather.cc:63-68), here in whole elements.
uint64_t GlooPlan::first(uint32_t s) const {
  if (!all_gather()) return std::min<uint64_t>(elements, s * segment_elements);
  return s / 2 * segment_elements + (s % 2) * (segment_elements / 2);
}

uint64_t GlooPlan::count(uint32_t s) const {
  if (!all_gather()) return std::min<uint64_t>(elements, (s + 1) * segment_elements) - first(s);
  return s % 2 == 0 ? segment_elements / 2 : segment_elements - segment_elements / 2;
}

// allgather.cc:70-77: sendSegment = size + rank - i/2, recvSegment = sendSegment - 1, half i & 1.
uint32_t GlooPlan::sent(uint32_t r, uint32_t phase, uint32_t i) const {
  if (all_gather()) return (n + r - i / 2) % n * 2 + i % 2;
  return ((r + 1 - phase + n) % n * per_rank + i) % segments;
}

uint32_t GlooPlan::received(uint32_t r, uint32_t phase, uint32_t i) const {
  if (all_gather()) return (2 * n + r - i / 2 - 1) % n * 2 + i % 2;
  return ((r + 2 - phase) % n * per_rank + i) % segments;
}

// An all-gather sends what it received at i two iterations later; an
// allreduce's reduce-scatter sends on every segment, its allgather all but
// the last P.
bool GlooPlan::Forwards(uint32_t phase, uint32_t i) const {
  if (all_gather()) return i + 2 < transfers();
  return i + per_rank < transfers() || phase == 0;
}

uint32_t GlooPlan::Expected(const TensorData& data, uint64_t e) const {
  return all_gather() ? data.Contribution(static_cast<uint32_t>(e / segment_elements), e) : data.Expected(e);
}

// ------------------------------------------------------------------ rank ----

// Registered at load time, so `inasim trace-sources` lists it before any run.
NS_OBJECT_ENSURE_REGISTERED(GlooRank);

ns3::TypeId GlooRank::GetTypeId() {
  static ns3::TypeId tid =
      ns3::TypeId("inasim::GlooRank").SetParent<ns3::Application>().SetGroupName("Inasim").AddConstructor<GlooRank>();
  return tid;
}

void GlooRank::Setup(GlooRing* owner, uint32_t rank) {
  owner_ = owner;
  rank_ = rank;
}

void GlooRank::DoDispose() {
  for (Ptr<Socket>* s : {&listener_, &to_prev_, &from_next_})
    if (*s) {
      (*s)->SetRecvCallback(ns3::MakeNullCallback<void, Ptr<Socket>>());
      *s = nullptr;
    }
  to_prev_box_.socket = from_next_box_.socket = nullptr;
  ns3::Application::DoDispose();
}

namespace {
congestion::TcpConfig TcpOf(const GlooSpec& g, uint64_t segment_bytes) {
  // SO_SNDBUF raised to the message (tcp/pair.cc:847-857): a segment's write completes at once.
  return congestion::LinuxTcpOf(
      g, static_cast<uint32_t>(std::max<uint64_t>(g.rcvbuf_bytes, 2 * (segment_bytes + kPreamble))));
}
}  // namespace

void GlooRank::Connect() {
  const GlooSpec& g = owner_->spec();
  const congestion::TcpConfig tcp = TcpOf(g, owner_->max_segment_elements() * 4);
  auto node = GetNode();
  listener_ = congestion::CreateTcpSocket(node);
  congestion::ConfigureTcpSocket(listener_, tcp);
  if (listener_->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), g.port)) != 0)
    throw std::runtime_error(fmt::format("gloo rank {}: cannot bind TCP port {}", rank_, g.port));
  listener_->Listen();
  listener_->SetAcceptCallback(ns3::MakeCallback(&GlooRank::OnAcceptRequest, this),
                               ns3::MakeCallback(&GlooRank::OnAccept, this));
  to_prev_ = congestion::CreateTcpSocket(node);
  congestion::ConfigureTcpSocket(to_prev_, tcp);
  to_prev_->Bind();
  to_prev_->SetConnectCallback(ns3::MakeCallback(&GlooRank::OnConnected, this),
                               ns3::MakeCallback(&GlooRank::OnConnectFailed, this));
  to_prev_->SetRecvCallback(ns3::MakeCallback(&GlooRank::OnData, this));
  to_prev_->SetSendCallback(ns3::MakeCallback(&GlooRank::OnSendSpace, this));
  const uint32_t prev = owner_->host((rank_ + owner_->num_ranks() - 1) % owner_->num_ranks());
  to_prev_box_.socket = to_prev_;
  to_prev_->TraceConnectWithoutContext(
      "CongState", ns3::MakeCallback(+[](GlooRank* self, ns3::TcpSocketState::TcpCongState_t from,
                                         ns3::TcpSocketState::TcpCongState_t to) { self->OnCongState(from, to); })
                       .Bind(this));
  // The listeners all exist before the first SYN arrives (every rank opens at t).
  Simulator::ScheduleNow([this, prev, g] { to_prev_->Connect(ns3::InetSocketAddress(ns3::Ipv4Address(HostIpv4(prev)), g.port)); });
}

void GlooRank::OnAccept(Ptr<Socket> s, const ns3::Address&) {
  from_next_ = s;
  from_next_box_.socket = s;
  s->SetRecvCallback(ns3::MakeCallback(&GlooRank::OnData, this));
  s->SetSendCallback(ns3::MakeCallback(&GlooRank::OnSendSpace, this));
  recv_ready_ = true;
  if (connected()) owner_->RankConnected();
}

void GlooRank::OnConnected(Ptr<Socket>) {
  send_ready_ = true;
  if (connected()) owner_->RankConnected();
}

void GlooRank::OnConnectFailed(Ptr<Socket>) {
  throw std::runtime_error(fmt::format("gloo rank {}: TCP connection to its ring neighbour failed", rank_));
}

void GlooRank::OnCongState(uint32_t from, uint32_t to) {
  if (from == to) return;
  tcp_timeouts_ += to == ns3::TcpSocketState::CA_LOSS;
  tcp_recoveries_ += to == ns3::TcpSocketState::CA_RECOVERY;
  if (to == ns3::TcpSocketState::CA_LOSS || to == ns3::TcpSocketState::CA_RECOVERY)
    NS_LOG_INFO("rank " << rank_ << ": TCP "
                        << (to == ns3::TcpSocketState::CA_LOSS ? "retransmission timeout" : "fast recovery"));
}

void GlooRank::OnData(Ptr<Socket> s) {
  const bool from_next = s == from_next_;
  std::vector<uint8_t>& in = from_next ? in_next_ : in_prev_;
  while (Ptr<ns3::Packet> p = s->Recv()) {
    const size_t at = in.size();
    in.resize(at + p->GetSize());
    p->CopyData(in.data() + at, p->GetSize());
  }
  Parse(in, from_next);
}

void GlooRank::Parse(std::vector<uint8_t>& in, bool from_next) {
  size_t pos = 0;
  while (in.size() - pos >= kPreamble) {
    const uint8_t* h = in.data() + pos;
    Message m{p4::LoadBe64(h), p4::LoadBe64(h + 8), p4::LoadBe64(h + 16), p4::LoadBe64(h + 24)};
    const size_t need = kPreamble + (m.type == kData ? m.bytes : 0);
    if (in.size() - pos < need) break;
    // An allreduce's data comes from rank + 1 (its ready notes go there); an
    // all-gather's from rank - 1 (allgather.cc:31-38).
    const bool data_from_next = !owner_->plan().all_gather();
    if (from_next == data_from_next && m.type == kData) OnSegment(m, h + kPreamble);
    else if (from_next != data_from_next && m.type == kRecvReady) OnRecvReady(m);
    pos += need;
  }
  in.erase(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(pos));
}

void GlooRank::Write(Outbox& box, const Message& m, const uint8_t* payload, uint64_t payload_bytes, int transfer) {
  const size_t at = box.bytes.size();
  box.bytes.resize(at + kPreamble + payload_bytes, 0);
  uint8_t* h = box.bytes.data() + at;
  p4::StoreBe64(h, m.type);
  p4::StoreBe64(h + 8, m.iteration);
  p4::StoreBe64(h + 16, m.index);
  p4::StoreBe64(h + 24, m.bytes);
  if (payload_bytes) std::copy(payload, payload + payload_bytes, h + kPreamble);
  if (transfer >= 0) box.marks.emplace_back(box.bytes.size(), static_cast<uint32_t>(transfer));
  Flush(box);
}

// Hands the box's bytes to TCP while its send buffer has room; a send is
// complete (Gloo's waitSend) when its last byte went in.
void GlooRank::Flush(Outbox& box) {
  if (!box.socket) return;
  bool progressed = false;
  while (box.sent < box.bytes.size()) {
    const uint32_t room = box.socket->GetTxAvailable();
    if (room == 0) break;
    const auto n = static_cast<uint32_t>(std::min<size_t>({room, kWriteChunk, box.bytes.size() - box.sent}));
    if (box.socket->Send(ns3::Create<ns3::Packet>(box.bytes.data() + box.sent, n)) <= 0) break;
    box.sent += n;
  }
  size_t done = 0;
  for (; done < box.marks.size() && box.marks[done].first <= box.sent; ++done) {
    sent_[box.marks[done].second] = 1;
    progressed = true;
  }
  box.marks.erase(box.marks.begin(), box.marks.begin() + static_cast<std::ptrdiff_t>(done));
  if (box.sent == box.bytes.size()) {
    box.bytes.clear();
    box.sent = 0;
  }
  if (progressed) Advance();
}

void GlooRank::OnSendSpace(Ptr<Socket> s, uint32_t) { Flush(s == from_next_ ? from_next_box_ : to_prev_box_); }

void GlooRank::BeginIteration(uint32_t iteration) {
  NS_LOG_LOGIC("rank " << rank_ << ": iteration " << iteration << " begins");
  iteration_ = iteration;
  phase_ = 0;
  running_ = true;
  checked_ = mismatches_ = 0;
  segments_.clear();
  const uint32_t t = owner_->plan().transfers();
  received_.assign(t, 0);
  posted_.assign(t, 0);
  sent_.assign(t, 0);
  peer_ready_.assign(2 * t, 0);  // [phase * t + i]: the peer may run a phase ahead
  next_ = 0;
  Advance();
}

// The loop of allreduce.cc:278-320 (and :361-391): iteration i waits for
// recv(i-2) and send(i-2), then posts recv(i) and send(i).
void GlooRank::Advance() {
  const uint32_t t = owner_->plan().transfers();
  while (running_ && next_ < t + 2) {
    const uint32_t i = next_;
    if (i >= 2 && !(received_[i - 2] && sent_[i - 2])) return;
    ++next_;
    if (i < t) Post(i);
  }
  if (running_ && next_ == t + 2) PhaseDone();
}

void GlooRank::Post(uint32_t i) {
  posted_[i] = 1;
  // recv(i): tell the sender (rank + 1; an all-gather's rank - 1) this buffer is ready (tcp/pair.cc:932-960).
  Write(owner_->plan().all_gather() ? to_prev_box_ : from_next_box_,
        Message{kRecvReady, iteration_, uint64_t{phase_} << 32 | i, 0}, nullptr, 0, -1);
  TrySend(i);
}

void GlooRank::OnRecvReady(const Message& m) {
  const uint32_t phase = static_cast<uint32_t>(m.index >> 32), i = static_cast<uint32_t>(m.index);
  const uint32_t t = owner_->plan().transfers();
  if (m.iteration != iteration_ || phase > 1 || i >= t) return;
  peer_ready_[phase * t + i] = 1;
  if (phase == phase_) TrySend(i);
}

void GlooRank::TrySend(uint32_t i) {
  const GlooPlan& plan = owner_->plan();
  uint8_t& ready = peer_ready_[phase_ * plan.transfers() + i];
  if (!posted_[i] || ready != 1) return;
  ready = 2;  // written
  const uint32_t seg = plan.sent(rank_, phase_, i);
  const uint64_t first = plan.first(seg), count = plan.count(seg);
  scratch_.resize(4 * count);
  if (plan.OwnData(phase_, i)) {  // this rank's own data starts the piece's trip
    owner_->data(iteration_).FillBe32(rank_, first, count, scratch_.data());
  } else {
    auto it = segments_.find(seg);
    if (it == segments_.end()) throw std::logic_error("gloo: a segment to send is not held");
    for (uint64_t k = 0; k < count; ++k) p4::StoreBe32(scratch_.data() + 4 * k, it->second[k]);
    segments_.erase(it);  // sent on: this rank needs it no more
  }
  Write(plan.all_gather() ? from_next_box_ : to_prev_box_,
        Message{kData, iteration_, uint64_t{phase_} << 32 | i, 4 * count}, scratch_.data(), 4 * count,
        static_cast<int>(i));
}

void GlooRank::OnSegment(const Message& m, const uint8_t* payload) {
  const GlooPlan& plan = owner_->plan();
  const uint32_t phase = static_cast<uint32_t>(m.index >> 32), i = static_cast<uint32_t>(m.index);
  if (m.iteration != iteration_ || phase != phase_ || i >= plan.transfers() || !posted_[i] || received_[i]) return;
  const uint32_t seg = plan.received(rank_, phase_, i);
  const uint64_t first = plan.first(seg), count = plan.count(seg);
  if (m.bytes != 4 * count) return;
  const TensorData& data = owner_->data(iteration_);
  // Reduce-scatter adds this rank's data; its last P segments are then final
  // (this rank's own, sent first in allgather); allgather's are final as they come.
  const bool final = plan.Final(phase_, i);
  const bool forward = plan.Forwards(phase_, i);
  const bool reduce = phase_ == 0 && !plan.all_gather();
  std::vector<uint32_t> values(count);
  for (uint64_t k = 0; k < count; ++k) {
    uint32_t v = p4::LoadBe32(payload + 4 * k);
    if (reduce) v = AddElements(data.dtype(), v, data.Contribution(rank_, first + k));
    values[k] = v;
    if (final) {
      ++checked_;
      mismatches_ += v != plan.Expected(data, first + k);
    }
  }
  if (forward) segments_[seg] = std::move(values);
  received_[i] = 1;
  Advance();
}

void GlooRank::PhaseDone() {
  if (phase_ + 1 < owner_->plan().phases()) {
    phase_ = 1;
    const uint32_t t = owner_->plan().transfers();
    received_.assign(t, 0);
    posted_.assign(t, 0);
    sent_.assign(t, 0);
    next_ = 0;
    Advance();  // (allgather's ready notes that came during reduce-scatter are in peer_ready_)
    return;
  }
  running_ = false;
  segments_.clear();
  owner_->RankDone(rank_, iteration_, checked_, mismatches_);
}

// ------------------------------------------------------------------ ring ----

GlooRing::GlooRing(Fabric& fabric, const std::vector<uint32_t>& hosts, const std::vector<uint64_t>& elements,
                   DType dtype, DataPattern pattern, uint64_t seed, const GlooSpec& spec, uint32_t iterations,
                   uint64_t compute_gap_ps, const ScheduleSpec& schedule)
    : fabric_(&fabric),
      hosts_(hosts),
      spec_(spec),
      coll_(static_cast<uint32_t>(hosts.size()), elements, dtype, pattern, seed, iterations, compute_gap_ps,
            schedule) {
  const uint32_t n = static_cast<uint32_t>(hosts.size());
  // A reduce-scatter is this same allreduce of the whole tensor: PyTorch's
  // ProcessGroupGloo has no reduce-scatter of its own and takes
  // allreduce(input).chunk(world_size)[rank] (pytorch/pytorch#118911; its
  // list form, #149869: one allreduce per rank's chunk, the same bytes). An
  // all-gather is gloo::allgather (ProcessGroupGloo's allgather).
  const std::vector<CollectiveKind> kinds = CollectiveKinds(schedule);
  for (size_t i = 0; i < elements.size(); ++i) {
    const bool gather = i < kinds.size() && kinds[i] == CollectiveKind::kAllGather;
    plans_.emplace_back(n, elements[i] * 4, spec.max_segment_bytes,
                        gather ? CollectiveKind::kAllGather : CollectiveKind::kAllreduce);
  }
  coll_.hosts = hosts;
  coll_.begin = [this](uint32_t c) {
    current_ = coll_.kind(c);
    for (auto& r : ranks_) r->BeginIteration(c);
  };
  coll_.on_finished = [this] {
    if (on_finished) on_finished();
  };
  const ns3::TypeId variant = congestion::VariantTypeId(spec.tcp_variant);
  for (uint32_t r = 0; r < n; ++r) {
    Ptr<ns3::Node> node = fabric.ip_host(hosts[r]);
    node->GetObject<ns3::TcpL4Protocol>()->SetAttribute("SocketType", ns3::TypeIdValue(variant));
    auto rank = ns3::CreateObject<GlooRank>();
    node->AddApplication(rank);
    rank->Setup(this, r);
    ranks_.push_back(rank);
  }
}

GlooRing::~GlooRing() = default;

void GlooRing::Start(uint64_t at_ps) {
  // Gloo connects its pairs when the context is made, before any collective.
  for (auto& r : ranks_) r->Connect();
  Simulator::Schedule(PicoSeconds(at_ps), [this] {
    start_due_ = true;
    if (connected_ == num_ranks()) coll_.Start();
  });
}

void GlooRing::RankConnected() {
  if (++connected_ == num_ranks() && start_due_) coll_.Start();
}

uint64_t GlooRing::max_segment_elements() const {
  uint64_t m = 0;
  for (const GlooPlan& p : plans_) m = std::max(m, p.segment_elements);
  return m;
}

uint64_t GlooRing::tcp_timeouts() const {
  uint64_t n = 0;
  for (const auto& r : ranks_) n += r->tcp_timeouts();
  return n;
}

uint64_t GlooRing::tcp_recoveries() const {
  uint64_t n = 0;
  for (const auto& r : ranks_) n += r->tcp_recoveries();
  return n;
}

void GlooRing::Report(const Scenario& s, bool finished, WorkloadReport& out) const {
  std::vector<uint64_t> checks;  // per collective of an iteration: an all-gather's (n-1) E
  for (const GlooPlan& p : plans_) checks.push_back(CollectiveChecks(p.kind, p.n, p.elements));
  const CollectiveTable table = coll_.Report("gloo", finished, true, out, checks);
  const GlooPlan& first = plans_[0];  // with a schedule: the first collective's
  const double bound = TrafficFactor(first.kind, first.n) * first.elements * 4 * 8 / (s.links.host_rate_gbps * 1e9);
  out.workload["gloo"] = {{"segments", first.segments},
                          {"segments_per_rank", first.per_rank},
                          {"segment_bytes", first.segment_elements * 4},
                          {"tcp_variant", spec_.tcp_variant},
                          {"min_rto_s", PsToS(spec_.min_rto_ps)},
                          {"tcp_timeouts", tcp_timeouts()},
                          {"tcp_fast_recoveries", tcp_recoveries()},
                          {"analytic_bound_s", bound},
                          {"analytic_bound_formula", BoundFormula(first.kind)}};
  out.summary += fmt::format(
      "gloo ring {} of {} over {} ranks ({} segments of {}, TCP {}): {} per collective, {} completed\n"
      "  TCP: {} retransmission timeouts, {} fast recoveries\n"
      "  analytic bound {} = {}; result: {} - {} elements checked against the exact sum, {} mismatches\n",
      CollectiveKindName(first.kind), HumanBytes(first.elements * 4), first.n, first.segments,
      HumanBytes(first.segment_elements * 4), spec_.tcp_variant, HumanTime(table.mean_duration_s()),
      table.completed(), tcp_timeouts(), tcp_recoveries(), CompactBoundFormula(first.kind), HumanTime(bound),
      VerdictWord(out.correct, s.workload.data), table.elements_checked(), table.mismatches());
}

}  // namespace inasim
