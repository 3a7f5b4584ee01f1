// The switch substrate on real ns-3 host stacks: exact store-and-forward timing,
// ECN, PFC, seeded loss, link failure, and the three forwarding policies.
#include "net_harness.h"

#include "congestion/load_balancer.h"

#include <ns3/config.h>

#include <numeric>

using namespace inasim;
using namespace inasim::testing;

namespace {
// 1000 B of UDP payload -> 1042 B frame -> 1066 B on the wire with FCS,
// preamble and gap: 85,280 ps at 100 Gb/s.
constexpr uint64_t kSer1000 = 85'280;

uint32_t LinkBetween(const topo::Topology& t, const std::string& a, const std::string& b) {
  uint32_t va = 0, vb = 0;
  for (uint32_t v = 0; v < t.num_vertices(); ++v) {
    if (t.node(v).name == a) va = v;
    if (t.node(v).name == b) vb = v;
  }
  for (const auto& p : t.ports(va))
    if (p.peer == vb) return p.link;
  ADD_FAILURE() << a << " and " << b << " are not linked";
  return 0;
}

uint64_t UplinkPackets(const Fabric& f, const std::string& leaf, const std::string& spine) {
  const uint32_t link = LinkBetween(f.topology(), leaf, spine);
  return f.link_tx(link, 0).counters().tx_packets;  // a = leaf (links are added leaf first)
}
}  // namespace

using FabricTest = NetTest;

TEST_F(FabricTest, OnePacketArrivesAtExactStoreAndForwardTime) {
  Build(topo::BuildSingleRack(2, Link(100, 500'000)));
  UdpSink& sink = Sink(1, 7000);
  Sender(0).SendAt(1 * kUs, 1, 7000, 1000);
  RunFor(100 * kUs);
  ASSERT_EQ(sink.times_ps.size(), 1u);
  // Two hops, each serialisation + propagation.
  EXPECT_EQ(sink.times_ps[0], 1 * kUs + 2 * (kSer1000 + 500'000));
}

TEST_F(FabricTest, TraceSourcesAreReachableThroughTheirConfigPaths) {
  // The path `inasim trace-sources` prints for InaNetDevice: every device, of
  // hosts and of switches, is in its node's DeviceList.
  Fabric& f = Build(topo::BuildSingleRack(2, Link(100, 500'000)));
  uint64_t starts = 0;
  ns3::Config::ConnectWithoutContext(
      "/NodeList/*/DeviceList/*/$inasim::InaNetDevice/TxStart",
      ns3::MakeBoundCallback(+[](uint64_t* n, ns3::Ptr<const ns3::Packet>, uint64_t) { ++*n; }, &starts));
  Sink(1, 7000);
  Sender(0).SendAt(0, 1, 7000, 1000, 3);
  RunFor(100 * kUs);
  uint64_t sent = 0;
  for (uint32_t l = 0; l < f.topology().links().size(); ++l)
    for (int d = 0; d < 2; ++d) sent += f.link_tx(l, d).counters().tx_packets;
  EXPECT_EQ(sent, 6u);  // the host's NIC and the switch's port to host 1, 3 frames each
  EXPECT_EQ(starts, sent);
}

TEST_F(FabricTest, BackToBackFramesAreSpacedBySerialisation) {
  Build(topo::BuildSingleRack(2, Link(100, 500'000)));
  UdpSink& sink = Sink(1, 7000);
  Sender(0).SendAt(0, 1, 7000, 1000, 3);
  RunFor(100 * kUs);
  ASSERT_EQ(sink.times_ps.size(), 3u);
  EXPECT_EQ(sink.times_ps[0], 2 * (kSer1000 + 500'000));
  EXPECT_EQ(sink.times_ps[1] - sink.times_ps[0], kSer1000);
  EXPECT_EQ(sink.times_ps[2] - sink.times_ps[1], kSer1000);
}

TEST_F(FabricTest, SlowerFabricLinkSerialisesAtItsOwnRate) {
  // 100 G host links, 10 G between leaf and spine: the middle hops take 10x.
  Build(topo::BuildLeafSpine(2, 1, 1, Link(100, 0), Link(10, 0)));
  UdpSink& sink = Sink(1, 7000);
  Sender(0).SendAt(0, 1, 7000, 1000);
  RunFor(100 * kUs);
  ASSERT_EQ(sink.times_ps.size(), 1u);
  EXPECT_EQ(sink.times_ps[0], 2 * kSer1000 + 2 * 10 * kSer1000);
}

TEST_F(FabricTest, ForwardingLatencyIsAddedPerSwitchHop) {
  FabricConfig c;
  c.forwarding_latency_ps = 300'000;
  Build(topo::BuildLeafSpine(2, 1, 1, Link(100, 0), Link(100, 0)), c);
  UdpSink& sink = Sink(1, 7000);
  Sender(0).SendAt(0, 1, 7000, 1000);
  RunFor(100 * kUs);
  ASSERT_EQ(sink.times_ps.size(), 1u);
  EXPECT_EQ(sink.times_ps[0], 4 * kSer1000 + 3 * 300'000);  // leaf, spine, leaf
}

class EcnTest : public NetTest {
 protected:
  // Two senders, 20 datagrams each, into one receiver port: a 2:1 incast.
  uint64_t Incast(uint64_t k, uint8_t tos, uint32_t* ce_seen) {
    FabricConfig c;
    c.switch_port.ecn_enabled = true;
    c.switch_port.ecn_threshold = k;
    Build(topo::BuildSingleRack(3, Link(100, 500'000)), c);
    UdpSink& sink = Sink(2, 7000);
    Sender(0, tos).SendAt(0, 2, 7000, 1000, 20);
    Sender(1, tos).SendAt(0, 2, 7000, 1000, 20);
    RunFor(1000 * kUs);
    EXPECT_EQ(sink.times_ps.size(), 40u);
    *ce_seen = 0;
    for (uint8_t t : sink.tos) *ce_seen += (t & 3) == 3;
    return fabric_->switch_node(0).port(2)->queue_counters().marked;
  }
};

TEST_F(EcnTest, MarksAboveThresholdOnlyAndReceiverSeesThem) {
  uint32_t ce = 0;
  const uint64_t marks = Incast(4, 0x02 /* ECT(0) */, &ce);
  EXPECT_GT(marks, 0u);
  EXPECT_LT(marks, 40u);
  EXPECT_EQ(ce, marks);
  // The queue grows by one per frame time, so it peaks at about 20 frames.
  EXPECT_GE(fabric_->switch_node(0).port(2)->queue_counters().max_bytes, 10u * 1042);
}

TEST_F(EcnTest, NoMarksBelowThreshold) {
  uint32_t ce = 0;
  EXPECT_EQ(Incast(100, 0x02, &ce), 0u);
  EXPECT_EQ(ce, 0u);
}

TEST_F(EcnTest, NotEctIsNeverMarked) {
  uint32_t ce = 0;
  EXPECT_EQ(Incast(0, 0x00, &ce), 0u);
  EXPECT_EQ(ce, 0u);
}

/// A 3:1 incast: hosts 0-2 each send 100 datagrams of 1,000 B to host 3
/// through a 64 KiB egress, under the flow control `c` asks for.
class IncastTest : public NetTest {
 protected:
  void RunIncast(FabricConfig c) {
    c.switch_port.buffer_bytes = 64 * 1024;
    Build(topo::BuildSingleRack(4, Link(100, 100'000)), c);
    sink_ = &Sink(3, 7000);
    for (uint32_t h = 0; h < 3; ++h) Sender(h).SendAt(0, 3, 7000, 1000, 100);
    RunFor(10'000 * kUs);
  }
  UdpSink* sink_ = nullptr;
};

class PfcTest : public IncastTest {
 protected:
  void Run(bool pfc) { RunIncast(SmallPfc(pfc)); }
};

TEST_F(PfcTest, WithoutPfcAnIncastOverflowsTheBuffer) {
  Run(false);
  const auto& q = fabric_->switch_node(0).port(3)->queue_counters();
  EXPECT_GT(q.dropped_buffer, 0u);
  EXPECT_EQ(sink_->times_ps.size() + q.dropped_buffer, 300u);
}

TEST_F(PfcTest, PfcMakesTheFabricLossless) {
  Run(true);
  const auto& q = fabric_->switch_node(0).port(3)->queue_counters();
  EXPECT_EQ(q.dropped_buffer, 0u);
  EXPECT_EQ(sink_->times_ps.size(), 300u);
  uint64_t pauses = 0, paused_at_hosts = 0;
  for (uint16_t p = 0; p < 3; ++p) {
    pauses += fabric_->switch_node(0).port(p)->counters().pause_sent;
    paused_at_hosts += fabric_->device(p, 0).counters().pause_received;
  }
  EXPECT_GT(pauses, 0u);
  EXPECT_EQ(paused_at_hosts, pauses);
  // The egress never held more than its buffer.
  EXPECT_LE(q.max_bytes, 64u * 1024);
}

using CreditTest = IncastTest;

TEST_F(CreditTest, OneFrameOfCreditPacesTheSenderAtTheCreditRoundTrip) {
  // Worked example: 1,042 B of credit is one frame. Frame k leaves host 0 at
  // k (ser + 2 d): it takes ser + d to reach the switch, which sends it on at
  // once (its egress is idle) and so gives the credit back, arriving d later.
  FabricConfig c;
  c.switch_port.credit_enabled = true;
  c.switch_port.credit_bytes = 1042;
  Build(topo::BuildSingleRack(2, Link(100, 500'000)), c);
  UdpSink& sink = Sink(1, 7000);
  Sender(0).SendAt(0, 1, 7000, 1000, 4);
  RunFor(100 * kUs);
  ASSERT_EQ(sink.times_ps.size(), 4u);
  for (uint64_t k = 0; k < 4; ++k)
    EXPECT_EQ(sink.times_ps[k], k * (kSer1000 + 2 * 500'000) + 2 * (kSer1000 + 500'000)) << k;
  const PortCounters& host = fabric_->device(0, 0).counters();
  EXPECT_EQ(host.credit_stalls, 3u);  // frames 1-3 each waited
  EXPECT_EQ(host.paused_ps, 3 * (2 * 500'000));  // each the 2 d a credit takes to come back
  EXPECT_EQ(fabric_->device(0, 0).credits(), 1042u);  // all of it back at the end
  EXPECT_EQ(fabric_->switch_node(0).port(1)->credit_limit(), 0u);  // hosts grant no credit
}

TEST_F(CreditTest, CreditMakesAnIncastLosslessAndBoundsEachIngress) {
  FabricConfig c;
  c.switch_port.credit_enabled = true;
  c.switch_port.credit_bytes = 8000;
  RunIncast(c);
  const UdpSink& sink = *sink_;
  const auto& q = fabric_->switch_node(0).port(3)->queue_counters();
  EXPECT_EQ(q.dropped_buffer, 0u);
  EXPECT_EQ(sink.times_ps.size(), 300u);
  // Each ingress holds at most its 8,000 B of credit (7 frames) in the
  // egress queue; the frame on the wire has left it.
  EXPECT_LE(q.max_bytes, 3u * 7 * 1042);
  EXPECT_GE(q.max_bytes, 3u * 6 * 1042);
  for (uint32_t h = 0; h < 3; ++h) {
    EXPECT_GT(fabric_->device(h, 0).counters().credit_stalls, 0u) << h;
    EXPECT_GT(fabric_->device(h, 0).counters().paused_ps, 0u) << h;
    EXPECT_EQ(fabric_->device(h, 0).credits(), 8000u) << h;
  }
  // The 3:1 incast shares the receiver's link equally: the senders finish
  // within a frame time or so of each other.
  std::vector<uint64_t> last(3, 0);
  for (size_t i = 0; i < sink.times_ps.size(); ++i)
    for (uint32_t h = 0; h < 3; ++h)
      if (sink.from_ipv4[i] == fabric_->device(h, 0).host_ipv4()) last[h] = sink.times_ps[i];
  const auto [lo, hi] = std::minmax_element(last.begin(), last.end());
  EXPECT_LE(*hi - *lo, 3 * kSer1000);
}

class LossTest : public NetTest {
 protected:
  std::vector<uint32_t> LostIndices(uint32_t seed, bool second_lossy_link) {
    ns3::RngSeedManager::SetSeed(seed);
    Build(topo::BuildSingleRack(3, Link(100, 500'000)));
    fabric_->SetLinkLoss(0, 0.1);                     // h0 <-> tor
    if (second_lossy_link) fabric_->SetLinkLoss(2, 0.5);  // h2 <-> tor: unrelated
    UdpSink& sink = Sink(1, 7000);
    Sender(0).SendAt(0, 1, 7000, 200, 1000);
    RunFor(10'000 * kUs);
    std::vector<uint8_t> got(1000, 0);
    for (const auto& p : sink.payloads) got[p4::LoadBe32(p.data())] = 1;
    std::vector<uint32_t> lost;
    for (uint32_t i = 0; i < 1000; ++i)
      if (!got[i]) lost.push_back(i);
    EXPECT_EQ(lost.size(), fabric_->link_tx(0, 0).counters().drops_loss);
    ns3::Simulator::Destroy();
    return lost;
  }
};

TEST_F(LossTest, BernoulliLossHasTheConfiguredRateAndIsSeeded) {
  const auto a = LostIndices(1, false);
  EXPECT_GE(a.size(), 60u);   // 10 % of 1000, binomial sd ~9.5: 4 sd either side
  EXPECT_LE(a.size(), 140u);
  EXPECT_EQ(LostIndices(1, false), a);  // same seed: the very same packets
  EXPECT_NE(LostIndices(2, false), a);  // another seed: others
}

TEST_F(LossTest, AnotherLossyLinkDoesNotChangeThisLinksDraws) {
  EXPECT_EQ(LostIndices(5, true), LostIndices(5, false));
}

TEST_F(FabricTest, LinkDownFailsOverToAnotherSpine) {
  Fabric& f = Build(topo::BuildLeafSpine(2, 2, 1, Link(100, 500'000), Link(100, 500'000)));
  f.SetLinkDown(LinkBetween(*topo_, "leaf0", "spine0"), 0);
  UdpSink& sink = Sink(1, 7000);
  Sender(0).SendAt(1 * kUs, 1, 7000, 1000, 50);
  RunFor(1000 * kUs);
  EXPECT_EQ(sink.times_ps.size(), 50u);
  EXPECT_EQ(UplinkPackets(f, "leaf0", "spine0"), 0u);
  EXPECT_EQ(UplinkPackets(f, "leaf0", "spine1"), 50u);
}

TEST_F(FabricTest, LinkDownWithNoAlternativeDropsAndCounts) {
  Fabric& f = Build(topo::BuildLeafSpine(2, 2, 1, Link(100, 500'000), Link(100, 500'000)));
  f.SetLinkDown(LinkBetween(*topo_, "leaf0", "spine0"), 0);
  f.SetLinkDown(LinkBetween(*topo_, "leaf0", "spine1"), 10 * kUs);  // fails later
  UdpSink& sink = Sink(1, 7000);
  Sender(0).SendAt(1 * kUs, 1, 7000, 1000, 10);   // before the second failure
  Sender(0).SendAt(20 * kUs, 1, 7000, 1000, 10);  // after it
  RunFor(1000 * kUs);
  EXPECT_EQ(sink.times_ps.size(), 10u);
  uint64_t down = 0;
  for (const char* spine : {"spine0", "spine1"})
    for (int d = 0; d < 2; ++d) down += f.link_tx(LinkBetween(*topo_, "leaf0", spine), d).counters().drops_link_down;
  EXPECT_EQ(down, 10u);
}

class PolicyTest : public NetTest {
 protected:
  std::vector<uint64_t> Uplinks(congestion::ForwardingPolicy policy, double fabric_gbps, uint32_t packets,
                                uint64_t buffer = 1 << 20) {
    FabricConfig c;
    c.forwarding.policy = policy;
    c.forwarding.adaptive_threshold = 0.2;
    c.switch_port.buffer_bytes = buffer;
    Build(topo::BuildLeafSpine(2, 4, 1, Link(100, 500'000), Link(fabric_gbps, 500'000)), c);
    Sink(1, 7000);
    Sender(0).SendAt(0, 1, 7000, 1000, packets);
    RunFor(10'000 * kUs);
    std::vector<uint64_t> up;
    for (int s = 0; s < 4; ++s) up.push_back(UplinkPackets(*fabric_, "leaf0", "spine" + std::to_string(s)));
    return up;
  }
};

TEST_F(PolicyTest, EcmpKeepsOneFlowOnOnePath) {
  const auto up = Uplinks(congestion::ForwardingPolicy::kEcmp, 100, 200);
  EXPECT_EQ(std::count(up.begin(), up.end(), 200u), 1);
  EXPECT_EQ(std::count(up.begin(), up.end(), 0u), 3);
}

TEST_F(PolicyTest, SprayUsesEveryPath) {
  const auto up = Uplinks(congestion::ForwardingPolicy::kSpray, 100, 200);
  EXPECT_EQ(std::accumulate(up.begin(), up.end(), uint64_t{0}), 200u);
  for (uint64_t u : up) EXPECT_GT(u, 20u);  // 50 expected each
}

TEST_F(PolicyTest, AdaptiveLeavesACongestedDefaultPort) {
  // 100 G in, 10 G up: the default uplink's queue passes 20 % of 100 KB fast.
  const auto ecmp = Uplinks(congestion::ForwardingPolicy::kEcmp, 10, 300, 100'000);
  EXPECT_EQ(std::count(ecmp.begin(), ecmp.end(), 0u), 3);
  ns3::Simulator::Destroy();
  const auto adaptive = Uplinks(congestion::ForwardingPolicy::kAdaptive, 10, 300, 100'000);
  EXPECT_EQ(std::count(adaptive.begin(), adaptive.end(), 0u), 0);
  EXPECT_EQ(std::accumulate(adaptive.begin(), adaptive.end(), uint64_t{0}), 300u);  // nothing dropped
}


TEST(DestinationModK, PicksTheUpPortByTheDestinationsDigitAtEachTier) {
  // Leaf-spine, 32 spines: host 70 (rack 2, index 6) goes up on spine 6.
  EXPECT_EQ(congestion::DestinationModK(70, 1, 32), 6u);
  // k = 4 fat tree (2 up ports per switch): host 13 = 0b1101 leaves its source
  // edge on aggregation port 1 and the aggregation switch on core port 0
  // ((13 / 2) % 2), the classic d-mod-k digits.
  EXPECT_EQ(congestion::DestinationModK(13, 1, 2), 1u);
  EXPECT_EQ(congestion::DestinationModK(13, 2, 2), 0u);
  EXPECT_EQ(congestion::DestinationModK(14, 2, 2), 1u);
  EXPECT_EQ(congestion::DestinationModK(0, 3, 4), 0u);
}

TEST_F(PolicyTest, AdaptiveByDestinationSendsEveryLeafsPacketsForAHostUpOneSpine) {
  // canary-fgcs24 §5.2: "each switch sends packets on a default up port
  // (selected depending on the packet destination)". 3 leaves x 4 spines x 4
  // hosts: the 8 hosts of leaf0 and leaf1 each send 5 packets to host 9 and 5
  // to host 10 (both on leaf2). By destination, every leaf sends host 9's
  // packets up spine 1 (9 mod 4) and host 10's up spine 2, so packets bound for
  // one host meet at one spine; hashing the 5-tuple spreads the 16 flows.
  auto uplinks = [&](bool by_destination) {
    FabricConfig c;
    c.forwarding.policy = congestion::ForwardingPolicy::kAdaptive;
    c.forwarding.adaptive_by_destination = by_destination;
    Build(topo::BuildLeafSpine(3, 4, 4, Link(100, 500'000), Link(100, 500'000)), c);
    UdpSink& a = Sink(9, 7000);
    UdpSink& b = Sink(10, 7000);
    for (uint32_t h = 0; h < 8; ++h) {
      Sender(h).SendAt(h * 10 * kUs, 9, 7000, 1000, 5);
      Sender(h).SendAt(h * 10 * kUs + 5 * kUs, 10, 7000, 1000, 5);
    }
    RunFor(1000 * kUs);
    EXPECT_EQ(a.times_ps.size(), 40u);
    EXPECT_EQ(b.times_ps.size(), 40u);
    std::vector<uint64_t> up;
    for (const char* leaf : {"leaf0", "leaf1"})
      for (int s = 0; s < 4; ++s) up.push_back(UplinkPackets(*fabric_, leaf, "spine" + std::to_string(s)));
    TearDown();
    SetUp();
    return up;
  };
  EXPECT_EQ(uplinks(true), (std::vector<uint64_t>{0, 20, 20, 0, 0, 20, 20, 0}));
  const auto hashed = uplinks(false);
  EXPECT_EQ(std::accumulate(hashed.begin(), hashed.end(), uint64_t{0}), 80u);
  EXPECT_GT(hashed[0] + hashed[3] + hashed[4] + hashed[7], 0u);
}
