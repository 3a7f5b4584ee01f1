#include "tests/toy/protocols/toy/dataplane/toy_dataplane.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace inasim::p4::toy {

namespace {
constexpr uint32_t kBroadcastIpv4 = 0xffffffffu;
constexpr size_t kHeadersBytes = kEthernetBytes + kIpv4MinBytes + kUdpBytes;
}  // namespace

void ToyConfig::Validate() const {
  auto fail = [](const std::string& m) { throw std::invalid_argument("toy config: " + m); };
  if (worker_ports.empty() || worker_ports.size() > 64) fail("worker_ports: 1 to 64 workers (the slot bitmap)");
  for (size_t i = 0; i < worker_ports.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (worker_ports[i] == worker_ports[j]) fail("worker_ports: port " + std::to_string(worker_ports[i]) + " twice");
  if (elements_per_packet == 0 || elements_per_packet > 256) fail("elements_per_packet: must be 1..256");
  if (slots == 0 || slots > 65536) fail("slots: must be 1..65536");
}

ToyDataplane::ToyDataplane(ToyConfig config) : config_((config.Validate(), std::move(config))) {
  for (size_t w = 0; w < config_.worker_ports.size(); ++w) {
    const uint16_t p = config_.worker_ports[w];
    if (p >= worker_of_port_.size()) worker_of_port_.resize(size_t{p} + 1, -1);
    worker_of_port_[p] = static_cast<int16_t>(w);
  }
  slots_.resize(config_.slots);
  sums_.resize(size_t{config_.slots} * config_.elements_per_packet);
  out_.resize(kHeadersBytes + kToyHeaderBytes + size_t{4} * config_.elements_per_packet);
}

bool ToyDataplane::Claims(const FrameView& f) const {
  return f.ipv4 && f.l4 && f.protocol == kIpProtoUdp && f.dst_port == config_.udp_port;
}

void ToyDataplane::Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds, Emitter& out) {
  const FrameView f = ParseFrame(frame.data(), frame.size(), static_cast<uint32_t>(frame.size()));
  const size_t need = size_t{f.l4_payload_offset} + kToyHeaderBytes + size_t{4} * config_.elements_per_packet;
  if (!f.l4 || frame.size() < need || frame.data()[f.l4_payload_offset + 4] != kKindContribution) {
    ++stats_.malformed;
    return;
  }
  const int16_t w = ingress_port < worker_of_port_.size() ? worker_of_port_[ingress_port] : -1;
  if (w < 0) {
    ++stats_.not_a_worker;
    return;
  }
  const uint8_t* h = frame.data() + f.l4_payload_offset;
  if (Aggregate(static_cast<uint32_t>(w), h)) EmitResult(LoadBe32(h) % config_.slots, out);
}

bool ToyDataplane::Aggregate(uint32_t w, const uint8_t* h) {
  const uint32_t seq = LoadBe32(h), k = config_.elements_per_packet;
  Slot& s = slots_[seq % config_.slots];
  uint32_t* acc = &sums_[size_t{seq % config_.slots} * k];
  const uint8_t* v = h + kToyHeaderBytes;
  if (!s.valid) {
    s = Slot{true, seq, 0, 0};
    std::memset(acc, 0, size_t{4} * k);
  } else if (s.seq != seq) {
    ++stats_.slot_conflicts;
    return false;
  }
  if (s.seen >> w & 1) {
    ++stats_.duplicates;
    return false;
  }
  s.seen |= uint64_t{1} << w;
  ++s.count;
  for (uint32_t i = 0; i < k; ++i) acc[i] += LoadBe32(v + 4 * i);  // int32 wraps modulo 2^32, as a switch ALU
  ++stats_.contributions;
  return s.count == config_.worker_ports.size();
}

void ToyDataplane::EmitResult(uint32_t slot, Emitter& out) {
  Slot& s = slots_[slot];
  const uint32_t k = config_.elements_per_packet;
  const size_t payload = kToyHeaderBytes + size_t{4} * k;
  uint8_t* b = out_.data();
  std::memset(b, 0xff, 6);  // broadcast MAC: every worker's NIC takes it
  std::memcpy(b + 6, config_.switch_mac.data(), 6);
  StoreBe16(b + 12, kEtherTypeIpv4);
  uint8_t* ip = b + kEthernetBytes;
  std::memset(ip, 0, kIpv4MinBytes);
  ip[0] = 0x45;
  StoreBe16(ip + 2, static_cast<uint16_t>(kIpv4MinBytes + kUdpBytes + payload));
  ip[8] = 64;
  ip[9] = kIpProtoUdp;
  StoreBe32(ip + 12, config_.switch_ip);
  StoreBe32(ip + 16, kBroadcastIpv4);
  StoreBe16(ip + 10, Ipv4HeaderChecksum(ip, kIpv4MinBytes));
  uint8_t* udp = ip + kIpv4MinBytes;
  StoreBe16(udp, config_.udp_port);
  StoreBe16(udp + 2, config_.udp_port);
  StoreBe16(udp + 4, static_cast<uint16_t>(kUdpBytes + payload));
  StoreBe16(udp + 6, 0);  // no UDP checksum (allowed over IPv4)
  uint8_t* h = udp + kUdpBytes;
  StoreBe32(h, s.seq);
  h[4] = kKindResult;
  h[5] = 0;
  StoreBe16(h + 6, static_cast<uint16_t>(s.count));
  const uint32_t* acc = &sums_[size_t{slot} * k];
  for (uint32_t i = 0; i < k; ++i) StoreBe32(h + kToyHeaderBytes + 4 * i, acc[i]);
  s = Slot{};
  ++stats_.results;
  out.EmitMulticast(out_, config_.worker_ports, config_.pass_latency_ps);
}

std::string ToyDataplane::DumpState() const {
  nlohmann::json busy = nlohmann::json::array();
  for (uint32_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].valid) busy.push_back({{"slot", i}, {"seq", slots_[i].seq}, {"count", slots_[i].count}});
  return nlohmann::json{{"name", "toy"},
                        {"slots_in_use", busy},
                        {"stats", DumpedCounters(stats_, Stats::kCounters)}}
      .dump();
}

}  // namespace inasim::p4::toy
