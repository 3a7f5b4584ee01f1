// The SwitchML model hosted by the ns-3 switch: workers on real UDP sockets
// send one slot's packets through the fabric; the switch (knowing nothing of
// SwitchML) hands them to the model, which multicasts the exact sums back,
// one copy per worker with that worker's addresses, after its pipeline passes.
#include "net_harness.h"
#include "tests/common/run_scenario.h"

#include "protocols/switchml/host/switchml-job.h"

#include "protocols/switchml/dataplane/config.h"
#include "protocols/switchml/dataplane/switchml_dataplane.h"

#include <fmt/format.h>

#include <array>
#include <functional>
#include <sstream>
#include <string>

using namespace inasim;
using namespace inasim::testing;
namespace sml = inasim::p4::switchml;

namespace {

constexpr uint32_t kSwitchIp = 0x0afffffe;  // 10.255.255.254: not a host
constexpr uint16_t kWorkerPortBase = 20000;

/// switchml_h (msg_type 0, 256 B) + exponents + 64 big-endian int32.
std::vector<uint8_t> Payload(uint32_t slot, const std::vector<int32_t>& values) {
  std::vector<uint8_t> b(10 + 4 * values.size(), 0);
  b[0] = 0x01;  // msg_type 0 | size 256 B
  b[1] = 3;     // job
  p4::StoreBe32(&b[2], 0xabc);
  p4::StoreBe16(&b[6], static_cast<uint16_t>(slot & 0x3fff));
  for (size_t i = 0; i < values.size(); ++i) p4::StoreBe32(&b[10 + 4 * i], static_cast<uint32_t>(values[i]));
  return b;
}

class SwitchMLOnNs3 : public NetTest {};

TEST_F(SwitchMLOnNs3, ThreeWorkersGetTheExactSumThroughTheFabric) {
  constexpr int kWorkers = 3;
  Fabric& f = Build(topo::BuildSingleRack(kWorkers, Link(100, 1 * kUs)));
  sml::SwitchMLConfig c;
  c.switch_ip = kSwitchIp;
  c.switch_mac = MacBytesOfIpv4(kSwitchIp);
  c.num_workers = kWorkers;
  c.elements_per_packet = 64;
  for (int w = 0; w < kWorkers; ++w)
    c.workers.push_back({static_cast<uint16_t>(w), topo_->ports(static_cast<uint32_t>(w)).at(0).peer_port,
                         MacBytesOfIpv4(HostIpv4(static_cast<uint32_t>(w))), HostIpv4(static_cast<uint32_t>(w)), 0, {}});
  f.switch_node(0).SetDataplane(std::make_unique<sml::SwitchMLDataplane>(c));

  std::vector<std::vector<int32_t>> data(kWorkers, std::vector<int32_t>(64));
  for (int w = 0; w < kWorkers; ++w)
    for (int i = 0; i < 64; ++i) data[w][i] = (w + 1) * 1000 + i - (w == 2 ? 0x7fffffff : 0);
  // Every result copy carries the UDP ports of the packet that completed the
  // slot, swapped (upstream behaviour): so, as with the client library, every
  // worker uses the same UDP port, and the result arrives on it.
  std::vector<ns3::Ptr<ns3::Socket>> tx;
  for (int w = 0; w < kWorkers; ++w) {
    auto s = ns3::Socket::CreateSocket(f.ip_host(static_cast<uint32_t>(w)), ns3::UdpSocketFactory::GetTypeId());
    s->SetAttribute("IpTtl", ns3::UintegerValue(64));
    ASSERT_EQ(s->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), kWorkerPortBase)), 0);
    tx.push_back(s);
    const auto bytes = Payload(5, data[w]);
    ns3::Simulator::Schedule(ns3::PicoSeconds(w * 200'000), [s, bytes, w] {
      s->SendTo(ns3::Create<ns3::Packet>(bytes.data(), static_cast<uint32_t>(bytes.size())), 0,
                ns3::InetSocketAddress(ns3::Ipv4Address(kSwitchIp), static_cast<uint16_t>(0xbee0 + w)));
    });
  }
  RunFor(100 * kUs);

  auto* dp = dynamic_cast<sml::SwitchMLDataplane*>(f.switch_node(0).dataplane());
  ASSERT_NE(dp, nullptr);
  EXPECT_EQ(dp->stats().broadcasts, 1u);
  EXPECT_EQ(dp->last_passes(), 2u);  // 256 B: CONSUME0, then HARVEST7 for the completing packet
  EXPECT_EQ(f.switch_node(0).counters().dataplane_in, 3u);
  EXPECT_EQ(f.switch_node(0).counters().dataplane_out, 3u);
  for (int w = 0; w < kWorkers; ++w) {
    ns3::Ptr<ns3::Packet> p = tx[w]->Recv();
    ASSERT_TRUE(p) << "worker " << w << " got no result";
    std::vector<uint8_t> b(p->GetSize());
    p->CopyData(b.data(), b.size());
    ASSERT_EQ(b.size(), 10u + 256);
    EXPECT_EQ(p4::LoadBe16(&b[6]) & 0x3fff, 5u);  // the same slot
    for (int i = 0; i < 64; ++i) {
      const uint32_t sum = static_cast<uint32_t>(data[0][i]) + static_cast<uint32_t>(data[1][i]) +
                           static_cast<uint32_t>(data[2][i]);  // int32 wraps modulo 2^32
      ASSERT_EQ(p4::LoadBe32(&b[10 + 4 * i]), sum) << "worker " << w << " element " << i;
    }
    EXPECT_FALSE(tx[w]->Recv());  // exactly one copy each
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// Workers (SwitchMLJob): the client library's protocol over the fabric.

namespace {

using nlohmann::json;

/// Wraps the switch's program and logs what each packet did to it, in time
/// order, as "switch <what> w<rank>" (rank from the source address).
class RecordingSwitchML : public p4::Dataplane {
 public:
  RecordingSwitchML(sml::SwitchMLConfig c, std::vector<std::string>* log) : inner_(std::move(c)), log_(log) {}
  std::string Name() const override { return inner_.Name(); }
  bool Claims(const p4::FrameView& f) const override { return inner_.Claims(f); }
  void Process(uint16_t port, inasim::Span<const uint8_t> frame, p4::Picoseconds now, p4::Emitter& out) override {
    const auto before = inner_.stats();
    inner_.Process(port, frame, now, out);
    const auto& after = inner_.stats();
    const uint32_t rank = HostOfIpv4(p4::LoadBe32(frame.data() + 26));
    const char* what = after.broadcasts != before.broadcasts     ? "broadcast"
                       : after.retransmits != before.retransmits ? "retransmit"
                       : after.consumed != before.consumed       ? "consume"
                       : after.dropped != before.dropped         ? "ignore duplicate"
                                                                 : "?";
    log_->push_back(fmt::format("switch {} w{}", what, rank + 1));
  }

 private:
  sml::SwitchMLDataplane inner_;
  std::vector<std::string>* log_;
};

uint32_t FramePktId(const ns3::Packet& p) {
  uint8_t b[48] = {};
  if (p.GetSize() < sizeof(b)) return UINT32_MAX;
  p.CopyData(b, sizeof(b));
  return uint32_t{b[44]} | uint32_t{b[45]} << 8 | uint32_t{b[46]} << 16 | uint32_t{b[47]} << 24;
}

/// Drops the first `count` frames carrying SwitchML packet id `pkt` that
/// `device` sends.
void DropFirst(InaNetDevice& device, uint32_t pkt, int count = 1) {
  auto left = std::make_shared<int>(count);
  device.SetLossFilter([pkt, left](const ns3::Packet& p) {
    if (*left > 0 && FramePktId(p) == pkt) return (*left)-- > 0;
    return false;
  });
}

class SwitchMLWorkers : public NetTest {
 protected:
  std::unique_ptr<SwitchMLJob> MakeJob(uint32_t hosts, SwitchMLSpec spec, uint64_t bytes,
                                       DType dtype = DType::kInt32, uint32_t iterations = 1) {
    Build(topo::BuildSingleRack(hosts, Link(100, 1 * kUs)));
    std::vector<uint32_t> h;
    for (uint32_t i = 0; i < hosts; ++i) h.push_back(i);
    return std::make_unique<SwitchMLJob>(*fabric_, h, dtype, DataPattern::kHashed, 7, spec,
                                         std::vector<uint64_t>{bytes}, iterations, 0);
  }
  void Trace(SwitchMLJob& job) {
    for (uint32_t r = 0; r < job.num_workers(); ++r) {
      job.worker(r).TraceConnectWithoutContext(
          "Tx", ns3::MakeBoundCallback(&SwitchMLWorkers::OnTx, &log_, r));
      job.worker(r).TraceConnectWithoutContext(
          "Rx", ns3::MakeBoundCallback(&SwitchMLWorkers::OnRx, &log_, r));
    }
  }
  static void OnTx(std::vector<std::string>* log, uint32_t rank, uint32_t, uint64_t pkt, uint16_t pool, bool retx) {
    log->push_back(fmt::format("w{} {} pkt{} set{}", rank + 1, retx ? "retransmit" : "send", pkt, pool >> 15));
  }
  static void OnRx(std::vector<std::string>* log, uint32_t rank, uint32_t, uint64_t pkt, bool accepted) {
    log->push_back(fmt::format("w{} {} pkt{}", rank + 1, accepted ? "receive" : "discard", pkt));
  }
  std::vector<std::string> log_;
};

// Appendix A of the paper (Figure 8), one slot x with three workers: w3's
// update is lost on the way up, w1's copy of the result on the way down. The
// tensor is two packets and the pool one slot, so pkt0 uses slot x in pool 0
// and pkt1 the same slot in pool 1. Timeout 100 us, no backoff.
TEST_F(SwitchMLWorkers, AppendixAThreeWorkerLossExampleHappensInThePapersOrder) {
  SwitchMLSpec spec;
  spec.backend = SwitchMLBackend::kIdeal;  // the paper's worked example: no host time, one thread
  spec.elements_per_packet = 64;
  spec.pool_size = 1;
  spec.timeout_ps = 100 * kUs;
  spec.timeout_threshold = 1000;
  auto job = MakeJob(3, spec, 2 * 64 * 4);
  auto* prog = dynamic_cast<sml::SwitchMLDataplane*>(fabric_->switch_node(0).dataplane());
  ASSERT_NE(prog, nullptr);
  fabric_->switch_node(0).SetDataplane(std::make_unique<RecordingSwitchML>(prog->config(), &log_));
  Trace(*job);
  DropFirst(fabric_->device(2, 0), 0);                             // t3: w3's update lost upstream
  DropFirst(fabric_->device(3, topo_->ports(0)[0].peer_port), 0);  // t7: w1's result lost downstream
  bool finished = false;
  job->on_finished = [&] { finished = true; };
  // t0 < t1 < t2: the workers become ready 5 us apart (more than a round trip).
  for (uint32_t r = 0; r < 3; ++r)
    ns3::Simulator::Schedule(ns3::PicoSeconds(r * 5 * kUs), &SwitchMLWorker::BeginJob, &job->worker(r), 0u);
  RunFor(1'000 * kUs);
  ASSERT_TRUE(finished);
  const std::vector<std::string> expected = {
      "w1 send pkt0 set0",  // t0
      "switch consume w1",
      "w2 send pkt0 set0",  // t1
      "switch consume w2",
      "w3 send pkt0 set0",  // t2, lost at t3
      "w1 retransmit pkt0 set0",  // t4: timeout
      "switch ignore duplicate w1",
      "w2 retransmit pkt0 set0",  // t5
      "switch ignore duplicate w2",
      "w3 retransmit pkt0 set0",  // t6: completes the slot
      "switch broadcast w3",      // three copies; w1's is lost at t7
      "w2 receive pkt0",          // t9
      "w2 send pkt1 set1",        // t12: slot x, the other pool
      "w3 receive pkt0",          // t10
      "w3 send pkt1 set1",        // t13
      "switch consume w2",
      "switch consume w3",
      "w1 retransmit pkt0 set0",  // t8: second retransmission
      "switch retransmit w1",     // unicast of the shadow copy
      "w1 receive pkt0",          // t11
      "w1 send pkt1 set1",        // t14
      "switch broadcast w1",      // t15: pool 1 complete, pool 0 may be reused
      "w1 receive pkt1",
      "w2 receive pkt1",
      "w3 receive pkt1",
  };
  EXPECT_EQ(log_, expected);
  const SwitchMLTensorRecord& r = job->records()[0];
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_EQ(r.elements_checked, 3u * 128);
  EXPECT_EQ(r.timeouts, 4u);
}

// Algorithm 4 (mode "paper") recovers a lost first-batch packet. The library
// as written (mode "upstream") files first-batch packet j's timer under slot
// j+1 with packet id j+1 but pool index j (dpdk_worker_thread.cc:236-248), and
// a result stops the timer of the slot after it (:350). A lost pkt5 is then
// never resent; instead the timer holding (pkt5, pool of pkt4) fires, the
// switch sees a retransmission for pkt4's complete slot and answers with
// pkt4's sums labelled pkt5, which every worker accepts: the job "completes"
// with one packet's elements wrong. Our exact-sum check reports it.
TEST_F(SwitchMLWorkers, LostFirstBatchPacketRecoveredInPaperModeButWrongUpstream) {
  for (SwitchMLTimerMode mode : {SwitchMLTimerMode::kPaper, SwitchMLTimerMode::kUpstream}) {
    SwitchMLSpec spec;
    spec.backend = SwitchMLBackend::kIdeal;  // the packet ids of one thread, sent at once
    spec.elements_per_packet = 64;
    spec.pool_size = 8;
    spec.timeout_ps = 20 * kUs;
    spec.timer_mode = mode;
    auto job = MakeJob(3, spec, 32 * 64 * 4);
    DropFirst(fabric_->device(1, 0), 5);  // w2's first copy of pkt5 (first batch)
    bool finished = false;
    job->on_finished = [&] { finished = true; };
    job->Start(0);
    RunFor(50'000 * kUs);  // 50 ms: 2,500 timeouts' worth
    const SwitchMLTensorRecord& r = job->records()[0];
    if (mode == SwitchMLTimerMode::kPaper) {
      EXPECT_TRUE(finished);
      EXPECT_EQ(r.mismatches, 0u);
      EXPECT_EQ(r.elements_checked, 3u * 32 * 64);
      EXPECT_GE(r.timeouts, 1u);
    } else {
      EXPECT_TRUE(finished);
      EXPECT_EQ(r.timeouts, 3u);  // one per worker, after pool_size x 20 us (first-batch timers)
      EXPECT_EQ(r.mismatches, 3u * 64);  // pkt5's 64 elements, at every worker
      EXPECT_GE(job->records()[0].end_ps[1], 8 * 20 * kUs);
    }
    job.reset();
    ns3::Simulator::Destroy();
    fabric_.reset();
    log_.clear();
  }
}

// --------------------------------------------------------- whole scenarios --

json Rack(uint32_t hosts, uint64_t bytes) {
  return json::parse(fmt::format(R"({{"name":"t","topology":{{"type":"single_rack","hosts":{}}},
    "links":{{"host_rate_gbps":100}},
    "workload":{{"type":"allreduce","protocol":"switchml","bytes":{},"switchml":{{"pool_size":32}}}}}})",
                                 hosts, bytes));
}

class SwitchMLScenario : public ::testing::Test {
 protected:
  void SetUp() override { EnsurePicosecondTime(); }
};

/// `error` is CheckedTree's refusal of more than 16 children at `sw` with 1024 B packets.
::testing::AssertionResult RefusedAt1024Bytes(const std::string& error, const std::string& sw, uint32_t children) {
  for (const std::string& w : {std::string("workload.hosts: "), std::string("(1024 B) packets aggregates at most 16"),
                               std::string("next_step_selector.py:93"), fmt::format("{} would have {}", sw, children)})
    if (error.find(w) == std::string::npos) return ::testing::AssertionFailure() << "no \"" << w << "\" in: " << error;
  return ::testing::AssertionSuccess();
}

TEST_F(SwitchMLScenario, Int32SumsAreExactIn256And1024ByteModes) {
  for (const char* k : {"64", "256"}) {
    const RunResult r = RunQuietly(Rack(5, 300'000), {std::string("workload.switchml.elements_per_packet=") + k});
    const json& w = r.json["workload"];
    EXPECT_TRUE(r.correct) << k;
    EXPECT_EQ(w["elements_checked"].get<uint64_t>(), 5u * 75'000) << k;
    EXPECT_EQ(w["mismatches"].get<uint64_t>(), 0u);
    // 100 Gb/s: 8 DPDK threads, each packetizing its slice of 9,375
    // elements on its own (fifo_scheduler.cc:93-108): 8 x ceil(9375 / k).
    ASSERT_EQ(w["switchml"]["host"]["worker_threads"].get<uint32_t>(), 8u);
    EXPECT_EQ(w["switchml"]["programs"][0]["broadcasts"].get<uint64_t>(), 8 * ((9'375 + std::stoul(k) - 1) / std::stoul(k)));
    EXPECT_EQ(w["switchml"]["timeouts"].get<uint64_t>(), 0u);
  }
}

// The DPDK worker's threads (dpdk_worker_thread.cc:66-100): thread t of
// every host takes slice t of the tensor (fifo_scheduler.cc:93-108), slots
// [2 m t, 2 m t + m) and port 4000 + t; the sums stay exact, each slice ends
// in its own partial packet, and what cannot be split is refused up front.
TEST_F(SwitchMLScenario, WorkerThreadsSplitTensorPoolAndPortsAndBadSplitsAreRefused) {
  // 100,003 elements over 3 threads: 33,335 + 33,334 + 33,334, 131 + 131 + 131 packets of 256.
  const RunResult r = RunQuietly(Rack(4, 400'012), {"workload.switchml.worker_threads=3",
                                                     "workload.switchml.pool_size=24"});
  const json& w = r.json["workload"];
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(w["elements_checked"].get<uint64_t>(), 4u * 100'003);
  EXPECT_EQ(w["switchml"]["host"]["worker_threads"].get<uint32_t>(), 3u);
  EXPECT_EQ(w["switchml"]["host"]["window_per_thread"].get<uint32_t>(), 8u);
  EXPECT_EQ(w["switchml"]["programs"][0]["broadcasts"].get<uint64_t>(), 3u * 131);
  EXPECT_EQ(w["collectives"][0]["packets_sent"].get<uint64_t>(), 4u * 3 * 131);
  auto refused = [](const std::string& error, const std::string& key) {
    return error.find(key) != std::string::npos ? ::testing::AssertionSuccess()
                                                : ::testing::AssertionFailure() << "no " << key << " in: " << error;
  };
  json bad = Rack(4, 1 << 16);
  bad["workload"]["switchml"]["pool_size"] = 30;
  bad["workload"]["switchml"]["worker_threads"] = 4;
  EXPECT_TRUE(refused(RunErrorOf(bad), "workload.switchml.pool_size: 30 is not a multiple of the 4 worker threads"));
  bad["workload"]["switchml"]["pool_size"] = 32;
  bad["workload"]["switchml"]["worker_udp_port"] = 0xbee0 - 2;
  EXPECT_TRUE(refused(RunErrorOf(bad), "workload.switchml.worker_udp_port: the 4 worker threads use ports"));
}

// Up to 32 workers (the bitmap) with 256 B packets; 1024 B packets allow 16
// (upstream's folded-pipe entries), so 17 or more are refused before the run
// instead of stalling until the time limit with every slot one worker short.
TEST_F(SwitchMLScenario, ThirtyTwoWorkersOnOneRackAreExactWith256BytePacketsAndRefusedWith1024) {
  const RunResult r = RunQuietly(Rack(32, 1 << 18), {"workload.switchml.elements_per_packet=64"});
  const json& w = r.json["workload"];
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(r.json["sim"]["stopped_by"].get<std::string>(), "workload_done");
  EXPECT_EQ(w["elements_checked"].get<uint64_t>(), 32u * (1u << 16));
  const json& p = w["switchml"]["programs"][0];
  EXPECT_EQ(p["workers"].get<uint32_t>(), 32u);
  // consumed counts finish_consume: every contribution but the slot's last (which is broadcast).
  EXPECT_EQ(p["consumed"].get<uint64_t>(), 31u * (1u << 16) / 64);
  EXPECT_EQ(p["broadcasts"].get<uint64_t>(), (1u << 16) / 64);
  EXPECT_EQ(p["dropped_duplicates"].get<uint64_t>(), 0u);
  for (uint32_t n : {17u, 24u, 32u}) EXPECT_TRUE(RefusedAt1024Bytes(RunErrorOf(Rack(n, 1 << 18)), "tor", n));
}

TEST_F(SwitchMLScenario, UpstreamHarvest3PortReturnsOneEighthOfA1024BytePacketWrong) {
  const RunResult r = RunQuietly(Rack(4, 1 << 20), {"workload.switchml.harvest3=upstream"});
  EXPECT_FALSE(r.correct);
  // 32 of every 256 elements carry the sums of elements 64 further on.
  EXPECT_EQ(r.json["workload"]["mismatches"].get<uint64_t>(), 4u * (1u << 18) / 8);
  const RunResult ones = RunQuietly(Rack(4, 1 << 20), {"workload.switchml.harvest3=upstream", "workload.data=ones"});
  EXPECT_TRUE(ones.correct);  // why the paper's all-ones tensors could not show it
}

TEST_F(SwitchMLScenario, Float32UniformGradientsStayWithinTheQuantizerBound) {
  const RunResult r = RunQuietly(Rack(8, 1 << 18), {"workload.dtype=float32", "workload.data=uniform"});
  const json& w = r.json["workload"];
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(w["elements_checked"].get<uint64_t>(), 8u * (1u << 16));
  EXPECT_GT(w["switchml"]["max_abs_error"].get<double>(), 0.0);
  EXPECT_LE(w["switchml"]["max_impl_bound_ratio"].get<double>(), 1.0);
  EXPECT_GT(w["switchml"]["max_paper_bound_ratio"].get<double>(), 0.0);
  // One extra batch of packets carries the exponents one batch ahead.
  EXPECT_EQ(w["collectives"][0]["packets_sent"].get<uint64_t>(), 8u * ((1u << 16) / 256 + 32));
}

// switchml_timeline.csv decomposes Fig. 7's rate: per bin, worker 0's
// timeouts and the mean number of its slots waiting on a timer that fired.
// With timers at their deadlines and no backoff, each such wait lasts
// exactly the timeout, so the slot-time summed over the bins is the
// timeouts times the timeout.
TEST_F(SwitchMLScenario, TimelineStalledSlotTimeIsTimeoutsTimesTheTimeout) {
  json doc = Rack(4, 1 << 20);
  doc["faults"] = {{"loss_rate", 0.01}};
  doc["workload"]["switchml"]["timeout_us"] = 50;
  doc["workload"]["switchml"]["timeout_threshold"] = 1ull << 40;
  doc["workload"]["switchml"]["timeline_bin_us"] = 20;
  const RunResult r = RunQuietly(doc);
  EXPECT_TRUE(r.correct);
  std::istringstream in(Table(r, "switchml_timeline.csv"));
  std::string line;
  std::getline(in, line);
  ASSERT_EQ(line, "bin_start_s,packets_sent,timeouts,stalled_slots");
  uint64_t timeouts = 0;
  double stalled_slot_us = 0;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string start, sent, t, stalled;
    std::getline(row, start, ',');
    std::getline(row, sent, ',');
    std::getline(row, t, ',');
    std::getline(row, stalled, ',');
    timeouts += std::stoull(t);
    stalled_slot_us += std::stod(stalled) * 20;
  }
  EXPECT_GT(timeouts, 0u);
  EXPECT_NEAR(stalled_slot_us, timeouts * 50.0, 1e-3 * timeouts);
}

TEST_F(SwitchMLScenario, OnePercentLossOnEveryLinkRecoversExactly) {
  const RunResult r = RunQuietly(Rack(4, 1 << 20), {"faults.loss_rate=0.01", "workload.switchml.timeout_us=50"});
  const json& w = r.json["workload"];
  EXPECT_TRUE(r.correct);
  EXPECT_GT(w["switchml"]["timeouts"].get<uint64_t>(), 0u);
  EXPECT_GT(w["switchml"]["programs"][0]["retransmits"].get<uint64_t>(), 0u);  // lost results resent from the shadow copy
  EXPECT_GT(r.json["network"]["drops_loss"].get<uint64_t>(), 0u);
}

json LeafSpine(uint32_t leaves, uint32_t per_leaf, uint64_t bytes) {
  return json::parse(fmt::format(R"({{"name":"t","topology":{{"type":"leaf_spine","leaves":{},"spines":2,
    "hosts_per_leaf":{}}}, "links":{{"host_rate_gbps":100,"fabric_rate_gbps":100}},
    "workload":{{"type":"allreduce","protocol":"switchml","bytes":{},"switchml":{{"pool_size":64}}}}}})",
                                 leaves, per_leaf, bytes));
}

TEST_F(SwitchMLScenario, HierarchicalTwoLevelTreeAggregatesExactly) {
  const RunResult r = RunQuietly(LeafSpine(4, 4, 1 << 20));
  const json& w = r.json["workload"];
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(w["switchml"]["workers"].get<uint32_t>(), 16u);
  EXPECT_EQ(w["switchml"]["tree"]["levels"].get<uint32_t>(), 2u);
  EXPECT_EQ(w["switchml"]["tree"]["switches"].get<uint32_t>(), 5u);
  const uint64_t packets = (1u << 18) / 256;
  for (const json& p : w["switchml"]["programs"]) {
    if (p["root"].get<bool>()) {
      EXPECT_EQ(p["workers"].get<uint32_t>(), 4u);  // the four ToRs
      EXPECT_EQ(p["broadcasts"].get<uint64_t>(), packets);
    } else {
      EXPECT_EQ(p["workers"].get<uint32_t>(), 4u);
      EXPECT_EQ(p["partials_up"].get<uint64_t>(), packets);
      EXPECT_EQ(p["results_down"].get<uint64_t>(), packets);
    }
  }
}

// A ToR with 18 workers: each ToR consumes all 18 contributions per slot and
// the root completes (256 B packets); with 1024 B packets the ToR could take
// only workers 0..15, so the run is refused naming that ToR.
TEST_F(SwitchMLScenario, HierarchicalLeafWithEighteenWorkersIsExactWith256BytePacketsAndRefusedWith1024) {
  const RunResult r = RunQuietly(LeafSpine(2, 18, 1 << 18), {"workload.switchml.elements_per_packet=64"});
  const json& w = r.json["workload"];
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(w["elements_checked"].get<uint64_t>(), 36u * (1u << 16));
  const uint64_t packets = (1u << 16) / 64;
  for (const json& p : w["switchml"]["programs"]) {
    if (p["root"].get<bool>()) {
      EXPECT_EQ(p["workers"].get<uint32_t>(), 2u);
      EXPECT_EQ(p["broadcasts"].get<uint64_t>(), packets);
    } else {
      EXPECT_EQ(p["workers"].get<uint32_t>(), 18u);
      EXPECT_EQ(p["consumed"].get<uint64_t>(), 17 * packets);  // all but the slot's last, which goes up
      EXPECT_EQ(p["dropped_duplicates"].get<uint64_t>(), 0u);
      EXPECT_EQ(p["partials_up"].get<uint64_t>(), packets);
    }
  }
  EXPECT_TRUE(RefusedAt1024Bytes(RunErrorOf(LeafSpine(2, 18, 1 << 18)), "leaf0", 18));
}

TEST_F(SwitchMLScenario, HierarchicalRetransmissionsReachTheLevelThatLostThePacket) {
  const RunResult r =
      RunQuietly(LeafSpine(3, 3, 1 << 19), {"faults.loss_rate=0.005", "workload.switchml.timeout_us=50"});
  const json& w = r.json["workload"];
  EXPECT_TRUE(r.correct);
  uint64_t up = 0, root_retx = 0;
  for (const json& p : w["switchml"]["programs"]) {
    if (p["root"].get<bool>()) root_retx += p["retransmits"].get<uint64_t>();
    else up += p["retransmissions_up"].get<uint64_t>();
  }
  EXPECT_GT(up, 0u);
  EXPECT_GT(root_retx, 0u);
}

TEST_F(SwitchMLScenario, TensorsStreamBackToBackAndResultsAreDeterministic) {
  json doc = Rack(3, 4096);
  doc["workload"]["iterations"] = 2;
  doc["workload"]["switchml"]["tensors"] = json::array({4096, 40000, 1024});
  doc["workload"]["switchml"]["pool_size"] = 4;
  doc["workload"]["switchml"]["worker_threads"] = 4;  // each thread's slice its own float32 extra batch
  doc["workload"]["dtype"] = "float32";
  const RunResult a = RunQuietly(doc), b = RunQuietly(doc);
  EXPECT_TRUE(a.correct);
  const json& c = a.json["workload"]["collectives"];
  ASSERT_EQ(c.size(), 6u);
  for (size_t i = 1; i < c.size(); ++i) EXPECT_GE(c[i]["start_s"].get<double>(), c[i - 1]["end_s"].get<double>() - 1e-6);
  json ja = a.json, jb = b.json;
  ja.erase("perf");
  jb.erase("perf");
  EXPECT_EQ(ja.dump(), jb.dump());
  EXPECT_EQ(a.csv_texts, b.csv_texts);
}

}  // namespace

namespace {

// The paper's parameter-server baseline (Fig. 3: "as many PS processes ... as
// workers", dedicated or co-located): every element still exact, each PS sees
// every worker's packets of its shard, and with ideal hosts co-location costs
// what the link volume says: each host's link then carries its worker's 2|U|
// plus its PS's 2|U|(n-1)/n, less the 2|U|/n that stays on the host, so the
// TAT grows by 2(n-1)/n (the paper: "reaches only half of Dedicated PS").
TEST(SwitchMLParameterServer, ExactDedicatedAndColocatedAndCoLocationCostsTheLinkVolume) {
  EnsurePicosecondTime();
  auto run = [](const char* ps) {
    json doc = json::parse(R"({"name":"t","topology":{"type":"single_rack","hosts":8},
      "links":{"host_rate_gbps":100,"host_delay_ns":500},
      "workload":{"type":"allreduce","protocol":"switchml","bytes":4000000,"dtype":"int32","data":"hashed",
                  "hosts":{"count":4,"placement":"first"},
                  "switchml":{"pool_size":64,"backend":"ideal"}}})");
    doc["workload"]["switchml"]["ps"] = ps;
    return RunQuietly(doc);
  };
  const RunResult dedicated = run("dedicated"), colocated = run("colocated");
  for (const RunResult* r : {&dedicated, &colocated}) {
    const json& w = r->json["workload"];
    EXPECT_TRUE(r->correct);
    EXPECT_EQ(w["elements_checked"].get<uint64_t>(), 4u * 1'000'000);
    const json& ps = w["switchml"]["host"]["parameter_servers"];
    ASSERT_EQ(ps["servers"].size(), 4u);
    // Slot g goes to PS g mod 4: a pool of 64 splits evenly, every worker
    // packet reaches one server: 4 workers x ceil(10^6 / 256) in all.
    uint64_t packets = 0;
    for (const json& s : ps["servers"]) {
      EXPECT_NEAR(s["packets"].get<double>(), 4.0 * 3907 / 4, 4.0 * 16) << "an even share";
      packets += s["packets"].get<uint64_t>();
    }
    EXPECT_EQ(packets, 4u * 3907);
  }
  EXPECT_EQ(dedicated.json["workload"]["switchml"]["host"]["parameter_servers"]["hosts"][0], "h4");
  EXPECT_EQ(colocated.json["workload"]["switchml"]["host"]["parameter_servers"]["hosts"][0], "h0");
  const double ratio = colocated.json["workload"]["switchml"]["tat_mean_s"].get<double>() /
                       dedicated.json["workload"]["switchml"]["tat_mean_s"].get<double>();
  EXPECT_NEAR(ratio, 2.0 * 3 / 4, 0.15) << "co-located TAT / dedicated TAT";
  // Too few hosts for dedicated servers is refused, naming the key.
  json small = json::parse(R"({"name":"t","topology":{"type":"single_rack","hosts":6},
      "workload":{"type":"allreduce","protocol":"switchml","bytes":65536,"hosts":{"count":4,"placement":"first"},
                  "switchml":{"ps":"dedicated"}}})");
  EXPECT_NE(RunErrorOf(small).find("workload.switchml.ps: \"dedicated\" needs 4 hosts besides the 4 workers"),
            std::string::npos);
}

}  // namespace
