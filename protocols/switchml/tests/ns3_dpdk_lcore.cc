// The SwitchML worker's DPDK lcore (host/dpdk-lcore.h) on a worked example:
// packets are processed one cost apart in rx bursts, replies wait in the tx
// buffer until it is full or an empty poll finds the drain period passed,
// and a full buffer resets prev_tsc to the last empty poll (the loop's stale
// cur_tsc, dpdk_worker_thread.cc:369-372), which brings the next drain early.
#include "net_harness.h"

#include "protocols/switchml/host/dpdk-lcore.h"

using namespace inasim;
using namespace inasim::testing;

namespace {

constexpr uint64_t kNs = 1000;  // ps

class DpdkLcoreTest : public NetTest {
 public:
  void OnTx(ns3::Ptr<const ns3::Packet> p, uint64_t) {
    sent_ps.push_back(static_cast<uint64_t>(ns3::Simulator::Now().GetPicoSeconds()));
    sent_bytes.push_back(p->GetSize());
  }

 protected:
  std::vector<uint64_t> sent_ps, sent_bytes;
};

TEST_F(DpdkLcoreTest, BurstsTxBufferAndDrainGridAsTheLoopRunsThem) {
  Build(topo::BuildSingleRack(2, Link(100, 1 * kUs)));
  InaNetDevice& nic = fabric_->device(0, 0);
  nic.TraceConnectWithoutContext("TxStart", ns3::MakeCallback(&DpdkLcoreTest::OnTx, this));
  HostEndpoint ep;
  DpdkLcore lcore;
  ep.Open(nic, 4000, [&](const uint8_t* b, uint32_t len, const DatagramInfo&) { lcore.OnRx(b, len); });
  DpdkLcoreConfig c;
  c.burst_rx = 2;
  c.burst_tx = 3;
  c.drain_ps = 10 * kUs;
  c.core_bps = 8e9;  // a 934-byte payload (+ 42 B of headers + 24 B on the wire) costs 1 us
  std::vector<std::pair<uint64_t, uint8_t>> processed;
  lcore.Configure(c, &ep, [&](const uint8_t* b, uint32_t) {
    processed.emplace_back(static_cast<uint64_t>(ns3::Simulator::Now().GetPicoSeconds()), b[0]);
    const uint8_t reply[8] = {b[0]};
    lcore.Buffer(HostIpv4(1), 5000, reply, sizeof reply);
  });
  auto rx_at = [&](uint64_t at, uint8_t id) {
    ns3::Simulator::Schedule(ns3::PicoSeconds(at), [&lcore, id] {
      std::vector<uint8_t> p(934, 0);
      p[0] = id;
      lcore.OnRx(p.data(), 934);
    });
  };
  for (uint8_t id = 0; id < 3; ++id) rx_at(500 * kNs, id);
  rx_at(5 * kUs, 3);
  rx_at(30 * kUs, 4);
  RunFor(100 * kUs);
  // p0 alone (the ring held one when the core polled), then p1 and p2 as a burst of 2.
  const std::vector<std::pair<uint64_t, uint8_t>> want_processed = {
      {1500 * kNs, 0}, {2500 * kNs, 1}, {3500 * kNs, 2}, {6 * kUs, 3}, {31 * kUs, 4}};
  EXPECT_EQ(processed, want_processed);
  // The third reply fills the buffer: all three leave at 3.5 us, back to back
  // (50 B frames + 24 B at 100 Gb/s: 5.92 ns each). r3 waits for the drain:
  // prev_tsc was reset to the last empty poll, 0.5 us, so the first empty poll
  // after 0.5 + 10 us (+1 ps: "more than") sends it. At 30 us the idle core's
  // drain grid stands at 20.500002 us; r4, buffered at 31 us, leaves at once.
  const uint64_t ser = 5920;
  const std::vector<uint64_t> want_sent = {3500 * kNs, 3500 * kNs + ser, 3500 * kNs + 2 * ser, 10 * kUs + 500 * kNs + 1,
                                           31 * kUs};
  EXPECT_EQ(sent_ps, want_sent);
  EXPECT_EQ(lcore.counters().full_flushes, 1u);
  EXPECT_EQ(lcore.counters().drain_flushes, 2u);
  EXPECT_EQ(lcore.counters().bursts, 4u);
  lcore.Cancel();
}

// rte_timer_manage runs only on empty polls, once more than the timer period
// has passed since its last run (dpdk_worker_thread.cc:292-296). Period 10 us,
// the last run at 0: idle, the core runs it at 10.000001, 20.000002, ... us,
// so a deadline of 13 us fires at 20.000002 us; a deadline of 26 us, with a
// burst from 25 to 28 us whose empty poll comes too soon after 20.000002,
// fires on the grid at 30.000003 us; a deadline of 31 us whose grid point
// (40.000004 us) falls inside a burst (39.5 to 41.5 us) fires at that burst's
// empty poll.
TEST_F(DpdkLcoreTest, TimersFireOnlyOnEmptyPollsOncePerPeriod) {
  Build(topo::BuildSingleRack(2, Link(100, 1 * kUs)));
  InaNetDevice& nic = fabric_->device(0, 0);
  HostEndpoint ep;
  DpdkLcore lcore;
  ep.Open(nic, 4000, [&](const uint8_t* b, uint32_t len, const DatagramInfo&) { lcore.OnRx(b, len); });
  DpdkLcoreConfig c;
  c.burst_rx = 4;
  c.drain_ps = 5 * kUs;
  c.core_bps = 8e9;  // 1 us per 934-byte payload
  lcore.Configure(c, &ep, [](const uint8_t*, uint32_t) {});
  lcore.SetTimerPeriod(10 * kUs);
  std::vector<uint64_t> deadlines = {13 * kUs, 26 * kUs, 31 * kUs}, fired;
  size_t next = 0;
  lcore.SetTimerManager([&](uint64_t now) {
    EXPECT_EQ(now, static_cast<uint64_t>(ns3::Simulator::Now().GetPicoSeconds()));
    fired.push_back(now);
    ++next;
    lcore.WantTimers(next < deadlines.size() ? deadlines[next] : UINT64_MAX);
  });
  lcore.WantTimers(deadlines[0]);
  auto rx_at = [&](uint64_t at, int packets) {
    ns3::Simulator::Schedule(ns3::PicoSeconds(at), [&lcore, packets] {
      std::vector<uint8_t> p(934, 0);
      for (int i = 0; i < packets; ++i) lcore.OnRx(p.data(), 934);
    });
  };
  rx_at(25 * kUs, 3);
  rx_at(39500 * kNs, 2);
  RunFor(100 * kUs);
  const std::vector<uint64_t> want = {20 * kUs + 2, 30 * kUs + 3, 41500 * kNs};
  EXPECT_EQ(fired, want);
  lcore.Cancel();
}

TEST_F(DpdkLcoreTest, IdealHandlesOnArrivalAndSendsAtOnce) {
  Build(topo::BuildSingleRack(2, Link(100, 1 * kUs)));
  InaNetDevice& nic = fabric_->device(0, 0);
  nic.TraceConnectWithoutContext("TxStart", ns3::MakeCallback(&DpdkLcoreTest::OnTx, this));
  HostEndpoint ep;
  DpdkLcore lcore;
  ep.Open(nic, 4000, [&](const uint8_t* b, uint32_t len, const DatagramInfo&) { lcore.OnRx(b, len); });
  DpdkLcoreConfig c;
  c.ideal = true;
  std::vector<uint64_t> processed;
  lcore.Configure(c, &ep, [&](const uint8_t*, uint32_t) {
    processed.push_back(static_cast<uint64_t>(ns3::Simulator::Now().GetPicoSeconds()));
    const uint8_t reply[8] = {};
    lcore.Buffer(HostIpv4(1), 5000, reply, sizeof reply);
  });
  ns3::Simulator::Schedule(ns3::PicoSeconds(2 * kUs), [&lcore] {
    const uint8_t p[100] = {};
    lcore.OnRx(p, sizeof p);
  });
  RunFor(20 * kUs);
  EXPECT_EQ(processed, std::vector<uint64_t>{2 * kUs});
  EXPECT_EQ(sent_ps, std::vector<uint64_t>{2 * kUs});
}

}  // namespace
