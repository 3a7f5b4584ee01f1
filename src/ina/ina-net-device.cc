#include "ina/ina-net-device.h"

#include "ina/addressing.h"
#include "ina/frame-fingerprint.h"
#include "ina/ina-switch-node.h"
#include "ina/host-endpoint.h"
#include "ina/raw-header.h"

#include "ns3/log.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cstring>
#include <iomanip>
#include <stdexcept>

namespace inasim {

NS_LOG_COMPONENT_DEFINE("InaNetDevice");

using namespace ns3;

// ---------------------------------------------------------------- RawHeader
TypeId RawHeader::GetTypeId() {
  static TypeId tid = TypeId("inasim::RawHeader").SetParent<Header>().SetGroupName("Ina")
                          .AddConstructor<RawHeader>();
  return tid;
}

void RawHeader::Print(std::ostream& os) const {
  os << "raw(" << size_ << ")";
}

// ---------------------------------------------------------------- InaChannel
NS_OBJECT_ENSURE_REGISTERED(InaChannel);

TypeId InaChannel::GetTypeId() {
  static TypeId tid = TypeId("inasim::InaChannel").SetParent<Channel>().SetGroupName("Ina")
                          .AddConstructor<InaChannel>();
  return tid;
}

void InaChannel::Connect(Ptr<InaNetDevice> a, Ptr<InaNetDevice> b, uint64_t delay_ps) {
  devices_[0] = a;
  devices_[1] = b;
  delay_ps_ = delay_ps;
  a->AttachChannel(this, PeekPointer(b));
  b->AttachChannel(this, PeekPointer(a));
}

Ptr<NetDevice> InaChannel::GetDevice(std::size_t i) const { return devices_[i]; }

// ---------------------------------------------------------------- InaNetDevice
NS_OBJECT_ENSURE_REGISTERED(InaNetDevice);

TypeId InaNetDevice::GetTypeId() {
  static TypeId tid =
      TypeId("inasim::InaNetDevice")
          .SetParent<NetDevice>()
          .SetGroupName("Ina")
          .AddConstructor<InaNetDevice>()
          .AddAttribute("WireOverhead",
                        "Bytes each frame costs on the wire beyond its Ethernet header and "
                        "payload: FCS 4 + preamble/SFD 8 + inter-frame gap 12",
                        UintegerValue(24), MakeUintegerAccessor(&InaNetDevice::wire_overhead_),
                        MakeUintegerChecker<uint32_t>(0, 1000))
          .AddTraceSource("Drop", "A frame was dropped (buffer full, link down or random loss)",
                          MakeTraceSourceAccessor(&InaNetDevice::drop_trace_),
                          "ns3::Packet::TracedCallback")
          .AddTraceSource("Mark", "A frame was CE-marked on enqueue",
                          MakeTraceSourceAccessor(&InaNetDevice::mark_trace_),
                          "ns3::Packet::TracedCallback")
          .AddTraceSource("Pfc", "This device sent PAUSE (true) or RESUME (false) to its peer",
                          MakeTraceSourceAccessor(&InaNetDevice::pfc_trace_),
                          "ns3::TracedValueCallback::Bool")
          .AddTraceSource("TxStart", "A frame started on the wire; args: frame, wire time in ps",
                          MakeTraceSourceAccessor(&InaNetDevice::tx_trace_),
                          "inasim::InaNetDevice::TxTracedCallback")
          .AddTraceSource("Enqueue",
                          "A frame was accepted for transmission; args: frame, bytes waiting in this device's "
                          "transmit queues after it (0: it went straight onto an idle wire)",
                          MakeTraceSourceAccessor(&InaNetDevice::enqueue_trace_),
                          "inasim::InaNetDevice::EnqueueTracedCallback")
          .AddTraceSource("Rx", "A frame's last bit arrived from the link (before the switch or host takes it)",
                          MakeTraceSourceAccessor(&InaNetDevice::rx_trace_), "ns3::Packet::TracedCallback");
  return tid;
}

// ---------------------------------------------------------------- events
void FrameArrival::Notify() {
  // Copy out first: the event goes back to the pool before the frame is
  // handled, because handling it may schedule this very object again.
  InaNetDevice* t = target;
  Ptr<Packet> f = std::move(frame);
  pool->Put(this);
  t->ReceiveFrame(f);
}

void ArrivalPool::Grow() {
  for (int i = 0; i < 1024; ++i) {
    auto* e = new FrameArrival();  // refcount 1: the pool's reference
    e->pool = this;
    all_.push_back(e);
    free_.push_back(e);
  }
}

ArrivalPool::~ArrivalPool() {
  for (FrameArrival* e : all_) {
    e->frame = nullptr;
    e->Unref();
  }
}

InaNetDevice::InaNetDevice() : tx_done_(Create<TxDone>()) { tx_done_->device = this; }

void InaNetDevice::ScheduleTxDone(uint64_t delay_ps) {
  tx_event_pending_ = true;
  // Schedule(Time, Ptr<EventImpl>) takes the simulator's reference itself
  // (GetPointer), dropped after the event runs: no Ref() here, or every
  // scheduling leaks one reference and the event is never freed (LeakSanitizer).
  Simulator::Schedule(PicoSeconds(delay_ps), Ptr<EventImpl>(tx_done_));
}

void InaNetDevice::DoDispose() {
  channel_ = nullptr;
  node_ = nullptr;
  loss_rng_ = nullptr;
  peer_ = nullptr;
  switch_ = nullptr;
  rx_callback_ = ReceiveCallback();
  sources_.clear();  // their wake callbacks hold the sockets (which hold the node)
  if (tx_done_) tx_done_->device = nullptr;
  NetDevice::DoDispose();
}

void InaNetDevice::AttachChannel(Ptr<InaChannel> channel, InaNetDevice* peer) {
  channel_ = channel;
  peer_ = peer;
}

void InaNetDevice::SetSwitchPort(InaSwitchNode* sw, uint16_t port) {
  switch_ = sw;
  port_ = port;
}

void InaNetDevice::SetRate(uint64_t bps) {
  NS_ABORT_MSG_IF(bps == 0, "link rate must be positive");
  rate_bps_ = bps;
}

void InaNetDevice::SetLoss(double rate, Ptr<UniformRandomVariable> rng) {
  loss_rate_ = rate;
  loss_rng_ = rng;
}

void InaNetDevice::SetHostIpv4(uint32_t ip) {
  host_ip_ = ip;
  mac_ = MacForIpv4(ip);
}

Ptr<Channel> InaNetDevice::GetChannel() const { return channel_; }

void InaNetDevice::SetAddress(Address address) { mac_ = Mac48Address::ConvertFrom(address); }

bool InaNetDevice::link_up() const {
  return channel_ && channel_->IsUp(static_cast<uint64_t>(Simulator::Now().GetPicoSeconds()));
}

uint64_t InaNetDevice::SerializationPs(uint32_t frame_bytes) const {
  // Exact integer picoseconds; rounds up so a frame never leaves early.
  const uint64_t bits_ps = uint64_t{frame_bytes + wire_overhead_} * 8ULL * 1'000'000'000'000ULL;
  return (bits_ps + rate_bps_ - 1) / rate_bps_;
}

// Host side: ns-3's IPv4 hands us a packet starting at its IP header.
bool InaNetDevice::Send(Ptr<Packet> packet, const Address& dest, uint16_t protocol) {
  if (protocol != Ipv4L3Protocol::PROT_NUMBER) return false;
  uint8_t ip[p4::kIpv4MinBytes + 2];  // + the L4 source port (without IP options)
  const uint32_t got = packet->CopyData(ip, sizeof ip);
  if (got < p4::kIpv4MinBytes) return false;
  RawHeader eth(p4::kEthernetBytes);
  uint8_t* e = eth.data();
  MacForIpv4(p4::LoadBe32(ip + 16)).CopyTo(e);
  mac_.CopyTo(e + 6);
  p4::StoreBe16(e + 12, p4::kEtherTypeIpv4);
  SourceBacklog* source = sources_.empty() ? nullptr : SourceOf(*packet, ip, got);
  packet->AddHeader(eth);
  p4::FrameView view;  // hosts never mark, so only the size matters here
  view.frame_bytes = packet->GetSize();
  return EnqueueFrame(packet, view, kNoPort, source);
}

InaNetDevice::SourceBacklog* InaNetDevice::SourceOf(const Packet& ip_packet, const uint8_t* head,
                                                   uint32_t head_bytes) {
  const uint8_t protocol = head[9];
  if (protocol != 6 && protocol != 17) return nullptr;
  const uint32_t ihl = (head[0] & 0x0fu) * 4u;
  uint8_t port[2];
  if (ihl + 2 <= head_bytes) {
    std::memcpy(port, head + ihl, 2);
  } else if (ip_packet.GetSize() < ihl + 2) {
    return nullptr;
  } else {  // IP options: the port lies further in
    uint8_t b[64];
    ip_packet.CopyData(b, ihl + 2);
    std::memcpy(port, b + ihl, 2);
  }
  const auto it = sources_.find(uint32_t{protocol} << 16 | p4::LoadBe16(port));
  return it == sources_.end() ? nullptr : &it->second;
}

const uint32_t* InaNetDevice::TrackSourcePort(uint8_t ip_protocol, uint16_t port, uint32_t limit_bytes,
                                              uint32_t wake_below_bytes, std::function<void()> wake) {
  SourceBacklog& t = sources_[uint32_t{ip_protocol} << 16 | port];
  t.limit = limit_bytes;
  t.wake_below = std::min(wake_below_bytes, limit_bytes);
  t.wake = std::move(wake);
  return &t.queued;
}

bool InaNetDevice::SendFrom(Ptr<Packet> packet, const Address&, const Address& dest,
                            uint16_t protocol) {
  return Send(packet, dest, protocol);
}

bool InaNetDevice::EnqueueFrame(Ptr<Packet> frame, const p4::FrameView& view, uint16_t ingress,
                                SourceBacklog* source, SharedIngressCharge* shared, uint16_t tx_queue) {
  const uint64_t now = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
  const uint32_t bytes = view.frame_bytes;
  if (!channel_->IsUp(now)) {
    ++counters_.drops_link_down;
    NS_LOG_INFO("link " << channel_->link_index << " is down: a " << bytes << " B frame dropped");
    drop_trace_(frame);
    return false;
  }
  // Fast path: wire idle and nobody waiting: straight onto the wire.
  if (Idle() && !paused_ && !tx_event_pending_ && busy_until_ps_ <= now &&
      (credit_limit_ == 0 || credits_ >= bytes)) {
    if (shared) {  // a copy that never waits holds nothing of the ingress's buffer
      if (!enqueue_trace_.IsEmpty()) enqueue_trace_(frame, 0);
      Transmit(frame, kNoPort, bytes, now);
      return true;
    }
    if (switch_ && ingress != kNoPort) switch_->OnEnqueue(ingress, bytes);
    if (!enqueue_trace_.IsEmpty()) enqueue_trace_(frame, 0);
    Transmit(frame, ingress, bytes, now);
    return true;
  }
  const bool ect = view.ipv4 && (view.ecn == 1 || view.ecn == 2);
  Waiting w;
  w.frame = frame;
  w.ingress = ingress;
  w.source = source;
  w.shared = shared;
  congestion::EgressQueue<Waiting>& q = TxQueue(tx_queue);
  switch (q.Enqueue(std::move(w), bytes, ect)) {
    case congestion::EnqueueVerdict::kDroppedBufferFull:
      NS_LOG_LOGIC("port " << port_ << " of link " << channel_->link_index << ": buffer full, a " << bytes
                           << " B frame dropped (" << q.bytes() << " B queued)");
      drop_trace_(frame);
      return false;
    case congestion::EnqueueVerdict::kEnqueuedMarked:
      MarkCongestionExperienced(frame, view);
      mark_trace_(frame);
      break;
    case congestion::EnqueueVerdict::kEnqueued:
      break;
  }
  if (source) {
    source->queued += bytes;
    if (source->queued >= source->limit) source->armed = true;
  }
  if (tx_queue != 0) {
    ++extra_frames_;
    extra_bytes_ += bytes;
  }
  if (!extra_queues_.empty()) max_total_bytes_ = std::max(max_total_bytes_, queued_bytes());
  if (!enqueue_trace_.IsEmpty()) enqueue_trace_(frame, queued_bytes());
  Compact(q.back(), bytes);
  if (shared) {
    switch_->ChargeShared(shared);
  } else if (switch_ && ingress != kNoPort) {
    switch_->OnEnqueue(ingress, bytes);
  }
  TryTransmit(now);
  return true;
}

void InaNetDevice::TryTransmit(uint64_t now) {
  if (tx_event_pending_ || paused_ || Idle()) return;
  if (busy_until_ps_ > now) {
    ScheduleTxDone(busy_until_ps_ - now);
    return;
  }
  if (credit_limit_ != 0) {  // the frame NextTxQueue would pick must be in credit
    const uint16_t peek = extra_frames_ == 0 ? 0 : PeekTxQueue();
    if (!InCredit(TxQueue(peek).front_bytes(), now)) return;
  }
  const uint16_t from = extra_frames_ == 0 ? 0 : NextTxQueue();
  auto [w, bytes] = TxQueue(from).Dequeue();
  if (from != 0) {
    --extra_frames_;
    extra_bytes_ -= bytes;
  }
  if (w.source) {
    // The socket's frame left the queue: wake it (as its own event: its sends
    // must not re-enter this transmit) once it is back under its threshold.
    SourceBacklog& t = *w.source;
    t.queued -= bytes;
    if (t.armed && t.queued < t.wake_below) {
      t.armed = false;
      if (t.wake) Simulator::ScheduleNow(t.wake);
    }
  }
  if (w.shared) {
    switch_->ReleaseShared(w.shared);
    w.ingress = kNoPort;  // released above
  }
  Transmit(w.frame ? std::move(w.frame) : Rebuild(w), w.ingress, bytes, now);
}

uint16_t InaNetDevice::PeekTxQueue() {
  const auto n = static_cast<uint16_t>(extra_queues_.size() + 1);
  for (uint16_t k = 0; k < n; ++k) {
    const auto i = static_cast<uint16_t>((rr_next_ + k) % n);
    if (!TxQueue(i).empty()) return i;
  }
  return 0;  // unreachable while extra_frames_ > 0
}

uint16_t InaNetDevice::NextTxQueue() {
  const uint16_t i = PeekTxQueue();
  rr_next_ = static_cast<uint16_t>((i + 1) % (extra_queues_.size() + 1));
  return i;
}

uint16_t InaNetDevice::OpenTxQueue(uint16_t port) {
  if (switch_ || !queue_.config().tx_queue_per_endpoint) return 0;
  for (const auto& [p, i] : tx_queue_of_port_)
    if (p == port) return i;
  if (extra_queues_.size() + 1 >= kNoPort) throw std::runtime_error("too many transmit queues on one host NIC");
  extra_queues_.emplace_back(queue_.config());
  const auto i = static_cast<uint16_t>(extra_queues_.size());
  tx_queue_of_port_.emplace_back(port, i);
  return i;
}

congestion::QueueCounters InaNetDevice::queue_counters() const {
  if (extra_queues_.empty()) return queue_.counters();
  congestion::QueueCounters sum = queue_.counters();
  for (const auto& q : extra_queues_) {
    sum.enqueued += q.counters().enqueued;
    sum.dropped_buffer += q.counters().dropped_buffer;
    sum.marked += q.counters().marked;
  }
  sum.max_bytes = std::max(max_total_bytes_, queue_.counters().max_bytes);  // (queue 0 alone before the others)
  return sum;
}

void InaNetDevice::Compact(Waiting& w, uint32_t bytes) {
  constexpr uint32_t kMaxFrame = 16384;
  const Packet& f = *w.frame;
  if (bytes > kMaxFrame || bytes != f.GetSize() || f.GetNixVector() || f.GetByteTagIterator().HasNext()) return;
  // The only packet tag a host's UDP/IPv4 leaves on a frame is the socket's
  // don't-fragment option (Ipv4L3Protocol peeks it, nobody removes it): kept
  // as a flag and put back on the rebuilt frame. Anything else: not compacted.
  uint8_t df = 0;
  for (PacketTagIterator it = f.GetPacketTagIterator(); it.HasNext();) {
    if (it.Next().GetTypeId() != SocketSetDontFragmentTag::GetTypeId() || df) return;
    SocketSetDontFragmentTag tag;
    f.PeekPacketTag(tag);
    df = tag.IsEnabled() ? 2 : 1;
  }
  alignas(8) uint8_t buf[kMaxFrame];
  f.CopyData(buf, bytes);
  // Everything after the head must be zero: OR the tail word by word.
  uint32_t end = std::min(bytes, kCompactHeadBytes);
  uint64_t any = 0;
  uint32_t i = end;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w8;
    std::memcpy(&w8, buf + i, 8);
    any |= w8;
  }
  for (; i < bytes; ++i) any |= buf[i];
  if (any) return;
  while (end > 0 && buf[end - 1] == 0) --end;
  std::memcpy(w.head, buf, end);
  w.head_bytes = static_cast<uint8_t>(end);
  w.zero_bytes = bytes - end;
  w.dont_fragment_tag = df;
  w.frame = nullptr;
}

Ptr<Packet> InaNetDevice::Rebuild(const Waiting& w) {
  Ptr<Packet> p = Create<Packet>(w.zero_bytes);
  if (w.head_bytes) p->AddHeader(RawHeader(w.head, w.head_bytes));
  if (w.dont_fragment_tag) {
    SocketSetDontFragmentTag tag;
    if (w.dont_fragment_tag == 2) tag.Enable(); else tag.Disable();
    p->AddPacketTag(tag);
  }
  return p;
}

void InaNetDevice::Transmit(Ptr<Packet> frame, uint16_t ingress, uint32_t bytes, uint64_t now) {
  if (switch_ && ingress != kNoPort) switch_->OnDequeue(ingress, bytes);
  const uint64_t ser = SerializationPs(bytes);
  if (credit_limit_ != 0) credits_ -= bytes;
  busy_until_ps_ = now + ser;
  counters_.tx_packets++;
  counters_.tx_bytes += bytes;
  counters_.tx_wire_bytes += bytes + wire_overhead_;
  counters_.busy_ps += ser;
  // The run's fingerprint covers every frame that starts on the wire (lost
  // ones too: their loss is part of the trajectory). 64 bytes onto the stack,
  // no allocation, no virtual call.
  uint8_t head[kFingerprintBytes];
  const uint32_t n = frame->CopyData(head, std::min(bytes, kFingerprintBytes));
  fingerprint_ = FingerprintFrame(fingerprint_, now, bytes, head, n);
  if (!tx_trace_.IsEmpty()) tx_trace_(frame, ser);
  if ((loss_rate_ > 0.0 && loss_rng_->GetValue() < loss_rate_) || (loss_filter_ && loss_filter_(*frame))) {
    ++counters_.drops_loss;
    NS_LOG_LOGIC("link " << channel_->link_index << ": a " << bytes << " B frame lost on the wire");
    drop_trace_(frame);
    // A lost frame never reaches the switch that would give its credit
    // back: it comes back when the switch would have returned it had the
    // frame only passed through (link-level credit resynchronisation).
    if (credit_limit_ != 0)
      Simulator::Schedule(PicoSeconds(ser + 2 * channel_->delay_ps() + extra_delay_ps_), &InaNetDevice::AddCredit,
                          this, bytes);
  } else {
    const Time delay = PicoSeconds(ser + channel_->delay_ps() + extra_delay_ps_);
    if (pool_) {
      FrameArrival* e = pool_->Get();
      e->target = peer_;
      e->frame = std::move(frame);
      Simulator::Schedule(delay, Ptr<EventImpl>(e));  // takes the simulator's reference (see ScheduleTxDone)
    } else {
      Simulator::Schedule(delay, &InaNetDevice::ReceiveFrame, peer_, frame);
    }
  }
  if (!Idle()) ScheduleTxDone(ser);
}

void InaNetDevice::TransmitComplete() {
  tx_event_pending_ = false;
  TryTransmit(static_cast<uint64_t>(Simulator::Now().GetPicoSeconds()));
}

void InaNetDevice::ReceiveFrame(Ptr<Packet> frame) {
  const uint64_t now = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
  if (!channel_->IsUp(now)) {
    ++peer_->counters_.drops_link_down;
    return;
  }
  if (!rx_trace_.IsEmpty()) rx_trace_(frame);
  if (switch_) {
    switch_->ReceiveFromPort(port_, frame);
    return;
  }
  if (!endpoints_.empty() && DeliverToEndpoint(*frame)) return;
  // Host: strip Ethernet, hand IPv4 to the stack.
  RawHeader eth(p4::kEthernetBytes);
  frame->RemoveHeader(eth);
  const uint16_t type = p4::LoadBe16(eth.data() + 12);
  if (type != p4::kEtherTypeIpv4 || rx_callback_.IsNull()) return;
  Mac48Address from;
  from.CopyFrom(eth.data() + 6);
  rx_callback_(this, frame, type, from);
}

// ---------------------------------------------------------------- endpoints
bool InaNetDevice::BindEndpoint(uint16_t port, HostEndpoint* endpoint) {
  for (const auto& [p, e] : endpoints_)
    if (p == port) return false;
  endpoints_.emplace_back(port, endpoint);
  return true;
}

void InaNetDevice::UnbindEndpoint(uint16_t port) {
  for (size_t i = 0; i < endpoints_.size(); ++i)
    if (endpoints_[i].first == port) {
      endpoints_.erase(endpoints_.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
}

uint16_t InaNetDevice::NextIpv4Identification(uint32_t dst, uint8_t protocol) {
  return ipv4_ids_[uint64_t{dst} << 8 | protocol]++;
}

InaNetDevice::SourceBacklog* InaNetDevice::SourceAt(uint8_t ip_protocol, uint16_t port) {
  if (sources_.empty()) return nullptr;
  const auto it = sources_.find(uint32_t{ip_protocol} << 16 | port);
  return it == sources_.end() ? nullptr : &it->second;
}

// What ns-3's IPv4 would deliver to a UDP socket bound to the port on any
// address: IPv4 without options, UDP, for this host's address, the limited
// broadcast or the subnet-directed one of its /8 (fabric.cc's mask).
bool InaNetDevice::DeliverToEndpoint(const Packet& frame) {
  constexpr uint32_t kHead = p4::kEthernetBytes + p4::kIpv4MinBytes + p4::kUdpBytes;
  const uint32_t size = frame.GetSize();
  if (size < kHead) return false;
  if (rx_frame_.size() < size) rx_frame_.resize(size);
  uint8_t* f = rx_frame_.data();
  frame.CopyData(f, kHead);
  const uint8_t* ip = f + p4::kEthernetBytes;
  if (p4::LoadBe16(f + 12) != p4::kEtherTypeIpv4 || ip[0] != 0x45 || ip[9] != p4::kIpProtoUdp) return false;
  const uint16_t port = p4::LoadBe16(ip + p4::kIpv4MinBytes + 2);
  HostEndpoint* endpoint = nullptr;
  for (const auto& [p, e] : endpoints_)
    if (p == port) endpoint = e;
  const uint32_t dst = p4::LoadBe32(ip + 16);
  if (!endpoint || !(dst == host_ip_ || dst == 0xffffffffu || dst == (host_ip_ | 0x00ffffffu))) return false;
  const uint32_t ip_bytes = p4::LoadBe16(ip + 2);
  if (ip_bytes < p4::kIpv4MinBytes + p4::kUdpBytes || p4::kEthernetBytes + ip_bytes > size) return true;  // truncated: dropped
  frame.CopyData(f, p4::kEthernetBytes + ip_bytes);  // Ethernet padding, if any, is left out
  endpoint->Deliver(f, p4::kEthernetBytes + ip_bytes);
  return true;
}

void InaNetDevice::ReturnCredit(uint32_t bytes) {
  // merlin sends credits back as their own event, taking no bandwidth
  // (portControl.cc:136-139): after the link delay alone.
  Simulator::Schedule(PicoSeconds(channel_->delay_ps()), &InaNetDevice::AddCredit, peer_, bytes);
}

void InaNetDevice::AddCredit(uint32_t bytes) {
  credits_ += bytes;
  if (credits_ > credit_limit_) throw std::logic_error("credit-based flow control: more credit came back than was spent");
  if (credit_stalled_) TryTransmit(static_cast<uint64_t>(Simulator::Now().GetPicoSeconds()));
}

void InaNetDevice::SetPaused(bool paused) {
  const uint64_t now = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
  if (paused == paused_) return;
  paused_ = paused;
  if (paused) {
    ++counters_.pause_received;
    paused_since_ps_ = now;
  } else {
    counters_.paused_ps += now - paused_since_ps_;
    TryTransmit(now);
  }
}

void InaNetDevice::SendPfc(bool pause) {
  if (pause == pfc_paused_peer_) return;
  pfc_paused_peer_ = pause;
  if (pause) ++counters_.pause_sent;
  NS_LOG_INFO("link " << channel_->link_index << ": " << (pause ? "PAUSE" : "RESUME") << " sent to the peer");
  pfc_trace_(pause);
  // A PAUSE/RESUME is a 64-byte MAC control frame; it preempts the data queue
  // (sent at the next frame boundary in real NICs: we ignore that sub-frame wait).
  const uint64_t ser = SerializationPs(64);
  Simulator::Schedule(PicoSeconds(ser + channel_->delay_ps()), &InaNetDevice::SetPaused, peer_, pause);
}

Mac48Address MacForIpv4(uint32_t ip) {
  Mac48Address m;
  m.CopyFrom(MacBytesOfIpv4(ip).data());
  return m;
}

void MarkCongestionExperienced(Ptr<Packet> frame, const p4::FrameView& view) {
  RawHeader h(p4::kEthernetBytes + view.ip_header_bytes);
  frame->RemoveHeader(h);
  uint8_t* ip = h.data() + p4::kEthernetBytes;
  ip[1] |= 0x3;
  if (p4::LoadBe16(ip + 10) != 0) {  // keep a real checksum valid; 0 means ns-3 left it unset
    p4::StoreBe16(ip + 10, 0);
    p4::StoreBe16(ip + 10, p4::Ipv4HeaderChecksum(ip, view.ip_header_bytes));
  }
  frame->AddHeader(h);
}

}  // namespace inasim
