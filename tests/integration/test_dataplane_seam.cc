// The dataplane seam end to end: a toy in-network aggregator (written for this
// test, not a protocol) hosted by the ns-3 switch sums int32 vectors from
// several hosts, multicasts the result after a pipeline latency, and on a
// timeout routes a partial sum by the switch's own table. Hosts use real UDP
// sockets; the switch knows nothing of the protocol.
#include "net_harness.h"

#include "ina/shared-program.h"
#include "p4model/common/dataplane.h"

#include <map>

using namespace inasim;
using namespace inasim::testing;

namespace {

constexpr uint16_t kAggPort = 9999;
constexpr uint16_t kPartialPort = 9998;
constexpr uint64_t kPipelinePs = 300'000;
constexpr uint64_t kTimeoutPs = 5'000'000;

std::vector<uint8_t> UdpFrame(uint32_t src_ip, uint32_t dst_ip, uint16_t sport, uint16_t dport,
                              const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> f(42 + payload.size(), 0);
  p4::StoreBe16(&f[12], p4::kEtherTypeIpv4);
  uint8_t* ip = &f[14];
  ip[0] = 0x45;
  p4::StoreBe16(ip + 2, static_cast<uint16_t>(28 + payload.size()));
  ip[8] = 64;
  ip[9] = p4::kIpProtoUdp;
  p4::StoreBe32(ip + 12, src_ip);
  p4::StoreBe32(ip + 16, dst_ip);
  p4::StoreBe16(ip + 10, p4::Ipv4HeaderChecksum(ip, 20));
  p4::StoreBe16(&f[34], sport);
  p4::StoreBe16(&f[36], dport);
  p4::StoreBe16(&f[38], static_cast<uint16_t>(8 + payload.size()));
  std::copy(payload.begin(), payload.end(), f.begin() + 42);
  return f;
}

class ToyAggregator : public p4::Dataplane {
 public:
  explicit ToyAggregator(uint32_t fan_in) : fan_in_(fan_in) {}
  std::string Name() const override { return "toy-aggregator"; }
  bool Claims(const p4::FrameView& f) const override {
    return f.l4 && f.protocol == p4::kIpProtoUdp && f.dst_port == kAggPort;
  }
  void Process(uint16_t port, inasim::Span<const uint8_t> frame, p4::Picoseconds now, p4::Emitter& out) override {
    const uint8_t* pl = frame.data() + 42;
    const uint32_t slot = p4::LoadBe32(pl);
    const size_t k = (frame.size() - 46) / 4;
    Slot& s = slots_[slot];
    if (s.sum.empty()) {
      s.sum.assign(k, 0);
      timers()->ScheduleAt(now + kTimeoutPs, slot);
    }
    for (size_t i = 0; i < k; ++i) s.sum[i] += p4::LoadBe32(pl + 4 + 4 * i);
    s.ports.push_back(port);
    if (s.ports.size() < fan_in_) return;
    // Complete: one copy per contributor, to the rack's broadcast address.
    out.EmitMulticast(Result(slot, s, 0x0AFFFFFFu, kAggPort), s.ports, kPipelinePs);
    slots_.erase(slot);
  }
  void OnTimer(uint64_t cookie, p4::Picoseconds, p4::Emitter& out) override {
    ++timeouts;
    auto it = slots_.find(static_cast<uint32_t>(cookie));
    if (it == slots_.end()) return;  // completed in time
    out.EmitRouted(Result(it->first, it->second, HostIpv4(0), kPartialPort), 0);
    slots_.erase(it);
  }
  std::string DumpState() const override { return "{\"open_slots\":" + std::to_string(slots_.size()) + "}"; }
  int timeouts = 0;

 private:
  struct Slot {
    std::vector<uint32_t> sum;
    std::vector<uint16_t> ports;
  };
  std::vector<uint8_t> Result(uint32_t slot, const Slot& s, uint32_t dst, uint16_t dport) const {
    std::vector<uint8_t> payload(4 + 4 * s.sum.size());
    p4::StoreBe32(payload.data(), slot);
    for (size_t i = 0; i < s.sum.size(); ++i) p4::StoreBe32(&payload[4 + 4 * i], s.sum[i]);
    return UdpFrame(0x0A000000u + 250, dst, kAggPort, dport, payload);
  }
  uint32_t fan_in_;
  std::map<uint32_t, Slot> slots_;
};

std::vector<uint8_t> Contribution(uint32_t slot, const std::vector<int32_t>& v) {
  std::vector<uint8_t> b(4 + 4 * v.size());
  p4::StoreBe32(b.data(), slot);
  for (size_t i = 0; i < v.size(); ++i) p4::StoreBe32(&b[4 + 4 * i], static_cast<uint32_t>(v[i]));
  return b;
}

std::vector<int32_t> Values(const std::vector<uint8_t>& payload) {
  std::vector<int32_t> v;
  for (size_t i = 4; i + 4 <= payload.size(); i += 4) v.push_back(static_cast<int32_t>(p4::LoadBe32(&payload[i])));
  return v;
}

}  // namespace

class SeamTest : public NetTest {
 protected:
  ToyAggregator* Install(uint32_t fan_in) {
    Build(topo::BuildSingleRack(4, Link(100, 500'000)));
    auto dp = std::make_unique<ToyAggregator>(fan_in);
    ToyAggregator* raw = dp.get();
    fabric_->switch_node(0).SetDataplane(std::move(dp));
    return raw;
  }
};

TEST_F(SeamTest, SwitchAggregatesAndMulticastsAfterPipelineLatency) {
  ToyAggregator* dp = Install(3);
  std::vector<UdpSink*> sinks;
  for (uint32_t h = 0; h < 3; ++h) sinks.push_back(&Sink(h, kAggPort));
  const std::vector<std::vector<int32_t>> in = {{1, -2, 3, 2147483647, 0, 5, 6, 7},
                                                {10, 20, 30, 1, 0, -5, 6, 7},
                                                {100, 200, 300, 0, -1, 0, 6, 7}};
  for (uint32_t h = 0; h < 3; ++h) Sender(h).SendBytesAt(0, 3, kAggPort, Contribution(42, in[h]));
  RunFor(100 * kUs);
  // 36 B payload -> 78 B frame -> 102 B on the wire: 8,160 ps per hop at 100 G.
  const uint64_t expect_ps = 2 * (8'160 + 500'000) + kPipelinePs;
  const std::vector<int32_t> sum = {111, 218, 333, static_cast<int32_t>(0x80000000u), -1, 0, 18, 21};
  for (uint32_t h = 0; h < 3; ++h) {
    ASSERT_EQ(sinks[h]->payloads.size(), 1u) << "host " << h;
    EXPECT_EQ(Values(sinks[h]->payloads[0]), sum);
    EXPECT_EQ(sinks[h]->times_ps[0], expect_ps);
  }
  const SwitchCounters& c = fabric_->switch_node(0).counters();
  EXPECT_EQ(c.dataplane_in, 3u);
  EXPECT_EQ(c.dataplane_out, 3u);
  EXPECT_EQ(c.forwarded, 0u);
  EXPECT_EQ(dp->DumpState(), "{\"open_slots\":0}");
}

TEST_F(SeamTest, TimeoutRoutesThePartialByTheSwitchTable) {
  ToyAggregator* dp = Install(3);
  UdpSink& partial = Sink(0, kPartialPort);
  Sender(1).SendBytesAt(0, 3, kAggPort, Contribution(7, {1, 2}));
  Sender(2).SendBytesAt(0, 3, kAggPort, Contribution(7, {3, 4}));
  RunFor(100 * kUs);
  ASSERT_EQ(partial.payloads.size(), 1u);
  EXPECT_EQ(Values(partial.payloads[0]), (std::vector<int32_t>{4, 6}));
  // Arrival at the switch (12 B payload: 54 B frame, 78 B on the wire = 6,240
  // ps) plus the timeout, then one hop back out to host 0.
  EXPECT_EQ(partial.times_ps[0], (6'240 + 500'000) + kTimeoutPs + (6'240 + 500'000));
  EXPECT_EQ(dp->timeouts, 1);
}

TEST_F(SeamTest, FramesTheDataplaneDoesNotClaimAreForwardedUntouched) {
  Install(3);
  UdpSink& sink = Sink(3, 7000);
  Sender(0).SendBytesAt(0, 3, 7000, {1, 2, 3, 4, 5});
  RunFor(100 * kUs);
  ASSERT_EQ(sink.payloads.size(), 1u);
  EXPECT_EQ(sink.payloads[0], (std::vector<uint8_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(fabric_->switch_node(0).counters().dataplane_in, 0u);
  EXPECT_EQ(fabric_->switch_node(0).counters().forwarded, 1u);
}

// --- PFC accounting of a multicast ------------------------------------------

namespace {
/// Sends every claimed frame out of every other port at once, to the rack's
/// broadcast address (hosts forward what is not theirs: a unicast copy would loop).
class ToyBroadcaster : public p4::Dataplane {
 public:
  explicit ToyBroadcaster(uint16_t ports) : ports_(ports) {}
  std::string Name() const override { return "toy-broadcaster"; }
  bool Claims(const p4::FrameView& f) const override {
    return f.l4 && f.protocol == p4::kIpProtoUdp && f.dst_port == kAggPort;
  }
  void Process(uint16_t port, inasim::Span<const uint8_t> frame, p4::Picoseconds, p4::Emitter& out) override {
    std::vector<uint16_t> others;
    for (uint16_t p = 0; p < ports_; ++p)
      if (p != port) others.push_back(p);
    std::vector<uint8_t> f(frame.begin(), frame.end());
    p4::StoreBe32(&f[14 + 16], 0x0AFFFFFFu);
    p4::StoreBe16(&f[14 + 10], 0);
    p4::StoreBe16(&f[14 + 10], p4::Ipv4HeaderChecksum(&f[14], 20));
    out.EmitMulticast(inasim::Span<const uint8_t>(f.data(), f.size()), others, 0);
  }
  void OnTimer(uint64_t, p4::Picoseconds, p4::Emitter&) override {}
  std::string DumpState() const override { return "{}"; }

 private:
  uint16_t ports_;
};
}  // namespace

// A shared-buffer switch stores a replicated packet once, so its ingress port
// is charged its bytes once while any copy waits. Host 0 sends n 1,042 B
// frames at 100 Gb/s; the switch copies each to hosts 1-3, whose ports drain
// at 10 Gb/s. Each port sends packet 1's copy at once (never charged), so
// packets 2..n wait: (n - 1) x 1,042 B against XOFF 8,000 B pauses host 0 at
// n = 9, not at n = 4 as three charges per packet would.
class MulticastPfcTest : public NetTest {
 protected:
  uint64_t PausesFor(uint32_t n) {
    Build(topo::BuildSingleRack(4, Link(100, 500'000)), SmallPfc());
    fabric_->switch_node(0).SetDataplane(std::make_unique<ToyBroadcaster>(4));
    for (uint16_t p = 1; p < 4; ++p) fabric_->switch_node(0).port(p)->SetRate(10'000'000'000ULL);
    std::vector<UdpSink*> sinks;
    for (uint32_t h = 1; h < 4; ++h) sinks.push_back(&Sink(h, kAggPort));
    Sender(0).SendAt(0, 3, kAggPort, 1000, n);
    RunFor(100 * kUs);
    for (UdpSink* s : sinks) EXPECT_EQ(s->payloads.size(), n) << "every copy delivered";
    const uint64_t pauses = fabric_->switch_node(0).port(0)->counters().pause_sent;
    EXPECT_EQ(fabric_->device(0, 0).counters().pause_received, pauses);
    ns3::Simulator::Destroy();
    fabric_.reset();
    return pauses;
  }
};

TEST_F(MulticastPfcTest, ACopiedPacketChargesItsIngressOnce) {
  EXPECT_EQ(PausesFor(4), 0u);
  EXPECT_EQ(PausesFor(8), 0u);
  EXPECT_EQ(PausesFor(9), 1u);
}

// --- one program shared by several jobs (ina/shared-program.h) -------------

TEST_F(SeamTest, LaterJobsJoinTheProgramTheFirstInstalled) {
  Build(topo::BuildSingleRack(4, Link(100, 500'000)));
  InaSwitchNode& sw = fabric_->switch_node(0);
  std::vector<std::string> calls;
  auto install = [&calls](uint32_t fan_in) {
    return [&calls, fan_in] {
      calls.push_back("install " + std::to_string(fan_in));
      return std::make_unique<ToyAggregator>(fan_in);
    };
  };
  auto join = [&calls](ToyAggregator& installed) { calls.push_back("join " + installed.DumpState()); };
  ToyAggregator& first = InstallOrJoin<ToyAggregator>(sw, install(3), join);
  EXPECT_EQ(sw.dataplane(), &first);
  ToyAggregator& second = InstallOrJoin<ToyAggregator>(sw, install(5), join);
  EXPECT_EQ(&second, &first);  // joined, not replaced
  EXPECT_EQ(sw.dataplane(), &first);
  EXPECT_EQ(calls, (std::vector<std::string>{"install 3", "join {\"open_slots\":0}"}));
  // A program of another type on the switch is not joined: the job installs its own.
  sw.SetDataplane(std::make_unique<ToyBroadcaster>(4));
  ToyAggregator& third = InstallOrJoin<ToyAggregator>(sw, install(7), join);
  EXPECT_EQ(sw.dataplane(), &third);
  EXPECT_EQ(calls.back(), "install 7");
}
