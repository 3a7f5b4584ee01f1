#include "protocols/nccl/host/nccl-tcp.h"

#include "congestion/linux-tcp.h"
#include "congestion/tcp-flows.h"
#include "ina/addressing.h"
#include "ina/tensor-data.h"
#include "p4model/common/frame.h"
#include "protocols/nccl/host/nccl-ring.h"

#include "ns3/log.h"
#include "ns3/boolean.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4-address.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/uinteger.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace inasim {

NS_LOG_COMPONENT_DEFINE("NcclTcpRank");

using ns3::Ptr;
using ns3::Socket;

namespace {
constexpr uint32_t kSizeBytes = 4;       // the size ahead of each message (NS:402-405)
constexpr uint32_t kWriteChunk = 65536;  // bytes per Send call (the socket splits them anyway)

uint32_t LoadLe32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
void StoreLe32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

// Registered at load time, so `inasim trace-sources` lists it before any run.
NS_OBJECT_ENSURE_REGISTERED(NcclTcpRank);

ns3::TypeId NcclTcpRank::GetTypeId() {
  static ns3::TypeId tid = ns3::TypeId("inasim::NcclTcpRank")
                               .SetParent<ns3::Application>()
                               .SetGroupName("Inasim")
                               .AddConstructor<NcclTcpRank>();
  return tid;
}

void NcclTcpRank::Setup(NcclRing* owner, uint32_t rank) {
  owner_ = owner;
  rank_ = rank;
  const uint32_t channels = owner->plan().channels;
  for (uint32_t c = 0; c < owner->connection_sets() * channels; ++c) {
    channels_.push_back(std::make_unique<Channel>());
    channels_.back()->channel = c % channels;
  }
}

void NcclTcpRank::DoDispose() {
  for (auto& ch : channels_)
    for (Ptr<Socket>* s : {&ch->listener, &ch->out, &ch->in})
      if (*s) {
        (*s)->SetRecvCallback(ns3::MakeNullCallback<void, Ptr<Socket>>());
        (*s)->SetSendCallback(ns3::MakeNullCallback<void, Ptr<Socket>, uint32_t>());
        *s = nullptr;
      }
  ns3::Application::DoDispose();
}

void NcclTcpRank::Connect() {
  const NcclSpec& spec = owner_->spec();
  const congestion::TcpConfig tcp = congestion::LinuxTcpOf(spec, spec.rcvbuf_bytes);
  const uint32_t channels = owner_->plan().channels;
  for (uint32_t c = 0; c < channels_.size(); ++c) {
    Channel& ch = *channels_[c];
    const uint32_t next = owner_->host(owner_->NeighboursIn(c / channels, rank_).first);
    const auto port = static_cast<uint16_t>(spec.tcp_port + c);
    ch.listener = congestion::CreateTcpSocket(GetNode());
    congestion::ConfigureTcpSocket(ch.listener, tcp);
    if (ch.listener->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), port)) != 0)
      throw std::runtime_error(fmt::format("nccl rank {}: cannot bind TCP port {}", rank_, port));
    ch.listener->Listen();
    ch.listener->SetAcceptCallback(
        ns3::MakeCallback(&NcclTcpRank::OnAcceptRequest, this),
        ns3::MakeCallback(+[](NcclTcpRank* self, uint32_t ch_index, Ptr<Socket> s, const ns3::Address&) {
          self->OnAccept(ch_index, s);
        }).Bind(this, c));
    ch.out = congestion::CreateTcpSocket(GetNode());
    congestion::ConfigureTcpSocket(ch.out, tcp);
    ch.out->SetAttribute("SndBufSize", ns3::UintegerValue(spec.sndbuf_bytes));
    ch.out->SetAttribute("TcpNoDelay", ns3::BooleanValue(true));  // socket.h:377-378
    ch.out->Bind();
    ch.out->SetConnectCallback(
        ns3::MakeCallback(+[](NcclTcpRank* self, uint32_t ch_index, Ptr<Socket>) { self->OnConnected(ch_index); })
            .Bind(this, c),
        ns3::MakeCallback(+[](NcclTcpRank* self, Ptr<Socket>) {
          throw std::runtime_error(fmt::format("nccl rank {}: TCP connection to the next rank failed", self->rank_));
        }).Bind(this));
    ch.out->SetSendCallback(ns3::MakeCallback(+[](NcclTcpRank* self, uint32_t ch_index, Ptr<Socket>, uint32_t) {
                              self->Advance(ch_index);
                            }).Bind(this, c));
    ch.out->TraceConnectWithoutContext(
        "CongState", ns3::MakeCallback(+[](NcclTcpRank* self, ns3::TcpSocketState::TcpCongState_t from,
                                           ns3::TcpSocketState::TcpCongState_t to) { self->OnCongState(from, to); })
                         .Bind(this));
    // Every listener exists before the first SYN (all ranks connect at t).
    ns3::Simulator::ScheduleNow([this, c, next, port] {
      channels_[c]->out->Connect(ns3::InetSocketAddress(ns3::Ipv4Address(HostIpv4(next)), port));
    });
  }
}

void NcclTcpRank::OnAccept(uint32_t c, Ptr<Socket> s) {
  Channel& ch = *channels_[c];
  ch.in = s;
  s->SetRecvCallback(ns3::MakeCallback(+[](NcclTcpRank* self, uint32_t ch_index, Ptr<Socket>) {
                       self->Advance(ch_index);
                     }).Bind(this, c));
  owner_->TcpConnectionUp();
}

// The connection's index first: 0, the control socket, which with no data
// sockets carries the messages too (NS:314-316).
void NcclTcpRank::OnConnected(uint32_t c) {
  Channel& ch = *channels_[c];
  ch.outbox.emplace_back(kSizeBytes, 0);
  ++ch.posted;  // written once it leaves, like a slice
  Write(c);
  owner_->TcpConnectionUp();
}

void NcclTcpRank::OnCongState(uint32_t from, uint32_t to) {
  if (from == to) return;
  counters_.tcp_timeouts += to == ns3::TcpSocketState::CA_LOSS;
  counters_.tcp_recoveries += to == ns3::TcpSocketState::CA_RECOVERY;
  if (to == ns3::TcpSocketState::CA_LOSS || to == ns3::TcpSocketState::CA_RECOVERY)
    NS_LOG_INFO("rank " << rank_ << ": TCP "
                        << (to == ns3::TcpSocketState::CA_LOSS ? "retransmission timeout" : "fast recovery"));
}

void NcclTcpRank::BeginIteration(uint32_t iteration) {
  iteration_ = iteration;
  running_ = true;
  checked_ = mismatches_ = 0;
  const NcclRing::Seat seat = owner_->SeatOf(iteration, rank_);
  const NcclPlan& plan = owner_->plan_of(iteration, seat.group);
  conns_ = plan.channels;
  first_conn_ = seat.set * conns_;
  for (uint32_t c = first_conn_; c < first_conn_ + conns_; ++c) {
    Channel& ch = *channels_[c];
    ch.collective = iteration;
    ch.place = seat.place;
    ch.plan = &plan;
    ch.data = &owner_->data(iteration, seat.group);
    ch.op = ch.received = ch.consumed = 0;
    ch.got.assign(plan.streams[ch.channel].size(), {});
  }
  for (uint32_t c = first_conn_; c < first_conn_ + conns_; ++c) Advance(c);
}

void NcclTcpRank::Advance(uint32_t c) {
  for (bool progress = true; progress;) {
    progress = false;
    while (RunOp(c)) progress = true;
    const size_t written = channels_[c]->written, received = channels_[c]->received;
    Write(c);
    Read(c);
    progress = progress || channels_[c]->written != written || channels_[c]->received != received;
  }
  MaybeDone();
}

// The GPU's next op on channel c: step u of a loop receives the previous
// rank's step u-1 slice (u >= 1), reduces it into this rank's chunk (the
// reduce-scatter steps) or takes it as is, keeps it if it completes the
// result, and sends it on (u <= 2n-3); step 0 sends this rank's own.
bool NcclTcpRank::RunOp(uint32_t c) {
  Channel& ch = *channels_[c];
  if (!ch.plan) return false;
  const NcclPlan& plan = *ch.plan;
  const uint32_t i = ch.channel;
  if (ch.op >= plan.Ops(i)) return false;
  const NcclPlan::Op op = plan.OpAt(ch.op, ch.place);
  const bool recv = op.recv, send = op.send;
  const size_t si = op.sent_message, ri = op.received_message;
  if (recv && ch.received <= ri) return false;
  if (send && ch.posted - ch.written >= plan.slots) return false;
  // The slice is built where the send proxy takes it: [size][bytes].
  std::vector<uint8_t> out;
  if (send) out.resize(kSizeBytes + 4 * plan.Range(ch.place, i, si, false).second);
  const uint8_t* in = nullptr;
  if (recv) {
    const std::vector<uint8_t>& got = ch.got[ri];
    // TCP delivers it whole; counted wrong if not.
    if (got.size() == 4 * plan.Range(ch.place, i, ri, true).second) in = got.data();
  }
  uint8_t* values = send ? out.data() + kSizeBytes : nullptr;
  plan.RunGpuOp(*ch.data, ch.place, i, op, in, values, checked_, mismatches_);
  if (recv) {
    ch.got[ri] = {};
    ++ch.consumed;  // its receive slot is free again (NET:345)
  }
  if (send) Post(c, std::move(out));
  ++ch.op;
  return true;
}

// A send slot takes the slice (its size still to write in front).
void NcclTcpRank::Post(uint32_t c, std::vector<uint8_t>&& slice) {
  Channel& ch = *channels_[c];
  StoreLe32(slice.data(), static_cast<uint32_t>(slice.size() - kSizeBytes));
  ch.outbox.push_back(std::move(slice));
  ++ch.posted;
}

void NcclTcpRank::Write(uint32_t c) {
  Channel& ch = *channels_[c];
  while (!ch.outbox.empty() && ch.out) {
    const std::vector<uint8_t>& front = ch.outbox.front();
    const uint32_t room = ch.out->GetTxAvailable();
    if (room == 0) break;
    const auto n = static_cast<uint32_t>(std::min<size_t>({room, kWriteChunk, front.size() - ch.out_offset}));
    if (n > 0 && ch.out->Send(ns3::Create<ns3::Packet>(front.data() + ch.out_offset, n)) <= 0) break;
    ch.out_offset += n;
    counters_.bytes_written += n;
    if (ch.out_offset < front.size()) continue;
    ch.outbox.pop_front();
    ch.out_offset = 0;
    ++ch.written;  // its send slot is free again (NET:311-314)
  }
}

// Reads the connection's index once, then the oldest posted receive, while
// fewer than `slots` slices wait for the GPU (NET:345-348, :354-362).
void NcclTcpRank::Read(uint32_t c) {
  Channel& ch = *channels_[c];
  if (!ch.in) return;
  counters_.max_unread_bytes = std::max<uint64_t>(counters_.max_unread_bytes, ch.in->GetRxAvailable());
  if (!ch.plan) return;  // no collective yet: the connection's index waits in the socket
  const size_t messages = ch.plan->streams[ch.channel].size();
  while (true) {
    if (ch.handshake && (ch.received >= messages || ch.received >= ch.consumed + ch.plan->slots)) return;
    size_t want = kSizeBytes;  // the index, or a message's size ...
    if (ch.handshake && ch.head.size() >= kSizeBytes) want += LoadLe32(ch.head.data());  // ... and its bytes
    if (ch.head.size() < want) {
      const Ptr<ns3::Packet> p = ch.in->Recv(static_cast<uint32_t>(want - ch.head.size()), 0);
      if (!p || p->GetSize() == 0) return;
      const size_t at = ch.head.size();
      ch.head.resize(at + p->GetSize());
      p->CopyData(ch.head.data() + at, p->GetSize());
      continue;
    }
    if (ch.handshake) ch.got[ch.received++].assign(ch.head.begin() + kSizeBytes, ch.head.end());
    ch.handshake = true;
    ch.head.clear();
  }
}

void NcclTcpRank::MaybeDone() {
  if (!running_) return;
  for (uint32_t c = first_conn_; c < first_conn_ + conns_; ++c)
    if (channels_[c]->op < channels_[c]->plan->Ops(channels_[c]->channel)) return;
  running_ = false;  // its result is complete (its last slices may still be on their way)
  owner_->RankDone(rank_, iteration_, checked_, mismatches_);
}

}  // namespace inasim
