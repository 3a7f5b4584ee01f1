#include "protocols/switchml/dataplane/hierarchy.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <utility>

namespace inasim::p4::switchml {

namespace {
constexpr size_t kIpOffset = kEthernetHBytes;
constexpr size_t kUdpOffset = kEthernetHBytes + kIpv4HBytes;
constexpr size_t kSwitchmlOffset = kUdpOffset + kUdpHBytes;
}  // namespace

void RewriteAddresses(uint8_t* f, size_t len, const mac_addr_t& eth_src, const mac_addr_t& eth_dst,
                      uint32_t ip_src, uint32_t ip_dst, uint16_t udp_src, uint16_t udp_dst) {
  if (len < kSwitchmlOffset) return;
  std::memcpy(f, eth_dst.data(), 6);
  std::memcpy(f + 6, eth_src.data(), 6);
  uint8_t* ip = f + kIpOffset;
  ip[8] = 64;  // udp_sender.p4:48 sets TTL 64 on every SwitchML packet it sends
  StoreBe32(ip + 12, ip_src);
  StoreBe32(ip + 16, ip_dst);
  StoreBe16(ip + 10, 0);
  StoreBe16(ip + 10, Ipv4HeaderChecksum(ip, kIpv4HBytes));
  uint8_t* udp = f + kUdpOffset;
  if (udp_src) StoreBe16(udp, udp_src);
  if (udp_dst) StoreBe16(udp + 2, udp_dst);
  StoreBe16(udp + 6, 0);  // as udp_sender.p4:83: "Disable UDP checksum for now"
}

HierarchicalSwitchML::HierarchicalSwitchML(SwitchMLConfig level, ParentLink parent)
    : level_(level), config_(std::move(level)), parent_(parent) {}

bool HierarchicalSwitchML::FromParent(const FrameView& f) const {
  // A result (broadcast copy or retransmission answer) of the parent's program
  // addressed to this switch: source port in the SwitchML range, as the
  // parent's egress swaps ports (udp_sender.p4).
  return f.ipv4 && f.ip_header_bytes == kIpv4HBytes && f.protocol == kIpProtoUdp && f.l4 &&
         f.src_ip == parent_.parent_ip && f.dst_ip == config_.switch_ip &&
         (f.src_port & kUdpPortSwitchmlMask) == (kUdpPortSwitchmlBase & kUdpPortSwitchmlMask);
}

bool HierarchicalSwitchML::Claims(const FrameView& f) const { return level_.Claims(f) || FromParent(f); }

void HierarchicalSwitchML::Capture::Emit(inasim::Span<const uint8_t> frame, uint16_t, Picoseconds l) {
  if (copies++ == 0) {
    first.assign(frame.begin(), frame.end());
    latency = l;
  }
}

void HierarchicalSwitchML::Capture::EmitMulticast(inasim::Span<const uint8_t> frame,
                                                  inasim::Span<const uint16_t> ports, Picoseconds l) {
  if (!ports.empty()) Emit(frame, ports[0], l);
}

void HierarchicalSwitchML::Capture::EmitRouted(inasim::Span<const uint8_t> frame, Picoseconds l) {
  out->EmitRouted(frame, l);
}

void HierarchicalSwitchML::Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds now,
                                   Emitter& out) {
  const FrameView f = ParseFrame(frame.data(), frame.size(), static_cast<uint32_t>(frame.size()));
  if (FromParent(f)) {
    if (frame.size() < kSwitchmlOffset) return;
    Down(frame, out);
    return;
  }
  const uint64_t retransmits = level_.stats().retransmits;
  capture_.out = &out;
  capture_.copies = 0;
  level_.Process(ingress_port, frame, now, capture_);
  last_passes_ = level_.LastPasses();
  if (capture_.copies == 0) return;
  if (level_.stats().retransmits != retransmits) {
    ++stats_.retransmissions_up;
  } else {
    ++stats_.partials_up;
  }
  std::vector<uint8_t>& up = capture_.first;
  // Up with the port the completing child's packet came from (the copy's
  // destination port): worker_port + t of thread t on every worker, so the
  // parent's result comes back to that thread's queue.
  const uint16_t thread_port = LoadBe16(up.data() + kEthernetBytes + kIpv4MinBytes + 2);
  RewriteAddresses(up.data(), up.size(), config_.switch_mac, parent_.parent_mac, config_.switch_ip,
                   parent_.parent_ip, thread_port, parent_.dst_udp_port);
  out.Emit(inasim::Span<const uint8_t>(up.data(), up.size()), parent_.uplink_port, capture_.latency);
}

void HierarchicalSwitchML::Down(inasim::Span<const uint8_t> frame, Emitter& out) {
  // One pass: the PRE replicates, egress rewrites addresses per copy.
  last_passes_ = 1;
  ++stats_.results_down;
  for (const SwitchMLWorker& w : config_.workers) {
    copy_.assign(frame.begin(), frame.end());
    RewriteAddresses(copy_.data(), copy_.size(), config_.switch_mac, w.mac, config_.switch_ip, w.ip);
    ++stats_.copies_down;
    out.Emit(inasim::Span<const uint8_t>(copy_.data(), copy_.size()), w.port, config_.pass_latency_ps);
  }
}

std::string HierarchicalSwitchML::DumpState() const {
  nlohmann::json j = nlohmann::json::parse(level_.DumpState());
  j["hierarchy"] = DumpedCounters(stats_, Stats::kCounters);
  j["hierarchy"]["uplink_port"] = parent_.uplink_port;
  return j.dump();
}

}  // namespace inasim::p4::switchml
