// Conformance tests of the PANAMA accelerator model (p4model/panama): the
// paper (panama-mlsys21 §4.2.2, §5, §6 Table 1, Appendix A eq. (3)) and the
// prototype nadeengebara/my_netfpga@92c98fe fp_datapath.v / fp_adder.v.
// Frames are built here byte by byte from the layout in protocols/panama/dataplane/README.md,
// and every expected sum comes from a soft-float reference written here
// (exact double addition, then a bit-level round to binary32), never from the
// model's adder.
#include "protocols/panama/dataplane/panama_dataplane.h"
#include "protocols/panama/dataplane/tree_switch.h"
#include "p4model/tools/programs.h"
#include "tests/common/recording_emitter.h"
#include "tests/common/test_bytes.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pn = inasim::p4::panama;
using namespace inasim::testing;  // Bytes, kNs, Put16/32, Get16/32, Checksum

namespace {


// ============================================================================
// Soft-float reference (independent of protocols/panama/dataplane/fp32.cc)
// ============================================================================

bool RefIsNaN(uint32_t x) { return ((x >> 23) & 0xff) == 0xff && (x & 0x7fffff) != 0; }
bool RefIsInf(uint32_t x) { return ((x >> 23) & 0xff) == 0xff && (x & 0x7fffff) == 0; }

/// binary32 bits -> the exact double (every binary32 is one).
double RefToDouble(uint32_t x) {
  const uint32_t e = (x >> 23) & 0xff;
  const uint32_t f = x & 0x7fffff;
  const double mag = e == 0 ? std::ldexp(double(f), -149) : std::ldexp(double(f | 0x800000), int(e) - 150);
  return (x >> 31) ? -mag : mag;
}

/// A finite double -> binary32 bits, round to nearest even, done on the
/// double's bits; `ftz` flushes a subnormal result to a zero of its sign.
uint32_t RefRound(double d, bool ftz) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  const uint32_t sign = uint32_t(bits >> 63) << 31;
  const int e = int((bits >> 52) & 0x7ff);
  if (e == 0) return sign;  // only zeros reach here (sums of binary32 are >= 2^-149)
  const uint64_t m = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);  // 53 bits
  int E = e - 1023;                                                              // value = m * 2^(E-52)
  int shift = E >= -126 ? 29 : 29 + (-126 - E);                                  // bits dropped
  uint64_t q = m >> shift;
  const uint64_t r = m & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  if (r > half || (r == half && (q & 1))) ++q;
  if (E >= -126) {
    if (q == (uint64_t{1} << 24)) {
      q >>= 1;
      ++E;
    }
    if (E > 127) return sign | 0x7f800000u;
    return sign | uint32_t(E + 127) << 23 | uint32_t(q & 0x7fffff);
  }
  // Subnormal range: q counts units of 2^-149; q == 2^23 is the smallest normal.
  if (q < (uint64_t{1} << 23) && ftz) return sign;
  return sign | uint32_t(q);
}

/// Reference a + b. fpga: subnormal operands and results are zeros of their
/// sign, every NaN result is 0x7fc00000. ieee: a NaN operand comes back
/// quieted (a's first). Both: inf - inf is 0x7fc00000.
uint32_t RefAdd(uint32_t a, uint32_t b, bool fpga) {
  if (RefIsNaN(a) || RefIsNaN(b)) return fpga ? 0x7fc00000u : ((RefIsNaN(a) ? a : b) | 0x400000u);
  if (RefIsInf(a) && RefIsInf(b)) return a == b ? a : 0x7fc00000u;
  if (RefIsInf(a)) return a;
  if (RefIsInf(b)) return b;
  if (fpga) {
    if (((a >> 23) & 0xff) == 0) a &= 0x80000000u;
    if (((b >> 23) & 0xff) == 0) b &= 0x80000000u;
  }
  // Exact in double after one rounding to 53 bits; 53 >= 2*24 + 2 makes the
  // second rounding to 24 bits innocuous (Figueroa 1995).
  const double s = RefToDouble(a) + RefToDouble(b);
  return RefRound(s, fpga);
}

uint32_t F(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
float ToF(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

// ============================================================================
// Frame builder (README "Byte layout")
// ============================================================================


struct Pkt {
  std::array<uint8_t, 6> dst_mac = {0x01, 0x00, 0x5e, 0x01, 0x02, 0x03};
  std::array<uint8_t, 6> src_mac = {0x02, 0, 0, 0, 0, 0x10};
  uint8_t dscp = 56;
  uint8_t ecn = 0;
  uint8_t protocol = 17;
  uint16_t ip_id = 0x1234;
  uint32_t src_ip = 0x0a000001;
  uint32_t dst_ip = 0xe0000101;  // the tree's multicast address
  uint16_t sport = 40000, dport = 50000;
  uint16_t udp_csum = 0xbeef;
  uint16_t jid = 7;
  uint8_t tid = 0;
  uint8_t flags = 0;  // bit 7 FIN
  uint32_t vid = 0;
  uint16_t wnd_cap = 0xffff;
  std::array<uint8_t, 4> reserved = {0, 0, 0, 0};
  std::vector<uint32_t> values;
};

Bytes Build(const Pkt& p) {
  const size_t udp_len = 8 + 14 + 4 * p.values.size();
  Bytes b;
  PutMac(b, p.dst_mac);
  PutMac(b, p.src_mac);
  Put16(b, 0x0800);
  const uint8_t tos = uint8_t(p.dscp << 2 | p.ecn);
  PutIpv4Udp(b, {p.src_ip, p.dst_ip, p.sport, p.dport, p.udp_csum, p.ip_id, 0, 64, tos, p.protocol}, udp_len - 8);
  b.resize(14 + 20 + udp_len, 0);
  uint8_t* h = &b[42];
  Put16(h, p.jid);
  h[2] = p.tid;
  h[3] = p.flags;
  Put32(h + 4, p.vid);
  Put16(h + 8, p.wnd_cap);
  std::copy(p.reserved.begin(), p.reserved.end(), h + 10);
  for (size_t i = 0; i < p.values.size(); ++i) Put32(&b[56 + 4 * i], p.values[i]);
  return b;
}

/// What the accelerator sends for inputs whose header source is `src`.
Bytes Result(Pkt src, uint8_t ecn, uint16_t wnd_cap, bool fin, std::vector<uint32_t> sums) {
  src.dst_mac = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  src.ecn = ecn;
  src.wnd_cap = wnd_cap;
  src.flags = uint8_t((src.flags & 0x7f) | (fin ? 0x80 : 0));
  src.udp_csum = 0;
  src.values = std::move(sums);
  return Build(src);
}

// --- recording harness ------------------------------------------------------

using Out = inasim::testing::Emitted;
using Recorder = inasim::testing::RecordingEmitter;

struct Accel {
  explicit Accel(pn::PanamaConfig c) : dp(std::move(c)) {}
  std::vector<Out> Send(uint16_t port, const Bytes& b, Picoseconds now = 0) {
    rec.out.clear();
    const inasim::p4::FrameView v =
        inasim::p4::ParseFrame(b.data(), std::min<size_t>(b.size(), inasim::p4::kParseBytes), uint32_t(b.size()));
    claimed = dp.Claims(v);
    dp.Process(port, inasim::Span<const uint8_t>(b.data(), b.size()), now, rec);
    return rec.out;
  }
  pn::PanamaDataplane dp;
  Recorder rec;
  bool claimed = false;
};

pn::PanamaJob Job(uint16_t jid, std::vector<uint16_t> ports, uint32_t trees = 1,
                  pn::ResultRoute r = pn::ResultRoute::kRouted) {
  pn::PanamaJob j;
  j.jid = jid;
  for (uint16_t p : ports) j.ports_bitmap |= uint64_t{1} << p;
  j.num_trees = trees;
  j.result = r;
  return j;
}

pn::PanamaConfig Config(std::vector<pn::PanamaJob> jobs, uint32_t num_ports = 4,
                        pn::FloatMode mode = pn::FloatMode::kFpga) {
  pn::PanamaConfig c;
  c.num_ports = num_ports;
  c.float_mode = mode;
  c.jobs = std::move(jobs);
  return c;
}

/// Expected aggregation latency of a frame in the default (equation) mode:
/// eq. (3) + 25 ns + 10 ns, W 64, f 200 MHz, La 10 ns, depth 2.
Picoseconds AggLatency(size_t bytes) { return Picoseconds((bytes * 8 - 64) * 78125 / 1000) + 25 * kNs + 30 * kNs; }

nlohmann::json State(const pn::PanamaDataplane& dp) { return nlohmann::json::parse(dp.DumpState()); }

// ============================================================================
// The fp32 adder unit
// ============================================================================

struct AddCase {
  uint32_t a, b, fpga, ieee;
  const char* what;
};

TEST(PanamaFp32, EdgeCasesByHand) {
  const AddCase cases[] = {
      {0x3f800000, 0x40000000, 0x40400000, 0x40400000, "1 + 2 = 3"},
      {0x80000000, 0x80000000, 0x80000000, 0x80000000, "-0 + -0 = -0"},
      {0x00000000, 0x80000000, 0x00000000, 0x00000000, "+0 + -0 = +0"},
      {0x80000000, 0x3f800000, 0x3f800000, 0x3f800000, "-0 + 1 = 1"},
      {0x3f800000, 0xbf800000, 0x00000000, 0x00000000, "1 + -1 = +0 (exact cancellation)"},
      {0x3f800001, 0xbf800000, 0x34000000, 0x34000000, "cancellation to 2^-23"},
      {0x7f800000, 0x3f800000, 0x7f800000, 0x7f800000, "inf + 1"},
      {0xff800000, 0xff800000, 0xff800000, 0xff800000, "-inf + -inf"},
      {0x7f800000, 0xff800000, 0x7fc00000, 0x7fc00000, "inf - inf: invalid"},
      {0x7f800001, 0x3f800000, 0x7fc00000, 0x7fc00001, "signalling NaN + 1"},
      {0xffc12345, 0x7fa00000, 0x7fc00000, 0xffc12345, "two NaNs: ieee keeps the first"},
      {0x3f800000, 0x7fa00000, 0x7fc00000, 0x7fe00000, "1 + sNaN: quieted"},
      {0x7f800000, 0x7fc00000, 0x7fc00000, 0x7fc00000, "inf + NaN"},
      {0x00000001, 0x00000001, 0x00000000, 0x00000002, "subnormals: flushed vs gradual"},
      {0x80000005, 0x00000000, 0x00000000, 0x80000005, "negative subnormal reads as -0; -0 + +0 = +0"},
      {0x80000005, 0x80000000, 0x80000000, 0x80000005, "negative subnormal + -0"},
      {0x00800000, 0x00000001, 0x00800000, 0x00800001, "min normal + subnormal"},
      {0x00800001, 0x80800000, 0x00000000, 0x00000001, "normal - normal = subnormal: flushed to +0"},
      {0x80800001, 0x00800000, 0x80000000, 0x80000001, "... and to -0"},
      {0x00400000, 0x00400000, 0x00000000, 0x00800000, "two subnormals make a normal (ieee)"},
      {0x4b800000, 0x3f800000, 0x4b800000, 0x4b800000, "2^24 + 1: tie to even (down)"},
      {0x4b800001, 0x3f800000, 0x4b800002, 0x4b800002, "2^24 + 3: tie to even (up)"},
      {0x3f800000, 0x33800000, 0x3f800000, 0x3f800000, "1 + 2^-24: tie to even"},
      {0x3f800000, 0x33800001, 0x3f800001, 0x3f800001, "1 + just over half an ulp"},
      {0x4c000000, 0xbf800000, 0x4c000000, 0x4c000000, "2^25 - 1: tie to even under subtraction"},
      {0x4c000000, 0xbf800001, 0x4bffffff, 0x4bffffff, "2^25 - (1 + 2^-23): sticky under subtraction"},
      {0x3f800000, 0x80800000, 0x3f800000, 0x3f800000, "1 - 2^-126"},
      {0x7f7fffff, 0x7f7fffff, 0x7f800000, 0x7f800000, "max + max overflows"},
      {0x7f7fffff, 0x73000000, 0x7f800000, 0x7f800000, "max + half ulp: tie rounds to even = inf"},
      {0x7f7fffff, 0x72ffffff, 0x7f7fffff, 0x7f7fffff, "max + less than half ulp"},
      {0xff7fffff, 0xf3000000, 0xff800000, 0xff800000, "-max - half ulp: -inf"},
  };
  const pn::Fp32Adder fpga(pn::FloatMode::kFpga), ieee(pn::FloatMode::kIeee);
  for (const AddCase& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(fpga.Add(c.a, c.b), c.fpga);
    EXPECT_EQ(ieee.Add(c.a, c.b), c.ieee);
    EXPECT_EQ(fpga.Add(c.b, c.a), RefAdd(c.b, c.a, true));  // commutes except NaN choice
    // The reference agrees with the hand-written expectation.
    EXPECT_EQ(RefAdd(c.a, c.b, true), c.fpga);
    EXPECT_EQ(RefAdd(c.a, c.b, false), c.ieee);
  }
}

/// Random operands weighted towards the corners: every class of exponent,
/// near-equal magnitudes (cancellation), ties.
uint32_t RandomOperand(std::mt19937_64& rng) {
  const uint32_t r = uint32_t(rng());
  const uint32_t sign = uint32_t(rng() & 1) << 31;
  switch (rng() % 8) {
    case 0: return r;                                          // anything, NaNs included
    case 1: return sign | (r & 0x007fffff);                    // subnormal or zero
    case 2: return sign | (uint32_t(1 + rng() % 3) << 23) | (r & 0x7fffff);  // near the subnormal edge
    case 3: return sign | (uint32_t(250 + rng() % 5) << 23) | (r & 0x7fffff);  // near overflow
    case 4: return sign | (uint32_t(120 + rng() % 16) << 23) | (r & 0x7fffff);  // around 1
    case 5: return sign | (uint32_t(120 + rng() % 16) << 23) | (r & 0x7f0000);  // few mantissa bits: ties
    case 6: return sign | 0x7f800000;                          // infinities
    default: return sign | (uint32_t(rng() % 255) << 23) | (r & 0x7fffff);
  }
}

TEST(PanamaFp32, RandomAgainstSoftFloatReference) {
  std::mt19937_64 rng(20210401);
  const pn::Fp32Adder fpga(pn::FloatMode::kFpga), ieee(pn::FloatMode::kIeee);
  int host_checked = 0;
  for (int i = 0; i < 400000; ++i) {
    uint32_t a = RandomOperand(rng), b = RandomOperand(rng);
    if (i % 5 == 0) b = a ^ 0x80000000u ^ (uint32_t(rng()) & 0xff);  // near cancellation
    ASSERT_EQ(fpga.Add(a, b), RefAdd(a, b, true)) << std::hex << a << " + " << b;
    const uint32_t r = ieee.Add(a, b);
    ASSERT_EQ(r, RefAdd(a, b, false)) << std::hex << a << " + " << b;
    // ieee mode is the host's binary32 addition wherever no NaN is involved.
    if (!RefIsNaN(r)) {
      ASSERT_EQ(r, F(ToF(a) + ToF(b))) << std::hex << a << " + " << b;
      ++host_checked;
    }
  }
  EXPECT_GT(host_checked, 300000);
}

// ============================================================================
// The adder tree
// ============================================================================

TEST(PanamaAdderTree, FixedOrderOfTheHardware) {
  // fp_adder.v:107-135: ((p0 + p1) + (p2 + p3)). With p2 = p3 = 2^-24 the pairs
  // sum to 2^-23 first, which 1.0 keeps; left to right they would vanish.
  const pn::AdderTree tree(4, pn::FloatMode::kFpga);
  const std::vector<uint32_t> v = {0x3f800000, 0x00000000, 0x33800000, 0x33800000};
  EXPECT_EQ(tree.Reduce(v), 0x3f800001u);
  const uint32_t sequential = RefAdd(RefAdd(RefAdd(v[0], v[1], true), v[2], true), v[3], true);
  EXPECT_EQ(sequential, 0x3f800000u);
  EXPECT_EQ(tree.Depth(), 2u);
}

TEST(PanamaAdderTree, BalancedTreesForOtherPortCountsAgainstReference) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20000; ++trial) {
    std::array<uint32_t, 8> p{};
    for (auto& x : p) x = RandomOperand(rng);
    for (bool fpga : {true, false}) {
      const pn::FloatMode m = fpga ? pn::FloatMode::kFpga : pn::FloatMode::kIeee;
      auto add = [&](uint32_t a, uint32_t b) { return RefAdd(a, b, fpga); };
      // N = 2, 3, 4, 5, 8 written out: first half ceil(n/2).
      EXPECT_EQ(pn::AdderTree(2, m).Reduce(std::vector<uint32_t>(p.begin(), p.begin() + 2)), add(p[0], p[1]));
      EXPECT_EQ(pn::AdderTree(3, m).Reduce(std::vector<uint32_t>(p.begin(), p.begin() + 3)),
                add(add(p[0], p[1]), p[2]));
      EXPECT_EQ(pn::AdderTree(4, m).Reduce(std::vector<uint32_t>(p.begin(), p.begin() + 4)),
                add(add(p[0], p[1]), add(p[2], p[3])));
      EXPECT_EQ(pn::AdderTree(5, m).Reduce(std::vector<uint32_t>(p.begin(), p.begin() + 5)),
                add(add(add(p[0], p[1]), p[2]), add(p[3], p[4])));
      EXPECT_EQ(pn::AdderTree(8, m).Reduce(std::vector<uint32_t>(p.begin(), p.end())),
                add(add(add(p[0], p[1]), add(p[2], p[3])), add(add(p[4], p[5]), add(p[6], p[7]))));
    }
  }
  EXPECT_EQ(pn::AdderTree(1, pn::FloatMode::kFpga).Depth(), 0u);
  EXPECT_EQ(pn::AdderTree(5, pn::FloatMode::kFpga).Depth(), 3u);
  EXPECT_EQ(pn::AdderTree(64, pn::FloatMode::kFpga).Depth(), 6u);
}

// ============================================================================
// End-to-end aggregation, exact bytes
// ============================================================================

/// Four workers' packets for one VID; worker p has its own addresses and values.
std::array<Pkt, 4> Vector(uint32_t vid, const std::array<std::vector<uint32_t>, 4>& values, uint16_t jid = 7,
                          uint8_t tid = 0) {
  std::array<Pkt, 4> v;
  for (int p = 0; p < 4; ++p) {
    v[p].jid = jid;
    v[p].tid = tid;
    v[p].vid = vid;
    v[p].src_ip = 0x0a000001 + uint32_t(p);
    v[p].src_mac[5] = uint8_t(0x10 + p);
    v[p].ip_id = uint16_t(0x1000 + p);
    v[p].values = values[p];
  }
  return v;
}

std::vector<uint32_t> TreeSum(const std::array<std::vector<uint32_t>, 4>& v, uint64_t bitmap = 0xf,
                              bool fpga = true) {
  std::vector<uint32_t> s(v[0].size());
  for (size_t i = 0; i < s.size(); ++i) {
    uint32_t x[4];
    for (int p = 0; p < 4; ++p) x[p] = (bitmap >> p & 1) ? v[p][i] : 0u;
    s[i] = RefAdd(RefAdd(x[0], x[1], fpga), RefAdd(x[2], x[3], fpga), fpga);
  }
  return s;
}

TEST(PanamaAggregation, FourPortsExactBytesAndLatency) {
  Accel a(Config({Job(7, {0, 1, 2, 3})}));
  const std::array<std::vector<uint32_t>, 4> vals = {
      std::vector<uint32_t>{F(1.5f), F(-2.0f), 0x80000000, 0x7f7fffff, 0x00000001, F(0.1f)},
      std::vector<uint32_t>{F(2.25f), F(2.0f), 0x80000000, 0x7f7fffff, 0x00000001, F(0.2f)},
      std::vector<uint32_t>{F(-0.75f), F(1e-8f), 0x80000000, 0x00000000, 0x00800000, F(0.3f)},
      std::vector<uint32_t>{F(100.0f), F(-1e-8f), 0x80000000, 0x00000000, 0x80800000, F(0.4f)}};
  auto v = Vector(0, vals);
  for (int p = 0; p < 3; ++p) EXPECT_TRUE(a.Send(uint16_t(p), Build(v[p])).empty()) << p;
  EXPECT_EQ(a.dp.Buffered(7, 0), 1u);
  const auto o = a.Send(3, Build(v[3]));
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].kind, Out::kRouted);
  const std::vector<uint32_t> sums = TreeSum(vals);
  // Spot values: 1.5 + 2.25 + -0.75 + 100 = 103; -0 x 4 = -0; max + max = inf.
  EXPECT_EQ(sums[0], F(103.0f));
  EXPECT_EQ(sums[2], 0x80000000u);
  EXPECT_EQ(sums[3], 0x7f800000u);
  EXPECT_EQ(sums[4], 0x00000000u);  // subnormals flushed; min normal - min normal = +0
  // Header from port 0's packet (the first member), wnd_cap = own share.
  const uint16_t own = uint16_t(std::min<uint64_t>(65535, a.dp.config().PacketMemory()));
  EXPECT_EQ(own, 10485);  // 64 MiB / 4 ports / 1600 B
  EXPECT_EQ(o[0].bytes, Result(v[0], 0, own, false, sums));
  EXPECT_EQ(o[0].latency, AggLatency(o[0].bytes.size()));
  EXPECT_EQ(a.dp.ExpectedVid(7, 0), 1);
  EXPECT_EQ(a.dp.Buffered(7, 0), 0u);
  EXPECT_EQ(a.dp.stats().aggregations, 1u);
  EXPECT_EQ(a.dp.stats().result_packets, 1u);
  EXPECT_TRUE(a.claimed);
}

TEST(PanamaAggregation, NonMemberPortsFeedPlusZero) {
  // Job on ports {1, 3} of a 4-port accelerator: the tree is (+0 + p1) + (+0 + p3)
  // (fp_datapath.v:278-285), so -0 + -0 gives +0, unlike a 4-port job.
  Accel a(Config({Job(7, {1, 3})}));
  const std::array<std::vector<uint32_t>, 4> vals = {std::vector<uint32_t>{0, 0},
                                                     std::vector<uint32_t>{0x80000000, F(1.0f)},
                                                     std::vector<uint32_t>{0, 0},
                                                     std::vector<uint32_t>{0x80000000, F(2.0f)}};
  auto v = Vector(0, vals);
  EXPECT_TRUE(a.Send(3, Build(v[3])).empty());
  const auto o = a.Send(1, Build(v[1]));
  ASSERT_EQ(o.size(), 1u);
  const std::vector<uint32_t> sums = TreeSum(vals, 0b1010);
  EXPECT_EQ(sums[0], 0x00000000u);
  EXPECT_EQ(sums[1], F(3.0f));
  EXPECT_EQ(o[0].bytes, Result(v[1], 0, 10485, false, sums));  // header of port 1, the lowest member
}

TEST(PanamaAggregation, IeeeModeKeepsSubnormalsAndNaNPayloads) {
  Accel a(Config({Job(7, {0, 1, 2, 3})}, 4, pn::FloatMode::kIeee));
  const std::array<std::vector<uint32_t>, 4> vals = {
      std::vector<uint32_t>{0x00000001, 0x7fa00001, 0x00800001},
      std::vector<uint32_t>{0x00000002, F(1.0f), 0x80800000},
      std::vector<uint32_t>{0x00000003, F(2.0f), 0},
      std::vector<uint32_t>{0x80000001, F(3.0f), 0}};
  auto v = Vector(0, vals);
  for (int p = 0; p < 3; ++p) a.Send(uint16_t(p), Build(v[p]));
  const auto o = a.Send(3, Build(v[3]));
  ASSERT_EQ(o.size(), 1u);
  const std::vector<uint32_t> sums = TreeSum(vals, 0xf, false);
  EXPECT_EQ(sums[0], 0x00000005u);
  EXPECT_EQ(sums[1], 0x7fe00001u);
  EXPECT_EQ(sums[2], 0x00000001u);
  EXPECT_EQ(o[0].bytes, Result(v[0], 0, 10485, false, sums));
}

TEST(PanamaAggregation, RandomVectorsBitExact) {
  std::mt19937_64 rng(99);
  Accel a(Config({Job(7, {0, 1, 2, 3})}));
  for (uint32_t vid = 0; vid < 200; ++vid) {
    std::array<std::vector<uint32_t>, 4> vals;
    const size_t n = 1 + rng() % 360;  // up to 1496-byte frames
    for (auto& x : vals) {
      x.resize(n);
      for (auto& y : x) y = RandomOperand(rng);
    }
    auto v = Vector(vid, vals);
    std::array<int, 4> order = {0, 1, 2, 3};
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<Out> o;
    for (int p : order) o = a.Send(uint16_t(p), Build(v[p]));
    ASSERT_EQ(o.size(), 1u) << vid;
    ASSERT_EQ(o[0].bytes, Result(v[0], 0, 10485, false, TreeSum(vals))) << vid;
  }
  EXPECT_EQ(a.dp.stats().aggregations, 200u);
}

TEST(PanamaAggregation, EchoModeSendsEachPortItsOwnHeader) {
  Accel a(Config({Job(7, {0, 1, 2, 3}, 1, pn::ResultRoute::kEcho)}));
  const std::array<std::vector<uint32_t>, 4> vals = {std::vector<uint32_t>{F(1.0f)}, std::vector<uint32_t>{F(2.0f)},
                                                     std::vector<uint32_t>{F(3.0f)}, std::vector<uint32_t>{F(4.0f)}};
  auto v = Vector(0, vals);
  for (int p = 0; p < 3; ++p) a.Send(uint16_t(p), Build(v[p]));
  const auto o = a.Send(3, Build(v[3]));
  ASSERT_EQ(o.size(), 4u);
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(o[p].kind, Out::kUnicast);
    EXPECT_EQ(o[p].port, p);
    EXPECT_EQ(o[p].bytes, Result(v[p], 0, 10485, false, {F(10.0f)}));
  }
  EXPECT_EQ(a.dp.stats().result_packets, 4u);
}

TEST(PanamaAggregation, ExplicitResultPortsMulticast) {
  pn::PanamaJob j = Job(7, {0, 1}, 1, pn::ResultRoute::kPorts);
  j.result_ports = {0, 1, 3};
  Accel a(Config({j}));
  Pkt p0, p1;
  p0.values = {F(1.0f)};
  p1.values = {F(2.0f)};
  p1.src_ip = 0x0a000002;
  a.Send(0, Build(p0));
  const auto o = a.Send(1, Build(p1));
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].kind, Out::kMulticast);
  EXPECT_EQ(o[0].ports, (std::vector<uint16_t>{0, 1, 3}));
  EXPECT_EQ(o[0].bytes, Result(p0, 0, 10485, false, {F(3.0f)}));
}

// ============================================================================
// ECN and wnd_cap (panama §4.2.2)
// ============================================================================

TEST(PanamaHeaderFields, EcnIsTheBitwiseOrOfTheInputs) {
  struct C {
    std::array<uint8_t, 4> in;
    uint8_t out;
  };
  const C cases[] = {{{0, 0, 0, 0}, 0}, {{2, 2, 2, 2}, 2}, {{2, 2, 3, 2}, 3}, {{1, 1, 1, 1}, 1},
                     {{2, 1, 2, 2}, 3},  // ECT(0) | ECT(1) = CE: the OR the paper specifies
                     {{0, 0, 0, 3}, 3}};
  Accel a(Config({Job(7, {0, 1, 2, 3})}));
  uint32_t vid = 0;
  for (const C& c : cases) {
    std::array<std::vector<uint32_t>, 4> vals;
    for (auto& x : vals) x = {F(1.0f)};
    auto v = Vector(vid++, vals);
    for (int p = 0; p < 4; ++p) v[p].ecn = c.in[p];
    std::vector<Out> o;
    for (int p = 0; p < 4; ++p) o = a.Send(uint16_t(p), Build(v[p]));
    ASSERT_EQ(o.size(), 1u);
    EXPECT_EQ(o[0].bytes[15] & 3, c.out);
    EXPECT_EQ(o[0].bytes, Result(v[0], c.out, 10485, false, {F(4.0f)}));
  }
}

TEST(PanamaHeaderFields, WndCapIsTheMinimumOfInputsAndOwnShare) {
  // packet_memory 100 per port: buffer 4 x 100 x 1600 B.
  pn::PanamaConfig c = Config({Job(7, {0, 1, 2, 3}), Job(8, {0, 1})});
  c.buffer_bytes = 4 * 100 * 1600;
  Accel a(c);
  auto run = [&](uint16_t jid, uint32_t vid, std::array<uint16_t, 4> caps, uint16_t expect) {
    std::array<std::vector<uint32_t>, 4> vals;
    for (auto& x : vals) x = {F(1.0f)};
    auto v = Vector(vid, vals, jid);
    const int ports = jid == 7 ? 4 : 2;
    for (int p = 0; p < 4; ++p) v[p].wnd_cap = caps[p];
    std::vector<Out> o;
    for (int p = 0; p < ports; ++p) o = a.Send(uint16_t(p), Build(v[p]));
    ASSERT_EQ(o.size(), 1u);
    EXPECT_EQ(o[0].bytes, Result(v[0], 0, expect, false, {F(float(ports))}));
  };
  run(7, 0, {500, 80, 300, 90}, 80);        // an input's cap is the minimum
  run(7, 1, {1000, 1000, 1000, 1000}, 100); // own: 100 / 1 active job
  EXPECT_EQ(a.dp.ActiveJobs(), 1u);
  // A second job becomes active with its first packet: each now offers 50.
  run(8, 0, {1000, 1000, 0, 0}, 50);
  EXPECT_EQ(a.dp.ActiveJobs(), 2u);
  run(7, 2, {1000, 1000, 1000, 1000}, 50);
  run(7, 3, {1000, 49, 1000, 1000}, 49);
  EXPECT_EQ(a.dp.OwnWndCap(), 50);
  // 16 bits: a large memory caps at 65535.
  pn::PanamaConfig big = Config({Job(7, {0, 1, 2, 3})});
  big.buffer_bytes = uint64_t{1} << 40;
  Accel b(big);
  EXPECT_EQ(b.dp.OwnWndCap(), 65535);
}

TEST(PanamaHeaderFields, EcnOrAndWndCapPropagateUpAThreeLevelTree) {
  // A binary tree of 2-port accelerators: four leaves (two hosts each), two
  // aggregation switches, one root; each result is fed to its parent's port.
  // One host's packet is CE; one leaf (leaf 2) has the smallest buffer share.
  auto accel = [](uint64_t packets_per_port) {
    pn::PanamaConfig c = Config({Job(7, {0, 1})}, 2);
    c.buffer_bytes = 2 * packets_per_port * 1600;
    return std::make_unique<Accel>(c);
  };
  std::vector<std::unique_ptr<Accel>> leaf;
  for (uint64_t cap : {900, 800, 70, 600}) leaf.push_back(accel(cap));
  auto agg0 = accel(500), agg1 = accel(400), root = accel(300);
  std::vector<Bytes> up(4);
  for (int l = 0; l < 4; ++l) {
    for (int h = 0; h < 2; ++h) {
      Pkt p;
      p.src_ip = 0x0a000001 + uint32_t(2 * l + h);
      p.ecn = (l == 2 && h == 1) ? 3 : 2;  // ECT(0), one CE
      p.values = {F(float(2 * l + h + 1)), F(-1.0f)};
      const std::vector<Out> o = leaf[l]->Send(uint16_t(h), Build(p));
      if (h == 1) {
        ASSERT_EQ(o.size(), 1u);
        ASSERT_EQ(o[0].kind, Out::kRouted);
        up[l] = o[0].bytes;
      }
    }
  }
  auto combine = [](Accel& a, const Bytes& p0, const Bytes& p1) {
    a.Send(0, p0);
    const std::vector<Out> o = a.Send(1, p1);
    EXPECT_EQ(o.size(), 1u);
    return o.empty() ? Bytes() : o[0].bytes;
  };
  const Bytes mid0 = combine(*agg0, up[0], up[1]);
  const Bytes mid1 = combine(*agg1, up[2], up[3]);
  const Bytes top = combine(*root, mid0, mid1);
  ASSERT_FALSE(top.empty());
  // Leaves 0, 1, 3 and agg0 saw only ECT(0); leaf 2 turned CE, and the OR
  // keeps it to the root.
  EXPECT_EQ(up[0][15] & 3, 2);
  EXPECT_EQ(up[2][15] & 3, 3);
  EXPECT_EQ(mid0[15] & 3, 2);
  EXPECT_EQ(top[15] & 3, 3);
  // wnd_cap: each level keeps the smallest share seen below it and its own.
  EXPECT_EQ(inasim::p4::LoadBe16(&up[2][50]), 70);
  EXPECT_EQ(inasim::p4::LoadBe16(&mid0[50]), 500);  // min(900, 800, agg0's 500)
  EXPECT_EQ(inasim::p4::LoadBe16(&mid1[50]), 70);
  EXPECT_EQ(inasim::p4::LoadBe16(&top[50]), 70);
  // And the sums: 1 + ... + 8 = 36, and 8 x -1.
  EXPECT_EQ(inasim::p4::LoadBe32(&top[56]), F(36.0f));
  EXPECT_EQ(inasim::p4::LoadBe32(&top[60]), F(-8.0f));
}

// ============================================================================
// VID check and FIN (panama §5 (2))
// ============================================================================

std::array<std::vector<uint32_t>, 4> Ones(float x = 1.0f) {
  std::array<std::vector<uint32_t>, 4> vals;
  for (auto& v : vals) v = {F(x), F(x)};
  return vals;
}

TEST(PanamaVid, LostVectorOnOnePortDropsTheOthersAndMovesOn) {
  Accel a(Config({Job(7, {0, 1, 2, 3})}));
  auto v0 = Vector(0, Ones(1.0f));
  auto v1 = Vector(1, Ones(2.0f));
  // VID 0 from port 0 is lost (corruption); port 0 already sends VID 1.
  EXPECT_TRUE(a.Send(0, Build(v1[0])).empty());
  EXPECT_TRUE(a.Send(1, Build(v0[1])).empty());
  EXPECT_TRUE(a.Send(2, Build(v0[2])).empty());
  EXPECT_TRUE(a.Send(3, Build(v0[3])).empty());  // all present: 1 != 0 -> drop the VID-0 heads
  EXPECT_EQ(a.dp.stats().vid_mismatch_dropped, 3u);
  EXPECT_EQ(a.dp.stats().vids_skipped, 1u);
  EXPECT_EQ(a.dp.ExpectedVid(7, 0), 1);
  EXPECT_EQ(a.dp.Buffered(7, 0), 1u);
  EXPECT_EQ(a.dp.Buffered(7, 1), 0u);
  a.Send(1, Build(v1[1]));
  a.Send(2, Build(v1[2]));
  const auto o = a.Send(3, Build(v1[3]));
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].bytes, Result(v1[0], 0, 10485, false, {F(8.0f), F(8.0f)}));
  EXPECT_EQ(a.dp.ExpectedVid(7, 0), 2);
}

TEST(PanamaVid, StalePacketIsDroppedAndTheVectorStillCompletes) {
  Accel a(Config({Job(7, {0, 1})}));
  // Aggregate VIDs 0..4, then a late duplicate of VID 3 reaches port 0.
  for (uint32_t vid = 0; vid < 5; ++vid) {
    Pkt p0, p1;
    p0.vid = p1.vid = vid;
    p0.values = p1.values = {F(1.0f)};
    a.Send(0, Build(p0));
    ASSERT_EQ(a.Send(1, Build(p1)).size(), 1u);
  }
  Pkt stale, x0, x1;
  stale.vid = 3;
  stale.values = {F(100.0f)};
  x0.vid = x1.vid = 5;
  x0.values = {F(1.0f)};
  x1.values = {F(2.0f)};
  EXPECT_TRUE(a.Send(0, Build(stale)).empty());
  EXPECT_TRUE(a.Send(1, Build(x1)).empty());  // all present: 3 is older than 5 -> dropped
  EXPECT_EQ(a.dp.stats().vid_mismatch_dropped, 1u);
  EXPECT_EQ(a.dp.ExpectedVid(7, 0), 5);
  const auto o = a.Send(0, Build(x0));
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].bytes, Result(x0, 0, 10485, false, {F(3.0f)}));
}

TEST(PanamaVid, SkipsStraightToTheNewestHeadAndWrapsAt32Bits) {
  Accel a(Config({Job(7, {0, 1})}));
  Pkt p0, p1;
  p0.values = p1.values = {F(1.0f)};
  p0.vid = 7;
  p1.vid = 9;
  a.Send(0, Build(p0));
  EXPECT_TRUE(a.Send(1, Build(p1)).empty());
  // Both ahead of 0: Expected_VID moves to 9 and port 0's 7 becomes stale.
  EXPECT_EQ(a.dp.ExpectedVid(7, 0), 9);
  EXPECT_EQ(a.dp.stats().vids_skipped, 9u);
  EXPECT_EQ(a.dp.stats().vid_mismatch_dropped, 1u);
  p0.vid = 9;
  ASSERT_EQ(a.Send(0, Build(p0)).size(), 1u);
  // Serial order across the 32-bit wrap: every step is less than 2^31 ahead,
  // so each vector skips forward and completes; 0xffffffff is followed by 0.
  Accel w(Config({Job(7, {0, 1})}));
  for (uint32_t vid : {0x60000000u, 0xc0000000u, 0xffffffffu, 0u}) {
    p0.vid = p1.vid = vid;
    EXPECT_TRUE(w.Send(0, Build(p0)).empty());
    ASSERT_EQ(w.Send(1, Build(p1)).size(), 1u) << vid;
  }
  EXPECT_EQ(w.dp.ExpectedVid(7, 0), 1);
  EXPECT_EQ(w.dp.stats().aggregations, 4u);
  EXPECT_EQ(w.dp.stats().vid_mismatch_dropped, 0u);
  // 0xffffffff is older than 0: a late packet with it is stale.
  p0.vid = 0xffffffffu;
  p1.vid = 1;
  w.Send(0, Build(p0));
  w.Send(1, Build(p1));
  EXPECT_EQ(w.dp.stats().vid_mismatch_dropped, 1u);
}

TEST(PanamaVid, TreesKeepTheirOwnExpectedVid) {
  Accel a(Config({Job(7, {0, 1}, 4)}));
  for (uint8_t tid = 0; tid < 4; ++tid) {
    for (uint32_t vid = 0; vid < uint32_t(tid) + 1; ++vid) {
      Pkt p0, p1;
      p0.tid = p1.tid = tid;
      p0.vid = p1.vid = vid;
      p0.values = p1.values = {F(0.5f)};
      a.Send(0, Build(p0));
      ASSERT_EQ(a.Send(1, Build(p1)).size(), 1u);
    }
  }
  for (uint8_t tid = 0; tid < 4; ++tid) EXPECT_EQ(a.dp.ExpectedVid(7, tid), tid + 1);
  Pkt bad;
  bad.tid = 4;
  bad.values = {0};
  EXPECT_TRUE(a.Send(0, Build(bad)).empty());
  EXPECT_EQ(a.dp.stats().unknown_tree_dropped, 1u);
}

TEST(PanamaFin, FinResetsTheTreeAndEndsTheJob) {
  Accel a(Config({Job(7, {0, 1}), Job(8, {2, 3})}));
  Pkt p0, p1;
  p0.values = p1.values = {F(1.0f)};
  for (uint32_t vid = 0; vid < 3; ++vid) {
    p0.vid = p1.vid = vid;
    a.Send(0, Build(p0));
    a.Send(1, Build(p1));
  }
  EXPECT_TRUE(a.dp.JobActive(7));
  // Job 8 starts: two active jobs.
  Pkt q;
  q.jid = 8;
  q.values = {F(1.0f)};
  a.Send(2, Build(q));
  EXPECT_EQ(a.dp.ActiveJobs(), 2u);
  // VID 3 carries FIN (port 1 only: any input's FIN counts); port 0 has also
  // queued a VID-4 packet that the reset flushes.
  p0.vid = p1.vid = 3;
  Pkt extra = p0;
  extra.vid = 4;
  a.Send(0, Build(p0));
  a.Send(0, Build(extra));
  Pkt fin = p1;
  fin.flags = 0x80;
  const auto o = a.Send(1, Build(fin));
  ASSERT_EQ(o.size(), 1u);
  // wnd_cap computed with both jobs active: 10485 / 2.
  EXPECT_EQ(o[0].bytes, Result(p0, 0, 5242, true, {F(2.0f)}));
  EXPECT_EQ(a.dp.ExpectedVid(7, 0), 0);
  EXPECT_EQ(a.dp.stats().fin_resets, 1u);
  EXPECT_EQ(a.dp.stats().fin_flushed, 1u);
  EXPECT_EQ(a.dp.Buffered(7, 0), 0u);
  EXPECT_FALSE(a.dp.JobActive(7));
  EXPECT_EQ(a.dp.ActiveJobs(), 1u);
  // A new session starts at VID 0.
  p0.vid = p1.vid = 0;
  a.Send(0, Build(p0));
  ASSERT_EQ(a.Send(1, Build(p1)).size(), 1u);
  EXPECT_TRUE(a.dp.JobActive(7));
  // The controller can reset a job too.
  a.Send(0, Build(extra));
  EXPECT_TRUE(a.dp.ResetJob(7));
  EXPECT_EQ(a.dp.stats().controller_flushed, 1u);
  EXPECT_FALSE(a.dp.JobActive(7));
  EXPECT_FALSE(a.dp.ResetJob(99));
}

// ============================================================================
// Buffers (panama §4.2.2, §5 (1))
// ============================================================================

TEST(PanamaBuffers, OverflowIsCountedPerJobAndPort) {
  pn::PanamaConfig c = Config({Job(7, {0, 1}), Job(8, {0, 1})});
  c.buffer_bytes = 4 * 3 * 1600;  // packet_memory 3 per port
  Accel a(c);
  Pkt p;
  p.values = {F(1.0f)};
  for (uint32_t vid = 0; vid < 5; ++vid) {
    p.vid = vid;
    EXPECT_TRUE(a.Send(0, Build(p)).empty());  // port 1 silent: nothing completes
  }
  EXPECT_EQ(a.dp.Buffered(7, 0), 3u);
  EXPECT_EQ(a.dp.stats().buffer_overflow_dropped, 2u);
  EXPECT_EQ(a.dp.stats().buffered, 3u);
  // Port 1 has its own buffer.
  Pkt p1 = p;
  p1.vid = 0;
  ASSERT_EQ(a.Send(1, Build(p1)).size(), 1u);
  EXPECT_EQ(a.dp.Buffered(7, 0), 2u);
  // Job 8 becomes active: shares are 3 / 2 = 1, job 8 gets one slot on port 0.
  Pkt q = p;
  q.jid = 8;
  q.vid = 0;
  EXPECT_TRUE(a.Send(0, Build(q)).empty());
  q.vid = 1;
  EXPECT_TRUE(a.Send(0, Build(q)).empty());
  EXPECT_EQ(a.dp.Buffered(8, 0), 1u);
  EXPECT_EQ(a.dp.stats().buffer_overflow_dropped, 3u);
  // Job 7 is over its new share (2 > 1): its next packet on port 0 is refused.
  p.vid = 5;
  a.Send(0, Build(p));
  EXPECT_EQ(a.dp.stats().buffer_overflow_dropped, 4u);
  const auto st = State(a.dp);
  EXPECT_EQ(st["stats"]["buffer_overflow_dropped"], 4);
  // Peak: three on port 0 plus port 1's packet, buffered before the vector completes.
  EXPECT_EQ(st["stats"]["peak_buffered"], 4);
  EXPECT_EQ(st["jobs"][0]["buffered"][0], 2);
}

// ============================================================================
// Non-aggregation traffic, forwarding, malformed packets
// ============================================================================

TEST(PanamaParser, NonAggregationTrafficPassesUntouched) {
  Accel a(Config({Job(7, {0, 1, 2, 3})}));
  std::vector<Bytes> frames;
  Pkt udp0;  // DSCP 0
  udp0.dscp = 0;
  udp0.values = {1, 2, 3};
  frames.push_back(Build(udp0));
  Pkt tcp56;  // DSCP 56 but TCP
  tcp56.protocol = 6;
  tcp56.values = {1, 2, 3};
  frames.push_back(Build(tcp56));
  Pkt dscp57;
  dscp57.dscp = 57;
  dscp57.values = {1};
  frames.push_back(Build(dscp57));
  Bytes arp(60, 0x11);
  arp[12] = 0x08;
  arp[13] = 0x06;
  frames.push_back(arp);
  frames.push_back(Bytes{1, 2, 3});  // a runt
  Bytes big(1500, 0);
  big[12] = 0x86;
  big[13] = 0xdd;
  frames.push_back(big);
  Picoseconds now = 0;
  for (const Bytes& f : frames) {
    // One frame at a time (10 us apart): each leaves with its own latency.
    const auto o = a.Send(2, f, now += 10'000 * kNs);
    EXPECT_TRUE(a.claimed);
    ASSERT_EQ(o.size(), 1u);
    EXPECT_EQ(o[0].kind, Out::kRouted);
    EXPECT_EQ(o[0].bytes, f);
    EXPECT_EQ(o[0].latency, a.dp.latency().NonAggregation(uint32_t(f.size())));
  }
  EXPECT_EQ(a.dp.stats().non_aggregation, frames.size());
  EXPECT_EQ(a.dp.stats().buffered, 0u);
  // 1500 B: Table 1's non-aggregation latency.
  EXPECT_EQ(a.rec.out[0].latency, 957'500u);

  // claim_all_traffic false: the switch keeps everything but aggregation packets.
  pn::PanamaConfig c = Config({Job(7, {0, 1})});
  c.claim_all_traffic = false;
  Accel b(c);
  b.Send(0, frames[0]);
  EXPECT_FALSE(b.claimed);
  b.Send(0, frames[1]);
  EXPECT_FALSE(b.claimed);
  Pkt agg;
  agg.values = {1};
  b.Send(0, Build(agg));
  EXPECT_TRUE(b.claimed);
}

TEST(PanamaParser, PacketFromANonMemberPortIsForwarded) {
  Accel a(Config({Job(7, {0, 1})}));
  Pkt down;  // e.g. the result coming back down the tree on port 3
  down.values = {F(5.0f)};
  const Bytes f = Build(down);
  const auto o = a.Send(3, f);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].kind, Out::kRouted);
  EXPECT_EQ(o[0].bytes, f);
  EXPECT_EQ(o[0].latency, a.dp.latency().NonAggregation(uint32_t(f.size())));
  EXPECT_EQ(a.dp.stats().forwarded, 1u);
  EXPECT_FALSE(a.dp.JobActive(7));
}

TEST(PanamaParser, AJobWithAnEmptyBitmapForwardsEveryPacket) {
  // fp_datapath.v:449-450: a port with PORTS_BITMAP[i] == 0 forwards its
  // packet out (FORWARD_OUT_RESULT); with no bit set, that is every port.
  Accel a(Config({Job(7, {})}));
  for (uint16_t port : {0, 1, 3}) {
    Pkt p;
    p.values = {F(1.0f + port)};
    const Bytes f = Build(p);
    const auto o = a.Send(port, f);
    ASSERT_EQ(o.size(), 1u);
    EXPECT_EQ(o[0].kind, Out::kRouted);
    EXPECT_EQ(o[0].bytes, f);
  }
  EXPECT_EQ(a.dp.stats().forwarded, 3u);
  EXPECT_EQ(a.dp.stats().buffered, 0u);
  EXPECT_FALSE(a.dp.JobActive(7));
}

TEST(PanamaParser, UnknownJobAndBadPortAreDroppedAndCounted) {
  Accel a(Config({Job(7, {0, 1})}));
  Pkt p;
  p.jid = 9;
  p.values = {1};
  EXPECT_TRUE(a.Send(0, Build(p)).empty());
  EXPECT_EQ(a.dp.stats().unknown_job_dropped, 1u);
  p.jid = 7;
  EXPECT_TRUE(a.Send(4, Build(p)).empty());
  EXPECT_EQ(a.dp.stats().bad_port_dropped, 1u);
}

TEST(PanamaParser, TruncatedPacketsAreCountedNeverACrash) {
  Accel a(Config({Job(7, {0, 1})}));
  Pkt p;
  p.values = {F(1.0f), F(2.0f), F(3.0f)};
  const Bytes full = Build(p);
  uint64_t dropped = 0, passed = 0;
  for (size_t len = 0; len < full.size(); ++len) {
    const Bytes cut(full.begin(), full.begin() + long(len));
    const auto o = a.Send(0, cut);
    if (len < 16) {
      // Too short to hold EtherType and DSCP: not an aggregation packet.
      ASSERT_EQ(o.size(), 1u) << len;
      EXPECT_EQ(o[0].bytes, cut);
      ++passed;
    } else {
      EXPECT_TRUE(o.empty()) << len;
      ++dropped;
    }
  }
  EXPECT_EQ(a.dp.stats().malformed_dropped, dropped);
  EXPECT_EQ(a.dp.stats().non_aggregation, passed);
  EXPECT_EQ(a.dp.stats().buffered, 0u);
  // Inconsistent lengths: UDP payload not whole fp32 values; UDP longer than IP;
  // IP total length longer than the frame; IHL < 5.
  Bytes odd = full;
  odd[38 + 1] = uint8_t(odd[38 + 1] - 1);  // UDP length - 1
  Bytes udp_long = full;
  udp_long[38 + 1] = uint8_t(udp_long[38 + 1] + 4);
  Bytes ip_long = full;
  ip_long[16 + 1] = uint8_t(ip_long[16 + 1] + 4);
  Bytes ihl = full;
  ihl[14] = 0x44;
  for (const Bytes& f : {odd, udp_long, ip_long, ihl}) EXPECT_TRUE(a.Send(0, f).empty());
  EXPECT_EQ(a.dp.stats().malformed_dropped, dropped + 4);
  // Ethernet padding after the UDP payload is carried into the result.
  Bytes padded = full;
  padded.insert(padded.end(), {0xaa, 0xbb});
  Pkt q = p;
  q.src_ip = 0x0a000002;
  a.Send(0, padded);
  const auto o = a.Send(1, Build(q));
  ASSERT_EQ(o.size(), 1u);
  Bytes expect = Result(p, 0, 10485, false, {F(2.0f), F(4.0f), F(6.0f)});
  expect.insert(expect.end(), {0xaa, 0xbb});
  EXPECT_EQ(o[0].bytes, expect);
}

TEST(PanamaParser, InputsOfOneVectorWithDifferentLengthsAreDropped) {
  Accel a(Config({Job(7, {0, 1})}));
  Pkt p0, p1;
  p0.values = {F(1.0f), F(1.0f)};
  p1.values = {F(1.0f)};
  a.Send(0, Build(p0));
  EXPECT_TRUE(a.Send(1, Build(p1)).empty());
  EXPECT_EQ(a.dp.stats().length_mismatch_dropped, 2u);
  EXPECT_EQ(a.dp.ExpectedVid(7, 0), 1);
}

// ============================================================================
// Latency (panama §6 Table 1, Appendix A eq. (3))
// ============================================================================

TEST(PanamaLatency, EquationModeAgainstTable1) {
  pn::PanamaConfig c = Config({});
  const pn::PanamaDataplane dp(c);
  const auto& l = dp.latency();
  // eq. (3) streaming term: (S/W - 1)/f.
  EXPECT_EQ(l.Streaming(512), 315'000u);
  EXPECT_EQ(l.Streaming(1024), 635'000u);
  EXPECT_EQ(l.Streaming(1500), 932'500u);
  EXPECT_EQ(l.Streaming(8), 0u);
  EXPECT_EQ(l.Streaming(0), 0u);
  // 512 and 1500 bytes: Table 1 exactly.
  EXPECT_EQ(l.NonAggregation(512), 340'000u);
  EXPECT_EQ(l.Aggregation(512), 370'000u);
  EXPECT_EQ(l.NonAggregation(1500), 957'500u);
  EXPECT_EQ(l.Aggregation(1500), 987'500u);
  // 1024 bytes: one clock (5 ns) under Table 1's 665 / 695 (see README).
  EXPECT_EQ(l.NonAggregation(1024), 660'000u);
  EXPECT_EQ(l.Aggregation(1024), 690'000u);
  // An 8-port accelerator adds one adder level (La = 10 ns).
  const pn::PanamaDataplane eight(Config({}, 8));
  EXPECT_EQ(eight.latency().Aggregation(1500), 997'500u);
  // Appendix A: 100 Gb/s needs W = 512 at 200 MHz.
  pn::PanamaConfig wide = Config({}, 64);
  wide.latency.bus_bits = 512;
  wide.latency.clock_hz = 1'000'000'000;
  wide.latency.adder_ps = 6'000;
  wide.latency.fixed_ps = 0;
  wide.latency.agg_fixed_ps = 0;
  const pn::PanamaDataplane asic(wide);
  // (12000/512 - 1) ns + 6 ns x 6 = 22.4375 + 36 ns (Fig. 14 ASIC, 64 ports).
  EXPECT_EQ(asic.latency().Aggregation(1500), 58'438u);
}

/// The accelerator of one Fig. 14 design with eq. (3) alone (no fitted fixed terms).
pn::PanamaDataplane Eq3Accelerator(uint32_t ports, uint32_t bus_bits, uint64_t clock_hz, uint64_t adder_ps) {
  pn::PanamaConfig c = Config({}, ports);
  c.latency.bus_bits = bus_bits;
  c.latency.clock_hz = clock_hz;
  c.latency.adder_ps = adder_ps;
  c.latency.fixed_ps = 0;
  c.latency.agg_fixed_ps = 0;
  return pn::PanamaDataplane(c);
}

// The points analysis/fig_panama_fig14.py plots, worked by hand from eq. (3),
// L = (S/W - 1)/f + La log2 N (S, W in bits), rounded to the picosecond.
TEST(PanamaLatency, Fig14WorkedExamples) {
  // FPGA at 100 Gb/s: S = 1500 B = 12000 bits, W = 512, f = 200 MHz (5 ns),
  // N = 64, La = 10 ns: (12000/512 - 1) x 5 ns = 22.4375 x 5 = 112.1875 ns
  // (112'188 ps rounded), + 10 ns x log2 64 = 60 ns -> 172'188 ps.
  EXPECT_EQ(Eq3Accelerator(64, 512, 200'000'000, 10'000).latency().Aggregation(1500), 172'188u);
  // The same with 2 ports: one adder level, 112'188 + 10'000.
  EXPECT_EQ(Eq3Accelerator(2, 512, 200'000'000, 10'000).latency().Aggregation(1500), 122'188u);
  // ASIC at 128 Gb/s: W = 128, f = 1 GHz (1 ns), La = 6 ns, N = 64:
  // (12000/128 - 1) x 1 ns = 92.75 ns, + 6 ns x 6 = 36 ns -> 128'750 ps.
  EXPECT_EQ(Eq3Accelerator(64, 128, 1'000'000'000, 6'000).latency().Aggregation(1500), 128'750u);
  // FPGA prototype bus, the smallest frame: S = 64 B = 512 bits, W = 64:
  // (8 - 1) x 5 ns = 35 ns, + 10 ns x log2 2 = 45 ns.
  EXPECT_EQ(Eq3Accelerator(2, 64, 200'000'000, 10'000).latency().Aggregation(64), 45'000u);
  // A frame of one bus word streams in no extra cycle: 64 B on W = 512 -> (1 - 1)/f = 0,
  // only the adder tree: 10 ns x 6 = 60 ns.
  EXPECT_EQ(Eq3Accelerator(64, 512, 200'000'000, 10'000).latency().Aggregation(64), 60'000u);
  // N not a power of two: the model's adder tree has ceil(log2 N) levels
  // (6 ports -> 3 levels, 30 ns), where eq. (3) read literally gives
  // 10 x log2 6 = 25.85 ns; Fig. 14 only uses powers of two.
  EXPECT_EQ(Eq3Accelerator(6, 512, 200'000'000, 10'000).latency().Aggregation(64), 30'000u);
  // Non-aggregation frames cross no adder: the streaming term alone.
  EXPECT_EQ(Eq3Accelerator(64, 512, 200'000'000, 10'000).latency().NonAggregation(1500), 112'188u);
}

TEST(PanamaLatency, Table1ModeReproducesEveryRow) {
  pn::PanamaConfig c = Config({});
  c.latency.mode = pn::LatencyMode::kTable1;
  const pn::PanamaDataplane dp(c);
  for (const pn::Table1Row& r : pn::kTable1) {
    EXPECT_EQ(dp.latency().NonAggregation(r.bytes), r.non_aggregation) << r.bytes;
    EXPECT_EQ(dp.latency().Aggregation(r.bytes), r.aggregation) << r.bytes;
  }
  EXPECT_EQ(dp.latency().NonAggregation(768), 502'500u);  // halfway 512..1024
  EXPECT_EQ(dp.latency().NonAggregation(64), 340'000u - 448 * 625u);  // eq. slope below 512
  EXPECT_EQ(dp.latency().Aggregation(1600), 987'500u + 100 * 625u);
}

TEST(PanamaLatency, EmittedPacketsCarryTable1Latencies) {
  Accel a(Config({Job(7, {0, 1, 2, 3})}));
  // 512-byte frames: 56 + 4 x 114 = 512.
  std::array<std::vector<uint32_t>, 4> vals;
  for (auto& x : vals) x.assign(114, F(1.0f));
  auto v = Vector(0, vals);
  ASSERT_EQ(Build(v[0]).size(), 512u);
  std::vector<Out> o;
  for (int p = 0; p < 4; ++p) o = a.Send(uint16_t(p), Build(v[p]));
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].latency, 370'000u);
  Pkt plain;
  plain.dscp = 0;
  plain.values.assign(114, 0);
  o = a.Send(0, Build(plain));
  EXPECT_EQ(o[0].latency, 340'000u);
}

// ============================================================================
// Configuration, replay tool, state dump
// ============================================================================

TEST(PanamaConfig, FromJsonAndErrors) {
  const pn::PanamaConfig c = pn::PanamaConfig::FromJson(
      R"({"num_ports":8,"float_mode":"ieee","claim_all_traffic":false,"accelerator_buffer_bytes":1280000,"slot_bytes":1600,
          "latency":"table1","latency_model":{"bus_bits":512,"clock_mhz":1000,"adder_ns":6,"fixed_ns":2.5,"agg_fixed_ns":0},
          "jobs":[{"jid":3,"ports":[0,2,7],"trees":4,"result":"echo"},{"jid":4,"ports":[1],"result":[5,6]}]})");
  EXPECT_EQ(c.num_ports, 8u);
  EXPECT_EQ(c.float_mode, pn::FloatMode::kIeee);
  EXPECT_FALSE(c.claim_all_traffic);
  EXPECT_EQ(c.PacketMemory(), 100u);
  EXPECT_EQ(c.latency.mode, pn::LatencyMode::kTable1);
  EXPECT_EQ(c.latency.bus_bits, 512u);
  EXPECT_EQ(c.latency.clock_hz, 1'000'000'000u);
  EXPECT_EQ(c.latency.adder_ps, 6'000u);
  EXPECT_EQ(c.latency.fixed_ps, 2'500u);
  ASSERT_EQ(c.jobs.size(), 2u);
  EXPECT_EQ(c.jobs[0].ports_bitmap, 0b10000101u);
  EXPECT_EQ(c.jobs[0].num_trees, 4u);
  EXPECT_EQ(c.jobs[0].result, pn::ResultRoute::kEcho);
  EXPECT_EQ(c.jobs[1].result, pn::ResultRoute::kPorts);
  EXPECT_EQ(c.jobs[1].result_ports, (std::vector<uint16_t>{5, 6}));
  // An empty ports list is a job with no member port (fp_datapath.v:449-450).
  EXPECT_EQ(pn::PanamaConfig::FromJson(R"({"jobs":[{"jid":1,"ports":[]}]})").jobs[0].ports_bitmap, 0u);
  const pn::PanamaConfig d = pn::PanamaConfig::FromJson("{}");
  EXPECT_EQ(d.num_ports, 4u);
  EXPECT_EQ(d.PacketMemory(), 10485u);
  for (const char* bad : {"[]", "{\"nope\":1}", "{\"float_mode\":\"x\"}", "{\"num_ports\":0}", "{\"num_ports\":65}",
                          "{\"jobs\":[{\"jid\":1}]}", "{\"jobs\":[{\"jid\":1,\"ports\":[4]}]}",
                          "{\"jobs\":[{\"jid\":1,\"ports\":[0]},{\"jid\":1,\"ports\":[1]}]}",
                          "{\"jobs\":[{\"jid\":1,\"ports\":[0],\"trees\":0}]}",
                          "{\"jobs\":[{\"jid\":1,\"ports\":[0],\"result\":\"up\"}]}",
                          "{\"jobs\":[{\"jid\":1,\"ports\":[0],\"result\":[9]}]}",
                          "{\"latency\":\"fast\"}", "{\"latency_model\":{\"bus_bits\":12}}",
                          "{\"latency_model\":{\"clock_mhz\":0}}", "{\"latency_model\":{\"adder_ns\":-1}}", "{\"slot_bytes\":0}",
                          "{\"buffer_bytes\":1600}", "{\"latency\":{\"mode\":\"table1\"}}",
                          "not json"}) {
    EXPECT_THROW(pn::PanamaConfig::FromJson(bad), std::invalid_argument) << bad;
  }
}

TEST(PanamaConfig, ReplayProgramRowAndDump) {
  auto dp = inasim::p4tools::MakeProgram("panama", R"({"jobs":[{"jid":7,"ports":[0,1]}]})");
  ASSERT_NE(dp, nullptr);
  EXPECT_EQ(dp->Name(), "panama");
  EXPECT_NE(inasim::p4tools::ProgramNames().find("panama"), std::string::npos);
  EXPECT_THROW(inasim::p4tools::MakeProgram("panama", R"({"jobs":3})"), std::invalid_argument);
  Recorder rec;
  Pkt p0, p1;
  p0.values = {F(1.0f)};
  p1.values = {F(0.5f)};
  const Bytes b0 = Build(p0), b1 = Build(p1);
  dp->Process(0, inasim::Span<const uint8_t>(b0.data(), b0.size()), 0, rec);
  nlohmann::json st = nlohmann::json::parse(dp->DumpState());
  EXPECT_EQ(st["jobs"][0]["trees"][0]["queued"], nlohmann::json::array({1, 0}));
  EXPECT_EQ(st["jobs"][0]["active"], true);
  dp->Process(1, inasim::Span<const uint8_t>(b1.data(), b1.size()), 0, rec);
  ASSERT_EQ(rec.out.size(), 1u);
  EXPECT_EQ(rec.out[0].bytes, Result(p0, 0, 10485, false, {F(1.5f)}));
  st = nlohmann::json::parse(dp->DumpState());
  EXPECT_EQ(st["name"], "panama");
  EXPECT_EQ(st["stats"]["aggregations"], 1);
  EXPECT_EQ(st["jobs"][0]["trees"][0]["expected_vid"], 1);
  EXPECT_EQ(st["jobs"][0]["ports_bitmap"], 3);
  EXPECT_EQ(st["wnd_cap"], 10485);
}

}  // namespace

TEST(PanamaLatency, ResultsLeaveInTheOrderTheirVectorsComplete) {
  // A gradient's last packet is short: eq. (3) alone would let its result
  // overtake the full-size one aggregated just before it. The adder trees
  // stream in order, so it leaves no earlier (found by a 30,000-value job,
  // 117 full packets + 48 values, whose worker saw its results out of order).
  pn::PanamaDataplane dp(Config({Job(7, {0, 1})}));
  Recorder rec;
  auto send = [&](uint16_t port, Pkt p, Picoseconds now) {
    p.src_ip = 0x0a000001u + port;
    const Bytes b = Build(p);
    dp.Process(port, inasim::Span<const uint8_t>(b.data(), b.size()), now, rec);
  };
  Pkt big, small, later;
  big.values.assign(256, F(1.0f));
  small.vid = 1;
  small.values = {F(2.0f), F(2.0f)};
  later.vid = 2;
  later.values = {F(3.0f)};
  send(0, big, 0);
  send(1, big, 0);
  send(0, small, 0);
  send(1, small, 0);
  ASSERT_EQ(rec.out.size(), 2u);
  const Picoseconds big_latency = AggLatency(rec.out[0].bytes.size());
  EXPECT_EQ(rec.out[0].latency, big_latency);
  EXPECT_LT(AggLatency(rec.out[1].bytes.size()), big_latency);  // alone it would have left first
  EXPECT_EQ(rec.out[1].latency, big_latency);                    // it leaves right behind
  // Once the adder trees are idle again, a vector takes its own latency.
  send(0, later, 10'000 * kNs);
  send(1, later, 10'000 * kNs);
  ASSERT_EQ(rec.out.size(), 3u);
  EXPECT_EQ(rec.out[2].latency, AggLatency(rec.out[2].bytes.size()));
}

TEST(PanamaLatency, PassThroughKeepsEachPortsOrder) {
  // A result coming down the tree (from a non-member port) and plain traffic
  // pass through in the order they came in on that port: a short frame right
  // behind a long one leaves right behind it, not before; another port is
  // not held up.
  Accel a(Config({Job(7, {0, 1})}));
  Pkt long_result, short_result;
  long_result.values.assign(256, F(1.0f));
  short_result.vid = 1;
  short_result.values = {F(2.0f)};
  const auto o1 = a.Send(2, Build(long_result), 0);
  const auto o2 = a.Send(2, Build(short_result), 0);
  const auto o3 = a.Send(3, Build(short_result), 0);
  ASSERT_EQ(o1.size(), 1u);
  ASSERT_EQ(o2.size(), 1u);
  ASSERT_EQ(o3.size(), 1u);
  EXPECT_EQ(a.dp.stats().forwarded, 3u);
  const Picoseconds long_latency = a.dp.latency().NonAggregation(uint32_t(Build(long_result).size()));
  const Picoseconds short_latency = a.dp.latency().NonAggregation(uint32_t(Build(short_result).size()));
  ASSERT_LT(short_latency, long_latency);
  EXPECT_EQ(o1[0].latency, long_latency);
  EXPECT_EQ(o2[0].latency, long_latency);   // same port: behind the long one
  EXPECT_EQ(o3[0].latency, short_latency);  // another port: its own
}

// ============================================================================
// PANAMA-<quorum> (panama §7 PANAMA-0.88 / 0.94; the paper only, not the FPGA)
// ============================================================================

TEST(PanamaQuorum, InspectAggregatesOnceTheReadyPortsWeighEnough) {
  using CL = pn::ControlLogic;
  const std::vector<uint32_t> w = {2, 1, 1};  // workers behind each member port
  auto verdict = [&](std::vector<uint32_t> vids, std::vector<bool> present, uint64_t need) {
    bool p[3] = {present[0], present[1], present[2]};
    return CL::InspectQuorum(5, vids, inasim::Span<const bool>(p, 3), w, need);
  };
  EXPECT_EQ(verdict({5, 0, 0}, {true, false, false}, 3), CL::Verdict::kWait);       // 2 of 3
  EXPECT_EQ(verdict({5, 5, 0}, {true, true, false}, 3), CL::Verdict::kAggregate);   // 3 of 3 needed
  EXPECT_EQ(verdict({0, 5, 5}, {false, true, true}, 3), CL::Verdict::kWait);        // 2: the heavy port is missing
  EXPECT_EQ(verdict({5, 4, 0}, {true, true, false}, 3), CL::Verdict::kDropStale);   // a late packet, others absent
  EXPECT_EQ(verdict({6, 6, 5}, {true, true, true}, 3), CL::Verdict::kSkip);         // all here, 5 lost on two ports
  EXPECT_EQ(verdict({5, 5, 5}, {true, true, true}, 4), CL::Verdict::kAggregate);
  // need = all workers: exactly the hardware's Inspect.
  for (const auto& [vids, present] : std::vector<std::pair<std::vector<uint32_t>, std::vector<bool>>>{
           {{5, 5, 0}, {true, true, false}}, {{5, 5, 5}, {true, true, true}}, {{6, 5, 5}, {true, true, true}},
           {{4, 5, 5}, {true, true, true}}}) {
    bool p[3] = {present[0], present[1], present[2]};
    EXPECT_EQ(CL::InspectQuorum(5, vids, inasim::Span<const bool>(p, 3), w, 4),
              CL::Inspect(5, vids, inasim::Span<const bool>(p, 3)));
  }
}

TEST(PanamaQuorum, SumsTheFirstPortsExactBytesAndDropsTheLateOne) {
  // 4 ports, one worker each, quorum 0.75: ceil(3) = 3 workers. Ports 0, 2, 3
  // arrive; the result is (p0 + +0) + (p2 + p3) with their ECN OR and header
  // of the lowest contributor; port 1's packet of that vector comes later,
  // stale, and is dropped; the observer names the contributing ports.
  pn::PanamaJob j = Job(7, {0, 1, 2, 3});
  j.quorum = 0.75;
  Accel a(Config({j}));
  std::vector<uint16_t> seen;
  uint32_t seen_vid = 99;
  a.dp.on_partial_aggregate = [&](uint16_t jid, uint8_t tid, uint32_t vid, inasim::Span<const uint16_t> ports) {
    EXPECT_EQ(jid, 7);
    EXPECT_EQ(tid, 0);
    seen_vid = vid;
    seen.assign(ports.begin(), ports.end());
  };
  const std::array<std::vector<uint32_t>, 4> vals = {std::vector<uint32_t>{F(1.5f), F(-2.0f)},
                                                     std::vector<uint32_t>{F(100.0f), F(100.0f)},
                                                     std::vector<uint32_t>{F(0.25f), F(3.0f)},
                                                     std::vector<uint32_t>{F(4.0f), 0x80000000}};
  auto v = Vector(0, vals);
  v[2].ecn = 3;
  EXPECT_TRUE(a.Send(0, Build(v[0])).empty());
  EXPECT_TRUE(a.Send(2, Build(v[2])).empty());
  const auto o = a.Send(3, Build(v[3]));
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].kind, Out::kRouted);
  const std::vector<uint32_t> sums = TreeSum(vals, 0b1101);
  EXPECT_EQ(sums[0], F(5.75f));
  EXPECT_EQ(sums[1], F(1.0f));
  EXPECT_EQ(o[0].bytes, Result(v[0], 3, 10485, false, sums));
  EXPECT_EQ(seen, (std::vector<uint16_t>{0, 2, 3}));
  EXPECT_EQ(seen_vid, 0u);
  EXPECT_EQ(a.dp.stats().partial_aggregations, 1u);
  EXPECT_EQ(a.dp.ExpectedVid(7, 0), 1);
  // The late packet of VID 0: stale, dropped at once, nothing buffered.
  EXPECT_TRUE(a.Send(1, Build(v[1])).empty());
  EXPECT_EQ(a.dp.stats().vid_mismatch_dropped, 1u);
  EXPECT_EQ(a.dp.Buffered(7, 1), 0u);
  // VID 1 from ports 1, 0, 3 (port 2 is the slow one now): partial again.
  seen.clear();
  auto v1 = Vector(1, Ones(1.0f));
  EXPECT_TRUE(a.Send(1, Build(v1[1])).empty());
  EXPECT_TRUE(a.Send(0, Build(v1[0])).empty());
  const auto o1 = a.Send(3, Build(v1[3]));
  ASSERT_EQ(o1.size(), 1u);
  EXPECT_EQ(o1[0].bytes, Result(v1[0], 0, 10485, false, {F(3.0f), F(3.0f)}));
  EXPECT_EQ(a.dp.stats().partial_aggregations, 2u);
  EXPECT_EQ(seen, (std::vector<uint16_t>{0, 1, 3}));
  // VID 2: ports 0 and 1 wait, port 2's packet of VID 1 is stale (dropped
  // at once), its VID 2 completes the quorum.
  auto v2 = Vector(2, Ones(1.0f));
  EXPECT_TRUE(a.Send(0, Build(v2[0])).empty());
  EXPECT_TRUE(a.Send(1, Build(v2[1])).empty());
  EXPECT_TRUE(a.Send(2, Build(v1[2])).empty());
  EXPECT_EQ(a.dp.stats().vid_mismatch_dropped, 2u);
  const auto o2 = a.Send(2, Build(v2[2]));
  ASSERT_EQ(o2.size(), 1u);
  EXPECT_EQ(o2[0].bytes, Result(v2[0], 0, 10485, false, {F(3.0f), F(3.0f)}));
  EXPECT_EQ(a.dp.stats().partial_aggregations, 3u);
  EXPECT_EQ(seen, (std::vector<uint16_t>{0, 1, 2}));
  // Two workers at 0.75 need both (ceil 1.5 = 2): every aggregation is
  // whole and the observer is not called.
  pn::PanamaJob two = Job(8, {0, 1});
  two.quorum = 0.75;
  Accel b(Config({two}));
  bool called = false;
  b.dp.on_partial_aggregate = [&](uint16_t, uint8_t, uint32_t, inasim::Span<const uint16_t>) { called = true; };
  auto w = Vector(0, Ones(2.0f), 8);
  EXPECT_TRUE(b.Send(0, Build(w[0])).empty());
  ASSERT_EQ(b.Send(1, Build(w[1])).size(), 1u);
  EXPECT_FALSE(called);
  EXPECT_EQ(b.dp.stats().partial_aggregations, 0u);
}

TEST(PanamaQuorum, PortWeightsCountTheWorkersBehindEachPort) {
  // A spine with two leaves below: 3 workers behind port 0, 1 behind port 1.
  // Quorum 0.75 of 4 = 3: port 0 alone suffices, port 1 alone does not.
  pn::PanamaJob j = Job(7, {0, 1});
  j.quorum = 0.75;
  j.port_workers = {3, 1, 0, 0};
  Accel a(Config({j}));
  Pkt p0, p1;
  p0.values = {F(3.0f)};
  p1.values = {F(1.0f)};
  const auto o = a.Send(0, Build(p0));
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].bytes, Result(p0, 0, 10485, false, {F(3.0f)}));
  p0.vid = p1.vid = 1;
  EXPECT_TRUE(a.Send(1, Build(p1)).empty());  // VID 0 from port 1 never came; VID 1 waits for 3 workers
  const auto o1 = a.Send(0, Build(p0));
  ASSERT_EQ(o1.size(), 1u);
  EXPECT_EQ(o1[0].bytes, Result(p0, 0, 10485, false, {F(4.0f)}));
  // Config errors name the problem.
  j.quorum = 0;
  EXPECT_THROW(pn::PanamaConfig::FromJson(R"({"jobs":[{"jid":1,"ports":[0,1],"quorum":0}]})"), std::invalid_argument);
  EXPECT_THROW(pn::PanamaConfig::FromJson(R"({"num_ports":4,"jobs":[{"jid":1,"ports":[0,1],"port_workers":[1,1]}]})"),
               std::invalid_argument);
  const pn::PanamaConfig c =
      pn::PanamaConfig::FromJson(R"({"num_ports":2,"jobs":[{"jid":1,"ports":[0,1],"quorum":0.88,"port_workers":[8,9]}]})");
  EXPECT_DOUBLE_EQ(c.jobs[0].quorum, 0.88);
  EXPECT_EQ(c.jobs[0].port_workers, (std::vector<uint32_t>{8, 9}));
}

// ============================================================================
// Tree steering (tree_switch.h): the accelerator on a switch of a job's trees
// ============================================================================

namespace {

constexpr std::array<uint8_t, 6> kHostMac = {0x02, 0x00, 0x0a, 0x00, 0x00, 0x01};
constexpr uint32_t kHostIp = 0x0a000001;  // 10.0.0.1

pn::TreeRoute::Child HostChild(uint16_t port) { return {port, kHostIp, kHostMac}; }
pn::TreeRoute::Child SwitchChild(uint16_t port) { return {port, 0, {}}; }

/// Job 7 on ports {0, 1} of a 3-port switch, tree 0 as given.
struct TreeSwitch {
  explicit TreeSwitch(pn::TreeRoute route) : sw(Config3({std::move(route)})) {}
  static pn::TreeSwitchConfig Config3(std::vector<pn::TreeRoute> routes) {
    pn::TreeSwitchConfig c;
    c.accelerator = Config({Job(7, {0, 1})}, 3);
    c.routes = {std::move(routes)};
    return c;
  }
  std::vector<Out> Send(uint16_t port, const Bytes& b) {
    rec.out.clear();
    sw.Process(port, inasim::Span<const uint8_t>(b.data(), b.size()), 0, rec);
    return rec.out;
  }
  pn::PanamaTreeSwitch sw;
  Recorder rec;
};

/// Inputs of vector 0 of job 7 from ports 0 and 1 (values 1 and 0.5).
std::array<Pkt, 2> TwoInputs() {
  std::array<Pkt, 2> p;
  p[0].values = {F(1.0f)};
  p[1].values = {F(0.5f)};
  p[1].src_ip = 0x0a000002;
  return p;
}

uint16_t OwnShare(const pn::PanamaTreeSwitch& sw) {
  return uint16_t(std::min<uint64_t>(65535, sw.accelerator().config().PacketMemory()));
}

}  // namespace

TEST(PanamaTreeSwitch, AResultFromTheChildrenGoesUpToTheParentOnly) {
  TreeSwitch t(pn::TreeRoute{2, {HostChild(0), SwitchChild(1)}});
  const auto in = TwoInputs();
  EXPECT_TRUE(t.Send(0, Build(in[0])).empty());
  const auto o = t.Send(1, Build(in[1]));
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].kind, Out::kUnicast);
  EXPECT_EQ(o[0].port, 2);
  EXPECT_EQ(OwnShare(t.sw), 13981);  // 64 MiB / 3 ports / 1600 B
  EXPECT_EQ(o[0].bytes, Result(in[0], 0, 13981, false, {F(1.5f)}));
  EXPECT_EQ(o[0].latency, AggLatency(o[0].bytes.size()));
}

TEST(PanamaTreeSwitch, AtTheRootTheResultGoesDownToEveryChild) {
  TreeSwitch t(pn::TreeRoute{-1, {SwitchChild(0), SwitchChild(1)}});
  const auto in = TwoInputs();
  t.Send(0, Build(in[0]));
  const auto o = t.Send(1, Build(in[1]));
  const Bytes result = Result(in[0], 0, 13981, false, {F(1.5f)});
  ASSERT_EQ(o.size(), 2u);
  for (uint16_t i = 0; i < 2; ++i) {
    EXPECT_EQ(o[i].kind, Out::kUnicast);
    EXPECT_EQ(o[i].port, i);
    EXPECT_EQ(o[i].bytes, result);
  }
}

TEST(PanamaTreeSwitch, AResultFromTheParentPassesDownAndTheLastHopIsTheWorkers) {
  TreeSwitch t(pn::TreeRoute{2, {HostChild(0), SwitchChild(1)}});
  Pkt down;  // the root's result on its way down: port 2 is no member, so it passes through
  down.values = {F(5.0f), F(-1.0f)};
  const Bytes f = Build(down);
  const auto o = t.Send(2, f);
  ASSERT_EQ(o.size(), 2u);
  Pkt to_host = down;  // the worker's own MAC and address, IPv4 checksum redone
  to_host.dst_mac = kHostMac;
  to_host.dst_ip = kHostIp;
  EXPECT_EQ(o[0].kind, Out::kUnicast);
  EXPECT_EQ(o[0].port, 0);
  EXPECT_EQ(o[0].bytes, Build(to_host));
  EXPECT_EQ(Checksum(o[0].bytes.data() + 14, 20), 0);
  EXPECT_EQ(o[1].port, 1);
  EXPECT_EQ(o[1].bytes, f);  // to a switch: as it came
  EXPECT_EQ(o[0].latency, t.sw.accelerator().latency().NonAggregation(uint32_t(f.size())));
  EXPECT_EQ(o[1].latency, o[0].latency);
  EXPECT_EQ(t.sw.accelerator().stats().forwarded, 1u);
}

TEST(PanamaTreeSwitch, FramesOffTheJobsTreesAreTheSwitchesToRoute) {
  pn::TreeSwitchConfig c;
  c.accelerator = Config({Job(7, {0, 1}, 2), Job(9, {0, 1})}, 4);
  c.routes = {{pn::TreeRoute{2, {SwitchChild(0), SwitchChild(1)}}, pn::TreeRoute{}}};  // tree 1, job 9: not here
  pn::PanamaTreeSwitch sw(c);
  Recorder rec;
  auto send = [&](uint16_t port, Pkt p) {
    rec.out.clear();
    const Bytes b = Build(p);
    sw.Process(port, inasim::Span<const uint8_t>(b.data(), b.size()), 0, rec);
    EXPECT_EQ(rec.out.size(), 1u);
    return rec.out.empty() ? Out{Out::kUnicast, {}, 0, {}, 0} : rec.out[0];
  };
  Pkt p;
  p.values = {F(2.0f)};
  p.tid = 1;  // tree 1 of job 7 does not pass this switch
  EXPECT_EQ(send(3, p).kind, Out::kRouted);
  p.tid = 0;  // on tree 0, from port 3: neither child nor parent
  EXPECT_EQ(send(3, p).kind, Out::kRouted);
  p.jid = 9;  // a job without routes here
  EXPECT_EQ(send(3, p).kind, Out::kRouted);
  p.dscp = 0;  // not an aggregation packet
  const Out o = send(0, p);
  EXPECT_EQ(o.kind, Out::kRouted);
  EXPECT_EQ(o.bytes, Build(p));
}

TEST(PanamaTreeSwitch, AJobAddedLaterIsAsIfInstalledWithTheOthers) {
  const pn::TreeRoute r7{2, {HostChild(0), SwitchChild(1)}}, r9{-1, {SwitchChild(0), SwitchChild(1)}};
  pn::TreeSwitchConfig both;
  both.accelerator = Config({Job(7, {0, 1}), Job(9, {0, 1})}, 3);
  both.routes = {{r7}, {r9}};
  pn::PanamaTreeSwitch a(both);
  pn::TreeSwitchConfig first;
  first.accelerator = Config({Job(7, {0, 1})}, 3);
  first.routes = {{r7}};
  pn::PanamaTreeSwitch b(first);
  b.AddJob(Job(9, {0, 1}), {r9});
  Recorder ra, rb;
  for (uint32_t round = 0; round < 4; ++round) {
    for (uint16_t port : {0, 1}) {
      Pkt p;
      p.jid = round % 2 ? 7 : 9;
      p.vid = round / 2;
      p.values = {F(float(port + p.jid + round))};
      const Bytes f = Build(p);
      a.Process(port, inasim::Span<const uint8_t>(f.data(), f.size()), 0, ra);
      b.Process(port, inasim::Span<const uint8_t>(f.data(), f.size()), 0, rb);
    }
  }
  ASSERT_EQ(ra.out.size(), 6u);  // job 7 up (1 each), job 9 down to both children (2 each), twice
  ASSERT_EQ(rb.out.size(), ra.out.size());
  for (size_t i = 0; i < ra.out.size(); ++i) {
    EXPECT_EQ(rb.out[i].bytes, ra.out[i].bytes) << i;
    EXPECT_EQ(rb.out[i].port, ra.out[i].port) << i;
  }
  EXPECT_EQ(b.DumpState(), a.DumpState());
  try {
    b.AddJob(Job(7, {0}), {});
    FAIL() << "a JID installed twice";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "panama config: job 7 appears twice");
  }
}

TEST(PanamaTreeSwitch, ReplayConfigWithTreeRoutes) {
  auto dp = inasim::p4tools::MakeProgram(
      "panama", R"({"num_ports":3,"jobs":[{"jid":7,"ports":[0,1],"tree_routes":[{"parent_port":2,"children":[
                   {"port":0,"ip":"10.0.0.1","mac":"02:00:0a:00:00:01"},{"port":1}]}]}]})");
  ASSERT_NE(dp, nullptr);
  EXPECT_NE(dynamic_cast<pn::PanamaTreeSwitch*>(dp.get()), nullptr);
  EXPECT_EQ(dp->Name(), "panama");
  Recorder rec;
  const auto in = TwoInputs();
  for (uint16_t port : {0, 1}) {
    const Bytes f = Build(in[port]);
    dp->Process(port, inasim::Span<const uint8_t>(f.data(), f.size()), 0, rec);
  }
  ASSERT_EQ(rec.out.size(), 1u);
  EXPECT_EQ(rec.out[0].port, 2);
  EXPECT_EQ(rec.out[0].bytes, Result(in[0], 0, 13981, false, {F(1.5f)}));
  EXPECT_EQ(nlohmann::json::parse(dp->DumpState())["stats"]["aggregations"], 1);
  // Without tree_routes the accelerator alone, as before.
  EXPECT_EQ(dynamic_cast<pn::PanamaTreeSwitch*>(
                inasim::p4tools::MakeProgram("panama", R"({"jobs":[{"jid":7,"ports":[0,1]}]})").get()),
            nullptr);
  const std::pair<const char*, const char*> bad[] = {
      {R"({"jobs":[{"jid":7,"ports":[0],"tree_routes":{}}]})",
       "panama config: jobs[0].tree_routes: must be an array (one entry per TID)"},
      {R"({"jobs":[{"jid":7,"ports":[0],"tree_routes":[{"children":[{"port":1,"ip":"10.0.0.1"}]}]}]})",
       "panama config: jobs[0].tree_routes[0].children[0]: a host child needs both \"ip\" and \"mac\""},
      {R"({"jobs":[{"jid":7,"ports":[0],"tree_routes":[{"children":[{"port":1,"ip":"10.0.0","mac":"02:00:00:00:00:01"}]}]}]})",
       "panama config: jobs[0].tree_routes[0].children[0].ip: must be an IPv4 address like \"10.0.0.1\" (not 0.0.0.0)"},
      {R"({"jobs":[{"jid":7,"ports":[0],"tree_routes":[{"parent_port":1,"children":[{"port":1}]}]}]})",
       "panama config: job 7 tree 0: bad child port 1"},
      {R"({"num_ports":4,"jobs":[{"jid":7,"ports":[0],"tree_routes":[{"parent_port":4}]}]})",
       "panama config: job 7 tree 0: parent port 4 >= num_ports"},
      {R"({"jobs":[{"jid":7,"ports":[0],"tree_routes":[{},{}]}]})",
       "panama config: job 7: routes for more trees than it has"},
      {R"({"jobs":[{"jid":7,"ports":[0],"tree_routes":[{"parent":1}]}]})",
       "panama config: jobs[0].tree_routes[0]: unknown key \"parent\" (known: children, parent_port)"},
      {R"({"jobs":[{"jid":7,"ports":[0],"tree_routes":[]}],"nope":1})",
       "panama config: unknown key \"nope\" (known: accelerator_buffer_bytes, claim_all_traffic, float_mode, jobs, latency, latency_model, num_ports, slot_bytes)"},
  };
  for (const auto& [text, message] : bad) {
    try {
      inasim::p4tools::MakeProgram("panama", text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), message) << text;
    }
  }
}
