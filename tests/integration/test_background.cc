// Background traffic on real ns-3 TCP stacks over our switches: one DCTCP flow
// against its ideal FCT, two flows sharing a bottleneck, ECN only above K,
// Canary's moving congestion at line rate, and whole scenarios with Poisson
// flows (every flow completes, metrics add up, same seed = same bytes).
#include "congestion/tcp-flows.h"
#include "congestion/uniform-congestion.h"
#include "ina/background.h"
#include "ina/runner.h"
#include "ina/scenario.h"
#include "net_harness.h"
#include "tests/common/run_scenario.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace inasim;
using namespace inasim::testing;
using congestion::FlowSpec;
using congestion::TcpConfig;
using congestion::TcpFlowSet;
using nlohmann::json;

namespace {

class TcpTest : public NetTest {
 protected:
  /// n hosts on one switch at `gbps`, 1 us links, DCTCP-style ECN at K packets.
  Fabric& Rack(uint32_t n, double gbps, uint64_t k_packets, uint64_t buffer = 4 << 20) {
    FabricConfig c;
    c.switch_port.buffer_bytes = buffer;
    c.switch_port.ecn_enabled = true;
    c.switch_port.ecn_threshold = k_packets;
    return Build(topo::BuildSingleRack(n, Link(gbps, 1 * kUs)), c);
  }
  std::unique_ptr<TcpFlowSet> Flows(std::vector<FlowSpec> specs, TcpConfig tcp = {}) {
    Fabric* f = fabric_.get();
    auto set = std::make_unique<TcpFlowSet>(std::move(specs), tcp, [f](uint32_t h) { return f->ip_host(h); },
                                            [f](uint32_t h) { return f->host_address(h); });
    set->Install();
    return set;
  }
  uint64_t Ideal(const FlowSpec& s, uint32_t mss = 1448) {
    return IdealFctPs(*fabric_, s.src, s.dst, s.bytes, mss);
  }
  uint64_t Marks() {
    uint64_t m = 0;
    for (uint32_t i = 0; i < topo_->links().size(); ++i)
      for (int d = 0; d < 2; ++d) m += fabric_->link_tx(i, d).queue_counters().marked;
    return m;
  }
};

TEST_F(TcpTest, IdealFctOfOneSegmentIsHandshakePlusOneWay) {
  Rack(2, 100, 65);
  // 2 hops of 1 us; SYN frame 20+40+14+24 = 98 B, data 1000+66+24 = 1090 B on the wire.
  const double syn_hop = 98 * 8 / 100.0 * 1e3 + 1e6, data_hop = 1090 * 8 / 100.0 * 1e3 + 1e6;
  EXPECT_EQ(Ideal({0, 1, 1000, 0}), static_cast<uint64_t>(std::llround(2 * 2 * syn_hop + 2 * data_hop)));
}

TEST_F(TcpTest, OneDctcpFlowOnAnIdlePathFinishesWithinTenPercentOfIdeal) {
  Rack(2, 100, 65);
  const FlowSpec spec{0, 1, 10'000'000, 5 * kUs};
  auto flows = Flows({spec});
  RunFor(100'000 * kUs);
  const auto& f = flows->flows()[0];
  ASSERT_TRUE(f.done());
  const uint64_t fct = f.end_ps - spec.start_ps, ideal = Ideal(spec);
  EXPECT_GE(fct, ideal);  // nothing beats an empty network
  EXPECT_LT(static_cast<double>(fct), 1.10 * static_cast<double>(ideal)) << fct << " vs ideal " << ideal;
  std::printf("[ measured ] 10 MB DCTCP flow at 100 Gb/s: FCT %.3f us, ideal %.3f us, ratio %.4f\n", fct * 1e-6,
              ideal * 1e-6, static_cast<double>(fct) / static_cast<double>(ideal));
}

TEST_F(TcpTest, TwoDctcpFlowsShareOneBottleneckWithinTenPercent) {
  Rack(3, 100, 65);
  // The second flow joins 300 us after the first has the link to itself.
  // DCTCP converges slowly (both flows cut by the same factor, then grow by
  // one MSS per RTT): ~2.5 ms here. Shares are compared from 3 to 8 ms.
  auto flows = Flows({{0, 2, 200'000'000, 0}, {1, 2, 200'000'000, 300 * kUs}});
  std::array<uint64_t, 2> at1{}, at2{};
  ns3::Simulator::Schedule(ns3::PicoSeconds(3000 * kUs), [&] {
    for (int i = 0; i < 2; ++i) at1[i] = flows->flows()[i].received_bytes;
  });
  ns3::Simulator::Schedule(ns3::PicoSeconds(8000 * kUs), [&] {
    for (int i = 0; i < 2; ++i) at2[i] = flows->flows()[i].received_bytes;
  });
  RunFor(8000 * kUs + 1);
  const double a = static_cast<double>(at2[0] - at1[0]), b = static_cast<double>(at2[1] - at1[1]);
  EXPECT_LT(std::abs(a - b) / ((a + b) / 2), 0.10) << a << " vs " << b;
  std::printf("[ measured ] two DCTCP flows, 3-8 ms: %.2f and %.2f Gb/s (difference %.2f %%)\n",
              a * 8 / 5e-3 / 1e9, b * 8 / 5e-3 / 1e9, 100 * std::abs(a - b) / ((a + b) / 2));
  // Together they keep the 100 Gb/s bottleneck busy (payload > 85 % of it).
  EXPECT_GT((a + b) * 8 / 5e-3, 85e9);
  // DCTCP reacted to marks and kept the queue short: no drops, queue well below the buffer.
  const InaNetDevice& bottleneck = fabric_->device(topo_->switch_vertex(0), 2);
  EXPECT_GT(bottleneck.queue_counters().marked, 0u);
  EXPECT_EQ(bottleneck.queue_counters().dropped_buffer, 0u);
  EXPECT_LT(bottleneck.queue_counters().max_bytes, 400u * 1500);
  std::printf("[ measured ] bottleneck: %llu CE marks, peak queue %llu bytes\n",
              static_cast<unsigned long long>(bottleneck.queue_counters().marked),
              static_cast<unsigned long long>(bottleneck.queue_counters().max_bytes));
}

TEST_F(TcpTest, TwoDctcpFlowsStartedTogetherFinishTogether) {
  Rack(3, 100, 65);
  auto flows = Flows({{0, 2, 20'000'000, 0}, {1, 2, 20'000'000, 0}});
  RunFor(100'000 * kUs);
  ASSERT_EQ(flows->completed(), 2u);
  const double e0 = static_cast<double>(flows->flows()[0].end_ps), e1 = static_cast<double>(flows->flows()[1].end_ps);
  EXPECT_LT(std::abs(e0 - e1) / std::max(e0, e1), 0.05);
  // 40 MB of payload through one 100 Gb/s port: at least 3.2 ms, and DCTCP keeps it near that.
  EXPECT_LT(std::max(e0, e1), 1.15 * 40e6 * 8 / 100e9 * 1e12 * 1542 / 1448);
}

// The RTO follows the RTT in microseconds (TsqTcpSocket::EstimateRtt):
// ns-3's timestamp-echo samples count milliseconds, so every sample would be
// 1 us and, with a minimum RTO below the queueing delay, every segment time
// out. Two 10 Gb/s DCTCP flows into one port queue about K = 65 packets
// (~80 us); with a 1 us minimum RTO only the RTT estimate keeps the timer
// off. (A jump in queueing may still beat the estimate once or twice.)
TEST_F(TcpTest, RetransmissionTimeoutFollowsTheMicrosecondRtt) {
  Rack(3, 10, 65);
  TcpConfig tcp;
  tcp.min_rto_ps = 1 * kUs;
  auto flows = Flows({{0, 2, 5'000'000, 0}, {1, 2, 5'000'000, 0}}, tcp);
  RunFor(100'000 * kUs);
  ASSERT_EQ(flows->completed(), 2u);
  EXPECT_LE(flows->retransmission_timeouts(), 2u);
  std::printf("[ measured ] two 5 MB DCTCP flows, min RTO 1 us: %llu retransmission timeouts\n",
              static_cast<unsigned long long>(flows->retransmission_timeouts()));
}

TEST_F(TcpTest, NoMarksWhenTheQueueNeverExceedsK) {
  // K above anything two flows can queue: same traffic, not one mark.
  Rack(3, 100, 1'000'000, 64 << 20);
  auto flows = Flows({{0, 2, 5'000'000, 0}, {1, 2, 5'000'000, 0}});
  RunFor(100'000 * kUs);
  ASSERT_EQ(flows->completed(), 2u);
  EXPECT_EQ(Marks(), 0u);
}

TEST_F(TcpTest, CubicWithoutEcnFillsTheQueueThatDctcpKeepsShort) {
  Rack(3, 100, 65);
  TcpConfig cubic;
  cubic.variant = "cubic";
  cubic.ecn = false;
  auto flows = Flows({{0, 2, 20'000'000, 0}, {1, 2, 20'000'000, 0}}, cubic);
  RunFor(200'000 * kUs);
  ASSERT_EQ(flows->completed(), 2u);
  EXPECT_EQ(Marks(), 0u);  // not ECN-capable: never marked
  const InaNetDevice& bottleneck = fabric_->device(topo_->switch_vertex(0), 2);
  EXPECT_GT(bottleneck.queue_counters().max_bytes, 1000u * 1500);
}

TEST_F(TcpTest, UniformCongestionSendsAtLineRateAndMovesBetweenPeers) {
  Rack(4, 100, 65);
  congestion::UniformCongestionConfig c;
  c.hosts = {0, 1, 2, 3};
  c.message_bytes = 100'000;
  c.rate_bps = 100e9;
  c.stop_ps = 200 * kUs;
  Fabric* f = fabric_.get();
  congestion::UniformCongestion u(c, [f](uint32_t h) -> InaNetDevice& { return f->device(h, 0); });
  u.Install();
  RunFor(1000 * kUs);
  // 4 hosts x 200 us at 100 Gb/s of 1542-byte wire frames carrying 1472 B each.
  const double expect = 4 * 200e-6 * 100e9 / 8 * 1472.0 / 1542;
  EXPECT_NEAR(static_cast<double>(u.bytes_sent()), expect, expect * 0.01);
  // A message is 68 packets; each host starts a new one (and peer) after each.
  EXPECT_NEAR(static_cast<double>(u.messages_started()), u.bytes_sent() / 100'000.0, 4.0);
  EXPECT_GT(u.bytes_received(), 0u);
  EXPECT_LE(u.bytes_received(), u.bytes_sent());
}

TEST(UniformCongestionPeers, PermutationRoundsAreSeededRandomCycles) {
  std::vector<std::vector<uint32_t>> rounds, again, other;
  const uint32_t n = 97;
  std::set<std::vector<uint32_t>> distinct;
  for (uint64_t r = 0; r < 20; ++r) {
    std::vector<uint32_t> peer(n), received(n, 0);
    for (uint32_t i = 0; i < n; ++i) {
      peer[i] = congestion::UniformCongestion::PermutationPeer(7, n, r, i, rounds);
      ASSERT_LT(peer[i], n);
      EXPECT_NE(peer[i], i) << "round " << r;
      ++received[peer[i]];
      EXPECT_EQ(congestion::UniformCongestion::PermutationPeer(7, n, r, i, again), peer[i]) << "seeded";
    }
    for (uint32_t c : received) EXPECT_EQ(c, 1u) << "everybody receives exactly one message per round";
    uint32_t len = 1;  // one cycle through all n hosts
    for (uint32_t at = peer[0]; at != 0; at = peer[at]) ++len;
    EXPECT_EQ(len, n);
    distinct.insert(peer);
    if (r == 0) {
      EXPECT_NE(congestion::UniformCongestion::PermutationPeer(8, n, 0, 0, other) * n +
                              congestion::UniformCongestion::PermutationPeer(8, n, 0, 1, other),
                          peer[0] * n + peer[1]) << "another seed, another cycle";
    }
  }
  EXPECT_EQ(distinct.size(), 20u) << "peers change every round";
}

TEST_F(TcpTest, PermutationCongestionGivesEveryHostOneSenderAtATime) {
  Rack(8, 100, 65);
  auto run = [this](bool permutation) {
    congestion::UniformCongestionConfig c;
    c.hosts = {0, 1, 2, 3, 4, 5, 6, 7};
    c.message_bytes = 50'000;
    c.stop_ps = 100 * kUs;
    c.permutation = permutation;
    Fabric* f = fabric_.get();
    congestion::UniformCongestion u(c, [f](uint32_t h) -> InaNetDevice& { return f->device(h, 0); });
    u.Install();
    RunFor(1000 * kUs);
    // The ToR's deepest host port: one sender at a time never builds a queue.
    uint64_t deepest = 0;
    for (uint16_t p = 0; p < 8; ++p)
      deepest = std::max(deepest, fabric_->switch_node(0).port(p)->queue_counters().max_bytes);
    EXPECT_EQ(u.bytes_received(), u.bytes_sent());
    return deepest;
  };
  const uint64_t uniform = run(false);
  ns3::Simulator::Destroy();
  Rack(8, 100, 65);
  const uint64_t permutation = run(true);
  EXPECT_GT(uniform, 100'000u) << "independent peers collide: two senders into one port";
  EXPECT_LT(permutation, 4'000u) << "a frame or two of jitter at most";
}

TEST_F(TcpTest, EcnThresholdFollowsTheLinkSpeed) {
  // Two leaves, 10 Gb/s hosts, 100 Gb/s fabric; two flows into host 2 queue at
  // its 10 Gb/s port only. K for 10 Gb/s ports comes from the per-rate table.
  auto run = [&](uint64_t k_10g, uint64_t k_default) {
    FabricConfig c;
    c.switch_port.buffer_bytes = 8 << 20;
    c.switch_port.ecn_enabled = true;
    c.switch_port.ecn_threshold = k_default;
    c.ecn_threshold_by_rate = {{10'000'000'000ULL, k_10g}};
    Build(topo::BuildLeafSpine(2, 2, 2, Link(10, 1 * kUs), Link(100, 1 * kUs)), c);
    auto flows = Flows({{0, 2, 3'000'000, 0}, {1, 2, 3'000'000, 0}});
    RunFor(1'000'000 * kUs);
    EXPECT_EQ(flows->completed(), 2u);
    uint64_t on_10g = 0, elsewhere = 0;
    for (uint32_t i = 0; i < topo_->links().size(); ++i)
      for (int d = 0; d < 2; ++d)
        (topo_->links()[i].spec.rate_bps == 10'000'000'000ULL ? on_10g : elsewhere) +=
            fabric_->link_tx(i, d).queue_counters().marked;
    ns3::Simulator::Destroy();
    return std::pair{on_10g, elsewhere};
  };
  const auto [marked_10g, marked_other] = run(/*k_10g=*/5, /*k_default=*/1'000'000);
  EXPECT_GT(marked_10g, 0u);
  EXPECT_EQ(marked_other, 0u);
  // The table overrides the default for 10 Gb/s ports: a tiny default K no longer marks there.
  const auto [quiet_10g, quiet_other] = run(/*k_10g=*/1'000'000, /*k_default=*/0);
  EXPECT_EQ(quiet_10g, 0u);
  EXPECT_EQ(quiet_other, 0u);  // the 100 Gb/s ports never queue: 10 Gb/s hosts cannot fill them
}

// ------------------------------------------------------------------ scenarios

json Scenario() {
  json doc = json::parse(R"({
    "name": "bg",
    "topology": {"type": "fat_tree", "k": 4},
    "links": {"host_rate_gbps": 100, "host_delay_ns": 1000, "fabric_delay_ns": 1000},
    "switch": {"buffer_bytes": 2097152, "ecn": {"enabled": true, "threshold": 65}},
    "workload": {"type": "none"},
    "background": {"flows": {"size_distribution": "web_search", "load": 0.3, "stop_us": 1000}},
    "outputs": {"sample_interval_us": 20}
  })");
  return doc;
}

TEST(BackgroundScenario, PoissonFlowsAllCompleteAndTheReportAddsUp) {
  const RunResult r = RunQuietly(Scenario());
  const json& f = r.json["background"]["flows"];
  const uint64_t n = f["flows"].get<uint64_t>();
  ASSERT_GT(n, 5u);
  EXPECT_EQ(f["completed"].get<uint64_t>(), n);
  EXPECT_EQ(f["incomplete"].get<uint64_t>(), 0u);
  EXPECT_EQ(r.json["sim"]["stopped_by"], "workload_done");
  const json& fct = f["fct"];
  EXPECT_EQ(fct["all"]["count"].get<uint64_t>(), n);
  EXPECT_EQ(fct["short"]["count"].get<uint64_t>() + fct["long"]["count"].get<uint64_t>(), n);
  EXPECT_EQ(fct["lt_100KB"]["count"].get<uint64_t>() + fct["100KB_10MB"]["count"].get<uint64_t>() +
                fct["ge_10MB"]["count"].get<uint64_t>(),
            n);
  EXPECT_GE(fct["all"]["slowdown"]["min"].get<double>(), 1.0);  // never faster than an empty network
  // flows.csv: a header and one line per flow.
  const std::string csv = Table(r, "flows.csv");
  EXPECT_EQ(static_cast<uint64_t>(std::count(csv.begin(), csv.end(), '\n')), n + 1);
  // Utilisation: one sample per link direction, and a time series with its column.
  EXPECT_EQ(r.json["network"]["utilization"]["all_links"]["count"].get<uint64_t>(), 2 * 48u);
  EXPECT_NE(Table(r, "samples.csv").find(",utilization\n"), std::string::npos);
}

TEST(BackgroundScenario, SameSeedSameBytesWithFlowsAndCongestion) {
  const std::initializer_list<std::string> sets = {
      "workload={\"type\":\"allreduce\",\"bytes\":65536,\"hosts\":{\"count\":8,\"placement\":\"random\"}}",
      "background.flows.hosts=\"others\"", "background.flows.stop_us=200",
      "background.congestion={\"hosts\":\"others\",\"message_bytes\":50000,\"stop_us\":50}"};
  RunResult a = RunQuietly(Scenario(), sets), b = RunQuietly(Scenario(), sets);
  EXPECT_TRUE(a.correct);
  EXPECT_GT(a.json["background"]["congestion"]["payload_bytes_sent"].get<uint64_t>(), 0u);
  a.json.erase("perf");
  b.json.erase("perf");
  EXPECT_EQ(a.json.dump(), b.json.dump());
  EXPECT_EQ(Table(a, "flows.csv"), Table(b, "flows.csv"));
  EXPECT_EQ(Table(a, "links.csv"), Table(b, "links.csv"));
  // A different seed draws different flows.
  RunResult c = RunQuietly(Scenario(), {"seed=2"});
  EXPECT_NE(Table(c, "flows.csv"), Table(a, "flows.csv"));
}

TEST(BackgroundScenario, CongestionAloneEndsAtItsStopAndLoadsTheLinks) {
  json doc = json::parse(R"({
    "name": "cong",
    "topology": {"type": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 4},
    "switch": {"forwarding": "adaptive"},
    "workload": {"type": "none"},
    "background": {"congestion": {"hosts": "all", "message_bytes": 100000, "stop_us": 50}}
  })");
  const RunResult r = RunQuietly(doc);
  EXPECT_EQ(r.json["sim"]["stopped_by"], "workload_done");
  EXPECT_EQ(r.json["sim"]["end_time_ps"].get<uint64_t>(), 50'000'000u);
  const json& c = r.json["background"]["congestion"];
  EXPECT_EQ(c["hosts"].get<uint32_t>(), 8u);
  // 8 hosts at line rate for 50 us; every host link sends nearly all the time.
  const double line = 8 * 50e-6 * 100e9 / 8 * 1472.0 / 1542;
  EXPECT_NEAR(c["payload_bytes_sent"].get<double>(), line, line * 0.01);
  const json& util = r.json["network"]["utilization"]["all_links"];
  EXPECT_EQ(util["count"].get<uint64_t>(), 2 * 12u);
  EXPECT_GT(util["mean"].get<double>(), 0.5);
}

TEST(BackgroundScenario, CongestionSendersBlockOnTheirSendBufferNotTheWire) {
  // Four hosts of a rack send line-rate UDP messages to each other: a
  // receiver's port often takes two senders' line rate, so PFC pauses them. A
  // blocking socket (SO_SNDBUF 64 KiB) then waits instead of piling its
  // messages up in the NIC: its host link's queue stays within the buffer and
  // a frame, it sends far fewer bytes into the stack, and the wire carries the
  // same frames as with no limit (the NIC never runs dry: the sender refills
  // it from half-empty at line rate).
  json doc = json::parse(R"({
    "name": "sndbuf",
    "topology": {"type": "single_rack", "hosts": 4},
    "switch": {"buffer_bytes": 1048576, "pfc": {"enabled": true}},
    "workload": {"type": "none"},
    "background": {"congestion": {"hosts": "all", "message_bytes": 200000, "stop_us": 200}}
  })");
  const RunResult open = RunQuietly(doc, {"background.congestion.socket_buffer_bytes=0"});
  const RunResult blocking = RunQuietly(doc, {"background.congestion.socket_buffer_bytes=65536"});
  const json& co = open.json["background"]["congestion"];
  const json& cb = blocking.json["background"]["congestion"];
  EXPECT_EQ(co["sender_blocked"], 0u);
  EXPECT_GT(cb["sender_blocked"].get<uint64_t>(), 0u);
  EXPECT_LT(cb["payload_bytes_sent"].get<double>(), 0.9 * co["payload_bytes_sent"].get<double>());
  EXPECT_GT(cb["delivered_fraction"].get<double>(), co["delivered_fraction"].get<double>());
  EXPECT_GT(open.json["network"]["pfc_pause_frames"].get<uint64_t>(), 0u);
  // Host links (a = hN): bounded queue, and the same frames on the wire.
  const std::string lo = Table(open, "links.csv"), lb = Table(blocking, "links.csv");
  const auto ro = CsvRows(lo), rb = CsvRows(lb);
  ASSERT_EQ(ro.size(), rb.size());
  size_t host_links = 0;
  for (size_t i = 0; i < ro.size(); ++i) {
    if (ro[i][1][0] != 'h' || ro[i][3] != "a->b") continue;
    ++host_links;
    EXPECT_EQ(ro[i][5], rb[i][5]) << "tx_frames of " << ro[i][1];
    EXPECT_GT(std::stoull(ro[i][15]), 300000u) << ro[i][1];  // unlimited: hundreds of KB wait
    EXPECT_LE(std::stoull(rb[i][15]), 65536u + 1600u) << rb[i][1];
  }
  EXPECT_EQ(host_links, 4u);
}

TEST(BackgroundScenario, FlowsNotWaitedForEndTheRunWhenArrivalsStop) {
  const RunResult r = RunQuietly(Scenario(), {"background.flows.wait_for_completion=false", "background.flows.stop_us=300"});
  EXPECT_EQ(r.json["sim"]["stopped_by"], "workload_done");
  EXPECT_EQ(r.json["sim"]["end_time_ps"].get<uint64_t>(), 300'000'000u);
  const json& f = r.json["background"]["flows"];
  EXPECT_EQ(f["completed"].get<uint64_t>() + f["incomplete"].get<uint64_t>(), f["flows"].get<uint64_t>());
  EXPECT_GT(f["incomplete"].get<uint64_t>(), 0u);  // the largest flows take longer than 300 us
}

}  // namespace
