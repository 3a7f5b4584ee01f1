#include "protocols/switchml/dataplane/switchml_dataplane.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#if defined(__SSE2__)
#include <emmintrin.h>
#include <tmmintrin.h>
#endif

namespace inasim::p4::switchml {

const char* PacketTypeName(PacketType t) {
  static const char* const kNames[16] = {"MIRROR",   "BROADCAST", "RETRANSMIT", "IGNORE",   "CONSUME0", "CONSUME1",
                                         "CONSUME2", "CONSUME3",  "HARVEST0",   "HARVEST1", "HARVEST2", "HARVEST3",
                                         "HARVEST4", "HARVEST5",  "HARVEST6",   "HARVEST7"};
  return kNames[static_cast<uint8_t>(t) & 0xf];
}

namespace {

// The controller's probability -> 16-bit value.
// p4lang/p4app-switchML@b5c74a04:dev_root/controller/drop_simulator.py:64
uint16_t DropValue(double p) { return static_cast<uint16_t>(static_cast<uint32_t>(0xffff * p)); }

// Saturating 16-bit add (|+|).
uint16_t SatAdd16(uint16_t a, uint16_t b) {
  const uint32_t s = uint32_t{a} + b;
  return static_cast<uint16_t>(s > 0xffff ? 0xffff : s);
}

// A data header's 32 big-endian words <-> d.d[] in host order. GCC does not
// vectorize a bswap loop for baseline x86-64 (SSE2 has no byte shuffle), and
// that loop was a fifth of the model's time, so on x86 (little-endian) 16
// bytes at a time: one pshufb where the CPU has SSSE3 (checked once), else
// SSE2: swap the bytes of each 16-bit lane, then the two lanes of each 32-bit
// word. Same bytes as LoadBe32/StoreBe32 per word.
#if defined(__SSE2__)
__attribute__((target("ssse3"))) void ReverseWordBytesSsse3(const void* from, void* to) {
  const __m128i reverse = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
  for (int i = 0; i < 8; ++i) {
    const __m128i v = _mm_loadu_si128(static_cast<const __m128i*>(from) + i);
    _mm_storeu_si128(static_cast<__m128i*>(to) + i, _mm_shuffle_epi8(v, reverse));
  }
}
void ReverseWordBytes(const void* from, void* to) {
  static const bool ssse3 = __builtin_cpu_supports("ssse3");
  if (ssse3) return ReverseWordBytesSsse3(from, to);
  for (int i = 0; i < 8; ++i) {
    __m128i v = _mm_loadu_si128(static_cast<const __m128i*>(from) + i);
    v = _mm_or_si128(_mm_slli_epi16(v, 8), _mm_srli_epi16(v, 8));
    v = _mm_shufflehi_epi16(_mm_shufflelo_epi16(v, 0xb1), 0xb1);  // 0xb1 = (2,3,0,1)
    _mm_storeu_si128(static_cast<__m128i*>(to) + i, v);
  }
}
#endif
// d = data_h{}. GCC's generic x86-64 tuning zeroes 128 B with `rep stos`,
// whose start-up cost was most of a harvest pass's parse; eight SSE2 stores
// (written out: GCC turns a loop of them back into memset).
void ClearData(data_h& d) {
  d.valid = false;
#if defined(__SSE2__)
  __m128i* q = reinterpret_cast<__m128i*>(d.d.data());
  const __m128i z = _mm_setzero_si128();
  _mm_storeu_si128(q + 0, z);
  _mm_storeu_si128(q + 1, z);
  _mm_storeu_si128(q + 2, z);
  _mm_storeu_si128(q + 3, z);
  _mm_storeu_si128(q + 4, z);
  _mm_storeu_si128(q + 5, z);
  _mm_storeu_si128(q + 6, z);
  _mm_storeu_si128(q + 7, z);
#else
  d.d.fill(0);
#endif
}
// hdr = header_t{}, without `rep stos` (see ClearData). The RoCE headers
// only when the last packet parsed any: no other path writes them.
void ClearHeaders(header_t& hdr, bool roce) {
  hdr.ethernet = {};
  hdr.ipv4 = {};
  hdr.udp = {};
  hdr.switchml = {};
  hdr.exponents = {};
  if (roce) {
    hdr.ib_bth = {};
    hdr.ib_reth = {};
    hdr.ib_immediate = {};
  }
  ClearData(hdr.d0);
  ClearData(hdr.d1);
}
void ExtractData(const uint8_t* p, data_h& d) {
  d.valid = true;
#if defined(__SSE2__)
  ReverseWordBytes(p, d.d.data());
#else
  for (int i = 0; i < 32; ++i) d.d[i] = LoadBe32(p + 4 * i);
#endif
}
void StoreData(const data_h& d, uint8_t* p) {
#if defined(__SSE2__)
  ReverseWordBytes(d.d.data(), p);
#else
  for (int i = 0; i < 32; ++i) StoreBe32(p + 4 * i, d.d[i]);
#endif
}
// Deparses the valid data headers (d0 then d1) in front of the payload.
void EmitData(const header_t& hdr, PayloadBuffer& payload) {
  if (hdr.d1.valid) StoreData(hdr.d1, payload.Push(kDataHBytes));
  if (hdr.d0.valid) StoreData(hdr.d0, payload.Push(kDataHBytes));
}

// The UDP egress headers: ethernet, ipv4, udp, switchml, exponents.
constexpr size_t kEgressHeaderBytes = kEthernetHBytes + kIpv4HBytes + kUdpHBytes + kSwitchmlHBytes + kExponentsHBytes;
// The egress headers of a copy: UDP's, or RoCE's for ROCEv2 workers (every
// copy of a packet has the same worker type and first / last flags).
size_t EgressHeaderBytes(const switchml_md_h& md) {
  return md.worker_type == WorkerType::ROCEv2 ? RoceEgressHeaderBytes(md.first_packet, md.last_packet)
                                              : kEgressHeaderBytes;
}

// mac_addr_t ==, without the library memcmp call std::array's == makes.
bool SameMac(const mac_addr_t& a, const mac_addr_t& b) {
  uint32_t a4, b4;
  uint16_t a2, b2;
  std::memcpy(&a4, a.data(), 4);
  std::memcpy(&b4, b.data(), 4);
  std::memcpy(&a2, a.data() + 4, 2);
  std::memcpy(&b2, b.data() + 4, 2);
  return a4 == b4 && a2 == b2;
}

enum class ParseResult { kSwitchml, kRegular, kTruncated };

// parse_ib_bth and what follows it: the BTH, the RETH / immediate its opcode
// brings, then the 256 B of data (the ICRC stays in the payload).
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:140
// Out of line: UDP jobs never take it, and inlined it kept IngressParser
// from being inlined into Process() (measured with bench/p4model_bench).
__attribute__((noinline)) ParseResult ParseIb(const uint8_t* b, size_t len, size_t at, header_t& hdr,
                                              ingress_metadata_t& ig_md, PayloadBuffer& payload) {
  if (len < at + kIbBthHBytes) return ParseResult::kTruncated;
  ib_bth_h& bth = hdr.ib_bth;
  bth.valid = true;
  bth.opcode = b[at];
  bth.se = b[at + 1] >> 7;
  bth.migration_req = b[at + 1] >> 6 & 1;
  bth.pad_count = b[at + 1] >> 4 & 3;
  bth.transport_version = b[at + 1] & 0xf;
  bth.partition_key = LoadBe16(b + at + 2);
  bth.f_res1 = b[at + 4] >> 7;
  bth.b_res1 = b[at + 4] >> 6 & 1;
  bth.reserved = b[at + 4] & 0x3f;
  bth.dst_qp = LoadBe32(b + at + 4) & 0xffffff;
  bth.ack_req = b[at + 8] >> 7;
  bth.reserved2 = b[at + 8] & 0x7f;
  bth.psn = LoadBe32(b + at + 8) & 0xffffff;
  at += kIbBthHBytes;
  bool reth = false, immediate = false;
  using Op = IbOpcode;
  switch (static_cast<Op>(bth.opcode)) {  // include only UC operations
    case Op::UC_SEND_FIRST: case Op::UC_SEND_MIDDLE: case Op::UC_SEND_LAST: case Op::UC_SEND_ONLY:
    case Op::UC_RDMA_WRITE_MIDDLE: case Op::UC_RDMA_WRITE_LAST:
      break;  // parse_ib_payload
    case Op::UC_SEND_LAST_IMMEDIATE: case Op::UC_SEND_ONLY_IMMEDIATE: case Op::UC_RDMA_WRITE_LAST_IMMEDIATE:
      immediate = true;  // parse_ib_immediate (parsers.p4:160)
      break;
    case Op::UC_RDMA_WRITE_FIRST: case Op::UC_RDMA_WRITE_ONLY:
      reth = true;  // parse_ib_reth (parsers.p4:165)
      break;
    case Op::UC_RDMA_WRITE_ONLY_IMMEDIATE:
      reth = immediate = true;  // parse_ib_reth_immediate (parsers.p4:170)
      break;
    default:
      return ParseResult::kRegular;  // accept_regular
  }
  if (len < at + (reth ? kIbRethHBytes : 0) + (immediate ? kIbImmediateHBytes : 0) + 2 * kDataHBytes)
    return ParseResult::kTruncated;
  if (reth) {
    hdr.ib_reth.valid = true;
    hdr.ib_reth.addr = LoadBe64(b + at);
    hdr.ib_reth.r_key = LoadBe32(b + at + 8);
    hdr.ib_reth.len = LoadBe32(b + at + 12);
    at += kIbRethHBytes;
  }
  if (immediate) {
    hdr.ib_immediate.valid = true;
    hdr.ib_immediate.immediate = LoadBe32(b + at);
    at += kIbImmediateHBytes;
  }
  // parse_ib_payload: d0, d1; CONSUME0. (ether_type_msb = 0xffff only
  // shapes the bridged header's bytes, which the model keeps as a struct.)
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:176
  ExtractData(b + at, hdr.d0);
  ExtractData(b + at + kDataHBytes, hdr.d1);
  at += 2 * kDataHBytes;
  ig_md.switchml_md.valid = true;
  ig_md.switchml_md.packet_type = PacketType::CONSUME0;
  payload.Assign(b + at, len - at);
  return ParseResult::kSwitchml;
}

// IngressParser for a packet from a front-panel port (parse_ethernet ...
// parse_values). Fills hdr, ig_md and the unparsed payload.
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:23
ParseResult IngressParser(const uint8_t* b, size_t len, header_t& hdr, ingress_metadata_t& ig_md,
                          PayloadBuffer& payload) {
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:90
  if (len < kEthernetHBytes) return ParseResult::kTruncated;
  hdr.ethernet.valid = true;
  std::memcpy(hdr.ethernet.dst_addr.data(), b, 6);
  std::memcpy(hdr.ethernet.src_addr.data(), b + 6, 6);
  hdr.ethernet.ether_type = LoadBe16(b + 12);
  if (hdr.ethernet.ether_type != kEtherTypeIpv4) return ParseResult::kRegular;  // ARP: not modeled
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:112
  if (len < kEthernetHBytes + kIpv4HBytes) return ParseResult::kTruncated;
  const uint8_t* ip = b + kEthernetHBytes;
  ipv4_h& v4 = hdr.ipv4;
  v4.valid = true;
  v4.version = ip[0] >> 4;
  v4.ihl = ip[0] & 0xf;
  v4.diffserv = ip[1];
  v4.total_len = LoadBe16(ip + 2);
  v4.identification = LoadBe16(ip + 4);
  v4.flags = ip[6] >> 5;
  v4.frag_offset = LoadBe16(ip + 6) & 0x1fff;
  v4.ttl = ip[8];
  v4.protocol = ip[9];
  v4.hdr_checksum = LoadBe16(ip + 10);
  v4.src_addr = LoadBe32(ip + 12);
  v4.dst_addr = LoadBe32(ip + 16);
  // The parser computes checksum_err_ipv4 but no table reads it.
  ig_md.checksum_err_ipv4 = Ipv4HeaderChecksum(ip, kIpv4HBytes) != 0;
  ig_md.update_ipv4_checksum = false;
  if (!(v4.ihl == 5 && v4.frag_offset == 0 && v4.protocol == kIpProtoUdp)) return ParseResult::kRegular;
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:131
  const size_t udp_at = kEthernetHBytes + kIpv4HBytes;
  if (len < udp_at + kUdpHBytes) return ParseResult::kTruncated;
  hdr.udp.valid = true;
  hdr.udp.src_port = LoadBe16(b + udp_at);
  hdr.udp.dst_port = LoadBe16(b + udp_at + 2);
  hdr.udp.length = LoadBe16(b + udp_at + 4);
  hdr.udp.checksum = LoadBe16(b + udp_at + 6);
  if (hdr.udp.dst_port == kUdpPortRocev2) return ParseIb(b, len, udp_at + kUdpHBytes, hdr, ig_md, payload);
  if ((hdr.udp.dst_port & kUdpPortSwitchmlMask) != (kUdpPortSwitchmlBase & kUdpPortSwitchmlMask)) {
    return ParseResult::kRegular;
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:187
  const size_t sml_at = udp_at + kUdpHBytes;
  const size_t data_at = sml_at + kSwitchmlHBytes + kExponentsHBytes;
  if (len < data_at + 2 * kDataHBytes) return ParseResult::kTruncated;
  switchml_h& s = hdr.switchml;
  s.valid = true;
  s.msg_type = b[sml_at] >> 4;
  s.unused = (b[sml_at] >> 3) & 1;
  s.size = b[sml_at] & 0x7;
  s.job_number = b[sml_at + 1];
  s.tsi = LoadBe32(b + sml_at + 2);
  s.pool_index = LoadBe16(b + sml_at + 6);
  hdr.exponents.valid = true;
  hdr.exponents.e0 = static_cast<int8_t>(b[sml_at + 8]);
  hdr.exponents.e1 = static_cast<int8_t>(b[sml_at + 9]);
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:193
  ExtractData(b + data_at, hdr.d0);
  ExtractData(b + data_at + kDataHBytes, hdr.d1);
  ig_md.switchml_md.valid = true;
  ig_md.switchml_md.packet_type = PacketType::CONSUME0;
  payload.Assign(b + data_at + 2 * kDataHBytes, len - (data_at + 2 * kDataHBytes));
  return ParseResult::kSwitchml;
}

// Ingress deparser + parse_recirculate: the valid data headers go back in front
// of the payload, then the next pass extracts (consume) or just validates
// (harvest) d0/d1. False when a consume pass runs out of bytes.
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:61
bool Recirculate(header_t& hdr, const ingress_metadata_t& ig_md, PayloadBuffer& payload) {
  EmitData(hdr, payload);
  // The next pass starts from an empty header stack (same as hdr = header_t{},
  // header by header: the data headers are either extracted whole or zeroed
  // below, so they are not zeroed twice).
  hdr.ethernet = {};
  hdr.ipv4 = {};
  hdr.udp = {};
  hdr.switchml = {};
  hdr.exponents = {};
  // (The RoCE headers were invalidated by receive_roce and no pass reads them again.)
  const PacketType t = ig_md.switchml_md.packet_type;
  if (t == PacketType::CONSUME0 || t == PacketType::CONSUME1 || t == PacketType::CONSUME2 ||
      t == PacketType::CONSUME3) {
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:76
    const uint8_t* data = payload.Pull(2 * kDataHBytes);
    if (data == nullptr) {
      ClearData(hdr.d0);
      ClearData(hdr.d1);
      return false;
    }
    ExtractData(data, hdr.d0);  // sets valid and all 32 words
    ExtractData(data + kDataHBytes, hdr.d1);
  } else {
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:83
    ClearData(hdr.d0);
    ClearData(hdr.d1);
    hdr.d0.valid = true;  // contents filled by the pass (modeled as zero)
    hdr.d1.valid = true;
  }
  return true;
}

// Ipv4HeaderChecksum of the deparsed ipv4_h (checksum field 0), summed from the
// fields: reading back the bytes just stored byte by byte stalls store
// forwarding, which cost a third of Egress.
uint16_t Ipv4ChecksumOfFields(const ipv4_h& v4) {
  uint32_t sum = uint32_t((v4.version & 0xf) << 12 | (v4.ihl & 0xf) << 8 | v4.diffserv) + v4.total_len +
                 v4.identification + uint32_t((v4.flags & 0x7) << 13 | (v4.frag_offset & 0x1fff)) +
                 uint32_t(v4.ttl << 8 | v4.protocol) + (v4.src_addr >> 16) + (v4.src_addr & 0xffff) +
                 (v4.dst_addr >> 16) + (v4.dst_addr & 0xffff);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// The RoCE headers rdma_sender built: BTH, then RETH and immediate if valid.
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/headers.p4:82
__attribute__((noinline)) void EmitIbHeaders(const header_t& hdr, uint8_t* p) {  // (out of line: as ParseIb)
  const ib_bth_h& bth = hdr.ib_bth;
  p[0] = bth.opcode;
  p[1] = static_cast<uint8_t>((bth.se & 1) << 7 | (bth.migration_req & 1) << 6 | (bth.pad_count & 3) << 4 |
                              (bth.transport_version & 0xf));
  StoreBe16(p + 2, bth.partition_key);
  StoreBe32(p + 4, (uint32_t{bth.f_res1} & 1) << 31 | (uint32_t{bth.b_res1} & 1) << 30 |
                       (uint32_t{bth.reserved} & 0x3f) << 24 | (bth.dst_qp & 0xffffff));
  StoreBe32(p + 8, (uint32_t{bth.ack_req} & 1) << 31 | (uint32_t{bth.reserved2} & 0x7f) << 24 | (bth.psn & 0xffffff));
  p += kIbBthHBytes;
  if (hdr.ib_reth.valid) {
    StoreBe64(p, hdr.ib_reth.addr);
    StoreBe32(p + 8, hdr.ib_reth.r_key);
    StoreBe32(p + 12, hdr.ib_reth.len);
    p += kIbRethHBytes;
  }
  if (hdr.ib_immediate.valid) StoreBe32(p, hdr.ib_immediate.immediate);
}

// EgressDeparser: the header stack the egress built, then the payload (every
// ingress header is payload to the egress parser), IPv4 checksum updated.
// `p` is the output frame, whose payload is already in place behind the
// EgressHeaderBytes written here (it is the same for every copy of a packet).
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:268
__attribute__((always_inline)) inline void EgressDeparser(const header_t& hdr, uint8_t* p) {
  std::memcpy(p, hdr.ethernet.dst_addr.data(), 6);
  std::memcpy(p + 6, hdr.ethernet.src_addr.data(), 6);
  StoreBe16(p + 12, hdr.ethernet.ether_type);
  uint8_t* ip = p + kEthernetHBytes;
  const ipv4_h& v4 = hdr.ipv4;
  ip[0] = static_cast<uint8_t>(v4.version << 4 | (v4.ihl & 0xf));
  ip[1] = v4.diffserv;
  StoreBe16(ip + 2, v4.total_len);
  StoreBe16(ip + 4, v4.identification);
  StoreBe16(ip + 6, static_cast<uint16_t>((v4.flags & 0x7) << 13 | (v4.frag_offset & 0x1fff)));
  ip[8] = v4.ttl;
  ip[9] = v4.protocol;
  StoreBe32(ip + 12, v4.src_addr);
  StoreBe32(ip + 16, v4.dst_addr);
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:277
  StoreBe16(ip + 10, Ipv4ChecksumOfFields(v4));
  uint8_t* u = ip + kIpv4HBytes;
  StoreBe16(u, hdr.udp.src_port);
  StoreBe16(u + 2, hdr.udp.dst_port);
  StoreBe16(u + 4, hdr.udp.length);
  StoreBe16(u + 6, hdr.udp.checksum);
  uint8_t* s = u + kUdpHBytes;
  if (hdr.ib_bth.valid) return EmitIbHeaders(hdr, s);
  s[0] = static_cast<uint8_t>((hdr.switchml.msg_type & 0xf) << 4 | (hdr.switchml.unused & 1) << 3 |
                              (hdr.switchml.size & 0x7));
  s[1] = hdr.switchml.job_number;
  StoreBe32(s + 2, hdr.switchml.tsi);
  StoreBe16(s + 6, hdr.switchml.pool_index);
  s[8] = static_cast<uint8_t>(hdr.exponents.e0);
  s[9] = static_cast<uint8_t>(hdr.exponents.e1);
}

}  // namespace

bool ParseSwitchmlHeaders(const uint8_t* b, size_t len, header_t& hdr) {
  ingress_metadata_t ig_md;
  PayloadBuffer payload;
  hdr = header_t{};
  return IngressParser(b, len, hdr, ig_md, payload) == ParseResult::kSwitchml;
}

// ---------------------------------------------------------------------------
// PayloadBuffer
// ---------------------------------------------------------------------------

namespace {
// Room for every push a packet can make without moving: each of at most
// kMaxPasses recirculations puts back at most two data headers, then the
// egress headers.
constexpr size_t kHeadroom = SwitchMLDataplane::kMaxPasses * 2 * kDataHBytes + 64;
}  // namespace

void PayloadBuffer::Assign(const uint8_t* p, size_t n) {
  if (buf_.size() < kHeadroom) buf_.resize(kHeadroom);
  begin_ = end_ = kHeadroom;
  tail_ = p;
  tail_size_ = n;
}

uint8_t* PayloadBuffer::Flatten() {
  if (tail_size_ != 0) {
    if (buf_.size() < end_ + tail_size_) buf_.resize(end_ + tail_size_);
    std::memcpy(buf_.data() + end_, tail_, tail_size_);
    end_ += tail_size_;
    tail_size_ = 0;
  }
  return buf_.data() + begin_;
}

void PayloadBuffer::Grow(size_t n) {
  std::vector<uint8_t> bigger(kHeadroom + n + buf_.size());
  const size_t at = kHeadroom + n;
  std::memcpy(bigger.data() + at, buf_.data() + begin_, end_ - begin_);
  end_ = at + (end_ - begin_);
  begin_ = at;
  buf_.swap(bigger);
}

// ---------------------------------------------------------------------------
// UDPReceiver
// ---------------------------------------------------------------------------

UDPReceiver::UDPReceiver(const SwitchMLConfig& c) {
  // One entry per worker, as the controller's add_udp_worker installs it;
  // none for an RDMA job (add_rdma_worker installs receive_roce's instead,
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/switchml.py:400-480).
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/udp_receiver.py:79
  if (c.transport != SwitchMLTransport::kUdp) return;
  for (const auto& w : c.workers) {
    entries_.push_back(Entry{w.mac, c.switch_mac, w.ip, c.switch_ip, Ternary{c.udp_port, c.udp_mask},
                             c.multicast_group, WorkerType::SWITCHML_UDP, w.worker_id, c.num_workers,
                             uint32_t{1} << w.worker_id});
  }
  receive_counter_.resize(entries_.size());
}

void UDPReceiver::set_bitmap(header_t& hdr, ingress_metadata_t& ig_md, const Entry& e) {
  auto& md = ig_md.switchml_md;
  ig_md.worker_bitmap = e.worker_bitmap;
  md.num_workers = e.num_workers;
  md.mgid = e.mgid;
  md.packet_size = static_cast<PacketSize>(hdr.switchml.size & 0x7);
  md.worker_type = e.worker_type;
  md.worker_id = e.worker_id;
  md.dst_port = hdr.udp.src_port;
  md.src_port = hdr.udp.dst_port;
  md.tsi = hdr.switchml.tsi;
  md.job_number = hdr.switchml.job_number;
  // Set bit (pool_index[15]) moves to the LSB; pool_index[14] is lost.
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_receiver.p4:76
  md.pool_index = static_cast<uint16_t>((hdr.switchml.pool_index & 0x3fff) << 1 | (hdr.switchml.pool_index >> 15));
  md.first_packet = true;
  md.last_packet = true;
  md.e0 = hdr.exponents.e0;
  md.e1 = hdr.exponents.e1;
  hdr.ethernet.valid = false;
  hdr.ipv4.valid = false;
  hdr.udp.valid = false;
  hdr.switchml.valid = false;
  hdr.exponents.valid = false;
}

bool UDPReceiver::apply(header_t& hdr, ingress_metadata_t& ig_md, uint32_t frame_bytes) {
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    // All fields exact (udp port ternary); the IPv4 source, which tells the
    // workers apart, is compared first.
    if (hdr.ipv4.src_addr == e.ip_src && hdr.ipv4.dst_addr == e.ip_dst && e.udp_dst_port.Match(hdr.udp.dst_port) &&
        SameMac(hdr.ethernet.src_addr, e.eth_src) && SameMac(hdr.ethernet.dst_addr, e.eth_dst)) {
      ++receive_counter_[i].packets;
      receive_counter_[i].bytes += frame_bytes;
      set_bitmap(hdr, ig_md, e);
      return true;
    }
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_receiver.p4:43
  ig_md.switchml_md.packet_type = PacketType::IGNORE;  // forward()
  ++default_counter_.packets;
  default_counter_.bytes += frame_bytes;
  return false;
}

// ---------------------------------------------------------------------------
// UDPSender
// ---------------------------------------------------------------------------

UDPSender::UDPSender(const SwitchMLConfig& c) : switch_mac_(c.switch_mac), switch_ip_(c.switch_ip) {
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/udp_sender.py:90
  for (const auto& w : c.workers) {
    if (w.worker_id >= dst_addr_.size()) {
      dst_addr_.resize(w.worker_id + 1u);
      dst_addr_valid_.resize(w.worker_id + 1u, 0);
    }
    dst_addr_[w.worker_id] = DstAddr{w.mac, w.ip};
    dst_addr_valid_[w.worker_id] = 1;
  }
  send_counter_.resize(dst_addr_.size());
}

std::map<uint16_t, UDPReceiver::DirectCounter> UDPSender::send_counter() const {
  std::map<uint16_t, UDPReceiver::DirectCounter> out;
  for (size_t id = 0; id < send_counter_.size(); ++id)
    if (send_counter_[id].packets != 0) out[static_cast<uint16_t>(id)] = send_counter_[id];
  return out;
}

bool UDPSender::apply(const switchml_md_h& eg_md, header_t& hdr) {
  hdr.ethernet.valid = hdr.ipv4.valid = hdr.udp.valid = hdr.switchml.valid = true;
  hdr.switchml.pool_index = 0;
  // UDP_LENGTH and IPV4_LENGTH without the payload.
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_sender.p4:20
  constexpr uint16_t kUdpLength = kUdpHBytes + kSwitchmlHBytes + kExponentsHBytes;
  constexpr uint16_t kIpv4Length = kIpv4HBytes + kUdpLength;

  // Table switch_mac_and_ip (default action only).
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_sender.p4:67
  {
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_sender.p4:31
    hdr.ethernet.src_addr = switch_mac_;
    hdr.ipv4.src_addr = switch_ip_;
    hdr.udp.src_port = eg_md.src_port;
    hdr.ethernet.ether_type = kEtherTypeIpv4;
    hdr.ipv4.version = 4;
    hdr.ipv4.ihl = 5;
    hdr.ipv4.diffserv = 0;
    hdr.ipv4.total_len = kIpv4Length;
    hdr.ipv4.identification = 0;
    hdr.ipv4.flags = 0;
    hdr.ipv4.frag_offset = 0;
    hdr.ipv4.ttl = 64;
    hdr.ipv4.protocol = kIpProtoUdp;
    hdr.ipv4.hdr_checksum = 0;
    hdr.udp.length = kUdpLength;
    hdr.switchml.msg_type = 1;
    hdr.switchml.unused = 0;
    hdr.switchml.size = static_cast<uint8_t>(eg_md.packet_size);
    hdr.switchml.job_number = eg_md.job_number;
    hdr.switchml.tsi = eg_md.tsi;
    hdr.switchml.pool_index = static_cast<uint16_t>((hdr.switchml.pool_index & ~0x3fff) | (eg_md.pool_index >> 1 & 0x3fff));
  }
  // Table dst_addr, keyed by worker_id (the PRE's rid for broadcasts).
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_sender.p4:100
  if (eg_md.worker_id >= dst_addr_.size() || !dst_addr_valid_[eg_md.worker_id]) return false;
  {
    const DstAddr& a = dst_addr_[eg_md.worker_id];
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_sender.p4:72
    hdr.ethernet.dst_addr = a.eth_dst_addr;
    hdr.ipv4.dst_addr = a.ip_dst_addr;
    hdr.udp.dst_port = eg_md.dst_port;
    hdr.udp.checksum = 0;
    hdr.switchml.pool_index = static_cast<uint16_t>((hdr.switchml.pool_index & 0x7fff) | (eg_md.pool_index & 1) << 15);
    hdr.exponents.valid = true;
    hdr.exponents.e0 = eg_md.e0;
    hdr.exponents.e1 = eg_md.e1;
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_sender.p4:122
  if (eg_md.packet_size == PacketSize::IBV_MTU_256) {
    hdr.ipv4.total_len = static_cast<uint16_t>(hdr.ipv4.total_len + 256);
    hdr.udp.length = static_cast<uint16_t>(hdr.udp.length + 256);
  } else if (eg_md.packet_size == PacketSize::IBV_MTU_1024) {
    hdr.ipv4.total_len = static_cast<uint16_t>(hdr.ipv4.total_len + 1024);
    hdr.udp.length = static_cast<uint16_t>(hdr.udp.length + 1024);
  }
  return true;
}

// ---------------------------------------------------------------------------
// Drop simulators
// ---------------------------------------------------------------------------

void IngressDropSimulator::apply(port_metadata_t& port_metadata) {
  if (port_metadata.ingress_drop_probability != 0) {
    const auto r = static_cast<uint16_t>(rng_());
    port_metadata.ingress_drop_probability = SatAdd16(r, port_metadata.ingress_drop_probability);
  }
}

void EgressDropSimulator::apply(port_metadata_t& port_metadata, uint32_t qp_index, bool& simulate_egress_drop) {
  if (port_metadata.egress_drop_probability != 0) {
    const auto r = static_cast<uint16_t>(rng_());
    port_metadata.egress_drop_probability = SatAdd16(r, port_metadata.egress_drop_probability);
  }
  simulate_egress_drop = port_metadata.egress_drop_probability == 0xffff;
  if (port_metadata.ingress_drop_probability == 0xffff || port_metadata.egress_drop_probability == 0xffff) {
    ++simulated_drop_packet_counter;
    ++simulated_drop_packet_counter_by_qp[qp_index];
  }
}

// ---------------------------------------------------------------------------
// SwitchMLDataplane
// ---------------------------------------------------------------------------

namespace {

/// forward's entries: the config's, else each worker's MAC -> its port.
std::vector<std::pair<mac_addr_t, uint16_t>> ForwardEntries(const SwitchMLConfig& c) {
  if (!c.forward.empty()) return c.forward;
  std::vector<std::pair<mac_addr_t, uint16_t>> out;
  for (const auto& w : c.workers) out.emplace_back(w.mac, w.port);
  return out;
}

/// The flood group's ports: the config's, else the workers'.
std::vector<uint16_t> FloodPorts(const SwitchMLConfig& c) {
  if (!c.flood_ports.empty()) return c.flood_ports;
  std::vector<uint16_t> out;
  for (const auto& w : c.workers) out.push_back(w.port);
  return out;
}

}  // namespace

SwitchMLDataplane::SwitchMLDataplane(SwitchMLConfig config)
    : config_((config.Validate(), std::move(config))),
      udp_receiver_(config_),
      udp_sender_(config_),
      rdma_receiver_(config_),
      rdma_sender_(config_),
      next_step_selector_(config_.folded_pipe, config_.harvest3_port),
      ingress_drop_sim_(config_.drop_seed),
      egress_drop_sim_(config_.drop_seed ^ 0x9e3779b97f4a7c15ULL),
      responder_(config_.switch_mac, config_.switch_ip),
      forwarder_(ForwardEntries(config_)),
      flood_ports_(FloodPorts(config_)) {
  worker_port_metadata_.ingress_drop_probability = DropValue(config_.ingress_drop_probability);
  worker_port_metadata_.egress_drop_probability = DropValue(config_.egress_drop_probability);
  McGroup group{config_.multicast_group, {}};
  for (const auto& w : config_.workers) group.nodes.emplace_back(w.worker_id, w.port);
  pre_.push_back(std::move(group));
  sim_port_of_dev_.fill(-1);
  for (size_t i = 0; i < config_.workers.size(); ++i) {
    const uint16_t sim = config_.workers[i].port;
    const uint16_t dev = config_.DevPortOf(i);
    if (sim >= dev_port_of_sim_.size()) dev_port_of_sim_.resize(sim + 1u, -1);
    dev_port_of_sim_[sim] = static_cast<int16_t>(dev);
    sim_port_of_dev_[dev] = sim;
  }
}

void SwitchMLDataplane::ForwardRegular(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds latency,
                                       Emitter& out) {
  ++stats_.forwarded;
  if (config_.forwarding == SwitchMLForwarding::kL2) {
    ForwardL2(ingress_port, frame, latency, out);
    return;
  }
  out.EmitRouted(frame, latency);
}

void SwitchMLDataplane::ForwardL2(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds latency,
                                  Emitter& out) {
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:184-190: the
  // responder, then the forwarder; bypass_egress, so the copies leave as the
  // ingress deparser emits them (the bridged headers invalid).
  l2_frame_.assign(frame.begin(), frame.end());
  const RegularHeaders h = ParseRegular(l2_frame_.data(), l2_frame_.size());
  if (h.truncated) {
    ++stats_.malformed_dropped;
    return;
  }
  L2Decision d;
  const int reply = responder_.apply(l2_frame_.data(), h, ingress_port, d);
  stats_.arp_replies += reply == 1;
  stats_.icmp_replies += reply == 2;
  forwarder_.apply(l2_frame_.data(), d);
  const inasim::Span<const uint8_t> bytes(l2_frame_.data(), l2_frame_.size());
  if (d.unicast) {
    ++stats_.l2_unicast;
    out.Emit(bytes, d.port, latency);
  }
  if (d.flood) {
    // level1_exclusion_id = 0x8000 + ingress port: that port's node is pruned.
    flood_copy_ports_.clear();
    for (uint16_t p : flood_ports_)
      if (p != ingress_port) flood_copy_ports_.push_back(p);
    ++stats_.l2_flooded;
    out.EmitMulticast(bytes, flood_copy_ports_, latency);
  }
}

bool SwitchMLDataplane::Claims(const FrameView& f) const {
  // forwarding "l2": the program parses every frame (its forwarder switches
  // what is not SwitchML).
  if (config_.forwarding == SwitchMLForwarding::kL2) return true;
  // parse_ipv4 (ihl 5, UDP) then parse_udp's SwitchML port range. A fragment
  // (frag_offset != 0) is claimed here and forwarded by Process().
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:135
  // RoCEv2 frames are claimed only when the job's workers use RDMA: the
  // program parses every one, but forwards those receive_roce misses, as
  // the fabric does for frames no program claims (README).
  return f.ipv4 && f.ip_header_bytes == kIpv4HBytes && f.protocol == kIpProtoUdp && f.l4 &&
         ((f.dst_port & kUdpPortSwitchmlMask) == (kUdpPortSwitchmlBase & kUdpPortSwitchmlMask) ||
          (f.dst_port == kUdpPortRocev2 && config_.transport == SwitchMLTransport::kRdma));
}

void SwitchMLDataplane::Ingress(int pipe_index, uint16_t tofino_port, uint32_t frame_bytes,
                                header_t& hdr, ingress_metadata_t& ig_md, IngressResult& r) {
  auto& md = ig_md.switchml_md;
  if (!pipes_[pipe_index]) pipes_[pipe_index] = std::make_unique<Pipe>();
  Pipe& pipe = *pipes_[pipe_index];
  bool drop_ctl = false;
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:101
  if (md.packet_type == PacketType::CONSUME0) {
    if (hdr.ib_bth.valid) {
      drop_ctl = rdma_receiver_.apply(hdr, ig_md, frame_bytes).drop;
    } else {
      udp_receiver_.apply(hdr, ig_md, frame_bytes);
    }
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:110
    ingress_drop_sim_.apply(ig_md.port_metadata);
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:113
    // QP_INDEX (rdma_receiver.p4:30) of the parsed BTH: rdma_receiver has
    // set it invalid by now, but its fields keep their values (a Tofino
    // setInvalid clears the validity bit only); 0 for a UDP packet, which
    // has no BTH (what the P4 reads there is unspecified).
    egress_drop_sim_.apply(ig_md.port_metadata, roce_parsed_ ? QpIndex(hdr.ib_bth.dst_qp) : 0, md.simulate_egress_drop);
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:116: the 9-bit
    // device port (a retransmit goes back to it, mapped to its simulator port).
    md.ingress_port = tofino_port;
  } else if (md.packet_type == PacketType::CONSUME1 || md.packet_type == PacketType::CONSUME2 ||
             md.packet_type == PacketType::CONSUME3) {
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:120
    ReconstructWorkerBitmap::apply(ig_md);
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:124
  if (drop_ctl) {  // rdma_receiver: PSN out of sequence
    r.kind = IngressResult::Kind::kSequenceDrop;
    return;
  }
  if (IsConsume(md.packet_type)) {
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:130
    drop_ctl = pipe.update_and_check_worker_bitmap.apply(ig_md);
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:133
    pipe.workers_counter.apply(ig_md);
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:137
  if (static_cast<uint8_t>(md.packet_type) >= static_cast<uint8_t>(PacketType::CONSUME0)) {
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:141
    if (md.last_packet) pipe.exponents.apply(md.e0, md.e1, md.e0, md.e1, ig_md);
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:149
    const Processor::Action sum = Processor::Lookup(md);
    if (sum != Processor::Action::NoAction) Processor::apply_all(sum, pipe.values.At(md.pool_index), hdr.d0, hdr.d1);
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:183
    r.kind = IngressResult::Kind::kNextStep;
    r.decision = next_step_selector_.apply(hdr, ig_md, tofino_port);
    return;
  }
  // Regular traffic (receive_udp miss): forwarder. A simulated ingress drop
  // also lands here with drop_ctl set; see README.
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:189
  r.kind = drop_ctl ? IngressResult::Kind::kDrop : IngressResult::Kind::kForward;
}

bool SwitchMLDataplane::Egress(const switchml_md_h& eg_md, const switchml_rdma_md_h& rdma_md, uint8_t* frame,
                               size_t frame_bytes) {
  // The egress parser extracts only the bridged metadata: the headers egress
  // uses start invalid and zero. (A reused stack with those reset rather than
  // a fresh header_t per copy: zeroing its two unused data headers cost more
  // than the rest of Egress.)
  header_t& hdr = egress_hdr_;
  hdr.ethernet = {};
  hdr.ipv4 = {};
  hdr.udp = {};
  hdr.switchml = {};
  hdr.exponents = {};
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:222
  if (eg_md.worker_type == WorkerType::ROCEv2) {
    hdr.ib_bth = {};
    hdr.ib_reth = {};
    hdr.ib_immediate = {};
    if (!rdma_sender_.apply(eg_md, rdma_md, hdr)) {
      ++stats_.sender_misses;
      return false;
    }
    EgressDeparser(hdr, frame);
    rdma_sender_.CountSend(eg_md.worker_id, frame_bytes);
    return true;
  }
  hdr.ib_bth.valid = false;  // the deparser emits RoCE headers only when valid
  if (!udp_sender_.apply(eg_md, hdr)) {
    ++stats_.sender_misses;
    return false;
  }
  EgressDeparser(hdr, frame);
  udp_sender_.CountSend(eg_md.worker_id, frame_bytes);
  return true;
}

// The steps of Process(), inlined into it: one call per packet, as when they
// were one function (measured: out of line they cost ~47 instructions per
// packet, 3 %, in bench/p4model_bench).
#define INASIM_PACKET_STEP __attribute__((always_inline)) inline

INASIM_PACKET_STEP bool SwitchMLDataplane::IngressPasses(uint16_t ingress_port, inasim::Span<const uint8_t> frame,
                                                         ingress_metadata_t& ig_md,
                                                         NextStepSelector::Decision& decision, Emitter& out) {
  // A worker's device port (Validate keeps them on pipe 0, off 64 and 68).
  uint16_t tofino_port = DevPort(ingress_port);
  for (uint32_t passes = 1;; ++passes) {
    last_passes_ = passes;
    if (passes > kMaxPasses) {
      ++stats_.recirculation_limit;
      return false;
    }
    const int pipe = (tofino_port >> 7) & 0x3;
    IngressResult r;
    Ingress(pipe, tofino_port, static_cast<uint32_t>(frame.size()), hdr_, ig_md, r);
    if (r.kind == IngressResult::Kind::kForward) {
      ForwardRegular(ingress_port, frame, passes * config_.pass_latency_ps, out);
      return false;
    }
    if (r.kind == IngressResult::Kind::kDrop) {
      ++stats_.simulated_ingress_drops;
      return false;
    }
    if (r.kind == IngressResult::Kind::kSequenceDrop) {
      ++stats_.rdma_sequence_drops;
      return false;
    }
    decision = r.decision;
    if (decision.kind != NextStepSelector::Decision::Kind::kRecirculate) return true;
    // Recirculation: deparse, re-enter on the recirculation port's pipe.
    tofino_port = decision.port;
    ig_md.port_metadata = port_metadata_t{};  // recirculation ports: no drop simulation
    if (!Recirculate(hdr_, ig_md, payload_)) {
      ++stats_.malformed_dropped;
      return false;
    }
  }
}

INASIM_PACKET_STEP void SwitchMLDataplane::TrafficManager(const NextStepSelector::Decision& decision,
                                                          Picoseconds latency, const ingress_metadata_t& ig_md,
                                                          Emitter& out) {
  using Kind = NextStepSelector::Decision::Kind;
  if (decision.kind == Kind::kDrop) {
    if (ig_md.switchml_md.packet_type == PacketType::IGNORE) ++stats_.dropped;
    else ++stats_.consumed;
    return;
  }
  if (decision.kind == Kind::kRecirculate) return;  // unreachable: IngressPasses recirculates
  const bool bcast = decision.kind == Kind::kMulticast;
  if (bcast) ++stats_.broadcasts;
  else ++stats_.retransmits;
  // The ingress deparser's output: data headers still valid, then the rest.
  EmitData(hdr_, payload_);
  // Every copy is the egress headers in front of that same payload: it is
  // placed once, and each copy rewrites only the headers (the emitter sees
  // the frame during its Emit() call only).
  payload_.Push(EgressHeaderBytes(ig_md.switchml_md));
  uint8_t* frame = payload_.Flatten();
  const size_t frame_bytes = payload_.size();
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:211
  if (ig_md.switchml_md.simulate_egress_drop) {
    ++stats_.simulated_egress_drops;
    EgressOfDroppedCopies(decision, ig_md, frame, frame_bytes);
    return;
  }
  if (bcast) {
    Replicate(decision.mgid, ig_md.switchml_md, ig_md.switchml_rdma_md, frame, frame_bytes, latency, out);
    return;
  }
  if (!Egress(ig_md.switchml_md, ig_md.switchml_rdma_md, frame, frame_bytes)) return;
  ++stats_.copies_sent;
  out.Emit(inasim::Span<const uint8_t>(frame, frame_bytes), SimPort(decision.port), latency);
}

void SwitchMLDataplane::EgressOfDroppedCopies(const NextStepSelector::Decision& decision, const ingress_metadata_t& ig_md,
                                              uint8_t* frame, size_t frame_bytes) {
  // Upstream's Egress marks the copy IGNORE and dropped, then still applies
  // the sender (switchml.p4:209-226): its direct counter counts the copy and
  // the RoCE sender's PSN moves on, as for a copy lost on the wire. Being
  // IGNORE, a broadcast copy does not take its rid as worker_id, so every
  // copy goes through the sender as the completing worker's.
  switchml_md_h eg_md = ig_md.switchml_md;
  eg_md.packet_type = PacketType::IGNORE;
  size_t copies = 1;
  if (decision.kind == NextStepSelector::Decision::Kind::kMulticast) {
    const McGroup* g = Group(decision.mgid);
    copies = g ? g->nodes.size() : 0;
  }
  for (size_t i = 0; i < copies; ++i) Egress(eg_md, ig_md.switchml_rdma_md, frame, frame_bytes);
}

INASIM_PACKET_STEP void SwitchMLDataplane::Replicate(uint16_t mgid, switchml_md_h eg_md,
                                                     const switchml_rdma_md_h& rdma_md, uint8_t* frame,
                                                     size_t frame_bytes, Picoseconds latency, Emitter& out) {
  // PRE: one copy per node of the group, in node order; egress sets worker_id
  // from the copy's rid. Copies differ (addresses), so each is its own Emit().
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:218
  const McGroup* g = Group(mgid);
  if (!g) return;
  const inasim::Span<const uint8_t> bytes(frame, frame_bytes);
  for (const auto& [rid, port] : g->nodes) {
    eg_md.worker_id = rid;
    if (!Egress(eg_md, rdma_md, frame, frame_bytes)) continue;
    ++stats_.copies_sent;
    out.Emit(bytes, port, latency);
  }
}

void SwitchMLDataplane::Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds now,
                                Emitter& out) {
  (void)now;
  ++stats_.processed;
  last_passes_ = 1;
  // The packet's header stack starts empty: a reused member cleared header by
  // header (the same as a fresh header_t, whose `rep stos` zeroing was a
  // quarter of Process()). The payload scratch is a member too: no allocation
  // per packet once warmed up.
  ClearHeaders(hdr_, roce_parsed_);
  ingress_metadata_t ig_md;
  const ParseResult parsed = IngressParser(frame.data(), frame.size(), hdr_, ig_md, payload_);
  roce_parsed_ = hdr_.ib_bth.valid;
  if (parsed == ParseResult::kTruncated) {
    ++stats_.malformed_dropped;
    return;
  }
  if (parsed == ParseResult::kRegular) {
    // accept_regular: packet_type IGNORE -> forwarder.
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:204
    ForwardRegular(ingress_port, frame, config_.pass_latency_ps, out);
    return;
  }
  ig_md.port_metadata = worker_port_metadata_;  // port_metadata_unpack (parsers.p4:48)
  NextStepSelector::Decision decision;
  if (!IngressPasses(ingress_port, frame, ig_md, decision, out)) return;
  TrafficManager(decision, last_passes_ * config_.pass_latency_ps, ig_md, out);
}

worker_bitmap_pair_t SwitchMLDataplane::WorkerBitmap(int pipe, uint32_t slot) const {
  if (pipe < 0 || pipe >= kNumPipes || !pipes_[pipe]) return {};
  return pipes_[pipe]->update_and_check_worker_bitmap.worker_bitmap.Peek(slot);
}
num_workers_pair_t SwitchMLDataplane::WorkersCount(int pipe, uint32_t pool_index) const {
  if (pipe < 0 || pipe >= kNumPipes || !pipes_[pipe]) return {};
  return pipes_[pipe]->workers_counter.workers_count.Peek(pool_index);
}
exponent_pair_t SwitchMLDataplane::Exponent(int pipe, uint32_t pool_index) const {
  if (pipe < 0 || pipe >= kNumPipes || !pipes_[pipe]) return {};
  return pipes_[pipe]->exponents.exponents.Peek(pool_index);
}
value_pair_t SwitchMLDataplane::Value(int pipe, int processor, uint32_t pool_index) const {
  if (pipe < 0 || pipe >= kNumPipes || !pipes_[pipe] || processor < 0 || processor >= kNumProcessors) return {};
  return pipes_[pipe]->values.Peek(pool_index).Get(processor);
}

namespace {
/// {"index": [first, second]} for every cell of a paired register ever written.
template <typename R>
nlohmann::json TouchedPairs(const R& reg) {
  nlohmann::json out = nlohmann::json::object();
  for (uint32_t i : reg.touched()) {
    const auto v = reg.Peek(i);
    out[std::to_string(i)] = {v.first, v.second};
  }
  return out;
}
}  // namespace

namespace {
/// The RoCE path's counters and per-queue-pair state, by QP_INDEX / worker.
nlohmann::json NextStepCountersJson(const std::map<uint32_t, NextStepSelector::Counters>& counters) {
  nlohmann::json ns = nlohmann::json::object();
  for (const auto& [idx, c] : counters) {
    ns[std::to_string(idx)] = {{"broadcast", c.broadcast},
                               {"retransmit", c.retransmit},
                               {"recirculate", c.recirculate},
                               {"drop", c.drop}};
  }
  return ns;
}

nlohmann::json DumpRdma(const RDMAReceiver& rx, const RDMASender& tx) {
  using nlohmann::json;
  json j;
  auto by_index = [](const std::map<uint32_t, uint64_t>& m) {
    json o = json::object();
    for (const auto& [i, v] : m) o[std::to_string(i)] = v;
    return o;
  };
  j["rdma_packet_counter"] = by_index(rx.packet_counter());
  j["rdma_message_counter"] = by_index(rx.message_counter());
  j["rdma_sequence_violation_counter"] = by_index(rx.sequence_violation_counter());
  json rd = json::object();
  for (const auto& [i, n] : rx.packet_counter()) {
    (void)n;
    const auto d = rx.ReceiverData(i);
    rd[std::to_string(i)] = {d.next_sequence_number, d.pool_index};
  }
  j["receiver_data_register"] = rd;
  json rc = json::object();
  for (size_t i = 0; i < rx.entries().size(); ++i) {
    const auto& c = rx.receive_counter()[i];
    if (c.packets == 0) continue;
    rc[std::to_string(rx.entries()[i].worker_id) + "/" + std::to_string(rx.entries()[i].opcode)] = {
        {"packets", c.packets}, {"bytes", c.bytes}};
  }
  j["rdma_receive_counter"] = rc;
  json sc = json::object();
  for (size_t id = 0; id < tx.create_roce_packet().size(); ++id) {
    const auto& e = tx.create_roce_packet()[id];
    if (!e.valid) continue;
    json psns = json::array();
    for (const auto& q : tx.fill_in_qpn_and_psn()[id]) psns.push_back(q.psn_register);
    sc[std::to_string(id)] = {{"packets", e.rdma_send_counter.packets},
                              {"bytes", e.rdma_send_counter.bytes},
                              {"psn_register", psns}};
  }
  j["rdma_send_counter"] = sc;
  return j;
}
}  // namespace

std::string SwitchMLDataplane::DumpState() const {
  using nlohmann::json;
  json j;
  j["name"] = "switchml";
  j["last_passes"] = last_passes_;
  j["stats"] = DumpedCounters(stats_, Stats::kCounters);
  json pipes = json::array();
  for (int p = 0; p < kNumPipes; ++p) {
    if (!pipes_[p]) continue;
    const Pipe& pipe = *pipes_[p];
    json jp;
    jp["pipe"] = p;
    jp["worker_bitmap"] = TouchedPairs(pipe.update_and_check_worker_bitmap.worker_bitmap);
    jp["workers_count"] = TouchedPairs(pipe.workers_counter.workers_count);
    jp["exponents"] = TouchedPairs(pipe.exponents.exponents);
    json vals = json::object();
    for (uint32_t i : pipe.values.touched()) {
      json row = json::array();
      const Processor::ValueRow r = pipe.values.Peek(i);
      for (int k = 0; k < kNumProcessors; ++k) row.push_back({r.first[k], r.second[k]});
      vals[std::to_string(i)] = row;
    }
    jp["values"] = vals;
    pipes.push_back(jp);
  }
  j["pipes"] = pipes;
  // Summed over the pipes (what one read on the all-pipes target gives, if
  // BF-RT sums a counter's pipes), then each pipe's own.
  j["next_step_counters"] = NextStepCountersJson(next_step_selector_.counters());
  json by_pipe = json::array();
  for (int p = 0; p < kNumPipes; ++p) by_pipe.push_back(NextStepCountersJson(next_step_selector_.counters(p)));
  j["next_step_counters_by_pipe"] = by_pipe;
  json rc = json::object();
  for (size_t i = 0; i < udp_receiver_.entries().size(); ++i) {
    rc[std::to_string(udp_receiver_.entries()[i].worker_id)] = {
        {"packets", udp_receiver_.receive_counter()[i].packets}, {"bytes", udp_receiver_.receive_counter()[i].bytes}};
  }
  j["receive_counter"] = rc;
  json sc = json::object();
  for (const auto& [id, c] : udp_sender_.send_counter()) {
    sc[std::to_string(id)] = {{"packets", c.packets}, {"bytes", c.bytes}};
  }
  j["send_counter"] = sc;
  j["simulated_drop_packet_counter"] = egress_drop_sim_.simulated_drop_packet_counter;
  if (config_.transport == SwitchMLTransport::kRdma) j["rdma"] = DumpRdma(rdma_receiver_, rdma_sender_);
  return j.dump();
}

}  // namespace inasim::p4::switchml
