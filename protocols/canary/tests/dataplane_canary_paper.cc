// Paper-conformance tests of the Canary switch model: each test replays one
// worked example or one rule of the paper (D. De Sensi et al., "Canary:
// Congestion-aware in-network allreduce using dynamic trees", FGCS 2024,
// /work/shared/papers/canary-fgcs24.txt) and asserts what the PAPER says, with
// its section/figure and the sentence quoted. Where the paper gives no
// numbers, the test builds the smallest example its text describes and says
// so. Expected frames are built here byte by byte from the §4.1 layout and the
// encapsulation documented in protocols/canary/dataplane/README.md (Ethernet /
// IPv4 / UDP 45501 / 19-byte Canary header / k int32); the model's serializer
// is never used to build an expectation. Several switch models are chained by
// hand: a frame one switch emits is handed to the next switch of the figure's
// tree (the test plays the load balancer's choice of next hop).
#include "protocols/canary/dataplane/canary_dataplane.h"
#include "protocols/canary/tests/canary_test_switch.h"
#include "tests/common/recording_emitter.h"
#include "tests/common/test_bytes.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace cn = inasim::p4::canary;
using namespace inasim::testing::canary;  // Switch, TimerQueue
using namespace inasim::testing;  // Bytes, kNs, Put16/32, Get16/32, Checksum, Sum

namespace {

constexpr uint16_t kUdpPort = 0xB1BD;  // our encapsulation (README "Encapsulation")
constexpr uint32_t kK = 32;            // §5.1 "we can store up to 32 4-bytes elements"
constexpr Picoseconds kUs = 1000 * kNs;

// Offsets in our encapsulation: Ethernet 14, IPv4 20, UDP 8, Canary 19.
constexpr size_t kIpDst = 14 + 16;
constexpr size_t kUdpCsum = 14 + 20 + 6;
constexpr size_t kC = 14 + 20 + 8;  // Canary header
constexpr size_t kData = kC + 19;   // first element

uint32_t HostIp(int h) { return 0x0a000000u + uint32_t(h) + 1; }  // Hh = 10.0.0.(h+1)

// --- recording harness (as in dataplane_canary.cc) ----------------------------

using Out = inasim::testing::Emitted;
using Recorder = inasim::testing::RecordingEmitter;


/// One switch of a figure: its address, IPv4 and MAC (10.255.0.n, 02:00:00:00:ff:n).
struct SwitchId {
  uint16_t address;
  uint32_t ip;
  std::array<uint8_t, 6> mac;
};
SwitchId SwitchN(int n) {
  return {uint16_t(n), 0x0aff0000u + uint32_t(n), {0x02, 0x00, 0x00, 0x00, 0xff, uint8_t(n)}};
}

/// The switch's control-plane config as JSON text (the keys of README "API"):
/// switch n, 8 ports, k = 32, 1024 descriptors, 1 us timeout, one 8-port
/// multicast shard. `extra` ("\"key\":value,...") adds or replaces keys.
std::string SwitchJson(int n, const std::string& extra = "") {
  char mac[32];
  std::snprintf(mac, sizeof mac, "02:00:00:00:ff:%02x", n);
  nlohmann::json j = {{"switch_address", n},
                      {"switch_ip", "10.255.0." + std::to_string(n)},
                      {"switch_mac", mac},
                      {"num_ports", 8},
                      {"elements_per_packet", 32},
                      {"table_size", 1024},
                      {"timeout_us", 1},
                      {"multicast_shard_ports", 8}};
  j.update(nlohmann::json::parse("{" + extra + "}"));
  return j.dump();
}

// --- independent byte builders ----------------------------------------------

/// A Canary packet as a host (or the leader) sends it, fields named as canary_h's.
struct Pkt : cn::canary_h {
  int host = 0;
  uint32_t ip_dst = 0;
  std::vector<int32_t> data;
};

/// Host `h`'s k values (distinct per host, some negative).
std::vector<int32_t> Values(int h) {
  std::vector<int32_t> v(kK);
  for (size_t i = 0; i < kK; ++i) v[i] = int32_t((h + 1) * 1000 + int(i) * 7 - 500);
  return v;
}

/// Host `h`'s reduce packet of block `id` to `leader`: counter 1 (§3.1.1 "Each
/// packet sent by the hosts carries a counter indicating the number of already
/// reduced packets"), `hosts` hosts.
Pkt Reduce(int h, uint32_t id, uint32_t leader, uint16_t hosts) {
  Pkt p;
  p.destination = leader;
  p.id = id;
  p.counter = 1;
  p.hosts = hosts;
  p.host = h;
  p.ip_dst = leader;
  p.data = Values(h);
  return p;
}

/// The leader's broadcast of block `id` (§4.1 "Multicast (1 bit) If set, the
/// packet must be multicast to the children of the switch"), addressed to
/// 255.255.255.255 (README choice 7), carrying the fully reduced `data`.
Pkt Down(int leader_host, uint32_t id, uint16_t hosts, const std::vector<uint32_t>& data) {
  Pkt p;
  p.destination = HostIp(leader_host);
  p.id = id;
  p.counter = hosts;
  p.hosts = hosts;
  p.multicast = true;
  p.host = leader_host;
  p.ip_dst = 0xffffffffu;
  for (uint32_t v : data) p.data.push_back(int32_t(v));
  return p;
}

Bytes HostPacket(const Pkt& p) { return HostFrame(0x00, p.host, p.ip_dst, p, p.data); }

/// The aggregate switch `sw` originates (timeout or completion), README
/// "The aggregate the switch originates": Ethernet to 02:00:<leader>, from the
/// switch; IPv4 id 0, flags 0, TTL 64, switch -> leader; UDP 45501 both ways,
/// checksum 0; Canary: the leader, the block, its counter and hosts, children /
/// switch address / flags 0; the accumulator.
Bytes AggregatePacket(const SwitchId& sw, uint32_t leader, uint32_t id, uint16_t counter, uint16_t hosts,
                      const std::vector<uint32_t>& data) {
  return AggregateFrame(sw.mac, sw.ip, leader, id, counter, hosts, data);
}

/// Sum of the given hosts' Values().
std::vector<uint32_t> SumOf(std::initializer_list<int> hosts) {
  std::vector<std::vector<int32_t>> vs;
  for (int h : hosts) vs.push_back(Values(h));
  return Sum(vs);
}
std::vector<int32_t> AsInt(const std::vector<uint32_t>& v) { return std::vector<int32_t>(v.begin(), v.end()); }

/// `b` with the IPv4 destination set to `dst` and the IPv4 checksum recomputed.
void SetIpDst(Bytes& b, uint32_t dst) {
  Put32(&b[kIpDst], dst);
  Put16(&b[24], 0);
  Put16(&b[24], Checksum(&b[14], 20));
}

// Bitwise reference CRC-32 (reflected 0x04C11DB7, init/xorout 0xFFFFFFFF) of
// the id's 4 wire bytes: README "Hash", computed here independently.
uint32_t RefCrc32OfId(uint32_t id) {
  const uint8_t b[4] = {uint8_t(id >> 24), uint8_t(id >> 16), uint8_t(id >> 8), uint8_t(id)};
  uint32_t crc = 0xffffffffu;
  for (uint8_t x : b) {
    crc ^= x;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
  }
  return ~crc;
}
/// The first id after `id` whose CRC-32 index (`mask` = table_size - 1) equals `id`'s.
uint32_t CollidingId(uint32_t id, uint32_t mask) {
  uint32_t other = id + 1;
  while ((RefCrc32OfId(other) & mask) != (RefCrc32OfId(id) & mask)) ++other;
  return other;
}

uint64_t Bit(int port) { return uint64_t{1} << port; }
nlohmann::json State(const cn::CanaryDataplane& dp) { return nlohmann::json::parse(dp.DumpState()); }

// ============================================================================
// Fig. 3: the counter walk-through.
// ============================================================================
//
// Fig. 3's network, as §3.1 describes it: root S0; S1 and S2 below it; S3
// and S4 at the bottom; H0, H1 below S3 and H2, H3 below S4 ("if S3 reduces
// the data coming from H0 and H1"; §3.1.4 names H2 and H3 below S4), so the
// number of hosts is H = 4. The "(1)", "(2)", "(3)" in the text are the
// figure's step markers, not counts. Wiring of the ports (the text gives
// none): at S3 and S4 the hosts are on ports 0 and 1 and the up-links on 4
// (to S1) and 5 (to S2); at S1 and S2, S3 is on port 0, S4 on port 1, S0 on 4;
// at S0, S1 is on port 0, S2 on port 1, the leader on port 7. Fig. 3's
// §3.1.1 example has every one of the four hosts send; the packets' Canary
// destination (§4.1 "IP address of the leader host") is a leader host
// HL = 10.0.0.100 below S0 that sends nothing.
constexpr uint32_t kFig3Id = 0x01000001;  // application 1, block 1 (§3.4)
const uint32_t kFig3Leader = HostIp(99);

struct Fig3Tree {
  Switch s0{SwitchJson(10)}, s1{SwitchJson(11)}, s2{SwitchJson(12)}, s3{SwitchJson(13)}, s4{SwitchJson(14)};
};

/// The reduce phase of Fig. 3 without assertions (the walk-through test below
/// makes them step by step): S3 -> S1 -> S0 and S4 -> S2 -> S0 ("sometimes S3
/// might forward packets to S1 and S4 to S2").
void RunFig3Reduce(Fig3Tree& t) {
  t.s3.Send(0, HostPacket(Reduce(0, kFig3Id, kFig3Leader, 4)), 0);
  t.s3.Send(1, HostPacket(Reduce(1, kFig3Id, kFig3Leader, 4)), 100 * kNs);
  t.s4.Send(0, HostPacket(Reduce(2, kFig3Id, kFig3Leader, 4)), 200 * kNs);
  t.s4.Send(1, HostPacket(Reduce(3, kFig3Id, kFig3Leader, 4)), 300 * kNs);
  t.s3.RunTimers(1000 * kNs);
  t.s1.Send(0, t.s3.Last(), 1500 * kNs);
  t.s4.RunTimers(1200 * kNs);
  t.s2.Send(1, t.s4.Last(), 1600 * kNs);
  t.s1.RunTimers(2500 * kNs);
  t.s2.RunTimers(2600 * kNs);
  t.s0.Send(0, t.s1.Last(), 3000 * kNs);
  t.s0.Send(1, t.s2.Last(), 3100 * kNs);
}

TEST(CanaryPaperFig3, CounterWalkThrough) {
  Fig3Tree t;
  const SwitchId s1 = SwitchN(11), s2 = SwitchN(12), s3 = SwitchN(13), s4 = SwitchN(14), s0 = SwitchN(10);

  // (1) §3.1.1 "Each packet sent by the hosts carries a counter indicating the
  // number of already reduced packets, together with the number of hosts
  // participating to that reduction (Fig. 3 (1))": counter 1, hosts 4.
  const Bytes h0 = HostPacket(Reduce(0, kFig3Id, kFig3Leader, 4));
  EXPECT_EQ(Get16(h0, kC + 8), 1);
  EXPECT_EQ(Get16(h0, kC + 10), 4);
  t.s3.Send(0, h0, 0);
  t.s3.Send(1, HostPacket(Reduce(1, kFig3Id, kFig3Leader, 4)), 100 * kNs);
  // §3.1.1 "For all subsequent packets, the switch aggregates the data carried
  // in the packets with that stored in the accumulator and then drops the packets."
  EXPECT_TRUE(t.s3.rec.out.empty());
  // §3.1.1 "Counters coming from multiple packets are summed by the switches
  // and stored in the descriptor."
  ASSERT_NE(t.s3.dp.Find(kFig3Id), nullptr);
  EXPECT_EQ(t.s3.dp.Find(kFig3Id)->counter, 2);
  EXPECT_EQ(t.s3.dp.Find(kFig3Id)->hosts, 4);
  EXPECT_EQ(t.s3.dp.Find(kFig3Id)->children, Bit(0) | Bit(1));
  EXPECT_EQ(t.s3.dp.Accumulator(t.s3.dp.IndexOf(kFig3Id)), AsInt(SumOf({0, 1})));

  // (2) "For example, if S3 reduces the data coming from H0 and H1, it will
  // send a packet to S1 with a counter equal to 2 (2)." It goes at S3's
  // timeout (1 us after H0's packet): §3.1.1 "When the timeout expires, the
  // switch retrieves the accumulated data from the descriptor, stores it in a
  // new packet, and sends it to the next hop towards the root."
  t.s3.RunTimers(999 * kNs);
  EXPECT_TRUE(t.s3.rec.out.empty());
  t.s3.RunTimers(1000 * kNs);
  ASSERT_EQ(t.s3.rec.out.size(), 1u);
  EXPECT_EQ(t.s3.rec.out[0].kind, Out::kRouted);
  EXPECT_EQ(t.s3.Last(), AggregatePacket(s3, kFig3Leader, kFig3Id, 2, 4, SumOf({0, 1})));
  EXPECT_EQ(Get16(t.s3.Last(), kC + 8), 2) << "Fig. 3 (2): counter equal to 2";

  // S4 likewise reduces H2 and H3 and sends counter 2 (to S2).
  t.s4.Send(0, HostPacket(Reduce(2, kFig3Id, kFig3Leader, 4)), 200 * kNs);
  t.s4.Send(1, HostPacket(Reduce(3, kFig3Id, kFig3Leader, 4)), 300 * kNs);
  t.s4.RunTimers(1200 * kNs);
  ASSERT_EQ(t.s4.rec.out.size(), 1u);
  EXPECT_EQ(t.s4.Last(), AggregatePacket(s4, kFig3Leader, kFig3Id, 2, 4, SumOf({2, 3})));

  // S1 and S2 each receive one packet ("S1 might receive 0, 1 or 2 packets to
  // aggregate"): their partial aggregates keep counter 2.
  t.s1.Send(0, t.s3.Last(), 1500 * kNs);
  t.s2.Send(1, t.s4.Last(), 1600 * kNs);
  EXPECT_TRUE(t.s1.rec.out.empty());
  EXPECT_TRUE(t.s2.rec.out.empty());
  t.s1.RunTimers(2500 * kNs);
  t.s2.RunTimers(2600 * kNs);
  ASSERT_EQ(t.s1.rec.out.size(), 1u);
  ASSERT_EQ(t.s2.rec.out.size(), 1u);
  EXPECT_EQ(t.s1.Last(), AggregatePacket(s1, kFig3Leader, kFig3Id, 2, 4, SumOf({0, 1})));
  EXPECT_EQ(t.s2.Last(), AggregatePacket(s2, kFig3Leader, kFig3Id, 2, 4, SumOf({2, 3})));

  // (3) "At some point the accumulated counter will be equal to the number of
  // hosts (3), meaning that all data coming from the hosts has been reduced
  // and that the root can start the broadcast phase." At S0, 2 + 2 = 4 = H.
  // §3.1.4: "the root switch sends the aggregated data to the leader host as
  // soon as the timeout expires (or when all the expected data is received)":
  // at once, on the packet that completes it, not at S0's timeout (4 us).
  t.s0.Send(0, t.s1.Last(), 3000 * kNs);
  EXPECT_TRUE(t.s0.rec.out.empty());
  EXPECT_EQ(t.s0.dp.Find(kFig3Id)->counter, 2);
  t.s0.Send(1, t.s2.Last(), 3100 * kNs);
  ASSERT_EQ(t.s0.rec.out.size(), 1u);
  EXPECT_EQ(t.s0.rec.out[0].kind, Out::kRouted);
  EXPECT_EQ(t.s0.Last(), AggregatePacket(s0, kFig3Leader, kFig3Id, 4, 4, SumOf({0, 1, 2, 3})));
  EXPECT_EQ(Get16(t.s0.Last(), kC + 8), Get16(t.s0.Last(), kC + 10)) << "counter == hosts";
  EXPECT_EQ(Get32(t.s0.Last(), kIpDst), kFig3Leader);
  EXPECT_EQ(Get32(t.s0.Last(), kC), kFig3Leader);
  EXPECT_EQ(t.s0.dp.Find(kFig3Id)->children, Bit(0) | Bit(1));
  t.s0.RunTimers(10 * kUs);
  EXPECT_EQ(t.s0.rec.out.size(), 1u) << "nothing more at S0's timeout";
}

// ============================================================================
// §3.1.1 stragglers.
// ============================================================================
//
// "Intermediate switches might receive some packets after the timeout
// expiration if the timeout is too short. In that case, the packet is
// identified as a straggler and immediately forwarded to the next hop. In
// turn, the following switch considers that packet as a straggler or not,
// depending on its timeout." §3.5: "If a packet arrives and the timeout for
// that id already expired, the switch updates the list of children and
// forwards the packet to the next hop." The paper gives no times: the
// smallest example on Fig. 3's S3 -> S1 (1 us timeouts everywhere). H0 at
// t = 0 on S3; S3 times out at 1 us; H1 arrives at 1.5 us: a straggler.
TEST(CanaryPaperStraggler, ForwardedAtOnceAndTheNextSwitchDecidesByItsOwnTimeout) {
  const SwitchId s1 = SwitchN(11);
  Switch sw3(SwitchJson(13));
  sw3.Send(0, HostPacket(Reduce(0, kFig3Id, kFig3Leader, 4)), 0);
  sw3.RunTimers(1000 * kNs);
  ASSERT_EQ(sw3.rec.out.size(), 1u);
  const Bytes partial = sw3.Last();  // counter 1: H0 alone
  EXPECT_EQ(Get16(partial, kC + 8), 1);

  const Bytes late = HostPacket(Reduce(1, kFig3Id, kFig3Leader, 4));
  sw3.Send(1, late, 1500 * kNs);
  ASSERT_EQ(sw3.rec.out.size(), 2u) << "immediately forwarded: in the same pass";
  EXPECT_EQ(sw3.rec.out[1].kind, Out::kRouted) << "to the next hop";
  EXPECT_EQ(sw3.rec.out[1].bytes, late) << "the straggler itself goes on, counter 1, H1's data";
  EXPECT_EQ(sw3.dp.Find(kFig3Id)->children, Bit(0) | Bit(1)) << "updates the list of children";
  EXPECT_EQ(sw3.dp.Find(kFig3Id)->counter, 1) << "not aggregated into what already left";

  // Next hop S1 with its timeout not yet expired (S1 allocated at 1.2 us,
  // expires at 2.2 us; the straggler reaches it at 1.7 us): not a straggler
  // there, aggregated, and S1's partial aggregate carries both (counter 2).
  Switch a(SwitchJson(11));
  a.Send(0, partial, 1200 * kNs);
  a.Send(0, late, 1700 * kNs);
  EXPECT_TRUE(a.rec.out.empty());
  EXPECT_EQ(a.dp.Find(kFig3Id)->counter, 2);
  a.RunTimers(2200 * kNs);
  ASSERT_EQ(a.rec.out.size(), 1u);
  EXPECT_EQ(a.Last(), AggregatePacket(s1, kFig3Leader, kFig3Id, 2, 4, SumOf({0, 1})));

  // Next hop S1 whose timeout already expired (the straggler reaches it at
  // 2.3 us): a straggler there too, forwarded at once, unmodified.
  Switch b(SwitchJson(11));
  b.Send(0, partial, 1200 * kNs);
  b.RunTimers(2200 * kNs);
  ASSERT_EQ(b.rec.out.size(), 1u);
  EXPECT_EQ(b.Last(), AggregatePacket(s1, kFig3Leader, kFig3Id, 1, 4, SumOf({0})));
  b.Send(0, late, 2300 * kNs);
  ASSERT_EQ(b.rec.out.size(), 2u);
  EXPECT_EQ(b.rec.out[1].kind, Out::kRouted);
  EXPECT_EQ(b.rec.out[1].bytes, late);
  EXPECT_EQ(b.dp.Find(kFig3Id)->counter, 1);
  EXPECT_EQ(b.dp.stats().stragglers, 1u);

  // §3.1.1 "The switch can determine if a packet is a straggler because it
  // does not deallocate the descriptor until the reduction is completed", and
  // the straggler's port is a child: the broadcast reaches H1 too.
  const Bytes down = HostPacket(Down(99, kFig3Id, 4, SumOf({0, 1})));
  sw3.Send(4, down, 5 * kUs);
  ASSERT_EQ(sw3.rec.out.size(), 3u);
  EXPECT_EQ(sw3.rec.out[2].kind, Out::kMulticast);
  EXPECT_EQ(sw3.rec.out[2].ports, (std::vector<uint16_t>{0, 1}));
}

// ============================================================================
// §3.1.2 broadcast and freeing entries.
// ============================================================================
//
// §3.1.2 "After receiving a reduced packet from its parent, a switch forwards
// the packet to its children and deallocates the descriptor." "A switch
// allocates a descriptor when it receives the first packet going to the root
// and deallocates it when it receives the packet coming down from the root."
// §3.5 "If there is a descriptor for that id, the switch forwards the packet
// to all its children and removes the descriptor from the table. If the
// switch does not have a descriptor for that id ..., it drops the packet."
// The Fig. 3 tree after its reduce phase; the leader HL's broadcast enters S0
// on port 7.
TEST(CanaryPaperBroadcast, BroadcastDownFig3TreeFreesEveryEntryAndTheIdAllocatesAfresh) {
  Fig3Tree t;
  RunFig3Reduce(t);
  ASSERT_EQ(t.s0.rec.out.size(), 1u);
  Switch* sws[] = {&t.s0, &t.s1, &t.s2, &t.s3, &t.s4};
  for (Switch* s : sws) ASSERT_EQ(s->dp.descriptors_in_use(), 1u);

  // §3.1.4 the leader "aggregates the received data with its own, and then
  // starts the broadcast phase"; HL contributes nothing here.
  const Bytes down = HostPacket(Down(99, kFig3Id, 4, SumOf({0, 1, 2, 3})));
  // Each switch: one multicast to exactly its children, the packet forwarded
  // as it came, and the descriptor gone.
  const std::pair<Switch*, std::vector<uint16_t>> hops[] = {
      {&t.s0, {0, 1}}, {&t.s1, {0}}, {&t.s2, {1}}, {&t.s3, {0, 1}}, {&t.s4, {0, 1}}};
  Picoseconds now = 5 * kUs;
  for (const auto& [s, children] : hops) {
    const size_t before = s->rec.out.size();
    s->Send(s == &t.s0 ? 7 : 4, down, now += 100 * kNs);
    ASSERT_EQ(s->rec.out.size(), before + 1);
    const Out& o = s->rec.out.back();
    EXPECT_EQ(o.kind, Out::kMulticast);
    EXPECT_EQ(o.ports, children);
    EXPECT_EQ(o.bytes, down);
    EXPECT_EQ(s->dp.Find(kFig3Id), nullptr) << "deallocated";
    EXPECT_EQ(s->dp.descriptors_in_use(), 0u);
    EXPECT_EQ(State(s->dp)["occupied"], 0);
  }
  // A second copy of the broadcast at S3 finds no descriptor: dropped.
  t.s3.Send(4, down, 6 * kUs);
  EXPECT_EQ(t.s3.rec.out.size(), 2u);
  EXPECT_EQ(t.s3.dp.stats().broadcast_misses, 1u);

  // A later reduce packet of the same id at S3 (H1, port 1, at 7 us) finds the
  // entry free: §3.1.1 "The first time a switch receives a reduction packet,
  // it creates a descriptor": counter, data and children start afresh, and
  // the timer starts again ("starts when the first reduction packet is received").
  Pkt again = Reduce(1, kFig3Id, kFig3Leader, 4);
  for (auto& v : again.data) v = -v;
  t.s3.Send(1, HostPacket(again), 7 * kUs);
  EXPECT_EQ(t.s3.rec.out.size(), 2u) << "stored and dropped";
  const cn::Descriptor* d = t.s3.dp.Find(kFig3Id);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->counter, 1);
  EXPECT_EQ(d->children, Bit(1));
  EXPECT_EQ(d->alloc_ps, 7 * kUs);
  EXPECT_FALSE(d->timed_out);
  EXPECT_EQ(t.s3.dp.Accumulator(t.s3.dp.IndexOf(kFig3Id)), again.data);
  ASSERT_EQ(t.s3.timers.scheduled.size(), 2u);
  EXPECT_EQ(t.s3.timers.scheduled[1].at, 8 * kUs);
  t.s3.RunTimers(8 * kUs);
  ASSERT_EQ(t.s3.rec.out.size(), 3u);
  std::vector<uint32_t> u(again.data.begin(), again.data.end());
  EXPECT_EQ(t.s3.Last(), AggregatePacket(SwitchN(13), kFig3Leader, kFig3Id, 1, 4, u));
}

// ============================================================================
// Fig. 5: collision and tree restoration (§3.2.1).
// ============================================================================
//
// "hosts H0 (leader), H2, and H5 want to reduce their data. S1 receives data
// from H2 and experiences no collisions (2). S2 receives data from H5 (3) but
// detects a collision." "After a conflict, the switch inserts its address in
// the packet alongside the identifier of the port from which it received it.
// Then, it forwards the packet directly to the leader host (the packet is
// marked and ignored by all the other switches on the path)." "In our
// example, when the collision is detected (3), S2 forwards the packet to the
// leader host, together with its address and the port number (R) from which
// the packet has been received. After the reduction phase, the leader host H0
// starts the broadcast as usual (5). The broadcast packet eventually reaches
// S2, but it is not able to progress since S2 is missing information about
// its subtree (6). The leader host also sends a "restoration" packet to S2
// (7), making it able to forward the data on port R towards H5 (8)."
//
// The text does not give the figure's wiring. Ours: S1 is H2's switch (H2 on
// port 1, up-link 4), S2 is H5's (H5 on port R = 3, up-link 4), S0 is the
// root, the leader H0's switch (S1 on port 0, S2 on port 1, H0 on port 7).
// The leader does not send (§3.1.4 "The leader does not send its data on the
// network"), so hosts = 2 (H2 and H5). S2's slot for the block is held by
// another block Y (same CRC-32 index; 2 hosts; its packet arrived on port 5
// at t = 0, its partial aggregate left at 1 us and it stays until its own
// broadcast). With one 8-port shard the restoration's port list is the plain
// bitmap ("e.g., encoded as a bitmap"): port R is 1 << 3.
constexpr uint32_t kFig5Id = 0x01000100;
constexpr uint16_t kPortR = 3;

/// The restoration packet the leader H0 sends S2 (switch 22) for ports
/// `bitmap`, routed towards H5: bypass + multicast + S2's address (README
/// choice 6), the fully reduced `data`.
Pkt Restoration(uint16_t hosts, const std::vector<uint32_t>& data, uint32_t bitmap) {
  Pkt r = Down(0, kFig5Id, hosts, data);
  r.bypass = true;
  r.switch_address = 22;
  r.children = bitmap;
  r.ip_dst = HostIp(5);
  return r;
}

TEST(CanaryPaperFig5, CollisionAndTreeRestoration) {
  const uint32_t leader = HostIp(0);
  const uint32_t y = CollidingId(kFig5Id, 1023);
  Switch s0(SwitchJson(20)), s1(SwitchJson(21)), s2(SwitchJson(22));
  ASSERT_EQ(s2.dp.IndexOf(y), s2.dp.IndexOf(kFig5Id)) << "precondition: same slot";
  s2.Send(5, HostPacket(Reduce(9, y, HostIp(8), 2)), 0);  // block Y, resident

  // (2) S1: no collision, the descriptor is stored, the partial aggregate
  // goes up at S1's timeout.
  s1.Send(1, HostPacket(Reduce(2, kFig5Id, leader, 2)), 100 * kNs);
  EXPECT_TRUE(s1.rec.out.empty());
  ASSERT_NE(s1.dp.Find(kFig5Id), nullptr);
  s1.RunTimers(1100 * kNs);
  ASSERT_EQ(s1.rec.out.size(), 1u);
  EXPECT_EQ(s1.Last(), AggregatePacket(SwitchN(21), leader, kFig5Id, 1, 2, SumOf({2})));

  // (3) S2: collision. Switch address and port R inserted (§4.1 "Children
  // ... carries the identifier of the port from which the packet was
  // received"; "Switch Address ... carries the switch address"), marked
  // (§4.1 "Bypass (1 bit) If set, the switch should not further process the
  // packet but only forward it to the next hop"), sent towards the leader.
  const Bytes h5 = HostPacket(Reduce(5, kFig5Id, leader, 2));
  s2.Send(kPortR, h5, 200 * kNs);
  ASSERT_EQ(s2.rec.out.size(), 1u);
  EXPECT_EQ(s2.rec.out[0].kind, Out::kRouted);
  Bytes collided = h5;
  Put32(&collided[kC + 12], kPortR);  // children = R
  Put16(&collided[kC + 16], 22);      // S2's address
  collided[kC + 18] = 0x80;           // bypass
  collided[kUdpCsum] = collided[kUdpCsum + 1] = 0;
  EXPECT_EQ(s2.Last(), collided);
  EXPECT_EQ(Get32(s2.Last(), kIpDst), leader) << "directly to the leader host";
  EXPECT_EQ(Get32(s2.Last(), kC + 4), kFig5Id);
  EXPECT_EQ(Get16(s2.Last(), kC + 8), 1);
  EXPECT_EQ(s2.dp.Find(kFig5Id), nullptr) << "S2 could not store the descriptor";
  ASSERT_NE(s2.dp.Find(y), nullptr);
  EXPECT_EQ(s2.dp.Find(y)->children, Bit(5)) << "the resident block is untouched";
  EXPECT_EQ(s2.dp.Find(y)->counter, 1);
  // Y's own partial aggregate (1 us) holds Y's data only.
  s2.RunTimers(1000 * kNs);
  ASSERT_EQ(s2.rec.out.size(), 2u);
  EXPECT_EQ(s2.Last(), AggregatePacket(SwitchN(22), HostIp(8), y, 1, 2, SumOf({9})));

  // The root S0 stores S1's aggregate; the marked packet is "ignored by all
  // the other switches on the path": routed on unchanged, not aggregated,
  // its port not a child.
  s0.Send(0, s1.rec.out[0].bytes, 1600 * kNs);
  s0.Send(1, collided, 1700 * kNs);
  ASSERT_EQ(s0.rec.out.size(), 1u);
  EXPECT_EQ(s0.rec.out[0].kind, Out::kRouted);
  EXPECT_EQ(s0.Last(), collided);
  EXPECT_EQ(s0.dp.Find(kFig5Id)->counter, 1);
  EXPECT_EQ(s0.dp.Find(kFig5Id)->children, Bit(0));
  EXPECT_EQ(s0.dp.Accumulator(s0.dp.IndexOf(kFig5Id)), Values(2));
  s0.RunTimers(2600 * kNs);
  ASSERT_EQ(s0.rec.out.size(), 2u);
  EXPECT_EQ(s0.Last(), AggregatePacket(SwitchN(20), leader, kFig5Id, 1, 2, SumOf({2})));

  // (5) The leader H0 has H2's and H5's data: counter 2 = hosts. The
  // broadcast "as usual": S0 -> S1 -> H2.
  const std::vector<uint32_t> all = SumOf({0, 2, 5});
  const Bytes down = HostPacket(Down(0, kFig5Id, 2, all));
  s0.Send(7, down, 4 * kUs);
  ASSERT_EQ(s0.rec.out.size(), 3u);
  EXPECT_EQ(s0.rec.out[2].kind, Out::kMulticast);
  EXPECT_EQ(s0.rec.out[2].ports, (std::vector<uint16_t>{0}));
  s1.Send(4, down, 4100 * kNs);
  ASSERT_EQ(s1.rec.out.size(), 2u);
  EXPECT_EQ(s1.rec.out[1].kind, Out::kMulticast);
  EXPECT_EQ(s1.rec.out[1].ports, (std::vector<uint16_t>{1}));
  EXPECT_EQ(s1.rec.out[1].bytes, down);

  // (6) The broadcast reaching S2 "is not able to progress": nothing is
  // sent, and block Y keeps its entry. (In our wiring S0 did not list S2 as a
  // child, the marked packet having been ignored there; the copy is handed
  // to S2 as the text has it reach S2.)
  s2.Send(4, down, 4200 * kNs);
  EXPECT_EQ(s2.rec.out.size(), 2u);
  EXPECT_EQ(s2.dp.stats().broadcast_misses, 1u);
  EXPECT_NE(s2.dp.Find(y), nullptr);

  // (7) The restoration packet for S2: the reduced data plus "the list of
  // ports on which the switch must forward the data (e.g., encoded as a
  // bitmap)", routed towards H5. On its way S0 does not act on it (bypass).
  const Bytes restore = HostPacket(Restoration(2, all, uint32_t(Bit(kPortR))));
  s0.Send(7, restore, 4300 * kNs);
  ASSERT_EQ(s0.rec.out.size(), 4u);
  EXPECT_EQ(s0.rec.out[3].kind, Out::kRouted);
  EXPECT_EQ(s0.rec.out[3].bytes, restore);
  // (8) S2 forwards the data on port R, towards H5, as a local broadcast.
  s2.Send(4, restore, 4400 * kNs);
  ASSERT_EQ(s2.rec.out.size(), 3u);
  const Out& o = s2.rec.out[2];
  EXPECT_EQ(o.kind, Out::kMulticast);
  EXPECT_EQ(o.ports, (std::vector<uint16_t>{kPortR}));
  Bytes want = restore;  // README "Restoration": copies are plain broadcasts
  SetIpDst(want, 0xffffffffu);
  want[kUdpCsum] = want[kUdpCsum + 1] = 0;
  Put32(&want[kC + 12], 0);
  Put16(&want[kC + 16], 0);
  want[kC + 18] = 0x40;  // multicast, bypass clear: a broadcast below S2
  EXPECT_EQ(o.bytes, want);
  for (size_t i = 0; i < kK; ++i) EXPECT_EQ(Get32(o.bytes, kData + 4 * i), all[i]) << i;
  EXPECT_NE(s2.dp.Find(y), nullptr) << "restoration does not touch block Y";
}

// §3.2.1 "This approach works even if, after some collisions, the entry
// becomes available and subsequent packets are successfully stored. In that
// case, the switch stores identifiers of some children in the block
// descriptor on the switch, and hence they will be reached by the normal
// broadcast phase. Others, i.e., the ones that generated conflicts, will be
// reached through the tree restoration process." Smallest example at Fig. 5's
// S2: H5 (port R = 3) collides with block Y; Y's broadcast frees the entry;
// then H6 (port 6) of the same block is stored. Senders H5 and H6: hosts 2.
TEST(CanaryPaperFig5, EntryFreedAfterCollisionServesLaterChildrenNormally) {
  const uint32_t leader = HostIp(0);
  const uint32_t y = CollidingId(kFig5Id, 1023);
  Switch s2(SwitchJson(22));
  s2.Send(5, HostPacket(Reduce(9, y, HostIp(8), 2)), 0);
  s2.Send(kPortR, HostPacket(Reduce(5, kFig5Id, leader, 2)), 100 * kNs);
  ASSERT_EQ(s2.rec.out.size(), 1u);
  EXPECT_EQ(s2.rec.out[0].bytes[kC + 18], 0x80) << "collided";
  s2.RunTimers(1000 * kNs);  // Y's partial aggregate
  ASSERT_EQ(s2.rec.out.size(), 2u);
  s2.Send(4, HostPacket(Down(8, y, 2, SumOf({9}))), 2000 * kNs);  // Y's broadcast
  ASSERT_EQ(s2.rec.out.size(), 3u);
  EXPECT_EQ(s2.rec.out[2].ports, (std::vector<uint16_t>{5}));
  EXPECT_EQ(s2.dp.Find(y), nullptr) << "the entry becomes available";

  s2.Send(6, HostPacket(Reduce(6, kFig5Id, leader, 2)), 2100 * kNs);
  ASSERT_EQ(s2.rec.out.size(), 3u) << "successfully stored";
  ASSERT_NE(s2.dp.Find(kFig5Id), nullptr);
  EXPECT_EQ(s2.dp.Find(kFig5Id)->children, Bit(6)) << "only the stored child";
  s2.RunTimers(3100 * kNs);
  ASSERT_EQ(s2.rec.out.size(), 4u);
  EXPECT_EQ(s2.Last(), AggregatePacket(SwitchN(22), leader, kFig5Id, 1, 2, SumOf({6})));

  const std::vector<uint32_t> all = SumOf({0, 5, 6});
  const Bytes down = HostPacket(Down(0, kFig5Id, 2, all));
  s2.Send(4, down, 5 * kUs);
  ASSERT_EQ(s2.rec.out.size(), 5u);
  EXPECT_EQ(s2.rec.out[4].kind, Out::kMulticast);
  EXPECT_EQ(s2.rec.out[4].ports, (std::vector<uint16_t>{6})) << "the normal broadcast phase";
  EXPECT_EQ(s2.rec.out[4].bytes, down);
  s2.Send(4, HostPacket(Restoration(2, all, uint32_t(Bit(kPortR)))), 5100 * kNs);
  ASSERT_EQ(s2.rec.out.size(), 6u);
  EXPECT_EQ(s2.rec.out[5].kind, Out::kMulticast);
  EXPECT_EQ(s2.rec.out[5].ports, (std::vector<uint16_t>{kPortR})) << "the tree restoration process";
}

// ============================================================================
// §4.2 multicast shards: the paper's 8-port example.
// ============================================================================
//
// "let us suppose we have a switch with eight ports and that we want to
// multicast on the ports [0, 2, 3, 5]. The binary representation of this list
// is 00101101." "the children bitmap 00101101 can be divided into two shards
// of 4 bits each. We prepend to each shard its index so that the two shards
// become 1 0010 and 0 1101. We then store the association between all the
// possible shard values (that, in this case, would be 2 · 2^4) and the
// corresponding list of ports. In our example, we would have the rules
// 10010 -> [5] and 01101 -> [0, 2, 3]." "For example, on a 64 port switch
// with four shards, this requires using 256 thousand entries". And: "Every
// time a packet is received, the one-hot encoding of the input port is
// retrieved ... and added to the bitmap storing the children."
TEST(CanaryPaperMulticast, EightPortShardExample) {
  Switch sw(SwitchJson(30, R"("multicast_shard_ports":4)"));
  constexpr uint32_t id = 0x01000042;
  for (int port : {0, 2, 3, 5}) sw.Send(uint16_t(port), HostPacket(Reduce(port, id, HostIp(50), 5)), 0);
  ASSERT_NE(sw.dp.Find(id), nullptr);
  EXPECT_EQ(sw.dp.Find(id)->children, uint64_t{0b00101101}) << "00101101";

  // The two shard groups and their ports, and the 2 * 2^4 = 32 groups of the
  // 8-port switch (instead of 2^8 = 256 without shards).
  std::vector<uint32_t> groups;
  sw.dp.multicast().Groups(0b00101101, groups);
  std::sort(groups.begin(), groups.end());
  EXPECT_EQ(groups, (std::vector<uint32_t>{0b01101, 0b10010}));
  std::vector<uint16_t> ports;
  ASSERT_TRUE(sw.dp.multicast().Ports(0b10010, ports));
  EXPECT_EQ(ports, (std::vector<uint16_t>{5}));
  ASSERT_TRUE(sw.dp.multicast().Ports(0b01101, ports));
  EXPECT_EQ(ports, (std::vector<uint16_t>{0, 2, 3}));
  EXPECT_EQ(sw.dp.multicast().group_entries(), 32u);
  EXPECT_EQ(State(sw.dp)["config"]["multicast_group_entries"], 32);
  EXPECT_EQ(cn::MulticastShards::GroupEntries(8, 8), 256u);

  // Four of five hosts: the partial aggregate goes up at the 1 us timeout.
  sw.RunTimers(1 * kUs);
  ASSERT_EQ(sw.rec.out.size(), 1u);
  EXPECT_EQ(sw.Last(), AggregatePacket(SwitchN(30), HostIp(50), id, 4, 5, SumOf({0, 2, 3, 5})));

  // The broadcast: one copy per shard group, [0, 2, 3] and [5], the packet
  // as it came.
  const Bytes down = HostPacket(Down(49, id, 5, SumOf({0, 2, 3, 5, 7})));
  sw.Send(7, down, 3 * kUs);
  ASSERT_EQ(sw.rec.out.size(), 3u) << "two multicasts";
  std::vector<std::vector<uint16_t>> sent;
  for (size_t i = 1; i < 3; ++i) {
    const Out& o = sw.rec.out[i];
    EXPECT_EQ(o.kind, Out::kMulticast);
    EXPECT_EQ(o.bytes, down);
    sent.push_back(o.ports);
  }
  std::sort(sent.begin(), sent.end());
  EXPECT_EQ(sent, (std::vector<std::vector<uint16_t>>{{0, 2, 3}, {5}}));

  // A restoration naming the paper's group ids reaches exactly those ports.
  for (const auto& [group, want] : {std::pair<uint32_t, std::vector<uint16_t>>{0b10010, {5}},
                                    std::pair<uint32_t, std::vector<uint16_t>>{0b01101, {0, 2, 3}}}) {
    Pkt r = Down(49, id, 5, SumOf({0, 2, 3, 5}));
    r.bypass = true;
    r.switch_address = 30;
    r.children = group;
    sw.Send(7, HostPacket(r), 4 * kUs);
    EXPECT_EQ(sw.rec.out.back().kind, Out::kMulticast);
    EXPECT_EQ(sw.rec.out.back().ports, want) << group;
  }

  // 64 ports, four shards (16 bits each): 4 * 2^16 = 262,144 ("256 thousand").
  cn::CanaryDataplane big(cn::CanaryConfig::FromJson(R"({"num_ports":64,"multicast_shard_ports":16})"));
  EXPECT_EQ(big.multicast().shards(), 4u);
  EXPECT_EQ(big.multicast().group_entries(), 262144u);
}

// ============================================================================
// §3.1.1 / §4.3 timeouts.
// ============================================================================
//
// §3.1.1 "The descriptor also contains a timer that the switch starts when
// the first reduction packet is received." "When the timeout expires, the
// switch retrieves the accumulated data from the descriptor, stores it in a
// new packet, and sends it to the next hop towards the root." §4.3 "every
// time the switch receives a reduction id for the first time, it stores in
// the descriptor the current timestamp". The timeout values are the paper's:
// §3.2.2 "a one-microsecond allreduce timeout", §5.2.5 "a 3x difference
// between the timeout values" (1 us and 3 us). No arrival times are given:
// the smallest example, two of four hosts at 200 ns and 700 ns.
void ExpectPartialSentExactlyAtTimeout(int timeout_us) {
  SCOPED_TRACE(timeout_us);
  const Picoseconds t = Picoseconds(timeout_us) * kUs;
  Switch sw(SwitchJson(40, R"("timeout_us":)" + std::to_string(timeout_us)));
  EXPECT_EQ(sw.dp.config().timeout_ps, t);
  constexpr uint32_t id = 0x01000007;
  sw.Send(2, HostPacket(Reduce(2, id, HostIp(60), 4)), 200 * kNs);
  sw.Send(3, HostPacket(Reduce(3, id, HostIp(60), 4)), 700 * kNs);
  EXPECT_EQ(sw.dp.Find(id)->alloc_ps, 200 * kNs) << "the first packet's timestamp";
  ASSERT_EQ(sw.timers.scheduled.size(), 1u) << "started by the first packet only";
  EXPECT_EQ(sw.timers.scheduled[0].at, 200 * kNs + t);
  sw.RunTimers(200 * kNs + t - 1);
  EXPECT_TRUE(sw.rec.out.empty()) << "nothing before the timeout";
  sw.RunTimers(200 * kNs + t);
  ASSERT_EQ(sw.fired.size(), 1u);
  ASSERT_EQ(sw.rec.out.size(), 1u) << "sent when the timer fires";
  EXPECT_EQ(sw.rec.out[0].kind, Out::kRouted);
  EXPECT_EQ(sw.Last(), AggregatePacket(SwitchN(40), HostIp(60), id, 2, 4, SumOf({2, 3})));
  EXPECT_TRUE(sw.dp.Find(id)->timed_out);
  sw.RunTimers(100 * kUs);
  EXPECT_EQ(sw.rec.out.size(), 1u) << "one partial aggregate per timeout";
}

TEST(CanaryPaperTimeout, PartialAggregateLeavesExactlyAtTheOneAndThreeMicrosecondTimeouts) {
  ExpectPartialSentExactlyAtTimeout(1);
  ExpectPartialSentExactlyAtTimeout(3);
}

// §4.3 prototype: "we can set up the packet generators so to generate clock
// packets. Every time one of these packets is received, the switch can check
// an entry of the table and, if expired, send the content in that entry to
// its parent." No numbers in the paper: a 4-entry table, a clock packet every
// 100 ns checking one entry, 1 us timeout, blocks at entries 1 and 2
// allocated at t = 0. Each leaves at a clock packet, not before its 1 us
// deadline, and within one sweep of the table (4 clocks) after it.
TEST(CanaryPaperTimeout, ClockPacketsSendExpiredEntriesToTheParent) {
  Switch sw(SwitchJson(41, R"("table_size":4,"index_hash":"direct","timeout_mode":"clock_scan",)"
                           R"("clock_period_ns":100,"scan_entries_per_clock":1)"));
  sw.Send(0, HostPacket(Reduce(0, 1, HostIp(60), 4)), 0);
  sw.Send(1, HostPacket(Reduce(1, 2, HostIp(60), 4)), 0);
  sw.RunTimers(100 * kUs);
  ASSERT_EQ(sw.fired.size(), 2u);
  ASSERT_EQ(sw.rec.out.size(), 2u);
  for (const TimerQueue::Timer& f : sw.fired) {
    EXPECT_EQ(f.at % (100 * kNs), 0u) << "a clock packet's time";
    EXPECT_GE(f.at, 1 * kUs) << "only if expired";
    EXPECT_LT(f.at, 1 * kUs + 4 * 100 * kNs) << "within one sweep";
  }
  std::vector<Bytes> got = {sw.rec.out[0].bytes, sw.rec.out[1].bytes};
  std::sort(got.begin(), got.end());
  std::vector<Bytes> want = {AggregatePacket(SwitchN(41), HostIp(60), 1, 1, 4, SumOf({0})),
                             AggregatePacket(SwitchN(41), HostIp(60), 2, 1, 4, SumOf({1}))};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

// ============================================================================
// §3.4 multiple tenants.
// ============================================================================
//
// "The switch does not have any knowledge of the different applications or
// users running on the system and simply aggregates together packets with the
// same id. To support multiple applications, each of them must generate
// unique ids. Thus, CANARY ids are built by concatenating an identifier of
// the application ... and an identifier that each application increases for
// every subsequent packet." No numbers in the paper: applications 1 and 2
// both at their packet 5 (ids 0x01000005 and 0x02000005), on one switch,
// interleaved; application 1 has 2 hosts (ports 0, 3) and leader 10.0.1.1,
// application 2 has 3 hosts (ports 1, 2, 4) and leader 10.0.2.1.
TEST(CanaryPaperTenants, ApplicationsWithTheSameBlockNumberDoNotInterfere) {
  constexpr uint32_t a = 0x01000005, b = 0x02000005;
  constexpr uint32_t la = 0x0a000101, lb = 0x0a000201;
  Switch sw(SwitchJson(50, R"("table_size":32768)"));
  ASSERT_NE(RefCrc32OfId(a) & 32767, RefCrc32OfId(b) & 32767) << "precondition: different slots";
  sw.Send(0, HostPacket(Reduce(10, a, la, 2)), 0);
  sw.Send(1, HostPacket(Reduce(20, b, lb, 3)), 10 * kNs);
  sw.Send(2, HostPacket(Reduce(21, b, lb, 3)), 20 * kNs);
  EXPECT_TRUE(sw.rec.out.empty());
  EXPECT_EQ(sw.dp.Find(a)->counter, 1);
  EXPECT_EQ(sw.dp.Find(b)->counter, 2);
  sw.Send(3, HostPacket(Reduce(11, a, la, 2)), 30 * kNs);  // application 1 complete
  ASSERT_EQ(sw.rec.out.size(), 1u);
  EXPECT_EQ(sw.Last(), AggregatePacket(SwitchN(50), la, a, 2, 2, SumOf({10, 11})));
  sw.Send(4, HostPacket(Reduce(22, b, lb, 3)), 40 * kNs);  // application 2 complete
  ASSERT_EQ(sw.rec.out.size(), 2u);
  EXPECT_EQ(sw.Last(), AggregatePacket(SwitchN(50), lb, b, 3, 3, SumOf({20, 21, 22})));
  EXPECT_EQ(sw.dp.stats().collisions, 0u);

  // Each broadcast reaches only its application's children and frees only its entry.
  sw.Send(7, HostPacket(Down(0x100, a, 2, SumOf({10, 11}))), 1 * kUs);
  ASSERT_EQ(sw.rec.out.size(), 3u);
  EXPECT_EQ(sw.rec.out[2].ports, (std::vector<uint16_t>{0, 3}));
  EXPECT_EQ(sw.dp.Find(a), nullptr);
  ASSERT_NE(sw.dp.Find(b), nullptr);
  EXPECT_EQ(sw.dp.Find(b)->children, Bit(1) | Bit(2) | Bit(4));
  sw.Send(7, HostPacket(Down(0x200, b, 3, SumOf({20, 21, 22}))), 2 * kUs);
  ASSERT_EQ(sw.rec.out.size(), 4u);
  EXPECT_EQ(sw.rec.out[3].ports, (std::vector<uint16_t>{1, 2, 4}));
  EXPECT_EQ(sw.dp.descriptors_in_use(), 0u);
}

// §5.2.4 "because most existing in-network allreduce algorithms statically
// partition the switch resources across the tenants [4,16,34], to have a fair
// comparison, we adopt a similar approach also in CANARY." The partition's
// form is the model's (README "Tenant shares", given as config JSON): two
// applications whose ids map to the same slot of the whole table each get
// half of it, and then both blocks are stored, aggregated and sent apart.
TEST(CanaryPaperTenants, StaticTablePartitionKeepsTenantsApart) {
  constexpr uint32_t a = 0x01000005, b = 0x02000005;  // direct index: both slot 5 of 1024
  const std::string base = R"("index_hash":"direct")";
  Switch shared(SwitchJson(51, base));
  shared.Send(0, HostPacket(Reduce(10, a, 0x0a000101, 2)), 0);
  shared.Send(1, HostPacket(Reduce(20, b, 0x0a000201, 2)), 0);
  EXPECT_EQ(shared.dp.stats().collisions, 1u) << "precondition: one shared table collides";

  Switch sw(SwitchJson(51, base + R"(,"partitions":[{"application_id":1,"base":0,"size":512},)"
                                  R"({"application_id":2,"base":512,"size":512}])"));
  sw.Send(0, HostPacket(Reduce(10, a, 0x0a000101, 2)), 0);
  sw.Send(1, HostPacket(Reduce(20, b, 0x0a000201, 2)), 0);
  EXPECT_TRUE(sw.rec.out.empty());
  EXPECT_EQ(sw.dp.stats().collisions, 0u);
  sw.Send(2, HostPacket(Reduce(11, a, 0x0a000101, 2)), 10 * kNs);
  sw.Send(3, HostPacket(Reduce(21, b, 0x0a000201, 2)), 20 * kNs);
  ASSERT_EQ(sw.rec.out.size(), 2u);
  EXPECT_EQ(sw.rec.out[0].bytes, AggregatePacket(SwitchN(51), 0x0a000101, a, 2, 2, SumOf({10, 11})));
  EXPECT_EQ(sw.rec.out[1].bytes, AggregatePacket(SwitchN(51), 0x0a000201, b, 2, 2, SumOf({20, 21})));
}

// ============================================================================
// Id wrap-around (§4.1 field widths, §3.4 ids).
// ============================================================================
//
// §4.1 "Id (4 bytes) Unique identifier of the packet." §3.4 an id is "an
// identifier of the application ... and an identifier that each application
// increases for every subsequent packet". The paper does not discuss what
// happens when that identifier reaches its field's end, nor the split of the
// 4 bytes (the host agent uses 8 bits of application and 24 of packet
// counter). Smallest examples the text implies: the switch keys descriptors
// by the whole 4-byte id, so (a) 0xFFFFFFFF and the id after it wrapping to
// 0x00000000 are two blocks, carried byte-exact; (b) application 1's counter
// wrapping from 0x01FFFFFF to 0x01000000 reuses an id whose previous block
// was freed by its broadcast (§3.1.2), so it allocates afresh, and is not
// application 2's first id 0x02000000.
TEST(CanaryPaperIdWrap, FourByteIdWrapsToDistinctFreshBlocks) {
  Switch sw(SwitchJson(60, R"("table_size":32768)"));
  const uint32_t leader = HostIp(70);
  constexpr uint32_t last = 0xFFFFFFFFu, wrapped = 0x00000000u;
  ASSERT_NE(RefCrc32OfId(last) & 32767, RefCrc32OfId(wrapped) & 32767) << "precondition: different slots";
  sw.Send(0, HostPacket(Reduce(0, last, leader, 2)), 0);
  sw.Send(1, HostPacket(Reduce(1, wrapped, leader, 2)), 10 * kNs);
  EXPECT_TRUE(sw.rec.out.empty()) << "two blocks, neither complete";
  sw.Send(2, HostPacket(Reduce(2, last, leader, 2)), 20 * kNs);
  sw.Send(3, HostPacket(Reduce(3, wrapped, leader, 2)), 30 * kNs);
  ASSERT_EQ(sw.rec.out.size(), 2u);
  EXPECT_EQ(sw.rec.out[0].bytes, AggregatePacket(SwitchN(60), leader, last, 2, 2, SumOf({0, 2})));
  EXPECT_EQ(sw.rec.out[1].bytes, AggregatePacket(SwitchN(60), leader, wrapped, 2, 2, SumOf({1, 3})));
  EXPECT_EQ(Get32(sw.rec.out[0].bytes, kC + 4), 0xFFFFFFFFu);
  EXPECT_EQ(Get32(sw.rec.out[1].bytes, kC + 4), 0x00000000u);
}

TEST(CanaryPaperIdWrap, ApplicationCounterWrapReusesAFreedIdAfresh) {
  Switch sw(SwitchJson(61, R"("table_size":32768)"));
  const uint32_t leader = HostIp(70);
  constexpr uint32_t first = 0x01000000u, top = 0x01FFFFFFu, other_app = 0x02000000u;
  ASSERT_NE(RefCrc32OfId(first) & 32767, RefCrc32OfId(top) & 32767) << "precondition: different slots";
  ASSERT_NE(RefCrc32OfId(first) & 32767, RefCrc32OfId(other_app) & 32767);
  ASSERT_NE(RefCrc32OfId(top) & 32767, RefCrc32OfId(other_app) & 32767);
  // Cycle 1: block 0x01000000 reduced (ports 0, 1) and broadcast: freed.
  sw.Send(0, HostPacket(Reduce(0, first, leader, 2)), 0);
  sw.Send(1, HostPacket(Reduce(1, first, leader, 2)), 10 * kNs);
  ASSERT_EQ(sw.rec.out.size(), 1u);
  sw.Send(7, HostPacket(Down(69, first, 2, SumOf({0, 1}))), 1 * kUs);
  ASSERT_EQ(sw.dp.Find(first), nullptr);
  // The counter's last value, then the wrap, with application 2's first block alongside.
  sw.Send(2, HostPacket(Reduce(2, top, leader, 2)), 2 * kUs);
  sw.Send(3, HostPacket(Reduce(3, first, leader, 2)), 2 * kUs + 10 * kNs);
  sw.Send(4, HostPacket(Reduce(4, other_app, leader, 2)), 2 * kUs + 20 * kNs);
  EXPECT_EQ(sw.rec.out.size(), 2u) << "three blocks stored, none complete";
  const cn::Descriptor* d = sw.dp.Find(first);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->counter, 1) << "afresh: not the previous cycle's 2";
  EXPECT_EQ(d->children, Bit(3));
  EXPECT_EQ(sw.dp.Accumulator(sw.dp.IndexOf(first)), Values(3));
  ASSERT_NE(sw.dp.Find(top), nullptr);
  ASSERT_NE(sw.dp.Find(other_app), nullptr);
  EXPECT_EQ(sw.dp.Find(other_app)->children, Bit(4));
  sw.Send(5, HostPacket(Reduce(5, first, leader, 2)), 2 * kUs + 30 * kNs);
  ASSERT_EQ(sw.rec.out.size(), 3u);
  EXPECT_EQ(sw.Last(), AggregatePacket(SwitchN(61), leader, first, 2, 2, SumOf({3, 5})));
}

// §4.1 "Counter (2 bytes) Number of reduced packets" and "Hosts (2 bytes)
// Number of hosts participating in the reduction": both at the top of their
// 16-bit field. Smallest example: hosts 65535; a partial aggregate of 65534
// and one more packet reach 65535 = hosts, and the switch sends it at once
// with the counter bytes FF FF (§3.1.4 "or when all the expected data is
// received").
TEST(CanaryPaperIdWrap, CounterAndHostsUseTheirFullTwoBytes) {
  Switch sw(SwitchJson(62));
  const uint32_t leader = HostIp(70);
  constexpr uint32_t id = 0x01000009;
  Pkt big = Reduce(0, id, leader, 0xFFFF);
  big.counter = 0xFFFE;
  sw.Send(0, HostPacket(big), 0);
  EXPECT_TRUE(sw.rec.out.empty());
  EXPECT_EQ(sw.dp.Find(id)->counter, 0xFFFE);
  sw.Send(1, HostPacket(Reduce(1, id, leader, 0xFFFF)), 10 * kNs);
  ASSERT_EQ(sw.rec.out.size(), 1u);
  EXPECT_EQ(sw.Last(), AggregatePacket(SwitchN(62), leader, id, 0xFFFF, 0xFFFF, SumOf({0, 1})));
  EXPECT_EQ(sw.Last()[kC + 8], 0xFF);
  EXPECT_EQ(sw.Last()[kC + 9], 0xFF);
}

}  // namespace
