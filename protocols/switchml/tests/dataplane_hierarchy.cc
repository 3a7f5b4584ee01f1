// Hierarchical SwitchML (paper §7) as a composition of the upstream program:
// two ToRs with two workers each under one root, driven with bytes.
#include "protocols/switchml/dataplane/hierarchy.h"
#include "tests/common/recording_emitter.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {

using namespace inasim::p4;
using namespace inasim::p4::switchml;

using Out = inasim::testing::Emitted;

/// Multicast copies one entry per port, as the wire sees them.
struct Recorder : inasim::testing::RecordingEmitter {
  Recorder() : RecordingEmitter(kPerPort) {}
};

mac_addr_t Mac(uint8_t last) { return {0x02, 0, 0, 0, 0, last}; }
constexpr uint32_t kRootIp = 0x0aff0001, kTorIp[2] = {0x0aff0002, 0x0aff0003};
uint32_t WorkerIp(int tor, int w) { return 0x0a000001u + tor * 2 + w; }
uint8_t WorkerMacByte(int tor, int w) { return static_cast<uint8_t>(1 + tor * 2 + w); }

SwitchMLConfig TorConfig(int tor) {
  SwitchMLConfig c;
  c.switch_ip = kTorIp[tor];
  c.switch_mac = Mac(static_cast<uint8_t>(0xf0 + tor));
  c.num_workers = 2;
  c.elements_per_packet = 64;
  for (int w = 0; w < 2; ++w)
    c.workers.push_back({static_cast<uint16_t>(w), static_cast<uint16_t>(w), Mac(WorkerMacByte(tor, w)), WorkerIp(tor, w), 0, {}});
  return c;
}

SwitchMLConfig RootConfig() {
  SwitchMLConfig c;
  c.switch_ip = kRootIp;
  c.switch_mac = Mac(0xfe);
  c.num_workers = 2;
  c.elements_per_packet = 64;
  for (int t = 0; t < 2; ++t)
    c.workers.push_back({static_cast<uint16_t>(t), static_cast<uint16_t>(t), Mac(static_cast<uint8_t>(0xf0 + t)), kTorIp[t], 0, {}});
  return c;
}

ParentLink Up() {
  ParentLink p;
  p.uplink_port = 2;
  p.parent_ip = kRootIp;
  p.parent_mac = Mac(0xfe);
  return p;
}

/// A worker's 256 B packet (client-library layout) for slot 9, set 0.
std::vector<uint8_t> WorkerPacket(int tor, int w, int8_t exponent, int32_t base) {
  std::vector<uint8_t> b(14 + 20 + 8 + 10 + 256, 0);
  const mac_addr_t dst = Mac(static_cast<uint8_t>(0xf0 + tor)), src = Mac(WorkerMacByte(tor, w));
  std::memcpy(b.data(), dst.data(), 6);
  std::memcpy(b.data() + 6, src.data(), 6);
  StoreBe16(b.data() + 12, 0x0800);
  uint8_t* ip = b.data() + 14;
  ip[0] = 0x45;
  StoreBe16(ip + 2, static_cast<uint16_t>(b.size() - 14));
  ip[8] = 128;
  ip[9] = 17;
  StoreBe32(ip + 12, WorkerIp(tor, w));
  StoreBe32(ip + 16, kTorIp[tor]);
  StoreBe16(ip + 10, Ipv4HeaderChecksum(ip, 20));
  uint8_t* udp = ip + 20;
  StoreBe16(udp, 4000);
  StoreBe16(udp + 2, 0xbee0);
  StoreBe16(udp + 4, static_cast<uint16_t>(8 + 10 + 256));
  uint8_t* s = udp + 8;
  s[0] = 0x11;  // msg_type 1, size 256 B
  s[1] = 1;     // job
  s[2] = 42;    // pkt_id (little-endian, client-only)
  StoreBe16(s + 6, 9);
  s[8] = static_cast<uint8_t>(exponent);
  for (int i = 0; i < 64; ++i) StoreBe32(s + 10 + 4 * i, static_cast<uint32_t>(base + i));
  return b;
}

void Feed(Dataplane& dp, uint16_t port, const std::vector<uint8_t>& f, Recorder& r) {
  dp.Process(port, inasim::Span<const uint8_t>(f.data(), f.size()), 0, r);
}

int32_t Element(const std::vector<uint8_t>& f, int i) { return static_cast<int32_t>(LoadBe32(f.data() + 52 + 4 * i)); }

TEST(SwitchMLHierarchy, PartialsGoUpOnceRootMulticastsAndEachTorFansOut) {
  HierarchicalSwitchML tor0(TorConfig(0), Up()), tor1(TorConfig(1), Up());
  SwitchMLDataplane root(RootConfig());
  Recorder r0, r1, rr;
  Feed(tor0, 0, WorkerPacket(0, 0, -3, 1000), r0);
  EXPECT_TRUE(r0.out.empty());  // consumed
  Feed(tor0, 1, WorkerPacket(0, 1, 5, 2000), r0);
  ASSERT_EQ(r0.out.size(), 1u);  // one partial up, not one copy per worker
  const Out& up = r0.out[0];
  EXPECT_EQ(up.port, 2);
  EXPECT_EQ(up.latency, 2u * 520'000);  // CONSUME0 then HARVEST7
  EXPECT_EQ(0, std::memcmp(up.bytes.data(), Mac(0xfe).data(), 6));
  EXPECT_EQ(LoadBe32(up.bytes.data() + 26), kTorIp[0]);
  EXPECT_EQ(LoadBe32(up.bytes.data() + 30), kRootIp);
  EXPECT_EQ(Ipv4HeaderChecksum(up.bytes.data() + 14, 20), 0);  // valid checksum sums to 0 complemented
  EXPECT_EQ(LoadBe16(up.bytes.data() + 34), 4000);
  EXPECT_EQ(LoadBe16(up.bytes.data() + 36), 0xbee0);
  EXPECT_EQ(static_cast<int8_t>(up.bytes[50]), 5);  // exponent max of the rack
  EXPECT_EQ(Element(up.bytes, 7), 3014);
  EXPECT_EQ(tor0.stats().partials_up, 1u);

  Feed(tor1, 0, WorkerPacket(1, 0, 1, -5), r1);
  Feed(tor1, 1, WorkerPacket(1, 1, 7, 10), r1);
  ASSERT_EQ(r1.out.size(), 1u);

  Feed(root, 0, r0.out[0].bytes, rr);
  EXPECT_TRUE(rr.out.empty());
  Feed(root, 1, r1.out[0].bytes, rr);
  ASSERT_EQ(rr.out.size(), 2u);  // one copy per ToR
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(rr.out[t].port, t);
    EXPECT_EQ(LoadBe32(rr.out[t].bytes.data() + 30), kTorIp[t]);
    EXPECT_EQ(Element(rr.out[t].bytes, 7), 3014 + (-5 + 7) + (10 + 7));
    EXPECT_EQ(static_cast<int8_t>(rr.out[t].bytes[50]), 7);  // global exponent
  }

  // Down: ToR 0 claims the root's copy and multicasts it to its workers.
  r0.out.clear();
  const auto& down = rr.out[0].bytes;
  FrameView v = ParseFrame(down.data(), down.size(), static_cast<uint32_t>(down.size()));
  EXPECT_TRUE(tor0.Claims(v));
  EXPECT_FALSE(tor1.Claims(v));  // addressed to ToR 0
  Feed(tor0, 2, down, r0);
  ASSERT_EQ(r0.out.size(), 2u);
  for (int w = 0; w < 2; ++w) {
    const auto& f = r0.out[w].bytes;
    EXPECT_EQ(r0.out[w].port, w);
    EXPECT_EQ(0, std::memcmp(f.data(), Mac(WorkerMacByte(0, w)).data(), 6));
    EXPECT_EQ(LoadBe32(f.data() + 26), kTorIp[0]);
    EXPECT_EQ(LoadBe32(f.data() + 30), WorkerIp(0, w));
    EXPECT_EQ(LoadBe16(f.data() + 36), 4000);  // to the workers' port
    EXPECT_EQ(f[44], 42);                      // the packet id travels through
    for (int i = 0; i < 64; ++i) EXPECT_EQ(Element(f, i), 1000 + 2000 - 5 + 10 + 4 * i) << i;
    EXPECT_EQ(Ipv4HeaderChecksum(f.data() + 14, 20), 0);
  }
  EXPECT_EQ(tor0.stats().results_down, 1u);
}

TEST(SwitchMLHierarchy, WorkerRetransmissionForACompleteSlotResendsThePartialUp) {
  HierarchicalSwitchML tor0(TorConfig(0), Up());
  SwitchMLDataplane root(RootConfig());
  Recorder r0, rr;
  Feed(tor0, 0, WorkerPacket(0, 0, 0, 1), r0);
  Feed(tor0, 1, WorkerPacket(0, 1, 0, 2), r0);
  ASSERT_EQ(r0.out.size(), 1u);
  // The partial is lost on the way up; worker 1 times out and retransmits.
  Feed(tor0, 1, WorkerPacket(0, 1, 0, 2), r0);
  ASSERT_EQ(r0.out.size(), 2u);
  EXPECT_EQ(tor0.stats().retransmissions_up, 1u);
  EXPECT_EQ(r0.out[1].port, 2);
  EXPECT_EQ(r0.out[1].bytes, r0.out[0].bytes);  // the same partial aggregate, rewritten the same way
  // The root takes it as ToR 0's first contribution.
  Feed(root, 0, r0.out[1].bytes, rr);
  EXPECT_TRUE(rr.out.empty());
  EXPECT_EQ(root.stats().consumed, 1u);
  // A second retransmission reaches the root as a duplicate: dropped there.
  Feed(tor0, 0, WorkerPacket(0, 0, 0, 1), r0);
  Feed(root, 0, r0.out.back().bytes, rr);
  EXPECT_TRUE(rr.out.empty());
  EXPECT_EQ(root.stats().dropped, 1u);
}

TEST(SwitchMLHierarchy, FramesFromOtherSourcesAreNotTakenForResults) {
  HierarchicalSwitchML tor0(TorConfig(0), Up());
  auto f = WorkerPacket(0, 0, 0, 1);
  // A worker packet is the program's; swapped ports from a non-parent are not a result.
  StoreBe16(f.data() + 34, 0xbee0);
  StoreBe16(f.data() + 36, 4000);
  const FrameView v = ParseFrame(f.data(), f.size(), static_cast<uint32_t>(f.size()));
  EXPECT_FALSE(tor0.Claims(v));
}

}  // namespace
