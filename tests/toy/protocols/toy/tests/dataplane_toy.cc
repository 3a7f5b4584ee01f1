// The toy switch, bytes in and bytes out: three workers' contributions make
// one multicast result with the exact (wrapping) sums; duplicates, strangers,
// slot conflicts and short frames are dropped and counted.
#include "tests/common/recording_emitter.h"
#include "tests/toy/protocols/toy/dataplane/toy_dataplane.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

using namespace inasim::p4;
using namespace inasim::p4::toy;

using Emitted = inasim::testing::Emitted;
using Recorder = inasim::testing::RecordingEmitter;

constexpr uint32_t kK = 4;

ToyConfig Config() {
  ToyConfig c;
  c.switch_ip = 0x0AFF0001;
  c.switch_mac = {0x02, 0x00, 0x0a, 0xff, 0x00, 0x01};
  c.worker_ports = {0, 1, 2};
  c.elements_per_packet = kK;
  c.slots = 2;
  c.pass_latency_ps = 500'000;
  return c;
}

std::vector<uint8_t> Contribution(uint32_t seq, std::vector<uint32_t> values, uint16_t udp_port = 47000) {
  std::vector<uint8_t> f(14 + 20 + 8 + kToyHeaderBytes + 4 * values.size(), 0);
  StoreBe16(&f[12], kEtherTypeIpv4);
  f[14] = 0x45;
  f[14 + 9] = kIpProtoUdp;
  StoreBe32(&f[14 + 12], 0x0A000001);
  StoreBe32(&f[14 + 16], 0x0AFF0001);
  StoreBe16(&f[34], udp_port);
  StoreBe16(&f[36], udp_port);
  StoreBe32(&f[42], seq);
  for (size_t i = 0; i < values.size(); ++i) StoreBe32(&f[50 + 4 * i], values[i]);
  return f;
}

void Send(ToyDataplane& dp, uint16_t port, const std::vector<uint8_t>& f, Recorder& out) {
  ASSERT_TRUE(dp.Claims(ParseFrame(f.data(), f.size(), static_cast<uint32_t>(f.size()))));
  dp.Process(port, f, 0, out);
}

TEST(ToyDataplane, ThreeWorkersMakeOneResultWithTheWrappingSums) {
  ToyDataplane dp(Config());
  Recorder out;
  Send(dp, 0, Contribution(5, {1, 0xffffffff, 7, 0x80000000}), out);
  Send(dp, 2, Contribution(5, {2, 2, 0, 0x80000000}), out);
  EXPECT_TRUE(out.out.empty());
  Send(dp, 1, Contribution(5, {3, 0, 1, 5}), out);
  ASSERT_EQ(out.out.size(), 1u);
  const Emitted& r = out.out[0];
  EXPECT_EQ(r.kind, Emitted::kMulticast);
  EXPECT_EQ(r.ports, (std::vector<uint16_t>{0, 1, 2}));
  EXPECT_EQ(r.latency, 500'000u);
  const std::vector<uint8_t> want = {
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x0a, 0xff, 0x00, 0x01, 0x08, 0x00,  // Ethernet
      0x45, 0x00, 0x00, 0x34, 0x00, 0x00, 0x00, 0x00, 0x40, 0x11, 0x6f, 0xba,              // IPv4: 52 B, TTL 64
      0x0a, 0xff, 0x00, 0x01, 0xff, 0xff, 0xff, 0xff,                                      // switch -> broadcast
      0xb7, 0x98, 0xb7, 0x98, 0x00, 0x20, 0x00, 0x00,                                      // UDP 47000, 32 B
      0x00, 0x00, 0x00, 0x05, 0x01, 0x00, 0x00, 0x03,                                      // seq 5, result, 3 workers
      0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x01,                                      // 1+2+3; 0xffffffff+2 wraps
      0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x05};                                     // 7+0+1; 2^31+2^31+5 wraps
  EXPECT_EQ(r.bytes, want);
  EXPECT_EQ(dp.stats().contributions, 3u);
  EXPECT_EQ(dp.stats().results, 1u);
}

TEST(ToyDataplane, DropsDuplicatesStrangersConflictsAndShortFrames) {
  ToyDataplane dp(Config());
  Recorder out;
  Send(dp, 0, Contribution(5, {1, 1, 1, 1}), out);
  Send(dp, 0, Contribution(5, {9, 9, 9, 9}), out);  // worker 0 again
  Send(dp, 7, Contribution(5, {9, 9, 9, 9}), out);  // no worker on port 7
  Send(dp, 1, Contribution(7, {9, 9, 9, 9}), out);  // seq 7 wants slot 1, held by seq 5
  std::vector<uint8_t> shorter = Contribution(5, {1, 1, 1});
  Send(dp, 1, shorter, out);
  EXPECT_EQ(dp.stats().duplicates, 1u);
  EXPECT_EQ(dp.stats().not_a_worker, 1u);
  EXPECT_EQ(dp.stats().slot_conflicts, 1u);
  EXPECT_EQ(dp.stats().malformed, 1u);
  // The slot kept only worker 0's first contribution: two more complete it.
  Send(dp, 1, Contribution(5, {1, 1, 1, 1}), out);
  Send(dp, 2, Contribution(5, {1, 1, 1, 1}), out);
  ASSERT_EQ(out.out.size(), 1u);
  EXPECT_EQ(LoadBe32(&out.out[0].bytes[50]), 3u);
  // Freed: seq 7 now takes slot 1.
  Send(dp, 1, Contribution(7, {4, 4, 4, 4}), out);
  EXPECT_EQ(dp.stats().slot_conflicts, 1u);
  EXPECT_EQ(dp.stats().contributions, 4u);
}

TEST(ToyDataplane, LeavesOtherPortsToTheSwitchAndRefusesBadConfigs) {
  ToyDataplane dp(Config());
  const std::vector<uint8_t> f = Contribution(1, {1, 2, 3, 4}, 4791);
  EXPECT_FALSE(dp.Claims(ParseFrame(f.data(), f.size(), static_cast<uint32_t>(f.size()))));
  ToyConfig c = Config();
  c.worker_ports = {3, 3};
  EXPECT_THROW(ToyDataplane{c}, std::invalid_argument);
  c = Config();
  c.elements_per_packet = 0;
  EXPECT_THROW(ToyDataplane{c}, std::invalid_argument);
}

}  // namespace
