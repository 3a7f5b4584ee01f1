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
#include <set>
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
constexpr uint64_t kRecvReady = 1, kData = 2, kBcastReady = 3, kBcastData = 4;
bool HasPayload(uint64_t type) { return type == kData || type == kBcastData; }
// ns-3's socket copies what it is given: write in pieces of this size.
constexpr uint32_t kWriteChunk = 64 * 1024;

}  // namespace

// allreduce.cc:196-218; allgather.cc:44-61 (each rank's inBytes = out / n).
GlooPlan::GlooPlan(uint32_t ranks, uint64_t bytes, uint64_t max_segment_bytes, CollectiveKind k, uint32_t r)
    : n(ranks), elements(bytes / 4), kind(k), root(r) {
  if (ranks < 2) throw std::invalid_argument("a Gloo ring needs at least 2 ranks");
  if (broadcast()) {
    if (root >= n) throw std::invalid_argument("a Gloo broadcast's root must be one of the ranks");
    segments = per_rank = 1;  // one unbound buffer, sent whole (tcp/unbound_buffer.cc:155-173)
    segment_elements = elements;
    return;
  }
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

GlooPlan GlooPlan::Of(const ScheduleSpec& schedule, size_t c, uint32_t ranks, uint64_t elements,
                      uint64_t max_segment_bytes) {
  // A reduce-scatter is this same allreduce of the whole tensor: PyTorch's
  // ProcessGroupGloo has no reduce-scatter of its own and takes
  // allreduce(input).chunk(world_size)[rank] (pytorch/pytorch#118911; its
  // list form, #149869: one allreduce per rank's chunk, the same bytes). An
  // all-gather is gloo::allgather (ProcessGroupGloo's allgather), a
  // broadcast gloo::broadcast.
  const std::vector<CollectiveKind> kinds = CollectiveKinds(schedule);
  const CollectiveKind k = c < kinds.size() ? kinds[c] : CollectiveKind::kAllreduce;
  const bool own = k == CollectiveKind::kAllGather || k == CollectiveKind::kBroadcast;
  return GlooPlan(ranks, elements * 4, max_segment_bytes, own ? k : CollectiveKind::kAllreduce,
                  c < schedule.roots.size() ? schedule.roots[c] : 0);
}

std::optional<uint32_t> GlooPlan::Parent(uint32_t r) const {
  const uint32_t v = (r + n - root) % n;
  if (v == 0) return std::nullopt;
  uint32_t high = 1;
  while (high * 2 <= v) high *= 2;
  return (v - high + root) % n;
}

std::vector<uint32_t> GlooPlan::Children(uint32_t r) const {
  const uint32_t v = (r + n - root) % n;
  std::vector<uint32_t> out;
  for (uint64_t bit = 1; v + bit < n; bit *= 2)
    if (bit > v) out.push_back(static_cast<uint32_t>((v + bit + root) % n));
  return out;
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

void GlooRank::Setup(GlooContext* owner, uint32_t rank) {
  owner_ = owner;
  rank_ = rank;
}

void GlooRank::DoDispose() {
  std::vector<Ptr<Socket>*> sockets = {&listener_, &to_prev_, &from_next_};
  for (auto& [peer, m] : mesh_) sockets.push_back(&m.socket);
  for (Ptr<Socket>* s : sockets)
    if (*s) {
      (*s)->SetRecvCallback(ns3::MakeNullCallback<void, Ptr<Socket>>());
      *s = nullptr;
    }
  to_prev_box_.socket = from_next_box_.socket = nullptr;
  mesh_.clear();
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
  const uint16_t port = owner_->port();
  if (listener_->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), port)) != 0)
    throw std::runtime_error(fmt::format("gloo rank {}: cannot bind TCP port {}", rank_, port));
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
  Simulator::ScheduleNow([this, prev, port] { to_prev_->Connect(ns3::InetSocketAddress(ns3::Ipv4Address(HostIpv4(prev)), port)); });
  ConnectMesh();
}

uint32_t GlooRank::prev() const { return (rank_ + owner_->num_ranks() - 1) % owner_->num_ranks(); }
uint32_t GlooRank::next() const { return (rank_ + 1) % owner_->num_ranks(); }

// The lower rank of a mesh pair connects to the higher one's listener.
void GlooRank::ConnectMesh() {
  const GlooSpec& g = owner_->spec();
  const congestion::TcpConfig tcp = TcpOf(g, owner_->max_segment_elements() * 4);
  for (uint32_t peer : owner_->MeshPeers(rank_)) {
    ++mesh_pending_;
    if (peer < rank_) continue;  // it connects to us: OnAccept
    MeshPeer& m = mesh_[peer];
    m.socket = congestion::CreateTcpSocket(GetNode());
    congestion::ConfigureTcpSocket(m.socket, tcp);
    m.socket->Bind();
    m.box.socket = m.socket;
    m.socket->SetConnectCallback(
        ns3::MakeCallback(+[](GlooRank* self, uint32_t p, Ptr<Socket>) { self->OnMeshConnected(p); }).Bind(this, peer),
        ns3::MakeCallback(&GlooRank::OnConnectFailed, this));
    m.socket->SetRecvCallback(ns3::MakeCallback(&GlooRank::OnData, this));
    m.socket->SetSendCallback(ns3::MakeCallback(&GlooRank::OnSendSpace, this));
    const uint32_t host = owner_->host(peer);
    Simulator::ScheduleNow([s = m.socket, host, port = owner_->port()] {
      s->Connect(ns3::InetSocketAddress(ns3::Ipv4Address(HostIpv4(host)), port));
    });
  }
}

void GlooRank::OnMeshConnected(uint32_t) {
  --mesh_pending_;
  if (connected()) owner_->RankConnected();
}

void GlooRank::OnAccept(Ptr<Socket> s, const ns3::Address& from) {
  s->SetRecvCallback(ns3::MakeCallback(&GlooRank::OnData, this));
  s->SetSendCallback(ns3::MakeCallback(&GlooRank::OnSendSpace, this));
  const uint32_t ip = ns3::InetSocketAddress::ConvertFrom(from).GetIpv4().Get();
  if (!from_next_ && ip == HostIpv4(owner_->host(next()))) {
    from_next_ = s;
    from_next_box_.socket = s;
    recv_ready_ = true;
  } else {
    uint32_t peer = owner_->num_ranks();
    for (uint32_t p : owner_->MeshPeers(rank_))
      if (p < rank_ && ip == HostIpv4(owner_->host(p))) peer = p;
    if (peer == owner_->num_ranks() || mesh_.count(peer))
      throw std::runtime_error(fmt::format("gloo rank {}: a connection from an unexpected host", rank_));
    mesh_[peer].socket = s;
    mesh_[peer].box.socket = s;
    --mesh_pending_;
  }
  if (connected()) owner_->RankConnected();
}

GlooRank::MeshPeer* GlooRank::MeshOf(Ptr<Socket> s, uint32_t* peer) {
  for (auto& [p, m] : mesh_)
    if (m.socket == s) {
      if (peer) *peer = p;
      return &m;
    }
  return nullptr;
}

GlooRank::Outbox& GlooRank::BoxTo(uint32_t peer) {
  if (peer == prev()) return to_prev_box_;
  if (peer == next()) return from_next_box_;
  return mesh_.at(peer).box;
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
  uint32_t peer = from_next ? next() : prev();
  MeshPeer* mesh = from_next || s == to_prev_ ? nullptr : MeshOf(s, &peer);
  std::vector<uint8_t>& in = mesh ? mesh->in : from_next ? in_next_ : in_prev_;
  while (Ptr<ns3::Packet> p = s->Recv()) {
    const size_t at = in.size();
    in.resize(at + p->GetSize());
    p->CopyData(in.data() + at, p->GetSize());
  }
  Parse(in, from_next, peer);
}

void GlooRank::Parse(std::vector<uint8_t>& in, bool from_next, uint32_t peer) {
  size_t pos = 0;
  while (in.size() - pos >= kPreamble) {
    const uint8_t* h = in.data() + pos;
    Message m{p4::LoadBe64(h), p4::LoadBe64(h + 8), p4::LoadBe64(h + 16), p4::LoadBe64(h + 24)};
    const size_t need = kPreamble + (HasPayload(m.type) ? m.bytes : 0);
    if (in.size() - pos < need) break;
    pos += need;
    if (m.type == kBcastReady || m.type == kBcastData) {
      if (m.iteration == iteration_ && running_ && owner_->plan().broadcast()) {
        if (m.type == kBcastReady) OnBcastReady(peer);
        else OnBcastData(m, h + kPreamble, peer);
      }
      continue;
    }
    // An allreduce's data comes from rank + 1 (its ready notes go there); an
    // all-gather's from rank - 1 (allgather.cc:31-38).
    const bool data_from_next = !owner_->plan().all_gather();
    if (from_next == data_from_next && m.type == kData) OnSegment(m, h + kPreamble);
    else if (from_next != data_from_next && m.type == kRecvReady) OnRecvReady(m);
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

void GlooRank::OnSendSpace(Ptr<Socket> s, uint32_t) {
  if (MeshPeer* m = s == from_next_ || s == to_prev_ ? nullptr : MeshOf(s)) return Flush(m->box);
  Flush(s == from_next_ ? from_next_box_ : to_prev_box_);
}

void GlooRank::BeginIteration(uint32_t iteration) {
  NS_LOG_LOGIC("rank " << rank_ << ": iteration " << iteration << " begins");
  iteration_ = iteration;
  phase_ = 0;
  running_ = true;
  checked_ = mismatches_ = 0;
  segments_.clear();
  if (owner_->plan().broadcast()) return BeginBroadcast();
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
  if (owner_->plan().broadcast()) return BcastMaybeDone();
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

// broadcast.cc:59-94: a rank posts its receive in its first round (before
// any send of its own: NOTIFY_RECV_READY to its parent now), then, holding
// the tensor, posts a send to every child at once; the sends wait for the
// children's ready notes (tcp/pair.cc:898-929) and complete when written.
void GlooRank::BeginBroadcast() {
  const GlooPlan& plan = owner_->plan();
  parent_ = plan.Parent(rank_);
  children_ = plan.Children(rank_);
  sent_.assign(children_.size(), 0);
  peer_ready_.assign(children_.size(), 0);
  have_data_ = !parent_;
  if (parent_) {
    Write(BoxTo(*parent_), Message{kBcastReady, iteration_, 0, 0}, nullptr, 0, -1);
  } else {
    bcast_data_.resize(4 * plan.elements);
    owner_->data(iteration_).FillBe32(rank_, 0, plan.elements, bcast_data_.data());
  }
  TrySendBcastOrDone();
}

void GlooRank::TrySendBcastOrDone() {
  TryBcastSends();
  BcastMaybeDone();
}

void GlooRank::OnBcastReady(uint32_t peer) {
  for (size_t k = 0; k < children_.size(); ++k)
    if (children_[k] == peer && peer_ready_[k] == 0) peer_ready_[k] = 1;
  TryBcastSends();
}

void GlooRank::OnBcastData(const Message& m, const uint8_t* payload, uint32_t peer) {
  const GlooPlan& plan = owner_->plan();
  if (!parent_ || peer != *parent_ || have_data_ || m.bytes != 4 * plan.elements) return;
  const TensorData& data = owner_->data(iteration_);
  for (uint64_t e = 0; e < plan.elements; ++e) {
    ++checked_;
    mismatches_ += p4::LoadBe32(payload + 4 * e) != data.Contribution(plan.root, e);
  }
  if (!children_.empty()) bcast_data_.assign(payload, payload + m.bytes);
  have_data_ = true;
  TrySendBcastOrDone();
}

void GlooRank::TryBcastSends() {
  if (!have_data_) return;
  for (size_t k = 0; k < children_.size(); ++k) {
    if (peer_ready_[k] != 1) continue;
    peer_ready_[k] = 2;  // written
    Write(BoxTo(children_[k]), Message{kBcastData, iteration_, 0, bcast_data_.size()}, bcast_data_.data(),
          bcast_data_.size(), static_cast<int>(k));
  }
}

void GlooRank::BcastMaybeDone() {
  if (!running_ || !have_data_ || std::find(sent_.begin(), sent_.end(), 0) != sent_.end()) return;
  running_ = false;
  bcast_data_.clear();
  owner_->RankDone(rank_, iteration_, checked_, mismatches_);
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

// --------------------------------------------------------------- context ----

GlooContext::GlooContext(GlooRing& job, uint32_t set, uint32_t group, std::vector<uint32_t> members, uint16_t port)
    : job_(&job), group_(group), members_(std::move(members)), port_(port) {
  const std::vector<uint64_t>& elements = job.collectives().elements();
  for (uint32_t i = 0; i < elements.size(); ++i) {
    plans_.emplace_back();
    if (job.set_of(i) == set)
      plans_.back() = GlooPlan::Of(job.schedule(), i, num_ranks(), elements[i], job.spec().max_segment_bytes);
  }
}

const GlooSpec& GlooContext::spec() const { return job_->spec(); }
uint32_t GlooContext::host(uint32_t place) const { return job_->host(members_[place]); }

const TensorData& GlooContext::data(uint32_t c) const {
  const RankCollectives& coll = job_->collectives();
  return coll.grouped() ? coll.data(c, group_) : coll.data(c);
}

void GlooContext::Connect() {
  for (uint32_t p = 0; p < members_.size(); ++p) {
    auto rank = ns3::CreateObject<GlooRank>();
    job_->fabric().ip_host(host(p))->AddApplication(rank);
    rank->Setup(this, p);
    ranks_.push_back(rank);
  }
  // Gloo connects its pairs when the context is made, before any collective.
  for (auto& r : ranks_) r->Connect();
}

void GlooContext::Begin(uint32_t c) {
  current_ = job_->collectives().kind(c);
  for (auto& r : ranks_) r->BeginIteration(c);
}

void GlooContext::RankConnected() { job_->RankConnected(); }

void GlooContext::RankDone(uint32_t place, uint32_t c, uint64_t checked, uint64_t mismatches) {
  job_->RankDone(members_[place], c, checked, mismatches);
}

uint64_t GlooContext::max_segment_elements() const {
  uint64_t m = 0;
  for (const auto& p : plans_)
    if (p && !p->broadcast()) m = std::max(m, p->segment_elements);
  return m;
}

std::vector<uint32_t> GlooContext::MeshPeers(uint32_t r) const {
  const uint32_t n = num_ranks();
  std::set<uint32_t> peers;
  for (const auto& p : plans_) {
    if (!p || !p->broadcast()) continue;
    if (auto parent = p->Parent(r)) peers.insert(*parent);
    for (uint32_t c : p->Children(r)) peers.insert(c);
  }
  peers.erase((r + 1) % n);  // the ring's pairs carry these
  peers.erase((r + n - 1) % n);
  return {peers.begin(), peers.end()};
}

// ------------------------------------------------------------------ job -----

GlooRing::GlooRing(Fabric& fabric, const std::vector<uint32_t>& hosts, const std::vector<uint64_t>& elements,
                   DType dtype, DataPattern pattern, uint64_t seed, const GlooSpec& spec, uint32_t iterations,
                   uint64_t compute_gap_ps, const ScheduleSpec& schedule)
    : fabric_(&fabric),
      hosts_(hosts),
      spec_(spec),
      schedule_(schedule),
      coll_(static_cast<uint32_t>(hosts.size()), elements, dtype, pattern, seed, iterations, compute_gap_ps,
            schedule) {
  contexts_.resize(1 + schedule.communicator_groups.size());
  for (uint32_t i = 0; i < elements.size(); ++i) set_of_.push_back(CommunicatorSet(schedule, i));
  const ns3::TypeId variant = congestion::VariantTypeId(spec.tcp_variant);
  for (uint32_t host : hosts)
    fabric.ip_host(host)->GetObject<ns3::TcpL4Protocol>()->SetAttribute("SocketType", ns3::TypeIdValue(variant));
  // A context per group of every set some collective runs in (the first such collective's groups).
  for (uint32_t i = 0; i < set_of_.size(); ++i) {
    const uint32_t set = set_of_[i];
    if (!contexts_[set].empty()) continue;
    const std::vector<std::vector<uint32_t>> groups = coll_.groups(i);
    for (uint32_t g = 0; g < groups.size(); ++g)
      contexts_[set].push_back(std::make_unique<GlooContext>(*this, set, g, groups[g], spec.port + set));
  }
  coll_.hosts = hosts;
  coll_.begin = [this](uint32_t c) { contexts_[set_of_[coll_.kind(c)]][0]->Begin(c); };
  coll_.begin_group = [this](uint32_t c, uint32_t g) { contexts_[set_of_[coll_.kind(c)]][g]->Begin(c); };
  coll_.on_finished = [this] {
    if (on_finished) on_finished();
  };
}

GlooRing::~GlooRing() = default;

void GlooRing::Start(uint64_t at_ps) {
  for (auto& set : contexts_)
    for (auto& ctx : set) {
      apps_ += ctx->num_ranks();
      ctx->Connect();
    }
  Simulator::Schedule(PicoSeconds(at_ps), [this] {
    start_due_ = true;
    if (connected_ == apps_) coll_.Start();
  });
}

void GlooRing::RankConnected() {
  if (++connected_ == apps_ && start_due_) coll_.Start();
}

uint64_t GlooRing::SumOverRanks(uint64_t (GlooRank::*count)() const) const {
  uint64_t n = 0;
  for (const auto& set : contexts_)
    for (const auto& ctx : set)
      for (const auto& r : ctx->ranks()) n += (*r.*count)();
  return n;
}

uint64_t GlooRing::tcp_timeouts() const { return SumOverRanks(&GlooRank::tcp_timeouts); }
uint64_t GlooRing::tcp_recoveries() const { return SumOverRanks(&GlooRank::tcp_recoveries); }

void GlooRing::Report(const Scenario& s, bool finished, WorkloadReport& out) const {
  std::vector<uint64_t> checks;  // per collective of an iteration, over its groups: an all-gather's (n-1) E each
  for (uint32_t i = 0; i < set_of_.size(); ++i) {
    uint64_t sum = 0;
    for (const auto& ctx : contexts_[set_of_[i]]) {
      const GlooPlan& p = *ctx->plan_of(i);
      sum += CollectiveChecks(p.kind, p.n, p.elements);
    }
    checks.push_back(sum);
  }
  const CollectiveTable table = coll_.Report("gloo", finished, true, out, checks);
  // With a schedule: the first collective's plan (its first group's).
  const GlooPlan& first = *contexts_[set_of_[0]][0]->plan_of(0);
  // A broadcast's root sends the whole tensor to each of its ceil(log2 n) children over its one link.
  uint32_t rounds = 0;
  while ((uint64_t{1} << rounds) < first.n) ++rounds;
  const double factor = first.broadcast() ? rounds : TrafficFactor(first.kind, first.n);
  const double bound = factor * first.elements * 4 * 8 / (s.links.host_rate_gbps * 1e9);
  const std::string formula = first.broadcast() ? "ceil(log2 n) * S / B" : BoundFormula(first.kind);
  const std::string compact = first.broadcast() ? "ceil(log2 n)*S/B" : CompactBoundFormula(first.kind);
  out.workload["gloo"] = {{"segments", first.segments},
                          {"segments_per_rank", first.per_rank},
                          {"segment_bytes", first.segment_elements * 4},
                          {"tcp_variant", spec_.tcp_variant},
                          {"min_rto_s", PsToS(spec_.min_rto_ps)},
                          {"tcp_timeouts", tcp_timeouts()},
                          {"tcp_fast_recoveries", tcp_recoveries()},
                          {"analytic_bound_s", bound},
                          {"analytic_bound_formula", formula}};
  out.summary += fmt::format(
      "gloo ring {} of {} over {} ranks ({} segments of {}, TCP {}): {} per collective, {} completed\n"
      "  TCP: {} retransmission timeouts, {} fast recoveries\n"
      "  analytic bound {} = {}; result: {} - {} elements checked against the exact sum, {} mismatches\n",
      CollectiveKindName(first.kind), HumanBytes(first.elements * 4), first.n, first.segments,
      HumanBytes(first.segment_elements * 4), spec_.tcp_variant, HumanTime(table.mean_duration_s()),
      table.completed(), tcp_timeouts(), tcp_recoveries(), compact, HumanTime(bound),
      VerdictWord(out.correct, s.workload.data), table.elements_checked(), table.mismatches());
}

}  // namespace inasim
