#include "ina/event-trace.h"

#include "common/scenario_error.h"
#include "ina/diagnosis.h"
#include "ina/fabric.h"
#include "ina/ina-net-device.h"
#include "ina/ina-switch-node.h"
#include "ina/pcap-capture.h"
#include "ina/workload.h"
#include "topology/topology.h"

#include <fmt/format.h>
#include <ns3/application.h>
#include <ns3/callback.h>
#include <ns3/simulator.h>

#include <algorithm>
#include <iterator>
#include <set>

namespace inasim {

namespace {

// Enough of a frame for every protocol's key: Ethernet + IPv4 with options
// + UDP + the largest header a key reads (P4SGD's first 12 bytes, SwitchML's
// 10, Canary's 19, PANAMA's 14, a Canary control message's 16).
constexpr uint32_t kKeyBytes = 14 + 60 + 8 + 32;

const char* const kEventNames[] = {"enqueue", "dequeue",    "receive",     "drop",          "mark",   "pause",
                                   "resume",  "program_in", "program_out", "program_timer", "timeout"};

uint64_t NowPs() { return static_cast<uint64_t>(ns3::Simulator::Now().GetPicoSeconds()); }

}  // namespace

const std::vector<std::string>& TraceEventNames() {
  static const std::vector<std::string> kNames(std::begin(kEventNames), std::end(kEventNames));
  return kNames;
}

EventTrace::EventTrace(const TraceSpec& spec, const topo::Topology& topology, Fabric& fabric,
                       const Workload* workload, std::string protocol)
    : spec_(spec), workload_(workload), protocol_(std::move(protocol)) {
  for (int e = 0; e < kNumEvents; ++e)
    wanted_[e] = spec.events.empty() ||
                 std::find(spec.events.begin(), spec.events.end(), kEventNames[e]) != spec.events.end();
  const bool everything = spec.links.empty() && spec.nodes.empty();
  const std::vector<uint32_t> links =
      SelectLinks(spec.links, spec.nodes, topology, "outputs.trace.links", "outputs.trace.nodes");
  // Switch programs and host agents: the named nodes, and the ends of the
  // selected links (a link's rows without its switch's are half a story).
  std::set<uint32_t> vertices;
  for (uint32_t v = 0; v < topology.num_vertices(); ++v)
    if (everything || std::find(spec.nodes.begin(), spec.nodes.end(), topology.node(v).name) != spec.nodes.end())
      vertices.insert(v);
  for (uint32_t l : links) {
    const topo::Link& link = topology.links()[l];
    HookDevice(fabric.link_tx(l, 0), topology.node(link.a).name, link.port_a, l);
    HookDevice(fabric.link_tx(l, 1), topology.node(link.b).name, link.port_b, l);
    vertices.insert(link.a);
    vertices.insert(link.b);
    ++links_;
  }
  for (uint32_t v : vertices) {
    if (topology.is_host(v)) HookHost(fabric.host(v), topology.node(v).name);
    else HookSwitch(fabric.switch_node(v - topology.num_hosts()), topology.node(v).name);
  }
}

void EventTrace::HookDevice(InaNetDevice& device, std::string node, uint16_t port, uint32_t link) {
  places_.push_back({std::move(node), port, link, &device});
  const size_t p = places_.size() - 1;
  device.TraceConnectWithoutContext(
      "Enqueue", ns3::MakeBoundCallback(+[](EventTrace* t, size_t p, ns3::Ptr<const ns3::Packet> f, uint64_t q) {
        t->RowPacket(kEnqueue, p, *f, static_cast<int64_t>(q), "");
      }, this, p));
  device.TraceConnectWithoutContext(
      "TxStart", ns3::MakeBoundCallback(+[](EventTrace* t, size_t p, ns3::Ptr<const ns3::Packet> f, uint64_t) {
        t->RowPacket(kDequeue, p, *f, static_cast<int64_t>(t->places_[p].device->queued_bytes()), "");
      }, this, p));
  device.TraceConnectWithoutContext(
      "Rx", ns3::MakeBoundCallback(+[](EventTrace* t, size_t p, ns3::Ptr<const ns3::Packet> f) {
        t->RowPacket(kReceive, p, *f, -1, "");
      }, this, p));
  device.TraceConnectWithoutContext(
      "Drop", ns3::MakeBoundCallback(+[](EventTrace* t, size_t p, ns3::Ptr<const ns3::Packet> f) { t->OnDrop(p, f); },
                                     this, p));
  device.TraceConnectWithoutContext(
      "Mark", ns3::MakeBoundCallback(+[](EventTrace* t, size_t p, ns3::Ptr<const ns3::Packet> f) {
        t->RowPacket(kMark, p, *f, static_cast<int64_t>(t->places_[p].device->queued_bytes()), "");
      }, this, p));
  device.TraceConnectWithoutContext(
      "Pfc", ns3::MakeBoundCallback(+[](EventTrace* t, size_t p, bool pause) {
        t->Row(pause ? kPause : kResume, p, nullptr, 0, 0, -1, -1, "");
      }, this, p));
}

void EventTrace::HookSwitch(InaSwitchNode& sw, std::string node) {
  places_.push_back({std::move(node), 0, -1, nullptr});
  const size_t p = places_.size() - 1;
  ++switches_;
  sw.TraceConnectWithoutContext(
      "ProgramIn", ns3::MakeBoundCallback(+[](EventTrace* t, size_t p, uint16_t port, const uint8_t* bytes,
                                              uint32_t size) {
        t->Row(kProgramIn, p, bytes, size, std::min(size, kKeyBytes), -1, port, "");
      }, this, p));
  sw.TraceConnectWithoutContext(
      "ProgramOut", ns3::MakeBoundCallback(+[](EventTrace* t, size_t p, uint16_t port, const uint8_t* bytes,
                                               uint32_t size, uint64_t latency) {
        if (!t->wanted_[kProgramOut]) return;  // before formatting its detail
        const bool routed = port == InaSwitchNode::kRouted;
        t->Row(kProgramOut, p, bytes, size, std::min(size, kKeyBytes), -1, routed ? -1 : int64_t{port},
               routed ? fmt::format("routed latency_ps={}", latency) : fmt::format("latency_ps={}", latency));
      }, this, p));
  sw.TraceConnectWithoutContext(
      "ProgramTimer", ns3::MakeBoundCallback(+[](EventTrace* t, size_t p, uint64_t cookie) {
        if (!t->wanted_[kProgramTimer]) return;  // before formatting its detail
        t->Row(kProgramTimer, p, nullptr, 0, 0, -1, -1, fmt::format("cookie={}", cookie));
      }, this, p));
}

void EventTrace::HookHost(ns3::Ptr<ns3::Node> host, std::string node) {
  places_.push_back({std::move(node), 0, -1, nullptr});
  const size_t p = places_.size() - 1;
  ++hosts_;
  agents_ += ConnectAgentTimeouts(*host, ns3::MakeBoundCallback(+[](EventTrace* t, size_t p, uint32_t job,
                                                                   uint64_t id) { t->OnTimeout(p, job, id); },
                                                               this, p));
}

void EventTrace::OnDrop(size_t p, ns3::Ptr<const ns3::Packet> frame) {
  // The device counts a loss or a link-down drop before it fires Drop; a
  // drop neither count moved for is a full buffer.
  Place& at = places_[p];
  const PortCounters& c = at.device->counters();
  const char* why = c.drops_loss != at.drops_loss ? "loss" : c.drops_link_down != at.drops_down ? "link_down" : "buffer";
  at.drops_loss = c.drops_loss;
  at.drops_down = c.drops_link_down;
  RowPacket(kDrop, p, *frame, static_cast<int64_t>(at.device->queued_bytes()), why);
}

void EventTrace::OnTimeout(size_t p, uint32_t job, uint64_t id) {
  if (!wanted_[kTimeout] || !Admit(protocol_.c_str(), &id)) return;
  fmt::format_to(std::back_inserter(rows_), "{},timeout,{},,,,,{},{},{},,,\n", NowPs(), places_[p].node, protocol_,
                 job, id);
}

bool EventTrace::Admit(const char* protocol, const uint64_t* id) {
  const uint64_t now = NowPs();
  if (now < spec_.from_ps || now >= spec_.until_ps) return false;
  if (!spec_.protocols.empty() &&
      std::find(spec_.protocols.begin(), spec_.protocols.end(), protocol) == spec_.protocols.end())
    return false;
  if (!spec_.ids.empty() && (!id || std::find(spec_.ids.begin(), spec_.ids.end(), *id) == spec_.ids.end()))
    return false;
  if (kept_ >= spec_.max_rows) {
    ++left_out_;
    return false;
  }
  ++kept_;
  return true;
}

void EventTrace::RowPacket(Event e, size_t p, const ns3::Packet& frame, int64_t queue, const std::string& detail) {
  if (!wanted_[e]) return;
  const uint32_t n = std::min(frame.GetSize(), kKeyBytes);
  scratch_.resize(n);
  frame.CopyData(scratch_.data(), n);
  Row(e, p, scratch_.data(), frame.GetSize(), n, queue, -1, detail);
}

void EventTrace::Row(Event e, size_t p, const uint8_t* frame, uint32_t frame_bytes, uint32_t captured, int64_t queue,
                     int64_t port_override, const std::string& detail) {
  if (!wanted_[e]) return;
  const uint64_t now = NowPs();
  if (now < spec_.from_ps || now >= spec_.until_ps) return;  // before the frame is keyed
  const char* protocol = "";
  FrameKey key;
  bool keyed = false;
  if (frame) {
    const p4::FrameView view = p4::ParseFrame(frame, captured, frame_bytes);
    keyed = workload_ && workload_->KeyFrame(view, inasim::Span<const uint8_t>(frame, captured), key);
    protocol = keyed ? protocol_.c_str()
               : view.ipv4 && view.protocol == p4::kIpProtoTcp ? "tcp"
               : view.ipv4 && view.protocol == p4::kIpProtoUdp ? "udp"
                                                              : "other";
  }
  if (!Admit(protocol, keyed ? &key.id : nullptr)) return;
  const Place& at = places_[p];
  const int64_t port = port_override >= 0 ? port_override : (at.link >= 0 ? int64_t{at.port} : -1);
  auto out = std::back_inserter(rows_);
  fmt::format_to(out, "{},{},{},", now, kEventNames[e], at.node);
  if (port >= 0) fmt::format_to(out, "{}", port);
  rows_ += ',';
  if (at.link >= 0) fmt::format_to(out, "{}", at.link);
  rows_ += ',';
  if (queue >= 0) fmt::format_to(out, "{}", queue);
  rows_ += ',';
  if (frame) fmt::format_to(out, "{}", frame_bytes);
  fmt::format_to(out, ",{},", protocol);
  if (keyed) {
    fmt::format_to(out, "{},{},", key.job, key.id);
    if (key.aux >= 0) fmt::format_to(out, "{}", key.aux);
    fmt::format_to(out, ",{}", key.kind);
  } else {
    rows_ += ",,,";
  }
  fmt::format_to(out, ",{}\n", detail);
}

std::string EventTrace::Csv() const { return std::string(kHeader) + rows_; }

nlohmann::json EventTrace::Report() const {
  return {{"file", "trace.csv"}, {"rows", kept_},        {"left_out_max_rows", left_out_},
          {"links", links_},     {"switches", switches_}, {"hosts", hosts_},
          {"agents_with_timeouts", agents_}};
}

}  // namespace inasim
