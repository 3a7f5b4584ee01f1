// Conformance tests of the SwitchML UDP-path model (p4model/switchml) against
// the upstream P4 and controller (p4lang/p4app-switchML@b5c74a04). Expected
// packets are built here, byte by byte, from the P4's header layouts; the
// model's own serializer is never used to build an expectation.
#include "protocols/switchml/dataplane/switchml_dataplane.h"
#include "tests/common/recording_emitter.h"
#include "tests/common/test_bytes.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace sml = inasim::p4::switchml;
using namespace inasim::testing;  // Bytes, kNs, Put16/32, Get16/32, Checksum

namespace {

constexpr Picoseconds kPass = 520'000;  // 520 ns per pass, in ps

using Out = inasim::testing::Emitted;
using Recorder = inasim::testing::RecordingEmitter;

// --- independent byte builders ----------------------------------------------

bool ChecksumValid(const Bytes& f) { return Checksum(f.data() + 14, 20) == 0; }

std::array<uint8_t, 6> Mac(uint8_t last) { return {0x02, 0x00, 0x00, 0x00, 0x00, last}; }
uint32_t Ip(uint8_t last) { return 0x0a000000u | last; }  // 10.0.0.x
const std::array<uint8_t, 6> kSwitchMac = {0x02, 0x00, 0x00, 0x00, 0x00, 0xfe};
constexpr uint32_t kSwitchIp = 0x0a0000fe;
constexpr uint16_t kPortBase = 10;

uint16_t WorkerSrcPort(int w) { return uint16_t(20000 + w); }
uint16_t WorkerDstPort(int w) { return uint16_t(0xbee0 + (w % 16)); }

sml::SwitchMLConfig MakeConfig(int n, uint32_t packet_size = 256) {
  sml::SwitchMLConfig c;
  c.switch_mac = kSwitchMac;
  c.switch_ip = kSwitchIp;
  c.num_workers = uint8_t(n);
  c.elements_per_packet = packet_size / 4;
  for (int i = 0; i < n; ++i) {
    c.workers.push_back({uint16_t(i), uint16_t(kPortBase + i), Mac(uint8_t(i + 1)), Ip(uint8_t(i + 1)), 0, {}});
  }
  return c;
}

struct Packet {
  int worker = 0;
  uint8_t size_code = 1;  // packet_size_t: 1 = 256 B, 3 = 1024 B
  uint8_t job = 7;
  uint32_t tsi = 0x11223344;
  uint16_t slot = 0;
  int set = 0;
  int8_t e0 = 0, e1 = 0;
  std::vector<int32_t> values;  // 64 or 256
};

size_t DataBytes(uint8_t size_code) { return size_code == 3 ? 1024 : 256; }

// A worker's packet to the switch: Ethernet / IPv4 / UDP / switchml_h /
// exponents_h / data.
Bytes WorkerPacket(const Packet& p) {
  Bytes b;
  PutMac(b, kSwitchMac);
  PutMac(b, Mac(uint8_t(p.worker + 1)));
  Put16(b, 0x0800);
  const size_t data = p.values.size() * 4;
  PutIpv4Udp(b,
             {Ip(uint8_t(p.worker + 1)), kSwitchIp, WorkerSrcPort(p.worker), WorkerDstPort(p.worker), 0xabcd, 0x1234,
              /*DF*/ 0x4000, 63},
             10 + data);
  b.push_back(uint8_t(0x0 << 4 | p.size_code));  // msg_type 0
  b.push_back(p.job);
  Put32(b, p.tsi);
  Put16(b, uint16_t((p.set ? 0x8000 : 0) | (p.slot & 0x3fff)));
  b.push_back(uint8_t(p.e0));
  b.push_back(uint8_t(p.e1));
  for (int32_t v : p.values) Put32(b, uint32_t(v));
  return b;
}

// The switch's result packet for worker `to`, as UDPSender builds it; `last`
// is the packet that triggered the output (its ports, tsi, job are reused).
Bytes ResultPacket(int to, const Packet& last, const std::vector<uint32_t>& data, int8_t e0, int8_t e1) {
  Bytes b;
  PutMac(b, Mac(uint8_t(to + 1)));
  PutMac(b, kSwitchMac);
  Put16(b, 0x0800);
  // UDP ports: src = the request's dst port, dst = its src port.
  PutIpv4Udp(b, {kSwitchIp, Ip(uint8_t(to + 1)), WorkerDstPort(last.worker), WorkerSrcPort(last.worker)},
             8 + 2 + DataBytes(last.size_code));
  b.push_back(uint8_t(1 << 4 | last.size_code));  // msg_type 1
  b.push_back(last.job);
  Put32(b, last.tsi);
  Put16(b, uint16_t((last.set ? 0x8000 : 0) | (last.slot & 0x3fff)));
  b.push_back(uint8_t(e0));
  b.push_back(uint8_t(e1));
  for (uint32_t v : data) Put32(b, v);
  return b;
}

std::vector<int32_t> Values(int worker, size_t n, int salt = 0) {
  std::vector<int32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = int32_t((worker + 1) * 1000 + int(i) * 7 + salt * 100000);
  return v;
}

void Send(sml::SwitchMLDataplane& dp, Recorder& rec, const Packet& p) {
  const Bytes b = WorkerPacket(p);
  dp.Process(uint16_t(kPortBase + p.worker), inasim::Span<const uint8_t>(b.data(), b.size()), 0, rec);
}

nlohmann::json Pipes(const sml::SwitchMLDataplane& dp) { return nlohmann::json::parse(dp.DumpState())["pipes"]; }

// Checks one Emit per worker, in worker order, each with that worker's bytes.
void ExpectBroadcast(const Recorder& rec, int n, const Packet& last, const std::vector<uint32_t>& data, int8_t e0,
                     int8_t e1, Picoseconds latency) {
  ASSERT_EQ(rec.out.size(), size_t(n));
  for (int w = 0; w < n; ++w) {
    const Out& o = rec.out[w];
    EXPECT_EQ(o.kind, Out::kUnicast);
    EXPECT_EQ(o.port, kPortBase + w);
    EXPECT_EQ(o.latency, latency);
    EXPECT_TRUE(ChecksumValid(o.bytes)) << "copy " << w;
    EXPECT_EQ(o.bytes, ResultPacket(w, last, data, e0, e1)) << "copy " << w;
  }
}

// Runs one full 256 B reduction by n workers on (slot, set); returns the result.
void Reduce(int n, uint16_t slot, int set) {
  sml::SwitchMLDataplane dp(MakeConfig(n));
  Recorder rec;
  std::vector<std::vector<int32_t>> vals;
  Packet p;
  for (int w = 0; w < n; ++w) {
    p = Packet{};
    p.worker = w;
    p.slot = slot;
    p.set = set;
    p.values = Values(w, 64);
    if (w == 0) {
      p.values[0] = std::numeric_limits<int32_t>::max();  // wraps when added to
      p.values[63] = std::numeric_limits<int32_t>::min();
    }
    p.values[1] = -1 - w;  // unsigned wrap-around of the 32-bit adder
    p.values[40] = -1;
    vals.push_back(p.values);
    Send(dp, rec, p);
    if (w + 1 < n) {
      ASSERT_TRUE(rec.out.empty()) << "worker " << w;
      EXPECT_EQ(dp.last_passes(), 1u);
    }
  }
  EXPECT_EQ(dp.last_passes(), 2u);
  EXPECT_EQ(dp.LastPasses(), 2u);
  const auto sum = Sum(vals);
  EXPECT_LT(int32_t(sum[0]), 0);  // INT32_MAX + positive values wrapped around
  ExpectBroadcast(rec, n, p, sum, 0, 0, 2 * kPass);
  // Registers: bitmap all workers, counter back to 0.
  const uint32_t all = n == 32 ? 0xffffffffu : ((1u << n) - 1);
  const auto bm = dp.WorkerBitmap(0, slot);
  EXPECT_EQ(set ? bm.second : bm.first, all);
  EXPECT_EQ(dp.WorkersCount(0, uint32_t(slot) * 2 + set).first, 0);
}

}  // namespace

// ---------------------------------------------------------------------------

TEST(SwitchML, FirstPacketOfSlotUpdatesRegistersWithoutOutput) {
  sml::SwitchMLDataplane dp(MakeConfig(3));
  Recorder rec;
  Packet p;
  p.worker = 1;
  p.slot = 5;
  p.set = 1;
  p.e0 = -4;
  p.e1 = 9;
  p.values = Values(1, 64);
  Send(dp, rec, p);
  EXPECT_TRUE(rec.out.empty());
  EXPECT_EQ(dp.last_passes(), 1u);
  const uint32_t idx = 5 * 2 + 1;  // set bit moved to the LSB
  EXPECT_EQ(dp.WorkerBitmap(0, 5).first, 0u);
  EXPECT_EQ(dp.WorkerBitmap(0, 5).second, 1u << 1);
  EXPECT_EQ(dp.WorkersCount(0, idx).first, 2);  // num_workers - 1
  EXPECT_EQ(dp.Exponent(0, idx).first, -4);
  EXPECT_EQ(dp.Exponent(0, idx).second, 9);
  for (int k = 0; k < 32; ++k) {
    EXPECT_EQ(dp.Value(0, k, idx).first, uint32_t(p.values[k]));
    EXPECT_EQ(dp.Value(0, k, idx).second, uint32_t(p.values[32 + k]));
  }
  EXPECT_EQ(dp.Value(0, 0, 5 * 2).first, 0u);  // the other set untouched
  EXPECT_EQ(dp.stats().consumed, 1u);
}

TEST(SwitchML, ReductionByTwoWorkers) { Reduce(2, 0, 0); }
TEST(SwitchML, ReductionByThreeWorkers) { Reduce(3, 17, 1); }
TEST(SwitchML, ReductionByThirtyTwoWorkers) { Reduce(32, 8191, 0); }

TEST(SwitchML, DuplicateWhileIncompleteIsDroppedAndChangesNothing) {
  sml::SwitchMLDataplane dp(MakeConfig(3));
  Recorder rec;
  Packet p;
  p.worker = 0;
  p.slot = 2;
  p.values = Values(0, 64);
  Send(dp, rec, p);
  const auto before = Pipes(dp);
  Packet dup = p;
  dup.values = Values(0, 64, 9);  // different data must not be summed
  Send(dp, rec, dup);
  EXPECT_TRUE(rec.out.empty());
  EXPECT_EQ(Pipes(dp), before);
  EXPECT_EQ(dp.last_passes(), 1u);  // flag 2, retransmission -> drop
  EXPECT_EQ(dp.stats().dropped, 1u);
  // Completing the slot still yields the sum of the original packets only.
  std::vector<std::vector<int32_t>> vals{p.values};
  Packet q;
  for (int w = 1; w < 3; ++w) {
    q = Packet{};
    q.worker = w;
    q.slot = 2;
    q.values = Values(w, 64);
    vals.push_back(q.values);
    Send(dp, rec, q);
  }
  ExpectBroadcast(rec, 3, q, Sum(vals), 0, 0, 2 * kPass);
}

TEST(SwitchML, DuplicateInTwoWorkerJobTakesAHarvestPassThenDrops) {
  // With two workers the duplicate reads counter 1 (LAST), so the 256 B entries
  // send it to HARVEST7, where (LAST, map_result != 0) matches only "drop".
  sml::SwitchMLDataplane dp(MakeConfig(2));
  Recorder rec;
  Packet p;
  p.values = Values(0, 64);
  Send(dp, rec, p);
  const auto before = Pipes(dp);
  Send(dp, rec, p);
  EXPECT_TRUE(rec.out.empty());
  EXPECT_EQ(dp.last_passes(), 2u);
  EXPECT_EQ(Pipes(dp), before);
}

TEST(SwitchML, RetransmissionAfterCompletionIsAnsweredByUnicastEveryTime) {
  sml::SwitchMLDataplane dp(MakeConfig(3));
  Recorder rec;
  std::vector<std::vector<int32_t>> vals;
  Packet last;
  for (int w = 0; w < 3; ++w) {
    Packet p;
    p.worker = w;
    p.slot = 9;
    p.e0 = int8_t(w);
    p.e1 = int8_t(-w);
    p.values = Values(w, 64);
    vals.push_back(p.values);
    Send(dp, rec, p);
    last = p;
  }
  ASSERT_EQ(rec.out.size(), 3u);
  const auto sum = Sum(vals);
  const auto before = Pipes(dp);
  for (int round = 0; round < 3; ++round) {
    rec.out.clear();
    Packet again;
    again.worker = 1;
    again.slot = 9;
    again.tsi = 0x55667788 + round;
    again.e0 = 1;
    again.e1 = -1;
    again.values = Values(1, 64, 3);  // payload ignored: stored result is sent
    Send(dp, rec, again);
    ASSERT_EQ(rec.out.size(), 1u) << "round " << round;
    EXPECT_EQ(rec.out[0].kind, Out::kUnicast);
    EXPECT_EQ(rec.out[0].port, kPortBase + 1);
    EXPECT_EQ(rec.out[0].latency, 2 * kPass);
    EXPECT_EQ(rec.out[0].bytes, ResultPacket(1, again, sum, 2, 0));
    EXPECT_TRUE(ChecksumValid(rec.out[0].bytes));
    EXPECT_EQ(Pipes(dp), before);
  }
  EXPECT_EQ(dp.stats().retransmits, 3u);
}

TEST(SwitchML, BothSetsOfASlotInFlight) {
  // Worker 0 got set 0's result and moves on to set 1 of the slot while worker
  // 1 lost the result and retransmits set 0: set 0's stored result must still
  // be served while set 1 aggregates.
  sml::SwitchMLDataplane dp(MakeConfig(2));
  Recorder rec;
  Packet a0, a1, b0, b1;
  a0.worker = 0; a0.slot = 4; a0.set = 0; a0.values = Values(0, 64, 1);
  a1.worker = 1; a1.slot = 4; a1.set = 0; a1.values = Values(1, 64, 3);
  b0.worker = 0; b0.slot = 4; b0.set = 1; b0.values = Values(0, 64, 2);
  b1.worker = 1; b1.slot = 4; b1.set = 1; b1.values = Values(1, 64, 4);
  Send(dp, rec, a0);
  Send(dp, rec, a1);
  const auto set0 = Sum({a0.values, a1.values});
  ExpectBroadcast(rec, 2, a1, set0, 0, 0, 2 * kPass);
  rec.out.clear();
  Send(dp, rec, b0);
  EXPECT_TRUE(rec.out.empty());
  // Moving to set 1 removed worker 0's bit from set 0 (worker_bitmap_update_set1).
  EXPECT_EQ(dp.WorkerBitmap(0, 4).first, 1u << 1);
  EXPECT_EQ(dp.WorkerBitmap(0, 4).second, 1u << 0);
  Send(dp, rec, a1);  // retransmission of set 0
  ASSERT_EQ(rec.out.size(), 1u);
  EXPECT_EQ(rec.out[0].port, kPortBase + 1);
  EXPECT_EQ(rec.out[0].bytes, ResultPacket(1, a1, set0, 0, 0));
  rec.out.clear();
  Send(dp, rec, b1);
  ExpectBroadcast(rec, 2, b1, Sum({b0.values, b1.values}), 0, 0, 2 * kPass);
}

TEST(SwitchML, ProtocolViolationMovingSetsEarlyRestartsTheOtherSet) {
  // Upstream behaviour kept: a worker that sends set 1 before set 0 completed
  // clears its set-0 bit, so the next set-0 packet sees an empty bitmap and
  // overwrites (write_read1) instead of adding.
  sml::SwitchMLDataplane dp(MakeConfig(2));
  Recorder rec;
  Packet a0, b0, a1;
  a0.worker = 0; a0.slot = 4; a0.set = 0; a0.values = Values(0, 64, 1);
  b0.worker = 0; b0.slot = 4; b0.set = 1; b0.values = Values(0, 64, 2);
  a1.worker = 1; a1.slot = 4; a1.set = 0; a1.values = Values(1, 64, 3);
  Send(dp, rec, a0);
  Send(dp, rec, b0);
  Send(dp, rec, a1);
  ExpectBroadcast(rec, 2, a1, std::vector<uint32_t>(a1.values.begin(), a1.values.end()), 0, 0, 2 * kPass);
}

TEST(SwitchML, SlotReuseAfterTheOtherSetCompletes) {
  sml::SwitchMLDataplane dp(MakeConfig(2));
  Recorder rec;
  for (int round = 0; round < 4; ++round) {  // set 0, 1, 0, 1
    rec.out.clear();
    Packet p0, p1;
    p0.worker = 0; p0.slot = 1; p0.set = round % 2; p0.values = Values(0, 64, round);
    p1.worker = 1; p1.slot = 1; p1.set = round % 2; p1.values = Values(1, 64, round + 10);
    Send(dp, rec, p0);
    EXPECT_TRUE(rec.out.empty()) << "round " << round;
    Send(dp, rec, p1);
    ExpectBroadcast(rec, 2, p1, Sum({p0.values, p1.values}), 0, 0, 2 * kPass);
  }
}

TEST(SwitchML, OneWorkerJob) {
  sml::SwitchMLDataplane dp(MakeConfig(1));
  Recorder rec;
  Packet p;
  p.slot = 3;
  p.e0 = -2;
  p.e1 = 5;
  p.values = Values(0, 64);
  Send(dp, rec, p);
  EXPECT_EQ(dp.last_passes(), 2u);
  std::vector<uint32_t> same(p.values.begin(), p.values.end());
  ExpectBroadcast(rec, 1, p, same, -2, 5, 2 * kPass);
  EXPECT_EQ(dp.WorkersCount(0, 6).first, 0);
  rec.out.clear();
  Send(dp, rec, p);  // retransmission: flag forced to FIRST -> unicast
  ASSERT_EQ(rec.out.size(), 1u);
  EXPECT_EQ(rec.out[0].bytes, ResultPacket(0, p, same, -2, 5));
  EXPECT_EQ(dp.stats().retransmits, 1u);
  rec.out.clear();
  Packet next = p;
  next.set = 1;
  next.values = Values(0, 64, 5);
  Send(dp, rec, next);
  ExpectBroadcast(rec, 1, next, std::vector<uint32_t>(next.values.begin(), next.values.end()), -2, 5, 2 * kPass);
}

TEST(SwitchML, ExponentMaxWithNegativeValues) {
  sml::SwitchMLDataplane dp(MakeConfig(3));
  Recorder rec;
  const int8_t e0[3] = {-5, 2, -7};     // mixed signs: signed max is 2
  const int8_t e1[3] = {-128, -1, -2};  // all negative: max is -1
  Packet last;
  std::vector<std::vector<int32_t>> vals;
  for (int w = 0; w < 3; ++w) {
    Packet p;
    p.worker = w;
    p.slot = 11;
    p.e0 = e0[w];
    p.e1 = e1[w];
    p.values = Values(w, 64);
    vals.push_back(p.values);
    Send(dp, rec, p);
    last = p;
  }
  EXPECT_EQ(dp.Exponent(0, 22).first, 2);
  EXPECT_EQ(dp.Exponent(0, 22).second, -1);
  ExpectBroadcast(rec, 3, last, Sum(vals), 2, -1, 2 * kPass);
}

TEST(SwitchML, Mode1024UsesFourPipesAndElevenPasses) {
  sml::SwitchMLDataplane dp(MakeConfig(2, 1024));
  Recorder rec;
  Packet p0, p1;
  p0.worker = 0; p0.size_code = 3; p0.slot = 6; p0.e0 = 3; p0.e1 = -9; p0.values = Values(0, 256);
  p1.worker = 1; p1.size_code = 3; p1.slot = 6; p1.e0 = 1; p1.e1 = -8; p1.values = Values(1, 256, 7);
  p0.values[255] = std::numeric_limits<int32_t>::max();
  p1.values[255] = 1;
  Send(dp, rec, p0);
  EXPECT_TRUE(rec.out.empty());
  EXPECT_EQ(dp.last_passes(), 4u);  // CONSUME0..3, finish_consume in pipe 3
  for (int pipe = 0; pipe < 4; ++pipe) {
    EXPECT_EQ(dp.WorkerBitmap(pipe, 6).first, 1u) << "pipe " << pipe;
    EXPECT_EQ(dp.WorkersCount(pipe, 12).first, 1) << "pipe " << pipe;
    // 128 B chunk c of the packet lives in pipe c / 2 (d0 = even, d1 = odd chunk).
    EXPECT_EQ(dp.Value(pipe, 0, 12).first, uint32_t(p0.values[(2 * pipe) * 32]));
    EXPECT_EQ(dp.Value(pipe, 31, 12).second, uint32_t(p0.values[(2 * pipe + 1) * 32 + 31]));
  }
  // next_step's counters exist per pipe too (next_step_selector.p4:37-40):
  // recirculate_for_consume counts a consume (drop) and a recirculation in
  // pipes 0, 1, 2; finish_consume a consume in pipe 3. The top level sums them.
  const auto dump = nlohmann::json::parse(dp.DumpState());
  for (int pipe = 0; pipe < 4; ++pipe) {
    const auto& c = dump["next_step_counters_by_pipe"][pipe]["12"];
    EXPECT_EQ(c["drop"], 1) << "pipe " << pipe;
    EXPECT_EQ(c["recirculate"], pipe < 3 ? 1 : 0) << "pipe " << pipe;
  }
  EXPECT_EQ(dump["next_step_counters"]["12"]["drop"], 4);
  EXPECT_EQ(dump["next_step_counters"]["12"]["recirculate"], 3);
  Send(dp, rec, p1);
  EXPECT_EQ(dp.last_passes(), 11u);  // CONSUME0..3 + HARVEST1..7
  const auto sum = Sum({p0.values, p1.values});
  EXPECT_EQ(sum[255], 0x80000000u);
  // Upstream harvest ports 452,324,448,196,192,64,68 run HARVEST1..7 in pipes
  // 3,2,3,1,1,0,0 (dev port >> 7): HARVEST3 reads d0 (chunk 6's sums) in pipe
  // 3, not chunk 4's in pipe 2. The model keeps that; see README.
  std::vector<uint32_t> expected;
  const int chunk_source[8] = {0, 1, 2, 3, 6, 5, 6, 7};
  for (int c = 0; c < 8; ++c)
    for (int i = 0; i < 32; ++i) expected.push_back(sum[chunk_source[c] * 32 + i]);
  ExpectBroadcast(rec, 2, p1, expected, 3, -8, 11 * kPass);
  // Retransmission to the full slot: the whole 11-pass path, unicast.
  rec.out.clear();
  Send(dp, rec, p0);
  EXPECT_EQ(dp.last_passes(), 11u);
  ASSERT_EQ(rec.out.size(), 1u);
  EXPECT_EQ(rec.out[0].bytes, ResultPacket(0, p0, expected, 3, -8));
}

TEST(SwitchML, Mode1024WithoutFoldedPipeDrops) {
  auto c = MakeConfig(2, 1024);
  c.folded_pipe = false;
  sml::SwitchMLDataplane dp(c);
  Recorder rec;
  Packet p;
  p.size_code = 3;
  p.values = Values(0, 256);
  Send(dp, rec, p);
  EXPECT_EQ(dp.last_passes(), 1u);
  EXPECT_EQ(dp.stats().dropped, 1u);
}

TEST(SwitchML, UnsupportedSizesAreDroppedAfterConsume) {
  sml::SwitchMLDataplane dp(MakeConfig(2));
  Recorder rec;
  Packet p;
  p.size_code = 0;  // 128 B: entry priority 0 drops
  p.values = Values(0, 64);
  Send(dp, rec, p);
  EXPECT_TRUE(rec.out.empty());
  EXPECT_EQ(dp.stats().dropped, 1u);
  EXPECT_EQ(dp.WorkerBitmap(0, 0).first, 1u);  // registers were updated first
}

TEST(SwitchML, NonSwitchMLPacketsAreNotClaimed) {
  sml::SwitchMLDataplane dp(MakeConfig(2));
  Packet p;
  p.values = Values(0, 64);
  const Bytes good = WorkerPacket(p);
  auto claims = [&](const Bytes& b) {
    return dp.Claims(inasim::p4::ParseFrame(b.data(), b.size(), uint32_t(b.size())));
  };
  EXPECT_TRUE(claims(good));
  for (uint16_t port : {0xbee0, 0xbee7, 0xbeef}) {
    Bytes b = good;
    b[36] = uint8_t(port >> 8);
    b[37] = uint8_t(port);
    EXPECT_TRUE(claims(b)) << port;
  }
  for (uint16_t port : {0xbedf, 0xbef0, 4791, 53}) {
    Bytes b = good;
    b[36] = uint8_t(port >> 8);
    b[37] = uint8_t(port);
    EXPECT_FALSE(claims(b)) << port;
  }
  Bytes tcp = good;
  tcp[23] = 6;
  EXPECT_FALSE(claims(tcp));
  Bytes arp = good;
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_FALSE(claims(arp));
  Bytes opts = good;
  opts[14] = 0x46;  // IHL 6: the parser only takes IHL 5
  EXPECT_FALSE(claims(opts));
}

TEST(SwitchML, UnknownWorkerAndFragmentsAreForwarded) {
  sml::SwitchMLDataplane dp(MakeConfig(2));
  Recorder rec;
  Packet p;
  p.worker = 5;  // not in the job: receive_udp misses -> forward()
  p.values = Values(5, 64);
  Bytes b = WorkerPacket(p);
  dp.Process(3, inasim::Span<const uint8_t>(b.data(), b.size()), 0, rec);
  ASSERT_EQ(rec.out.size(), 1u);
  EXPECT_EQ(rec.out[0].kind, Out::kRouted);
  EXPECT_EQ(rec.out[0].bytes, b);
  Packet q;
  q.values = Values(0, 64);
  Bytes frag = WorkerPacket(q);
  frag[21] = 0x01;  // frag_offset 1
  dp.Process(kPortBase, inasim::Span<const uint8_t>(frag.data(), frag.size()), 0, rec);
  ASSERT_EQ(rec.out.size(), 2u);
  EXPECT_EQ(rec.out[1].kind, Out::kRouted);
  EXPECT_EQ(dp.stats().forwarded, 2u);
  EXPECT_EQ(dp.WorkerBitmap(0, 0).first, 0u);
}

TEST(SwitchML, TruncatedPacketsAreDroppedAndCounted) {
  sml::SwitchMLDataplane dp(MakeConfig(2));
  Recorder rec;
  Packet p;
  p.values = Values(0, 64);
  const Bytes full = WorkerPacket(p);
  ASSERT_EQ(full.size(), 308u);
  uint64_t n = 0;
  for (size_t len : {size_t(0), size_t(13), size_t(20), size_t(41), size_t(42), size_t(51), size_t(52), size_t(180),
                     size_t(307)}) {
    dp.Process(kPortBase, inasim::Span<const uint8_t>(full.data(), len), 0, rec);
    ++n;
    EXPECT_EQ(dp.stats().malformed_dropped, n) << len;
  }
  EXPECT_TRUE(rec.out.empty());
  EXPECT_EQ(dp.WorkerBitmap(0, 0).first, 0u);
  // 1024 B header but only 256 B of data: the CONSUME1 pass runs out of bytes.
  sml::SwitchMLDataplane dp2(MakeConfig(2, 1024));
  Packet q;
  q.size_code = 3;
  q.values = Values(0, 64);
  Send(dp2, rec, q);
  EXPECT_TRUE(rec.out.empty());
  EXPECT_EQ(dp2.stats().malformed_dropped, 1u);
}

// An RDMA job's controller installs receive_roce's entries, not
// receive_udp's (switchml.py:400-480): a SwitchML UDP packet from one of its
// workers is regular traffic (found by inasim-p4 check's RoCE pipeline runs).
TEST(SwitchML, UdpPacketsOfAnRdmaJobAreNotAggregated) {
  sml::SwitchMLConfig c = MakeConfig(2);
  c.transport = sml::SwitchMLTransport::kRdma;
  c.message_size = 256;
  for (auto& w : c.workers) w.qpns_and_psns = {{0x100u + w.worker_id, 0}};
  sml::SwitchMLDataplane dp(c);
  EXPECT_TRUE(dp.udp_receiver().entries().empty());
  Packet p;
  p.values.assign(64, 5);
  const Bytes b = WorkerPacket(p);
  Recorder rec;
  dp.Process(kPortBase, inasim::Span<const uint8_t>(b.data(), b.size()), 0, rec);
  ASSERT_EQ(rec.out.size(), 1u);
  EXPECT_EQ(rec.out[0].kind, Out::kRouted);
  EXPECT_EQ(rec.out[0].bytes, b);
  EXPECT_EQ(dp.stats().forwarded, 1u);
  EXPECT_EQ(dp.WorkerBitmap(0, 0).first, 0u);
}

TEST(SwitchML, DropSimulation) {
  auto c = MakeConfig(2);
  c.ingress_drop_probability = 1.0;  // 0xffff: every packet
  sml::SwitchMLDataplane in(c);
  Recorder rec;
  Packet p;
  p.values = Values(0, 64);
  Send(in, rec, p);
  EXPECT_EQ(in.stats().simulated_ingress_drops, 1u);
  EXPECT_EQ(in.WorkerBitmap(0, 0).first, 0u);
  auto e = MakeConfig(1);
  e.egress_drop_probability = 1.0;
  sml::SwitchMLDataplane eg(e);
  Send(eg, rec, p);
  EXPECT_TRUE(rec.out.empty());
  EXPECT_EQ(eg.stats().simulated_egress_drops, 1u);
  EXPECT_EQ(eg.WorkerBitmap(0, 0).first, 1u);  // consumed before the egress drop
  // simulated_drop_packet_counter, by QP_INDEX: a UDP packet's (no BTH) is 0.
  EXPECT_EQ(eg.egress_drop_sim().simulated_drop_packet_counter, 1u);
  EXPECT_EQ(eg.egress_drop_sim().simulated_drop_packet_counter_by_qp, (std::map<uint32_t, uint64_t>{{0, 1}}));
  // Upstream's egress still runs the sender for a dropped copy
  // (switchml.p4:209-226): dst_addr's counter counts it. With three
  // workers, the completing worker's (2) entry counts all three copies: a
  // dropped copy is IGNORE, so it keeps worker_id instead of its rid.
  auto e3 = MakeConfig(3);
  e3.egress_drop_probability = 1.0;
  sml::SwitchMLDataplane eg3(e3);
  for (int w = 0; w < 3; ++w) {
    Packet q;
    q.worker = w;
    q.values = Values(w, 64);
    Send(eg3, rec, q);
  }
  EXPECT_TRUE(rec.out.empty());
  const auto sent = eg3.udp_sender().send_counter();
  ASSERT_EQ(sent.count(2), 1u);
  EXPECT_EQ(sent.at(2).packets, 3u);
  EXPECT_EQ(sent.count(0) ? sent.at(0).packets : 0u, 0u);
}

TEST(SwitchML, DumpStateListsTouchedRegisters) {
  sml::SwitchMLDataplane dp(MakeConfig(2));
  Recorder rec;
  Packet p;
  p.slot = 7;
  p.set = 1;
  p.values = Values(0, 64);
  Send(dp, rec, p);
  const auto j = nlohmann::json::parse(dp.DumpState());
  EXPECT_EQ(j["name"], "switchml");
  const auto& pipe0 = j["pipes"][0];
  EXPECT_EQ(pipe0["worker_bitmap"]["7"][1], 1);
  EXPECT_EQ(pipe0["workers_count"]["15"][0], 1);
  EXPECT_EQ(pipe0["values"]["15"][0][0], uint32_t(p.values[0]));
  EXPECT_EQ(pipe0["values"].size(), 1u);
  EXPECT_EQ(j["receive_counter"]["0"]["packets"], 1);
  EXPECT_EQ(j["next_step_counters"]["15"]["drop"], 1);
}

TEST(SwitchML, ConfigFromJson) {
  const auto c = sml::SwitchMLConfig::FromJson(R"({
    "switch_mac":"02:00:00:00:00:fe","switch_ip":"10.0.0.254","elements_per_packet":256,"pool_size":512,
    "multicast_group":3,"pass_latency_ns":600,
    "workers":[{"id":0,"port":4,"mac":"02:00:00:00:00:01","ip":"10.0.0.1"},
               {"id":1,"port":5,"mac":"02:00:00:00:00:02","ip":"10.0.0.2"}]})");
  EXPECT_EQ(c.switch_mac, kSwitchMac);
  EXPECT_EQ(c.switch_ip, kSwitchIp);
  EXPECT_EQ(c.num_workers, 2);
  EXPECT_EQ(c.elements_per_packet, 256u);
  EXPECT_TRUE(c.folded_pipe);
  EXPECT_EQ(c.pool_size, 512u);
  EXPECT_EQ(c.multicast_group, 3);
  EXPECT_EQ(c.pass_latency_ps, 600'000u);
  ASSERT_EQ(c.workers.size(), 2u);
  EXPECT_EQ(c.workers[1].port, 5);
  EXPECT_EQ(c.workers[1].ip, Ip(2));
  EXPECT_THROW(sml::SwitchMLConfig::FromJson("{"), std::invalid_argument);
  EXPECT_THROW(sml::SwitchMLConfig::FromJson(R"({"switch_mac":"x","switch_ip":"10.0.0.1","workers":[]})"),
               std::invalid_argument);
  EXPECT_THROW(sml::SwitchMLConfig::FromJson(
                   R"({"switch_mac":"02:00:00:00:00:fe","switch_ip":"10.0.0.254","elements_per_packet":128,
                       "workers":[{"id":0,"port":4,"mac":"02:00:00:00:00:01","ip":"10.0.0.1"}]})"),
               std::invalid_argument);
  EXPECT_THROW(sml::SwitchMLConfig::FromJson(
                   R"({"switch_mac":"02:00:00:00:00:fe","switch_ip":"10.0.0.254","num_workers":300,
                       "workers":[{"id":0,"port":4,"mac":"02:00:00:00:00:01","ip":"10.0.0.1"}]})"),
               std::invalid_argument);
  // Latency is passes x pass_latency.
  sml::SwitchMLDataplane dp(sml::SwitchMLConfig::FromJson(
      R"({"switch_mac":"02:00:00:00:00:fe","switch_ip":"10.0.0.254","pass_latency_ns":600,
          "workers":[{"id":0,"port":10,"mac":"02:00:00:00:00:01","ip":"10.0.0.1"}]})"));
  Recorder rec;
  Packet p;
  p.values = Values(0, 64);
  Send(dp, rec, p);
  ASSERT_EQ(rec.out.size(), 1u);
  EXPECT_EQ(rec.out[0].latency, 2 * 600'000u);
}

TEST(SwitchML, WorkerDevicePortsMustBeOrdinaryPipeZeroPorts) {
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:50-57: frames from
  // ports 64 and 68 and from every port of pipes 1-3 are parsed as
  // recirculated passes, so a worker there never aggregates: refused, naming
  // the worker.
  for (uint16_t bad : {uint16_t(64), uint16_t(68), uint16_t(128), uint16_t(200), uint16_t(320), uint16_t(511)}) {
    sml::SwitchMLConfig c = MakeConfig(3);
    c.workers[1].dev_port = bad;
    try {
      c.Validate();
      ADD_FAILURE() << "dev_port " << bad << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("workers[1].dev_port"), std::string::npos) << e.what();
    }
  }
  sml::SwitchMLConfig twice = MakeConfig(3);
  twice.workers[2].dev_port = 1;  // worker 1's default (its position)
  EXPECT_THROW(twice.Validate(), std::invalid_argument);
  sml::SwitchMLConfig fine = MakeConfig(3);
  fine.workers[0].dev_port = 127;
  fine.workers[1].dev_port = 60;
  EXPECT_NO_THROW(fine.Validate());
  EXPECT_EQ(fine.DevPortOf(2), 2);
  const char* json = R"({"switch_mac":"02:00:00:00:00:fe","switch_ip":"10.0.0.254",
      "workers":[{"id":0,"port":4,"mac":"02:00:00:00:00:01","ip":"10.0.0.1","dev_port":%d}]})";
  char text[512];
  std::snprintf(text, sizeof text, json, 4);
  EXPECT_EQ(sml::SwitchMLConfig::FromJson(text).workers[0].dev_port, 4);
  std::snprintf(text, sizeof text, json, 512);
  EXPECT_THROW(sml::SwitchMLConfig::FromJson(text), std::invalid_argument);
}

TEST(SwitchML, SimulatorPortsAreNotDevicePorts) {
  // Workers on simulator ports 64, 68 and 200 are device ports 0, 1, 2 (their
  // positions): ordinary pipe-0 ports. The job aggregates in pipe 0, and a
  // retransmission goes back to the worker's simulator port.
  sml::SwitchMLConfig c = MakeConfig(3);
  const uint16_t sim[3] = {64, 68, 200};
  for (int i = 0; i < 3; ++i) c.workers[i].port = sim[i];
  sml::SwitchMLDataplane dp(c);
  Recorder rec;
  std::vector<std::vector<int32_t>> vals;
  for (int w = 0; w < 3; ++w) {
    Packet p;
    p.worker = w;
    p.slot = 4;
    p.values = Values(w, 64);
    vals.push_back(p.values);
    const Bytes b = WorkerPacket(p);
    dp.Process(sim[w], inasim::Span<const uint8_t>(b.data(), b.size()), 0, rec);
  }
  ASSERT_EQ(rec.out.size(), 3u);
  for (int w = 0; w < 3; ++w) EXPECT_EQ(rec.out[w].port, sim[w]);
  EXPECT_EQ(dp.WorkerBitmap(0, 4).first, 0x7u);
  rec.out.clear();
  Packet again;
  again.worker = 2;
  again.slot = 4;
  again.values = Values(2, 64);
  const Bytes b = WorkerPacket(again);
  dp.Process(200, inasim::Span<const uint8_t>(b.data(), b.size()), 0, rec);
  ASSERT_EQ(rec.out.size(), 1u);
  EXPECT_EQ(rec.out[0].kind, Out::kUnicast);
  EXPECT_EQ(rec.out[0].port, 200);
  EXPECT_EQ(rec.out[0].bytes, ResultPacket(2, again, Sum(vals), 0, 0));
}

TEST(SwitchML, Mode1024WorkerIdsAbove15HaveNoConsume1Entry) {
  sml::SwitchMLDataplane dp(MakeConfig(17, 1024));
  Recorder rec;
  Packet p;
  p.worker = 16;
  p.size_code = 3;
  p.values = Values(16, 256);
  Send(dp, rec, p);
  EXPECT_TRUE(rec.out.empty());
  EXPECT_EQ(dp.last_passes(), 1u);  // priority-8 drop in CONSUME0
  EXPECT_EQ(dp.stats().dropped, 1u);
  EXPECT_EQ(dp.WorkerBitmap(0, 0).first, 1u << 16);
  EXPECT_EQ(dp.WorkerBitmap(1, 0).first, 0u);
  p.worker = 15;
  p.values = Values(15, 256);
  Send(dp, rec, p);
  EXPECT_EQ(dp.last_passes(), 4u);
  EXPECT_EQ(dp.WorkerBitmap(3, 0).first, 1u << 15);
}

TEST(SwitchML, ReceiveUdpPortMaskFromConfig) {
  auto c = MakeConfig(2);
  c.udp_mask = 0xffff;  // only 0xbee0 itself
  sml::SwitchMLDataplane dp(c);
  Recorder rec;
  Packet p;
  p.worker = 1;  // sends to 0xbee1: parsed as SwitchML, but receive_udp misses
  p.values = Values(1, 64);
  Send(dp, rec, p);
  ASSERT_EQ(rec.out.size(), 1u);
  EXPECT_EQ(rec.out[0].kind, Out::kRouted);
  p.worker = 0;  // 0xbee0 matches
  Send(dp, rec, p);
  EXPECT_EQ(rec.out.size(), 1u);
  EXPECT_EQ(dp.WorkerBitmap(0, 0).first, 1u);
}

// The deparser emits whatever follows the parsed headers as payload: bytes
// after the data of the packet that completes a slot follow the result in
// every copy (the sender's lengths still count only the data). Pins the
// model's handling of the unparsed rest across recirculations, which in 1024 B
// mode also supplies the CONSUME1..3 passes' data.
TEST(SwitchML, BytesAfterTheDataFollowTheResult) {
  for (const uint32_t size : {256u, 1024u}) {
    SCOPED_TRACE(size);
    sml::SwitchMLDataplane dp(MakeConfig(2, size));
    Recorder rec;
    Packet p0, p1;
    p0.size_code = size == 1024 ? 3 : 1;
    p0.slot = 3;
    p0.values = Values(0, size / 4);
    p1 = p0;
    p1.worker = 1;
    p1.values = Values(1, size / 4);
    const Bytes rest0 = {0x01, 0x02, 0x03};
    const Bytes rest1 = {0xde, 0xad, 0xbe, 0xef, 0x55, 0x66, 0x77};
    Bytes b0 = WorkerPacket(p0), b1 = WorkerPacket(p1);
    b0.insert(b0.end(), rest0.begin(), rest0.end());
    b1.insert(b1.end(), rest1.begin(), rest1.end());
    dp.Process(kPortBase, inasim::Span<const uint8_t>(b0.data(), b0.size()), 0, rec);
    EXPECT_TRUE(rec.out.empty());
    dp.Process(kPortBase + 1, inasim::Span<const uint8_t>(b1.data(), b1.size()), 0, rec);
    const auto sum = Sum({p0.values, p1.values});
    std::vector<uint32_t> expected = sum;
    if (size == 1024) {  // HARVEST3 in pipe 3: see Mode1024UsesFourPipesAndElevenPasses
      expected.clear();
      const int chunk_source[8] = {0, 1, 2, 3, 6, 5, 6, 7};
      for (int c = 0; c < 8; ++c)
        for (int i = 0; i < 32; ++i) expected.push_back(sum[chunk_source[c] * 32 + i]);
    }
    ASSERT_EQ(rec.out.size(), 2u);
    for (int w = 0; w < 2; ++w) {
      Bytes want = ResultPacket(w, p1, expected, 0, 0);
      want.insert(want.end(), rest1.begin(), rest1.end());
      EXPECT_EQ(rec.out[w].bytes, want) << "copy " << w;
    }
  }
}
