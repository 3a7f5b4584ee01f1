#include "congestion/tcp-flows.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/object-factory.h"
#include "ns3/rtt-estimator.h"
#include "ns3/tcp-recovery-ops.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/tcp-cubic.h"
#include "ns3/tcp-dctcp.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace inasim::congestion {

using namespace ns3;

TypeId VariantTypeId(const std::string& variant) {
  if (variant == "dctcp") return TcpDctcp::GetTypeId();
  if (variant == "cubic") return TcpCubic::GetTypeId();
  if (variant == "newreno") return TcpNewReno::GetTypeId();
  throw std::invalid_argument("unknown TCP variant \"" + variant + "\"");
}

void ConfigureTcpSocket(Ptr<Socket> socket, const TcpConfig& config) {
  // TcpSocket's setters are protected: go through its attributes.
  socket->SetAttribute("SegmentSize", UintegerValue(config.segment_bytes));
  socket->SetAttribute("InitialCwnd", UintegerValue(config.initial_cwnd_segments));
  socket->SetAttribute("SndBufSize", UintegerValue(config.buffer_bytes));
  socket->SetAttribute("RcvBufSize", UintegerValue(config.buffer_bytes));
  socket->SetAttribute("ConnTimeout", TimeValue(PicoSeconds(config.min_rto_ps)));
  socket->SetAttribute("DelAckCount", UintegerValue(config.del_ack_count));
  socket->SetAttribute("DelAckTimeout", TimeValue(PicoSeconds(config.del_ack_timeout_ps)));
  // TIME_WAIT (2 MSL) keeps a closed flow's endpoint, and ns-3 scans every
  // endpoint of a host for every packet it receives (Ipv4EndPointDemux::Lookup
  // walks a list): with RFC 793's 2 minutes every finished flow slowed all
  // later packets of its host.
  socket->SetAttribute("MaxSegLifetime", DoubleValue(static_cast<double>(config.max_segment_lifetime_ps) * 1e-12));
  auto tcp = DynamicCast<TcpSocketBase>(socket);
  tcp->SetMinRto(PicoSeconds(config.min_rto_ps));
  // RTO = max(MinRto, SRTT + max(G, 4 RTTVAR)); ns-3's default G of 1 ms
  // would swamp microsecond RTTs.
  tcp->SetClockGranularity(NanoSeconds(1));
  if (config.variant != "dctcp" && config.ecn) tcp->SetUseEcn(TcpSocketState::On);
}

namespace {

// Writes at most this much per Send call: the socket copies nothing (the
// payload is virtual), but one huge packet would be split by the socket anyway.
constexpr uint32_t kWriteChunk = 64 * 1024;

}  // namespace

TcpFlowSet::TcpFlowSet(std::vector<FlowSpec> flows, const TcpConfig& config,
                       std::function<Ptr<Node>(uint32_t)> node_of,
                       std::function<Ipv4Address(uint32_t)> address_of)
    : config_(config), node_of_(std::move(node_of)), address_of_(std::move(address_of)) {
  flows_.reserve(flows.size());
  for (const FlowSpec& f : flows) {
    if (f.bytes == 0) throw std::invalid_argument("a flow of 0 bytes");
    if (f.src == f.dst) throw std::invalid_argument("a flow from a host to itself");
    flows_.push_back(FlowState{f});
  }
  senders_.resize(flows_.size());
  VariantTypeId(config_.variant);  // validate early
}

void TcpFlowSet::ConfigureSocket(Ptr<Socket> socket) const { ConfigureTcpSocket(socket, config_); }

void TcpFlowSet::Install() {
  const TypeId variant = VariantTypeId(config_.variant);
  std::set<uint32_t> hosts, receivers;
  for (const FlowState& f : flows_) {
    hosts.insert(f.spec.src);
    hosts.insert(f.spec.dst);
    receivers.insert(f.spec.dst);
  }
  // Per node, not Config::SetDefault: other TCP users in the same process keep theirs.
  for (uint32_t h : hosts) node_of_(h)->GetObject<TcpL4Protocol>()->SetAttribute("SocketType", TypeIdValue(variant));
  for (uint32_t h : receivers) {
    Ptr<Socket> listener = CreateTcpSocket(node_of_(h));
    ConfigureSocket(listener);
    if (listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), config_.port)) != 0)
      throw std::runtime_error("background TCP: cannot bind the listening port");
    listener->Listen();
    listener->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                MakeCallback(&TcpFlowSet::OnAccept, this));
    listeners_.push_back(listener);
  }
  for (size_t i = 0; i < flows_.size(); ++i)
    Simulator::Schedule(PicoSeconds(flows_[i].spec.start_ps), &TcpFlowSet::Start, this, i);
}

Ptr<TsqTcpSocket> CreateTcpSocket(Ptr<Node> node, Ptr<TcpCongestionOps>* cc_out) {
  // Without SetSmallQueue a TsqTcpSocket is TcpSocketBase with a
  // microsecond RTT (TsqTcpSocket::EstimateRtt).
  Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
  TypeIdValue rtt, cc, recovery;
  tcp->GetAttribute("RttEstimatorType", rtt);
  tcp->GetAttribute("SocketType", cc);
  tcp->GetAttribute("RecoveryType", recovery);
  ObjectFactory factory;
  Ptr<TsqTcpSocket> s = CreateObject<TsqTcpSocket>();
  s->SetNode(node);
  s->SetTcp(tcp);
  factory.SetTypeId(rtt.Get());
  s->SetRtt(factory.Create<RttEstimator>());
  factory.SetTypeId(cc.Get());
  Ptr<TcpCongestionOps> ops = factory.Create<TcpCongestionOps>();
  s->SetCongestionControlAlgorithm(ops);
  if (cc_out) *cc_out = ops;
  factory.SetTypeId(recovery.Get());
  s->SetRecoveryAlgorithm(factory.Create<TcpRecoveryOps>());
  tcp->AddSocket(s);
  return s;
}

uint64_t TcpFlowSet::tsq_throttles() const {
  uint64_t n = 0;
  for (const auto& t : tsq_senders_) n += t->tsq_throttles();
  return n;
}

uint64_t TcpFlowSet::cwnd_growth_withheld() const {
  uint64_t n = 0;
  for (const auto& t : tsq_senders_) n += t->cwnd_growth_withheld();
  return n;
}

void TcpFlowSet::Start(size_t i) {
  const FlowSpec& f = flows_[i].spec;
  HostTxBacklog* nic = config_.small_queue_bytes > 0 && backlog_of_ ? backlog_of_(f.src) : nullptr;
  Ptr<TcpCongestionOps> cc;
  Ptr<TsqTcpSocket> s = CreateTcpSocket(node_of_(f.src), &cc);
  s->CountTimeoutsInto(timeouts_.get());
  ConfigureSocket(s);
  s->Bind();
  Address local;
  s->GetSockName(local);
  if (nic) {
    s->SetSmallQueue(nic, InetSocketAddress::ConvertFrom(local).GetPort(), config_.small_queue_bytes);
    tsq_senders_.push_back(s);
  }
  if (on_sender) on_sender(i, s, cc);
  pending_[Key(address_of_(f.src), InetSocketAddress::ConvertFrom(local).GetPort())] = i;
  s->SetConnectCallback(MakeBoundCallback(&TcpFlowSet::OnConnected, this, i), MakeNullCallback<void, Ptr<Socket>>());
  s->SetSendCallback(MakeBoundCallback(&TcpFlowSet::OnTxRoom, this, i));
  s->Connect(InetSocketAddress(address_of_(f.dst), config_.port));
  senders_[i] = s;
}

void TcpFlowSet::Fill(size_t i) {
  FlowState& f = flows_[i];
  Ptr<Socket>& s = senders_[i];
  if (!s) return;
  while (f.sent_bytes < f.spec.bytes) {
    const uint32_t room = s->GetTxAvailable();
    if (room == 0) return;  // the send callback resumes us
    const auto n = static_cast<uint32_t>(std::min<uint64_t>({f.spec.bytes - f.sent_bytes, room, kWriteChunk}));
    const int sent = s->Send(Create<Packet>(n));
    if (sent <= 0) return;
    f.sent_bytes += static_cast<uint64_t>(sent);
  }
  // Everything is in the socket: close once it has been sent (FIN after data).
  s->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
  s->Close();
  s = nullptr;
}

void TcpFlowSet::OnAccept(Ptr<Socket> socket, const Address& from) {
  const InetSocketAddress peer = InetSocketAddress::ConvertFrom(from);
  const auto it = pending_.find(Key(peer.GetIpv4(), peer.GetPort()));
  if (it == pending_.end()) return;  // not one of ours
  const size_t flow = it->second;
  pending_.erase(it);
  socket->SetRecvCallback(MakeBoundCallback(&TcpFlowSet::OnData, this, flow));
  OnReceive(flow, socket);  // data may have come with the handshake's last ACK
}

void TcpFlowSet::OnReceive(size_t i, Ptr<Socket> socket) {
  FlowState& f = flows_[i];
  while (Ptr<Packet> p = socket->Recv()) {
    if (p->GetSize() == 0) break;
    f.received_bytes += p->GetSize();
  }
  if (f.received_bytes >= f.spec.bytes && f.end_ps == 0) {
    f.received_bytes = f.spec.bytes;
    f.end_ps = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
    socket->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
    socket->Close();
    ++completed_;
    if (on_flow_done) on_flow_done(i);
    if (completed_ == flows_.size() && on_all_done) on_all_done();
  }
}

}  // namespace inasim::congestion
