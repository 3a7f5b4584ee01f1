#include "protocols/panama/dataplane/controls.h"

#include "p4model/common/frame.h"

namespace inasim::p4::panama {

// ============================================================================
// HeaderParser
// ============================================================================

PanamaPacket HeaderParser::Parse(inasim::Span<const uint8_t> frame) {
  PanamaPacket p;
  const uint8_t* b = frame.data();
  const size_t n = frame.size();
  // panama §5 (1): EtherType and DSCP decide. Anything too short to carry
  // them, or not IPv4, is not an aggregation packet.
  if (n < kEthernetBytes + 2 || LoadBe16(b + 12) != kEtherTypeIpv4) return p;
  const uint8_t* ip = b + kEthernetBytes;
  if ((ip[0] >> 4) != 4 || (ip[1] >> 2) != kAggregationDscp) return p;
  // From here the frame claims to be an aggregation packet: anything missing
  // or inconsistent is a malformed aggregation packet (dropped, counted).
  p.kind = PanamaPacket::Kind::kMalformed;
  p.ecn = ip[1] & 0x3;
  const size_t ihl_bytes = size_t{ip[0] & 0x0fu} * 4;
  if (ihl_bytes < kIpv4MinBytes || n < kEthernetBytes + ihl_bytes) return p;
  // A DSCP-56 packet that is not UDP is no aggregation packet (the experiments
  // use UDP, Panama-MLSys-Hardware-Experiments@34c44f1:linerate_iperf_experiments/README.md:11).
  if (ip[9] != kIpProtoUdp) {
    p.kind = PanamaPacket::Kind::kNonAggregation;
    return p;
  }
  const size_t total_length = LoadBe16(ip + 2);
  const size_t udp = kEthernetBytes + ihl_bytes;
  if (total_length < ihl_bytes + kUdpBytes + kPanamaHeaderBytes || kEthernetBytes + total_length > n) return p;
  const size_t udp_length = LoadBe16(b + udp + 4);
  if (udp_length < kUdpBytes + kPanamaHeaderBytes || ihl_bytes + udp_length > total_length) return p;
  const size_t payload = udp_length - kUdpBytes - kPanamaHeaderBytes;
  if (payload % kValueBytes != 0) return p;
  p.ip_offset = kEthernetBytes;
  p.header_offset = udp + kUdpBytes;
  p.gradient_offset = p.header_offset + kPanamaHeaderBytes;
  p.num_values = static_cast<uint32_t>(payload / kValueBytes);
  const uint8_t* h = b + p.header_offset;
  p.jid = LoadBe16(h + kOffJid);
  p.tid = h[kOffTid];
  p.flags = h[kOffFlags];
  p.vid = LoadBe32(h + kOffVid);
  p.wnd_cap = LoadBe16(h + kOffWndCap);
  p.kind = PanamaPacket::Kind::kAggregation;
  return p;
}

// ============================================================================
// BufferingControl
// ============================================================================

BufferingControl::BufferingControl(uint64_t packet_memory, uint32_t num_jobs, uint32_t num_ports)
    : packet_memory_(packet_memory), num_ports_(num_ports), count_(size_t{num_jobs} * num_ports, 0) {}

bool BufferingControl::Admit(uint32_t job, uint32_t port) {
  uint64_t& c = count_[job * num_ports_ + port];
  if (c + 1 > Share()) return false;
  ++c;
  ++total_;
  if (total_ > peak_) peak_ = total_;
  return true;
}

void BufferingControl::Release(uint32_t job, uint32_t port) {
  --count_[job * num_ports_ + port];
  --total_;
}

// ============================================================================
// ControlLogic
// ============================================================================

ControlLogic::ControlLogic(const std::vector<PanamaJob>& jobs) {
  for (const PanamaJob& j : jobs) AddJob(j);
}

void ControlLogic::AddJob(const PanamaJob& job) {
  ports_bitmap_.push_back(job.ports_bitmap);
  expected_vid_.emplace_back(job.num_trees, 0u);
}

ControlLogic::Verdict ControlLogic::Inspect(uint32_t expected, inasim::Span<const uint32_t> vids,
                                            inasim::Span<const bool> present) {
  for (bool p : present)
    if (!p) return Verdict::kWait;
  bool all_equal = true;
  for (uint32_t v : vids) {
    if (Older(v, expected)) return Verdict::kDropStale;
    all_equal = all_equal && v == expected;
  }
  return all_equal ? Verdict::kAggregate : Verdict::kSkip;
}

ControlLogic::Verdict ControlLogic::InspectQuorum(uint32_t expected, inasim::Span<const uint32_t> vids,
                                                  inasim::Span<const bool> present,
                                                  inasim::Span<const uint32_t> weights, uint64_t need) {
  bool all_present = true;
  uint64_t ready = 0;
  for (size_t i = 0; i < vids.size(); ++i) {
    if (!present[i]) {
      all_present = false;
      continue;
    }
    if (Older(vids[i], expected)) return Verdict::kDropStale;
    if (vids[i] == expected) ready += weights[i];
  }
  if (ready >= need) return Verdict::kAggregate;
  return all_present ? Verdict::kSkip : Verdict::kWait;
}

// ============================================================================
// LatencyModel
// ============================================================================

Picoseconds LatencyModel::Streaming(uint32_t frame_bytes) const {
  // panama Appendix A eq. (3): (S/W - 1) x 1/f, S and W in bits.
  const uint64_t bits = uint64_t{frame_bytes} * 8;
  if (bits <= p_.bus_bits) return 0;
  const unsigned __int128 num = static_cast<unsigned __int128>(bits - p_.bus_bits) * 1'000'000'000'000ull;
  const unsigned __int128 den = static_cast<unsigned __int128>(p_.bus_bits) * p_.clock_hz;
  return static_cast<Picoseconds>((num + den / 2) / den);
}

Picoseconds LatencyModel::NonAggregation(uint32_t frame_bytes) const {
  if (p_.mode == LatencyMode::kTable1) return Table1(frame_bytes, false);
  return Streaming(frame_bytes) + p_.fixed_ps;
}

Picoseconds LatencyModel::Aggregation(uint32_t frame_bytes) const {
  if (p_.mode == LatencyMode::kTable1) return Table1(frame_bytes, true);
  // eq. (3)'s second term La x log2(N), N the adder tree's leaves (depth ceil(log2 N)).
  return Streaming(frame_bytes) + p_.fixed_ps + p_.adder_ps * depth_ + p_.agg_fixed_ps;
}

Picoseconds LatencyModel::Table1(uint32_t frame_bytes, bool aggregation) const {
  auto at = [&](const Table1Row& r) { return static_cast<int64_t>(aggregation ? r.aggregation : r.non_aggregation); };
  constexpr size_t kRows = sizeof(kTable1) / sizeof(kTable1[0]);
  const int64_t s = frame_bytes;
  // Outside the measured sizes: eq. (3)'s slope (8/(W f) per byte) from the nearest row.
  const Table1Row& lo = kTable1[0];
  const Table1Row& hi = kTable1[kRows - 1];
  if (s <= lo.bytes || s >= hi.bytes) {
    const Table1Row& r = s <= lo.bytes ? lo : hi;
    const int64_t per_byte_num = 8'000'000'000'000ll;  // ps x Hz per byte x W
    const int64_t den = static_cast<int64_t>(p_.bus_bits) * static_cast<int64_t>(p_.clock_hz);
    const int64_t delta = (s - static_cast<int64_t>(r.bytes)) * per_byte_num;
    const int64_t t = at(r) + (delta >= 0 ? (delta + den / 2) / den : -((-delta + den / 2) / den));
    return t < 0 ? 0 : static_cast<Picoseconds>(t);
  }
  for (size_t i = 0; i + 1 < kRows; ++i) {
    const Table1Row& a = kTable1[i];
    const Table1Row& b = kTable1[i + 1];
    if (s > static_cast<int64_t>(b.bytes)) continue;
    const int64_t span = b.bytes - a.bytes;
    const int64_t num = (s - static_cast<int64_t>(a.bytes)) * (at(b) - at(a));
    return static_cast<Picoseconds>(at(a) + (num + span / 2) / span);
  }
  return static_cast<Picoseconds>(at(hi));
}

}  // namespace inasim::p4::panama
