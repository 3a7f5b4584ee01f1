// Conformance tests of the Canary switch model (p4model/canary) against the
// paper (canary-fgcs24 §3-§4; no public code exists). Expected packets are
// built here, byte by byte, from the §4.1 layout and our documented
// encapsulation (protocols/canary/dataplane/README.md); the model's own serializer is never
// used to build an expectation.
#include "protocols/canary/dataplane/canary_dataplane.h"
#include "protocols/canary/tests/canary_test_switch.h"
#include "tests/common/recording_emitter.h"
#include "tests/common/test_bytes.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cn = inasim::p4::canary;
using namespace inasim::testing::canary;  // Switch, TimerQueue
using namespace inasim::testing;  // Bytes, kNs, Put16/32, Get16/32, Checksum

namespace {

constexpr Picoseconds kPass = 520 * kNs;
constexpr uint16_t kUdpPort = 0xB1BD;
constexpr uint16_t kSwitchAddress = 7;
constexpr uint32_t kSwitchIp = 0x0aff0007;  // 10.255.0.7
const std::array<uint8_t, 6> kSwitchMac = {0x02, 0x00, 0x00, 0x00, 0xff, 0x07};
constexpr uint32_t kLeader = 0x0a000001;    // 10.0.0.1

uint32_t HostIp(int h) { return 0x0a000000u + uint32_t(h) + 1; }

// --- recording harness ------------------------------------------------------

using Out = inasim::testing::Emitted;
using Recorder = inasim::testing::RecordingEmitter;


// --- independent byte builders ----------------------------------------------

void FixChecksum(Bytes& f) {
  Put16(&f[24], 0);
  Put16(&f[24], Checksum(&f[14], 20));
}

// Offsets in our encapsulation: Ethernet 14, IPv4 20, UDP 8, Canary 19.
constexpr size_t kIpDst = 14 + 16;
constexpr size_t kUdpCsum = 14 + 20 + 6;
constexpr size_t kC = 14 + 20 + 8;  // Canary header

/// A Canary packet as a host (or a restoring leader) sends it: the header's
/// fields (named as canary_h's; HostPacket writes the bytes), for block 1 of
/// job 1 to kLeader, one of 4 hosts, unless a test sets them.
struct Pkt : cn::canary_h {
  Pkt() {
    destination = kLeader;
    id = 0x00010001;
    counter = 1;
    hosts = 4;
  }
  int host = 2;
  uint32_t ip_dst = kLeader;
  std::vector<int32_t> data;
};

Bytes HostPacket(const Pkt& p) { return HostFrame(0x07, p.host, p.ip_dst, p, p.data); }

/// The aggregate a switch originates (timeout or completion): Ethernet to
/// 02:00:<leader>, from the switch; IPv4 no options, id 0, flags 0, TTL 64,
/// switch -> leader; UDP Canary port both ways, checksum 0; Canary with the
/// descriptor's block and counter, children/switch address/flags 0.
Bytes AggregatePacket(uint32_t leader, uint32_t id, uint16_t counter, uint16_t hosts,
                      const std::vector<uint32_t>& data) {
  return AggregateFrame(kSwitchMac, kSwitchIp, leader, id, counter, hosts, data);
}

std::vector<int32_t> Values(int host, size_t k) {
  std::vector<int32_t> v(k);
  for (size_t i = 0; i < k; ++i) v[i] = int32_t((host + 1) * 1000 + int(i) * 7 - 500);
  return v;
}
/// `p` as host `host` sends it: that host's k values.
void SetHost(Pkt& p, int host, size_t k) {
  p.host = host;
  p.data = Values(host, k);
}
std::vector<int32_t> AsInt(const std::vector<uint32_t>& v) {
  std::vector<int32_t> o(v.size());
  for (size_t i = 0; i < v.size(); ++i) o[i] = int32_t(v[i]);
  return o;
}

cn::CanaryConfig Config(uint32_t k = 32, uint32_t ports = 8) {
  cn::CanaryConfig c;
  c.switch_address = kSwitchAddress;
  c.switch_ip = kSwitchIp;
  c.switch_mac = kSwitchMac;
  c.num_ports = ports;
  c.num_elements = k;
  c.table_size = 1024;
  c.timeout_ps = 1000 * kNs;
  c.multicast_shard_ports = ports > 32 ? 16 : ports;
  return c;
}

// Bitwise reference CRC-32 (reflected 0x04C11DB7, init/xorout 0xFFFFFFFF).
uint32_t RefCrc32(const uint8_t* p, size_t n) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
  }
  return ~crc;
}
uint32_t RefCrc32OfId(uint32_t id) {
  const uint8_t b[4] = {uint8_t(id >> 24), uint8_t(id >> 16), uint8_t(id >> 8), uint8_t(id)};
  return RefCrc32(b, 4);
}

nlohmann::json State(const cn::CanaryDataplane& dp) { return nlohmann::json::parse(dp.DumpState()); }

// ============================================================================

TEST(CanaryHash, Crc32MatchesTheStandardAndIndexesByLowBits) {
  const char* check = "123456789";
  EXPECT_EQ(cn::IdHash::Crc32(reinterpret_cast<const uint8_t*>(check), 9), 0xCBF43926u);
  for (uint32_t id : {0u, 1u, 0x00010001u, 0xdeadbeefu, 0xffffffffu}) {
    EXPECT_EQ(cn::IdHash::Crc32OfId(id), RefCrc32OfId(id)) << id;
  }
  cn::CanaryDataplane dp(Config());
  EXPECT_EQ(dp.IndexOf(0x00010001u), RefCrc32OfId(0x00010001u) & 1023u);
  cn::CanaryConfig direct = Config();
  direct.index_hash = cn::IndexHash::kDirect;
  EXPECT_EQ(cn::CanaryDataplane(direct).IndexOf(1029), 5u);
}

TEST(CanaryReduce, FirstPacketAllocatesAndStartsTheTimer) {
  Switch sw(Config());
  Pkt p;
  p.data = Values(2, 32);
  sw.Send(2, HostPacket(p), 5 * kNs);
  EXPECT_TRUE(sw.rec.out.empty()) << "the first packet is stored and dropped (§3.1.1)";
  const cn::Descriptor* d = sw.dp.Find(p.id);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->id, p.id);
  EXPECT_EQ(d->counter, 1);
  EXPECT_EQ(d->hosts, 4);
  EXPECT_EQ(d->leader, kLeader);
  EXPECT_EQ(d->children, uint64_t{1} << 2);
  EXPECT_EQ(d->alloc_ps, 5 * kNs);
  EXPECT_FALSE(d->timed_out);
  EXPECT_EQ(sw.dp.Accumulator(sw.dp.IndexOf(p.id)), p.data);
  ASSERT_EQ(sw.timers.scheduled.size(), 1u);
  EXPECT_EQ(sw.timers.scheduled[0].at, 1005 * kNs);
  EXPECT_EQ(sw.timers.scheduled[0].cookie, uint64_t{1} << 32 | sw.dp.IndexOf(p.id));
  EXPECT_EQ(sw.dp.stats().allocated, 1u);
}

// k elements x n packets aggregated, then the timeout sends the partial
// aggregate towards the root with counter n.
class CanaryPartial : public ::testing::TestWithParam<std::pair<uint32_t, int>> {};

TEST_P(CanaryPartial, TimeoutSendsThePartialAggregateUp) {
  const auto [k, n] = GetParam();
  Switch sw(Config(k));
  std::vector<std::vector<int32_t>> vs;
  for (int h = 0; h < n; ++h) {
    Pkt p;
    p.host = h;
    p.hosts = 8;
    p.data = Values(h, k);
    vs.push_back(p.data);
    sw.Send(uint16_t(h), HostPacket(p), Picoseconds(100 + 10 * h) * kNs);
    EXPECT_TRUE(sw.rec.out.empty());
  }
  const uint32_t id = Pkt{}.id;
  EXPECT_EQ(sw.dp.Find(id)->counter, n);
  EXPECT_EQ(sw.dp.stats().aggregated, uint64_t(n - 1));
  ASSERT_EQ(sw.timers.scheduled.size(), 1u) << "one timer per descriptor";
  sw.RunTimers(1099 * kNs);
  EXPECT_TRUE(sw.rec.out.empty()) << "not before alloc + timeout";
  sw.RunTimers(1100 * kNs);
  ASSERT_EQ(sw.rec.out.size(), 1u);
  const Out& o = sw.rec.out[0];
  EXPECT_EQ(o.kind, Out::kRouted) << "next hop by the switch's table and load balancing";
  EXPECT_EQ(o.latency, kPass);
  EXPECT_EQ(o.bytes, AggregatePacket(kLeader, id, uint16_t(n), 8, Sum(vs)));
  EXPECT_EQ(o.bytes.size(), size_t(14 + 20 + 8 + 19 + 4 * k));
  const cn::Descriptor* d = sw.dp.Find(id);
  ASSERT_NE(d, nullptr) << "kept until the broadcast (§3.1.1)";
  EXPECT_TRUE(d->timed_out);
  EXPECT_EQ(sw.dp.stats().timeouts, 1u);
}

INSTANTIATE_TEST_SUITE_P(K32AndK256, CanaryPartial,
                         ::testing::Values(std::make_pair(32u, 2), std::make_pair(32u, 3), std::make_pair(32u, 5),
                                           std::make_pair(256u, 2), std::make_pair(256u, 4)),
                         [](const auto& info) {
                           return "k" + std::to_string(info.param.first) + "_n" + std::to_string(info.param.second);
                         });

TEST(CanaryReduce, RootCompletionGoesToTheLeaderAtOnce) {
  Switch sw(Config(256));
  std::vector<std::vector<int32_t>> vs;
  // Two hosts below plus a partial aggregate of two from a lower switch: 4.
  const std::pair<int, uint16_t> senders[] = {{0, 1}, {1, 1}, {5, 2}};
  for (const auto& [port, counter] : senders) {
    Pkt p;
    p.host = port;
    p.counter = counter;
    p.hosts = 4;
    p.data = Values(port, 256);
    vs.push_back(p.data);
    sw.Send(uint16_t(port), HostPacket(p), 10 * kNs);
  }
  ASSERT_EQ(sw.rec.out.size(), 1u);
  const Out& o = sw.rec.out[0];
  EXPECT_EQ(o.kind, Out::kRouted);
  EXPECT_EQ(Get32(o.bytes, kIpDst), kLeader) << "routed to the leader";
  EXPECT_EQ(o.bytes, AggregatePacket(kLeader, Pkt{}.id, 4, 4, Sum(vs)));
  EXPECT_EQ(sw.dp.stats().completed, 1u);
  sw.RunTimers(10'000 * kNs);
  EXPECT_EQ(sw.rec.out.size(), 1u) << "the timer of a completed block sends nothing";
  EXPECT_EQ(sw.dp.stats().stale_timers, 1u);
  EXPECT_EQ(sw.dp.Find(Pkt{}.id)->children, (1u << 0) | (1u << 1) | (1u << 5));
}

TEST(CanaryReduce, SingleCompletePacketIsSentOnAllocation) {
  Switch sw(Config());
  Pkt p;
  p.counter = 3;
  p.hosts = 3;
  p.data = Values(1, 32);
  sw.Send(4, HostPacket(p), 0);
  ASSERT_EQ(sw.rec.out.size(), 1u);
  std::vector<uint32_t> u(p.data.begin(), p.data.end());
  EXPECT_EQ(sw.rec.out[0].bytes, AggregatePacket(kLeader, p.id, 3, 3, u));
  EXPECT_TRUE(sw.timers.scheduled.empty());
  EXPECT_TRUE(sw.dp.Find(p.id)->timed_out);
}

TEST(CanaryReduce, StragglerAfterTimeoutIsForwardedAtOnceAndJoinsTheChildren) {
  Switch sw(Config());
  for (int h : {1, 2}) {
    Pkt p;
    SetHost(p, h, 32);
    sw.Send(uint16_t(h), HostPacket(p), 0);
  }
  sw.RunTimers(1000 * kNs);
  ASSERT_EQ(sw.rec.out.size(), 1u);  // the partial aggregate
  Pkt late;
  SetHost(late, 6, 32);
  const Bytes in = HostPacket(late);
  sw.Send(6, in, 1500 * kNs);
  ASSERT_EQ(sw.rec.out.size(), 2u);
  EXPECT_EQ(sw.rec.out[1].kind, Out::kRouted);
  EXPECT_EQ(sw.rec.out[1].bytes, in) << "forwarded unmodified, counter 1";
  const cn::Descriptor* d = sw.dp.Find(late.id);
  EXPECT_EQ(d->children, (1u << 1) | (1u << 2) | (1u << 6));
  EXPECT_EQ(d->counter, 2) << "a straggler is not added";
  EXPECT_EQ(sw.dp.stats().stragglers, 1u);
}

TEST(CanaryReduce, PacketsRouteByTheCanaryDestination) {
  // A straggler whose IPv4 destination is not the leader is readdressed (§4.1
  // "the same routing tables used for IP routing ... to reach the destination").
  Switch sw(Config());
  Pkt p;
  p.data = Values(0, 32);
  sw.Send(0, HostPacket(p), 0);
  sw.RunTimers(2000 * kNs);
  Pkt late = p;
  late.ip_dst = HostIp(9);
  sw.Send(3, HostPacket(late), 3000 * kNs);
  ASSERT_EQ(sw.rec.out.size(), 2u);
  Bytes want = HostPacket(late);
  for (int i = 0; i < 4; ++i) want[kIpDst + i] = uint8_t(kLeader >> (24 - 8 * i));
  FixChecksum(want);
  want[kUdpCsum] = want[kUdpCsum + 1] = 0;
  EXPECT_EQ(sw.rec.out[1].bytes, want);
}

TEST(CanaryCollision, DifferentIdSetsBypassAddressAndPortAndGoesToTheLeader) {
  cn::CanaryConfig c = Config();
  c.index_hash = cn::IndexHash::kDirect;
  Switch sw(c);
  Pkt a;
  a.id = 5;
  a.data = Values(0, 32);
  sw.Send(1, HostPacket(a), 0);
  Pkt b;
  b.id = 5 + 1024;  // same slot, different block
  b.padding = 0x15;
  b.data = Values(3, 32);
  const Bytes in = HostPacket(b);
  sw.Send(3, in, 10 * kNs);
  ASSERT_EQ(sw.rec.out.size(), 1u);
  Bytes want = in;
  want[kC + 12] = 0, want[kC + 13] = 0, want[kC + 14] = 0, want[kC + 15] = 3;  // children = ingress port
  want[kC + 16] = 0, want[kC + 17] = kSwitchAddress;                          // switch address
  want[kC + 18] = 0x80 | 0x15;                                                // bypass, padding kept
  want[kUdpCsum] = want[kUdpCsum + 1] = 0;
  EXPECT_EQ(sw.rec.out[0].kind, Out::kRouted);
  EXPECT_EQ(sw.rec.out[0].bytes, want);
  EXPECT_EQ(sw.dp.stats().collisions, 1u);
  EXPECT_EQ(sw.dp.Find(5)->children, 1u << 1) << "the resident block is untouched";
  EXPECT_EQ(sw.dp.Find(b.id), nullptr);
}

TEST(CanaryCollision, Crc32SlotCollisionIsDetected) {
  // Two ids whose CRC-32 agree in the low 10 bits, found with the reference CRC.
  const uint32_t a = 0x00020000;
  uint32_t b = a + 1;
  while ((RefCrc32OfId(b) & 1023) != (RefCrc32OfId(a) & 1023)) ++b;
  Switch sw(Config());
  Pkt pa;
  pa.id = a;
  pa.data = Values(0, 32);
  sw.Send(0, HostPacket(pa), 0);
  Pkt pb;
  pb.id = b;
  pb.data = Values(1, 32);
  sw.Send(1, HostPacket(pb), 0);
  ASSERT_EQ(sw.rec.out.size(), 1u);
  EXPECT_EQ(sw.rec.out[0].bytes[kC + 18] & 0x80, 0x80);
  EXPECT_EQ(sw.dp.stats().collisions, 1u);
}

// canary-fgcs24 §5.2.4: tenants statically partitioned. Application 1 holds
// descriptors 1024..2047 and application 2 holds 0..1023 (direct index), so
// their block 5s live side by side; without the shares they collide.
TEST(CanaryPartition, TenantSharesKeepApplicationsApart) {
  cn::CanaryConfig c = Config();
  c.table_size = 4096;
  c.index_hash = cn::IndexHash::kDirect;
  const uint32_t app1 = 1u << 24 | 5, app2 = 2u << 24 | 5, app3 = 3u << 24 | 4097;
  {
    Switch shared(c);
    EXPECT_EQ(shared.dp.IndexOf(app1), 5u);
    EXPECT_EQ(shared.dp.IndexOf(app2), 5u);
    Pkt a, b;
    a.id = app1, b.id = app2;
    a.data = Values(0, 32), b.data = Values(1, 32);
    shared.Send(0, HostPacket(a), 0);
    shared.Send(1, HostPacket(b), 0);
    ASSERT_EQ(shared.rec.out.size(), 1u) << "one table: application 2's block bypasses to its leader";
    EXPECT_EQ(shared.rec.out[0].bytes[kC + 18] & 0x80, 0x80);
    EXPECT_EQ(shared.dp.stats().collisions, 1u);
  }
  c.partitions = {{1, 1024, 1024}, {2, 0, 1024}};
  Switch sw(c);
  EXPECT_EQ(sw.dp.IndexOf(app1), 1024u + 5);
  EXPECT_EQ(sw.dp.IndexOf(app2), 5u);
  EXPECT_EQ(sw.dp.IndexOf(app3), 4097u & 4095) << "no share: the whole table";
  EXPECT_EQ(sw.dp.IndexOf(1u << 24 | 1029), 1024u + 5) << "a share wraps at its size";
  Pkt a, b;
  a.id = app1, b.id = app2;
  a.data = Values(0, 32), b.data = Values(1, 32);
  sw.Send(0, HostPacket(a), 0);
  sw.Send(1, HostPacket(b), 0);
  EXPECT_TRUE(sw.rec.out.empty()) << "both allocate";
  EXPECT_EQ(sw.dp.stats().collisions, 0u);
  ASSERT_NE(sw.dp.Find(app1), nullptr);
  ASSERT_NE(sw.dp.Find(app2), nullptr);
  EXPECT_EQ(sw.dp.Accumulator(1024 + 5), a.data);
  EXPECT_EQ(sw.dp.Accumulator(5), b.data);
  // The control plane adds a share at run time; overlaps and bad sizes are refused.
  sw.dp.AddPartition({3, 2048, 2048});
  EXPECT_EQ(sw.dp.IndexOf(app3), 2048u + (4097u & 2047));
  EXPECT_THROW(sw.dp.AddPartition({4, 1536, 512}), std::invalid_argument);  // inside application 1's
  EXPECT_THROW(sw.dp.AddPartition({1, 3072, 1024}), std::invalid_argument);  // application 1 has one
  EXPECT_THROW(sw.dp.AddPartition({5, 0, 3}), std::invalid_argument);        // not a power of two
  const auto dump = State(sw.dp);
  ASSERT_EQ(dump["config"]["partitions"].size(), 3u);
  EXPECT_EQ(dump["config"]["partitions"][0]["base"], 1024);
  EXPECT_FALSE(State(cn::CanaryDataplane(Config()))["config"].contains("partitions"));
}

TEST(CanaryPartition, Crc32WithinAShareUsesItsLowBits) {
  cn::CanaryConfig c = Config();
  c.partitions = {{1, 512, 256}};
  cn::CanaryDataplane dp(c);
  for (uint32_t id : {1u << 24 | 0, 1u << 24 | 77, 1u << 24 | 0xffffff})
    EXPECT_EQ(dp.IndexOf(id), 512u + (RefCrc32OfId(id) & 255)) << id;
  EXPECT_EQ(dp.IndexOf(2u << 24 | 77), RefCrc32OfId(2u << 24 | 77) & 1023);
}

TEST(CanaryBypass, BypassedPacketsPassUntouched) {
  Switch sw(Config());
  Pkt p;
  p.bypass = true;
  p.switch_address = 3;  // bypassed by another switch's collision
  p.children = 12;
  p.data = Values(0, 32);
  const Bytes in = HostPacket(p);
  sw.Send(0, in, 0);
  Pkt mine = p;
  mine.switch_address = kSwitchAddress;  // our own address, but not a restoration (multicast 0)
  const Bytes in2 = HostPacket(mine);
  sw.Send(1, in2, 0);
  ASSERT_EQ(sw.rec.out.size(), 2u);
  EXPECT_EQ(sw.rec.out[0].kind, Out::kRouted);
  EXPECT_EQ(sw.rec.out[0].bytes, in);
  EXPECT_EQ(sw.rec.out[1].bytes, in2);
  EXPECT_EQ(sw.dp.Find(p.id), nullptr) << "no descriptor";
  EXPECT_TRUE(sw.timers.scheduled.empty());
  EXPECT_EQ(sw.dp.stats().bypassed, 2u);
}

TEST(CanaryBroadcast, MulticastsToTheChildrenShardsAndFreesTheEntry) {
  Switch sw(Config(32, 64));  // 64 ports, 4 shards of 16
  const uint16_t ports[] = {1, 5, 17, 40, 63};
  for (uint16_t port : ports) {
    Pkt p;
    p.host = port;
    p.hosts = 5;
    p.data = Values(port, 32);
    sw.Send(port, HostPacket(p), 0);
  }
  ASSERT_EQ(sw.rec.out.size(), 1u);  // complete: up to the leader
  Pkt down;
  down.multicast = true;
  down.ip_dst = 0xffffffff;
  down.counter = 5;
  down.hosts = 5;
  down.data = Values(99, 32);
  const Bytes in = HostPacket(down);
  sw.Send(0, in, 50 * kNs);
  ASSERT_EQ(sw.rec.out.size(), 5u);
  const std::vector<std::vector<uint16_t>> groups = {{1, 5}, {17}, {40}, {63}};
  for (size_t g = 0; g < groups.size(); ++g) {
    const Out& o = sw.rec.out[1 + g];
    EXPECT_EQ(o.kind, Out::kMulticast);
    EXPECT_EQ(o.ports, groups[g]) << "group " << g;
    EXPECT_EQ(o.bytes, in) << "the broadcast is replicated unmodified";
    EXPECT_EQ(o.latency, (g < 2 ? 1 : 2) * kPass) << "two groups per pass (mcast_grp_a/b)";
  }
  EXPECT_EQ(sw.dp.LastPasses(), 2u);
  EXPECT_EQ(sw.dp.Find(down.id), nullptr) << "freed (§3.1.2)";
  EXPECT_EQ(State(sw.dp)["occupied"], 0);
  EXPECT_EQ(sw.dp.stats().multicast_copies, 5u);
  // A new block in the freed slot allocates afresh, and the old timer is stale.
  Pkt again;
  again.data = Values(1, 32);
  sw.Send(2, HostPacket(again), 60 * kNs);
  EXPECT_EQ(sw.dp.Find(again.id)->generation, 2u);
  sw.RunTimers(5000 * kNs);
  ASSERT_EQ(sw.rec.out.size(), 6u);
  std::vector<uint32_t> u(again.data.begin(), again.data.end());
  EXPECT_EQ(sw.rec.out[5].bytes, AggregatePacket(kLeader, again.id, 1, 4, u));
  EXPECT_EQ(sw.dp.stats().stale_timers, 1u) << "the freed block's timer (generation 1) sends nothing";
}

TEST(CanaryBroadcast, WithoutDescriptorIsDropped) {
  Switch sw(Config());
  Pkt down;
  down.multicast = true;
  down.data = Values(0, 32);
  sw.Send(0, HostPacket(down), 0);
  EXPECT_TRUE(sw.rec.out.empty());
  EXPECT_EQ(sw.dp.stats().broadcast_misses, 1u);
}

TEST(CanaryRestoration, PacketForThisSwitchMulticastsToItsPortGroup) {
  Switch sw(Config(32, 64));
  Pkt r;
  r.ip_dst = HostIp(20);  // routed towards a host below the switch
  r.bypass = true;
  r.multicast = true;
  r.switch_address = kSwitchAddress;
  r.children = 1u << 16 | 0x5;  // shard 1, bits 0 and 2: ports 16 and 18
  r.counter = 4;
  r.data = Values(7, 32);
  const Bytes in = HostPacket(r);
  sw.Send(0, in, 0);
  ASSERT_EQ(sw.rec.out.size(), 1u);
  const Out& o = sw.rec.out[0];
  EXPECT_EQ(o.kind, Out::kMulticast);
  EXPECT_EQ(o.ports, (std::vector<uint16_t>{16, 18}));
  Bytes want = in;
  for (int i = 0; i < 4; ++i) want[kIpDst + i] = 0xff;  // limited broadcast
  FixChecksum(want);
  want[kUdpCsum] = want[kUdpCsum + 1] = 0;
  for (size_t i = 12; i < 18; ++i) want[kC + i] = 0;  // children, switch address cleared
  want[kC + 18] = 0x40;                               // an ordinary broadcast below
  EXPECT_EQ(o.bytes, want);
  EXPECT_EQ(sw.dp.stats().restorations, 1u);

  // For another switch: bypassed (routed untouched).
  Pkt other = r;
  other.switch_address = 9;
  const Bytes in2 = HostPacket(other);
  sw.Send(0, in2, 0);
  ASSERT_EQ(sw.rec.out.size(), 2u);
  EXPECT_EQ(sw.rec.out[1].kind, Out::kRouted);
  EXPECT_EQ(sw.rec.out[1].bytes, in2);

  // A group this switch does not have (shard 4 of 4): dropped and counted.
  Pkt bad = r;
  bad.children = 4u << 16 | 1;
  sw.Send(0, HostPacket(bad), 0);
  EXPECT_EQ(sw.rec.out.size(), 2u);
  EXPECT_EQ(sw.dp.stats().restoration_bad_group, 1u);
}

TEST(CanaryMulticast, ShardedGroupEntries) {
  // canary-fgcs24 §4.2: 2^(p/s) * s; a 64-port switch with four shards: 256K.
  EXPECT_EQ(cn::MulticastShards::GroupEntries(64, 16), 262144u);
  EXPECT_EQ(cn::MulticastShards::GroupEntries(64, 8), 2048u);
  EXPECT_EQ(cn::MulticastShards::GroupEntries(64, 32), uint64_t{1} << 33);
  EXPECT_EQ(cn::MulticastShards::GroupEntries(8, 4), 32u);  // the paper's 8-port example: 2 * 2^4
  // The paper's example: 00101101 on 8 ports, shards of 4: 1 0010 -> [5], 0 1101 -> [0, 2, 3].
  cn::MulticastShards m(8, 4);
  std::vector<uint32_t> groups;
  m.Groups(0b00101101, groups);
  EXPECT_EQ(groups, (std::vector<uint32_t>{0b0'1101, 0b1'0010}));
  std::vector<uint16_t> ports;
  ASSERT_TRUE(m.Ports(0b1'0010, ports));
  EXPECT_EQ(ports, (std::vector<uint16_t>{5}));
  ASSERT_TRUE(m.Ports(0b0'1101, ports));
  EXPECT_EQ(ports, (std::vector<uint16_t>{0, 2, 3}));
  EXPECT_EQ(State(cn::CanaryDataplane(Config(32, 64)))["config"]["multicast_group_entries"], 262144);
}

// Exact per-descriptor timers vs the prototype's clock-packet scan (§4.3).
// Table of 8 entries (direct index), timeout 1000 ns, clock every 100 ns, one
// entry per clock: block 3 allocated at 250 ns expires at 1250 ns.
//   exact: sent at 1250 ns; a packet at 1500 ns is a straggler.
//   scan:  clock n checks entry n mod 8; the first n >= 13 (1300 ns) with
//          n mod 8 == 3 is 19: sent at 1900 ns, and the 1500 ns packet is
//          still aggregated (counter 2).
// The difference is the scan delay, in [0, table_size * period).
struct ScanRun {
  std::vector<Out> out;
  std::vector<TimerQueue::Timer> fired;
};
ScanRun RunScanScenario(cn::TimeoutMode mode, uint32_t per_clock) {
  cn::CanaryConfig c = Config();
  c.table_size = 8;
  c.index_hash = cn::IndexHash::kDirect;
  c.timeout_mode = mode;
  c.clock_period_ps = 100 * kNs;
  c.scan_entries_per_clock = per_clock;
  Switch sw(c);
  Pkt a;
  a.id = 3;
  SetHost(a, 0, 32);
  sw.Send(0, HostPacket(a), 250 * kNs);
  Pkt b = a;
  SetHost(b, 1, 32);
  sw.Send(1, HostPacket(b), 1500 * kNs);
  sw.RunTimers(100'000 * kNs);
  return {sw.rec.out, sw.fired};
}

TEST(CanaryTimeout, ExactTimerVersusClockScan) {
  const std::vector<int32_t> a = Values(0, 32), b = Values(1, 32);
  const ScanRun exact = RunScanScenario(cn::TimeoutMode::kExactTimer, 1);
  ASSERT_EQ(exact.fired.size(), 1u);
  EXPECT_EQ(exact.fired[0].at, 1250 * kNs);
  ASSERT_EQ(exact.out.size(), 2u);
  EXPECT_EQ(exact.out[0].bytes, AggregatePacket(kLeader, 3, 1, 4, Sum({a})));
  EXPECT_EQ(Get16(exact.out[1].bytes, kC + 8), 1) << "the 1500 ns packet is a straggler";

  const ScanRun scan = RunScanScenario(cn::TimeoutMode::kClockScan, 1);
  ASSERT_EQ(scan.fired.size(), 1u);
  EXPECT_EQ(scan.fired[0].at, 1900 * kNs);
  ASSERT_EQ(scan.out.size(), 1u);
  EXPECT_EQ(scan.out[0].bytes, AggregatePacket(kLeader, 3, 2, 4, Sum({a, b})));

  // Two entries per clock: sweep of 4 clocks; entry 3 is checked at n mod 4 == 1: n = 13.
  const ScanRun scan2 = RunScanScenario(cn::TimeoutMode::kClockScan, 2);
  ASSERT_EQ(scan2.fired.size(), 1u);
  EXPECT_EQ(scan2.fired[0].at, 1300 * kNs);
}

TEST(CanaryTimeout, ClockScanFireTimeIsTheFirstCheckAtOrAfterTheDeadline) {
  cn::CanaryConfig c = Config();
  c.timeout_mode = cn::TimeoutMode::kClockScan;
  c.table_size = 16;
  c.clock_period_ps = 10 * kNs;
  c.timeout_ps = 95 * kNs;
  const cn::TimeoutUnit t(c);
  for (uint32_t index = 0; index < 16; ++index) {
    for (Picoseconds alloc : {Picoseconds(0), 3 * kNs, 5 * kNs, 77 * kNs, 1234 * kNs}) {
      // Brute force: walk the clock packets.
      Picoseconds want = 0;
      for (uint64_t n = 0;; ++n) {
        if (n % 16 == index && n * 10 * kNs >= alloc + 95 * kNs) {
          want = n * 10 * kNs;
          break;
        }
      }
      EXPECT_EQ(t.FireTime(index, alloc), want) << index << " " << alloc;
    }
  }
}

TEST(CanaryArithmetic, Int32WrapsAround) {
  Switch sw(Config(32));
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  Pkt a, b;
  a.hosts = b.hosts = 2;
  a.data.assign(32, 0);
  b.data.assign(32, 0);
  a.data[0] = kMax, b.data[0] = 1;    // -> kMin
  a.data[1] = -1, b.data[1] = 1;      // -> 0
  a.data[2] = kMin, b.data[2] = -1;   // -> kMax
  a.data[3] = kMin, b.data[3] = kMin; // -> 0
  a.data[4] = -5, b.data[4] = -7;     // -> -12
  sw.Send(0, HostPacket(a), 0);
  b.host = 1;
  sw.Send(1, HostPacket(b), 0);
  ASSERT_EQ(sw.rec.out.size(), 1u);
  const Bytes& o = sw.rec.out[0].bytes;
  const size_t d = kC + 19;
  EXPECT_EQ(int32_t(Get32(o, d)), kMin);
  EXPECT_EQ(int32_t(Get32(o, d + 4)), 0);
  EXPECT_EQ(int32_t(Get32(o, d + 8)), kMax);
  EXPECT_EQ(int32_t(Get32(o, d + 12)), 0);
  EXPECT_EQ(int32_t(Get32(o, d + 16)), -12);
}

TEST(CanaryParse, TruncatedAndMalformedPacketsAreCountedNeverProcessed) {
  Switch sw(Config(32));
  Pkt p;
  p.data = Values(0, 32);
  const Bytes good = HostPacket(p);
  std::vector<Bytes> bad;
  bad.push_back(Bytes(good.begin(), good.end() - 1));        // one element byte short
  bad.push_back(Bytes(good.begin(), good.begin() + kC + 19));  // header only
  bad.push_back(Bytes(good.begin(), good.begin() + kC + 5));   // half a header
  bad.push_back(Bytes(good.begin(), good.begin() + 38));      // half a UDP header
  bad.push_back(Bytes(good.begin(), good.begin() + 10));      // half an Ethernet header
  Bytes short_udp = good;
  short_udp[14 + 20 + 4] = 0, short_udp[14 + 20 + 5] = 8 + 19;  // UDP length without the data
  bad.push_back(short_udp);
  Bytes fragment = good;
  fragment[14 + 6] = 0x20;  // MF: the first fragment of a bigger datagram
  bad.push_back(fragment);
  for (const Bytes& b : bad) sw.Send(0, b, 0);
  EXPECT_TRUE(sw.rec.out.empty());
  EXPECT_EQ(sw.dp.stats().malformed_dropped, bad.size());
  EXPECT_EQ(sw.dp.Find(p.id), nullptr);
  // The truncated ones a switch would still hand over are claimed (port seen).
  const Bytes& t = bad[0];
  EXPECT_TRUE(sw.dp.Claims(inasim::p4::ParseFrame(t.data(), std::min<size_t>(t.size(), 64), uint32_t(t.size()))));
}

TEST(CanaryParse, NonCanaryPacketsAreNotClaimed) {
  cn::CanaryDataplane dp(Config());
  Pkt p;
  p.data = Values(0, 32);
  Bytes other_port = HostPacket(p);
  other_port[14 + 20 + 2] = 0x12;  // UDP dst port 0x12bd
  Bytes tcp = HostPacket(p);
  tcp[14 + 9] = 6;
  Bytes arp = HostPacket(p);
  arp[12] = 0x08, arp[13] = 0x06;
  for (const Bytes* b : {&other_port, &tcp, &arp}) {
    EXPECT_FALSE(dp.Claims(inasim::p4::ParseFrame(b->data(), 64, uint32_t(b->size()))));
  }
  const Bytes good = HostPacket(p);
  EXPECT_TRUE(dp.Claims(inasim::p4::ParseFrame(good.data(), 64, uint32_t(good.size()))));
  // Handed over anyway: routed untouched, counted, never aggregated.
  Recorder rec;
  dp.Process(0, other_port, 0, rec);
  ASSERT_EQ(rec.out.size(), 1u);
  EXPECT_EQ(rec.out[0].kind, Out::kRouted);
  EXPECT_EQ(rec.out[0].bytes, other_port);
  EXPECT_EQ(dp.stats().not_canary, 1u);
}

TEST(CanaryParse, ReducePacketFromAnUnknownPortIsDropped) {
  Switch sw(Config(32, 8));
  Pkt p;
  p.data = Values(0, 32);
  sw.Send(8, HostPacket(p), 0);
  EXPECT_TRUE(sw.rec.out.empty());
  EXPECT_EQ(sw.dp.stats().bad_port_dropped, 1u);
  EXPECT_EQ(sw.dp.Find(p.id), nullptr);
}

TEST(CanaryState, DumpStateShowsTheDescriptor) {
  Switch sw(Config(32));
  Pkt p;
  p.data = Values(0, 32);
  sw.Send(3, HostPacket(p), 42 * kNs);
  Pkt q = p;
  SetHost(q, 4, 32);
  sw.Send(4, HostPacket(q), 43 * kNs);
  const nlohmann::json j = State(sw.dp);
  EXPECT_EQ(j["name"], "canary");
  EXPECT_EQ(j["switch_address"], kSwitchAddress);
  EXPECT_EQ(j["occupied"], 1);
  ASSERT_EQ(j["descriptors"].size(), 1u);
  const nlohmann::json& d = j["descriptors"][0];
  EXPECT_EQ(d["index"], sw.dp.IndexOf(p.id));
  EXPECT_EQ(d["id"], p.id);
  EXPECT_EQ(d["counter"], 2);
  EXPECT_EQ(d["hosts"], 4);
  EXPECT_EQ(d["leader"], "10.0.0.1");
  EXPECT_EQ(d["children"], nlohmann::json::array({3, 4}));
  EXPECT_EQ(d["alloc_ps"], 42 * kNs);
  EXPECT_EQ(d["timed_out"], false);
  EXPECT_EQ(d["accumulator"].get<std::vector<int32_t>>(), AsInt(Sum({p.data, q.data})));
  EXPECT_EQ(j["stats"]["allocated"], 1);
  EXPECT_EQ(j["stats"]["aggregated"], 1);
}

TEST(CanaryConfig, FromJsonReadsEveryKeyAndRejectsBadInput) {
  const cn::CanaryConfig c = cn::CanaryConfig::FromJson(
      R"({"switch_address":7,"switch_ip":"10.255.0.7","switch_mac":"02:00:00:00:ff:07","num_ports":32,
          "udp_port":45000,"elements_per_packet":32,"table_size":4096,"index_hash":"direct","timeout_us":3,
          "timeout_mode":"clock_scan","clock_period_ns":5,"scan_entries_per_clock":4,
          "multicast_shard_ports":8,"multicast_groups_per_pass":1,"pass_latency_ns":400,
          "partitions":[{"application_id":3,"base":1024,"size":512},{"application_id":4,"size":1024}]})");
  EXPECT_EQ(c.switch_address, 7);
  EXPECT_EQ(c.switch_ip, kSwitchIp);
  EXPECT_EQ(c.switch_mac, kSwitchMac);
  EXPECT_EQ(c.num_ports, 32u);
  EXPECT_EQ(c.udp_port, 45000);
  EXPECT_EQ(c.num_elements, 32u);
  EXPECT_EQ(c.table_size, 4096u);
  EXPECT_EQ(c.index_hash, cn::IndexHash::kDirect);
  EXPECT_EQ(c.timeout_ps, 3000 * kNs);
  EXPECT_EQ(c.timeout_mode, cn::TimeoutMode::kClockScan);
  EXPECT_EQ(c.clock_period_ps, 5 * kNs);
  EXPECT_EQ(c.scan_entries_per_clock, 4u);
  EXPECT_EQ(c.multicast_shard_ports, 8u);
  EXPECT_EQ(c.multicast_groups_per_pass, 1u);
  EXPECT_EQ(c.pass_latency_ps, 400 * kNs);
  ASSERT_EQ(c.partitions.size(), 2u);
  EXPECT_EQ(c.partitions[0].application_id, 3);
  EXPECT_EQ(c.partitions[0].base, 1024u);
  EXPECT_EQ(c.partitions[0].size, 512u);
  EXPECT_EQ(c.partitions[1].base, 0u);
  EXPECT_EQ(c.partitions[1].size, 1024u);
  const cn::CanaryConfig d = cn::CanaryConfig::FromJson("{}");
  EXPECT_EQ(d.num_elements, 256u);
  EXPECT_EQ(d.table_size, 32768u);
  EXPECT_EQ(d.udp_port, kUdpPort);
  for (const char* bad : {"[]", "{", R"({"table_size":1000})", R"({"timeout_mode":"fast"})", R"({"num_ports":65})",
                          R"({"num_ports":64,"multicast_shard_ports":32})", R"({"tabel_size":8})",
                          R"({"switch_ip":"10.0.0"})", R"({"timeout_us":0})", R"({"num_elements":32})",
                          R"({"table_size":8,"timeout_mode":"clock_scan","scan_entries_per_clock":3})",
                          R"({"partitions":{}})", R"({"partitions":[{"application_id":1}]})",
                          R"({"partitions":[{"application_id":256,"size":8}]})",
                          R"({"partitions":[{"application_id":1,"size":8,"bsae":0}]})",
                          R"({"partitions":[{"application_id":1,"size":6}]})",
                          R"({"table_size":1024,"partitions":[{"application_id":1,"base":768,"size":512}]})",
                          R"({"partitions":[{"application_id":1,"size":512},{"application_id":2,"base":256,"size":256}]})",
                          R"({"partitions":[{"application_id":1,"size":8},{"application_id":1,"base":8,"size":8}]})"}) {
    EXPECT_THROW(cn::CanaryConfig::FromJson(bad), std::invalid_argument) << bad;
  }
}

}  // namespace
