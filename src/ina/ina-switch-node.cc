#include "ina/ina-switch-node.h"

#include "ina/addressing.h"

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"

#include <algorithm>

namespace inasim {

NS_LOG_COMPONENT_DEFINE("InaSwitchNode");

using namespace ns3;

NS_OBJECT_ENSURE_REGISTERED(InaSwitchNode);

TypeId InaSwitchNode::GetTypeId() {
  static TypeId tid =
      TypeId("inasim::InaSwitchNode")
          .SetParent<Node>()
          .SetGroupName("Ina")
          .AddConstructor<InaSwitchNode>()
          .AddTraceSource("ProgramIn",
                          "The switch program took a frame; args: ingress port, frame bytes, their count",
                          MakeTraceSourceAccessor(&InaSwitchNode::program_in_trace_),
                          "inasim::InaSwitchNode::ProgramInTracedCallback")
          .AddTraceSource("ProgramOut",
                          "The switch program emitted a frame (one call per multicast copy); args: egress port "
                          "(65535: routed by the switch's table), frame bytes, their count, pipeline latency in ps",
                          MakeTraceSourceAccessor(&InaSwitchNode::program_out_trace_),
                          "inasim::InaSwitchNode::ProgramOutTracedCallback")
          .AddTraceSource("ProgramTimer", "A timer the switch program asked for fired; args: the program's cookie",
                          MakeTraceSourceAccessor(&InaSwitchNode::program_timer_trace_),
                          "inasim::InaSwitchNode::ProgramTimerTracedCallback");
  return tid;
}

InaSwitchNode::InaSwitchNode() = default;
InaSwitchNode::~InaSwitchNode() = default;

void InaSwitchNode::DoDispose() {
  dataplane_.reset();
  free_batches_.clear();
  batches_.clear();
  ports_.clear();
  spray_rng_ = nullptr;
  Node::DoDispose();
}

void InaSwitchNode::Configure(uint32_t vertex, uint16_t tier, const topo::RoutingTable* routing,
                              uint32_t num_hosts, const ForwardingConfig& config,
                              Ptr<UniformRandomVariable> spray_rng) {
  vertex_ = vertex;
  routing_ = routing;
  num_hosts_ = num_hosts;
  cfg_ = config;
  pfc_ = config.pfc_enabled;
  credit_ = config.credit_enabled;
  salt_ = congestion::Mix64(config.hash_seed ^ (uint64_t{vertex} * 0x9e3779b97f4a7c15ULL));
  tier_ = tier;
  spray_rng_ = spray_rng;
}

void InaSwitchNode::AddPort(Ptr<InaNetDevice> device) {
  const auto port = static_cast<uint16_t>(ports_.size());
  AddDevice(device);  // ns-3 bookkeeping (ifIndex, node); frames bypass its callbacks
  device->SetSwitchPort(this, port);
  ports_.push_back(PeekPointer(device));
  ingress_bytes_.push_back(0);
}

void InaSwitchNode::SetDataplane(std::unique_ptr<p4::Dataplane> dataplane) {
  dataplane_ = std::move(dataplane);
  if (dataplane_) dataplane_->AttachTimers(this);
  // Per-frame lines cost a call each; whether they are wanted is known now
  // (NS_LOG is read at start-up), so the packet path tests one member.
  log_frames_ = g_log.IsEnabled(ns3::LOG_LOGIC);
}

void InaSwitchNode::DropNoRoute() {
  ++counters_.dropped_no_route;
  NS_LOG_WARN("switch " << vertex_ << ": no route, a frame dropped");
}

void InaSwitchNode::ReceiveFromPort(uint16_t port, Ptr<Packet> frame) {
  if (!credit_) {
    Process(port, frame);
    return;
  }
  // Credit-based flow control: the frame holds its ingress's credit while it
  // is processed and while anything made of it waits (DropCharge gives it back).
  current_hold_ = NewCharge(port, frame->GetSize());
  SharedIngressCharge* hold = current_hold_;
  Process(port, frame);
  current_hold_ = nullptr;
  DropCharge(hold);
}

void InaSwitchNode::Process(uint16_t port, Ptr<Packet> frame) {
  ++counters_.rx_frames;
  uint8_t head[p4::kParseBytes];
  const uint32_t size = frame->GetSize();
  const uint32_t n = frame->CopyData(head, std::min<uint32_t>(size, sizeof head));
  const p4::FrameView view = p4::ParseFrame(head, n, size);
  if (dataplane_ && dataplane_->Claims(view)) {
    ++counters_.dataplane_in;
    scratch_.resize(size);
    frame->CopyData(scratch_.data(), size);
    current_ingress_ = port;
    if (!program_in_trace_.IsEmpty()) program_in_trace_(port, scratch_.data(), size);
    if (log_frames_) NS_LOG_LOGIC("switch " << vertex_ << ": program takes " << size << " B from port " << port);
    dataplane_->Process(port, scratch_, static_cast<uint64_t>(Simulator::Now().GetPicoSeconds()), *this);
    current_ingress_ = InaNetDevice::kNoPort;
    return;
  }
  Forward(frame, view, port, current_hold_);
}

void InaSwitchNode::Forward(Ptr<Packet> frame, const p4::FrameView& view, uint16_t ingress,
                            SharedIngressCharge* hold) {
  if (!view.ipv4) {
    ++counters_.dropped_not_ipv4;
    NS_LOG_WARN("switch " << vertex_ << ": a frame that is not IPv4 and no program claimed, dropped");
    return;
  }
  const uint32_t host = HostOfIpv4(view.dst_ip);
  if (host >= num_hosts_) {
    DropNoRoute();
    return;
  }
  const inasim::Span<const uint16_t> hops = routing_->NextHops(vertex_, host);
  if (hops.empty()) {
    DropNoRoute();
    return;
  }
  const uint16_t out = hops.size() == 1 ? hops[0] : ChoosePort(hops, view, host);
  ++counters_.forwarded;
  ports_[out]->EnqueueFrame(frame, view, ingress, nullptr, hold);
}

uint16_t InaSwitchNode::ChoosePort(inasim::Span<const uint16_t> hops, const p4::FrameView& view, uint32_t host) {
  const auto n = static_cast<uint32_t>(hops.size());
  uint32_t pick = 0;
  switch (cfg_.policy) {
    case congestion::ForwardingPolicy::kEcmp:
      pick = static_cast<uint32_t>(congestion::FlowHash(view, salt_) % n);
      break;
    case congestion::ForwardingPolicy::kSpray:
      pick = spray_rng_->GetInteger(0, n - 1);
      break;
    case congestion::ForwardingPolicy::kAdaptive: {
      // canary-fgcs24 §5.2 "By default, each switch sends packets on a default
      // up port (selected depending on the packet destination)".
      pick = cfg_.adaptive_by_destination ? congestion::DestinationModK(host, tier_, n)
                                          : static_cast<uint32_t>(congestion::FlowHash(view, salt_) % n);
      const InaNetDevice* d = ports_[hops[pick]];
      if (static_cast<double>(d->queued_bytes()) > cfg_.adaptive_threshold * static_cast<double>(d->buffer_bytes())) {
        uint64_t best = UINT64_MAX;
        for (uint32_t i = 0; i < n; ++i) {
          const uint64_t q = ports_[hops[i]]->queued_bytes();
          if (q < best && ports_[hops[i]]->link_up()) {
            best = q;
            pick = i;
          }
        }
      }
      break;
    }
  }
  // Local fast failover: never choose a failed link while an equal-cost one is up.
  if (!ports_[hops[pick]]->link_up()) {
    for (uint32_t i = 1; i < n; ++i) {
      const uint32_t j = (pick + i) % n;
      if (ports_[hops[j]]->link_up()) return hops[j];
    }
  }
  return hops[pick];
}

void InaSwitchNode::SendOut(uint16_t port, Ptr<Packet> frame, uint16_t ingress, SharedIngressCharge* hold) {
  if (port >= ports_.size()) {
    DropNoRoute();
    return;
  }
  uint8_t head[p4::kParseBytes];
  const uint32_t size = frame->GetSize();
  const uint32_t n = frame->CopyData(head, std::min<uint32_t>(size, sizeof head));
  ports_[port]->EnqueueFrame(frame, p4::ParseFrame(head, n, size), ingress, nullptr, hold);
}

void InaSwitchNode::SendOutLater(uint16_t port, Ptr<Packet> frame, uint16_t ingress, SharedIngressCharge* hold) {
  SendOut(port, frame, ingress, hold);
  LetGo(hold);
}

void InaSwitchNode::ForwardLater(Ptr<Packet> frame, uint16_t ingress, SharedIngressCharge* hold) {
  uint8_t head[p4::kParseBytes];
  const uint32_t size = frame->GetSize();
  const uint32_t n = frame->CopyData(head, std::min<uint32_t>(size, sizeof head));
  Forward(frame, p4::ParseFrame(head, n, size), ingress, hold);
  LetGo(hold);
}

void InaSwitchNode::Emit(inasim::Span<const uint8_t> bytes, uint16_t port, p4::Picoseconds latency) {
  ++counters_.dataplane_out;
  if (!program_out_trace_.IsEmpty())
    program_out_trace_(port, bytes.data(), static_cast<uint32_t>(bytes.size()), latency);
  Ptr<Packet> frame = Create<Packet>(bytes.data(), static_cast<uint32_t>(bytes.size()));
  if (latency == 0) {
    SendOut(port, frame, current_ingress_, current_hold_);
  } else {
    Simulator::Schedule(PicoSeconds(latency), &InaSwitchNode::SendOutLater, this, port, frame,
                        current_ingress_, TakeHold());
  }
}

void InaSwitchNode::EmitMulticast(inasim::Span<const uint8_t> bytes, inasim::Span<const uint16_t> ports,
                                  p4::Picoseconds latency) {
  if (ports.empty()) return;
  counters_.dataplane_out += ports.size();
  if (!program_out_trace_.IsEmpty())
    for (uint16_t port : ports) program_out_trace_(port, bytes.data(), static_cast<uint32_t>(bytes.size()), latency);
  const auto size = static_cast<uint32_t>(bytes.size());
  Ptr<Packet> frame = Create<Packet>(bytes.data(), size);
  // Every copy has these bytes: parse them once for the whole group.
  const p4::FrameView view = p4::ParseFrame(bytes.data(), std::min<size_t>(size, p4::kParseBytes), size);
  if (latency == 0) {
    SendCopies(frame, view, ports, current_ingress_, current_hold_);
    return;
  }
  // One event for the whole group, not one per port: the copies were
  // consecutive events at one time, so nothing could run between them, and
  // an event they schedule for that time ran after all of them either way.
  if (free_batches_.empty()) {
    batches_.push_back(std::make_unique<MulticastBatch>());
    free_batches_.push_back(batches_.back().get());
  }
  MulticastBatch* b = free_batches_.back();
  free_batches_.pop_back();
  b->frame = frame;
  b->view = view;
  b->ports.assign(ports.begin(), ports.end());
  b->ingress = current_ingress_;
  b->hold = TakeHold();
  Simulator::Schedule(PicoSeconds(latency), &InaSwitchNode::SendMulticastLater, this, b);
}

void InaSwitchNode::SendMulticastLater(MulticastBatch* b) {
  Ptr<Packet> frame = std::move(b->frame);
  b->frame = nullptr;
  SendCopies(frame, b->view, b->ports, b->ingress, b->hold);
  LetGo(b->hold);
  b->hold = nullptr;
  free_batches_.push_back(b);
}

void InaSwitchNode::SendCopies(Ptr<Packet> frame, const p4::FrameView& view, inasim::Span<const uint16_t> ports,
                               uint16_t ingress, SharedIngressCharge* hold) {
  // Each port gets a Packet::Copy (its own object sharing the bytes
  // copy-on-write, so a CE mark on one copy does not touch the others); the
  // original, never sent before, goes to the last port.
  const size_t n = ports.size();
  // With PFC the copies waiting in egress queues charge their ingress once
  // between them (SharedIngressCharge); without PFC nothing reads the charge.
  // With credit-based flow control the received frame's hold is that charge.
  SharedIngressCharge* shared = nullptr;
  if (credit_) {
    shared = hold;
    if (shared) ++shared->refs;  // our reference while enqueueing
  } else if (pfc_ && n > 1 && ingress != InaNetDevice::kNoPort) {
    shared = NewCharge(ingress, view.frame_bytes);  // our reference while enqueueing
  }
  for (size_t i = 0; i < n; ++i) {
    if (ports[i] >= ports_.size()) {
      DropNoRoute();
      continue;
    }
    ports_[ports[i]]->EnqueueFrame(i + 1 == n ? frame : frame->Copy(), view, ingress, nullptr, shared);
  }
  if (shared) DropCharge(shared);
}

void InaSwitchNode::EmitRouted(inasim::Span<const uint8_t> bytes, p4::Picoseconds latency) {
  ++counters_.dataplane_out;
  if (!program_out_trace_.IsEmpty())
    program_out_trace_(kRouted, bytes.data(), static_cast<uint32_t>(bytes.size()), latency);
  Ptr<Packet> frame = Create<Packet>(bytes.data(), static_cast<uint32_t>(bytes.size()));
  if (latency == 0) {
    ForwardLater(frame, current_ingress_, TakeHold());
  } else {
    Simulator::Schedule(PicoSeconds(latency), &InaSwitchNode::ForwardLater, this, frame,
                        current_ingress_, TakeHold());
  }
}

void InaSwitchNode::ScheduleAt(p4::Picoseconds at, uint64_t cookie) {
  const auto now = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
  Simulator::Schedule(PicoSeconds(at > now ? at - now : 0), &InaSwitchNode::FireTimer, this, cookie);
}

void InaSwitchNode::FireTimer(uint64_t cookie) {
  if (!dataplane_) return;
  if (log_frames_) NS_LOG_LOGIC("switch " << vertex_ << ": program timer " << cookie);
  program_timer_trace_(cookie);
  dataplane_->OnTimer(cookie, static_cast<uint64_t>(Simulator::Now().GetPicoSeconds()), *this);
}

}  // namespace inasim
