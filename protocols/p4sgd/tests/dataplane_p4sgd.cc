// Conformance tests of the P4SGD switch model (p4model/p4sgd) in both modes:
// `paper` (p4sgd §3.3, Algorithm 2) and `public-p4` (RC4ML/P4FPGA@6dfbdf2
// p4/p4fpga.p4). Expected frames are built here byte by byte from the layout
// in protocols/p4sgd/dataplane/README.md (p4fpga.p4:103-125, sgd_work_send.sv:177,192);
// the model's own parser/deparser is never used to build an expectation.
#include "protocols/p4sgd/dataplane/p4sgd_dataplane.h"
#include "p4model/tools/programs.h"
#include "tests/common/recording_emitter.h"
#include "tests/common/test_bytes.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sg = inasim::p4::p4sgd;
using namespace inasim::testing;  // Bytes, kNs, Put16/32, Get16/32, Checksum

namespace {

constexpr Picoseconds kPass = 520 * kNs;
constexpr uint16_t kCpuSimPort = 32;  // default dev_ports: simulator port 32 is device port 192

// --- recording harness ------------------------------------------------------

using Out = inasim::testing::Emitted;
using Recorder = inasim::testing::RecordingEmitter;

// --- independent byte builders ----------------------------------------------


/// Every field of the 64-byte load header (p4fpga.p4:103-125).
struct Hdr {
  uint8_t byte0 = 0;  ///< __pad0[14:7]; paper: bit 7 ack, bit 6 ack_complete
  uint8_t pad0_low = 0;  ///< __pad0[6:0], byte 1 bits 7..1
  uint8_t slot = 0;
  uint16_t index = 0;
  uint32_t seq_no = 0;
  uint32_t bitmap = 0;
  uint32_t map_state = 0;
  uint32_t counter_state = 0;
  uint8_t slot_state = 0;
  uint8_t pad1_first = 0;  ///< byte 20 bits 6..0
  std::array<int32_t, 8> value{};
};

Bytes Frame(const Hdr& h, size_t extra = 0) {
  Bytes b(64 + extra, 0);
  b[0] = h.byte0;
  b[1] = uint8_t(h.pad0_low << 1 | (h.slot & 1));
  Put16(&b[2], h.index);
  Put32(&b[4], h.seq_no);
  Put32(&b[8], h.bitmap);
  Put32(&b[12], h.map_state);
  Put32(&b[16], h.counter_state);
  b[20] = uint8_t((h.slot_state & 1) << 7 | (h.pad1_first & 0x7f));
  for (int i = 0; i < 8; ++i) Put32(&b[32 + 4 * i], uint32_t(h.value[i]));
  for (size_t i = 0; i < extra; ++i) b[64 + i] = uint8_t(0xa0 + i);
  return b;
}

/// The frame hw/rtl/new/sgd_work_send.sv builds: net_data = {index (32 bits),
/// 224'h0, bank7, ..., bank0} (:177), byte i on the wire = net_data[511-8i -: 8]
/// (:192): the 32-bit packet counter first, big-endian, then zeros, then the
/// eight bank results from bank 7 down to bank 0.
Bytes FpgaFrame(uint32_t counter, const std::array<int32_t, 8>& bank) {
  Bytes b(64, 0);
  Put32(&b[0], counter);
  for (int k = 0; k < 8; ++k) Put32(&b[32 + 4 * k], uint32_t(bank[7 - k]));
  return b;
}

std::array<int32_t, 8> Vals(int32_t base) {
  std::array<int32_t, 8> v{};
  for (int i = 0; i < 8; ++i) v[i] = base + i;
  return v;
}
std::array<int32_t, 8> Sum(const std::array<int32_t, 8>& a, const std::array<int32_t, 8>& b) {
  std::array<int32_t, 8> r{};
  for (int i = 0; i < 8; ++i) r[i] = int32_t(uint32_t(a[i]) + uint32_t(b[i]));
  return r;
}
std::vector<int32_t> Vec(const std::array<int32_t, 8>& a) { return std::vector<int32_t>(a.begin(), a.end()); }

std::vector<uint16_t> Range(uint16_t n) {
  std::vector<uint16_t> v;
  for (uint16_t i = 0; i < n; ++i) v.push_back(i);
  return v;
}

sg::P4SGDConfig PaperConfig(uint32_t n) {
  sg::P4SGDConfig c;
  c.mode = sg::Mode::kPaper;
  c.num_workers = n;
  c.Finalize();
  return c;
}
sg::P4SGDConfig PublicConfig(uint32_t n, uint32_t node_size = sg::kNodeSize) {
  sg::P4SGDConfig c;
  c.mode = sg::Mode::kPublicP4;
  c.num_workers = n;
  c.slots = sg::kIndexSize;
  c.node_size = node_size;
  c.Finalize();
  return c;
}

struct Switch {
  explicit Switch(sg::P4SGDConfig c) : dp(std::move(c)) {}
  /// Sends one frame and returns what came out of it.
  std::vector<Out> Send(uint16_t port, const Bytes& b) {
    rec.out.clear();
    inasim::p4::FrameView v = inasim::p4::ParseFrame(b.data(), std::min<size_t>(b.size(), 64), uint32_t(b.size()));
    claimed = dp.Claims(v);
    dp.Process(port, inasim::Span<const uint8_t>(b.data(), b.size()), 0, rec);
    return rec.out;
  }
  sg::P4SGDDataplane dp;
  Recorder rec;
  bool claimed = false;
};

Hdr PaperAgg(uint32_t worker, uint16_t index, std::array<int32_t, 8> v) {
  Hdr h;
  h.bitmap = 1u << worker;
  h.index = index;
  h.value = v;
  return h;
}
Hdr PaperAck(uint32_t worker, uint16_t index, std::array<int32_t, 8> v = {}) {
  Hdr h = PaperAgg(worker, index, v);
  h.byte0 = 0x80;
  return h;
}

void ExpectMulticast(const std::vector<Out>& o, const Bytes& bytes, const std::vector<uint16_t>& ports) {
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].kind, Out::kMulticast);
  EXPECT_EQ(o[0].bytes, bytes);
  EXPECT_EQ(o[0].ports, ports);
  EXPECT_EQ(o[0].latency, kPass);
}
void ExpectUnicast(const std::vector<Out>& o, const Bytes& bytes, uint16_t port) {
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].kind, Out::kUnicast);
  EXPECT_EQ(o[0].bytes, bytes);
  EXPECT_EQ(o[0].port, port);
  EXPECT_EQ(o[0].latency, kPass);
}

nlohmann::json State(const sg::P4SGDDataplane& dp) { return nlohmann::json::parse(dp.DumpState()); }

// ============================================================================
// Frame layout
// ============================================================================

TEST(P4SGDFrame, FpgaFrameIsTheLoadHeaderWithPortDerivedBitmap) {
  // sgd_work_send.sv's counter lands in (slot, index): counter 5 -> slot 0,
  // index 5; seq_no and bitmap are zero; bank 7 is value1, bank 0 is value8.
  const std::array<int32_t, 8> bank = {10, 11, 12, 13, 14, 15, 16, 17};
  const Bytes f = FpgaFrame(5, bank);
  Hdr h;
  h.index = 5;
  h.value = {17, 16, 15, 14, 13, 12, 11, 10};
  EXPECT_EQ(f, Frame(h));
  const sg::payload_t p = sg::ParsePayload(f.data());
  EXPECT_EQ(p.slot, 0);
  EXPECT_EQ(p.index, 5);
  EXPECT_EQ(p.seq_no, 0u);
  EXPECT_EQ(p.bitmap, 0u);
  EXPECT_EQ(p.value[0], 17u);
  EXPECT_EQ(p.value[7], 10u);
  // Bytes 12..13 (an Ethernet II EtherType's place) are zero: claimed.
  Switch sw(PublicConfig(1));
  sw.Send(0, f);
  EXPECT_TRUE(sw.claimed);
}

// ============================================================================
// Paper mode (p4sgd §3.3)
// ============================================================================

TEST(P4SGDPaper, CompleteAggregationAndReleaseFor2To32Workers) {
  for (uint32_t n = 2; n <= 32; ++n) {
    SCOPED_TRACE("workers " + std::to_string(n));
    Switch sw(PaperConfig(n));
    const uint16_t index = uint16_t(1000 + n);
    std::array<int32_t, 8> sum{};
    for (uint32_t w = 0; w < n; ++w) {
      const std::array<int32_t, 8> v = Vals(int32_t(100 * w) - 7);
      sum = Sum(sum, v);
      const auto o = sw.Send(uint16_t(w), Frame(PaperAgg(w, index, v)));
      if (w + 1 < n) {
        EXPECT_TRUE(o.empty());
        continue;
      }
      // The last contribution carries the full aggregate to every worker.
      ExpectMulticast(o, Frame(PaperAgg(w, index, sum)), Range(uint16_t(n)));
    }
    EXPECT_EQ(sw.dp.AggCount(index), n);
    EXPECT_EQ(sw.dp.AggBitmap(index), n == 32 ? ~0u : (1u << n) - 1);
    EXPECT_EQ(sw.dp.Aggregate(index), Vec(sum));
    // Acknowledgements: absorbed until the last, which releases the slot and
    // multicasts the ack-complete confirmation.
    for (uint32_t w = 0; w < n; ++w) {
      const auto o = sw.Send(uint16_t(w), Frame(PaperAck(w, index, Vals(int32_t(w)))));
      if (w + 1 < n) {
        EXPECT_TRUE(o.empty());
        continue;
      }
      Hdr confirm = PaperAck(w, index, Vals(int32_t(w)));
      confirm.byte0 = 0xc0;
      ExpectMulticast(o, Frame(confirm), Range(uint16_t(n)));
    }
    EXPECT_EQ(sw.dp.AggCount(index), 0u);
    EXPECT_EQ(sw.dp.AckCount(index), 0u);
    EXPECT_EQ(sw.dp.AggBitmap(index), 0u);
    EXPECT_EQ(sw.dp.Aggregate(index), std::vector<int32_t>(8, 0));
    EXPECT_EQ(sw.dp.stats().completed, 1u);
    EXPECT_EQ(sw.dp.stats().released, 1u);
    EXPECT_EQ(sw.dp.stats().aggregated, n - 1);
    EXPECT_EQ(sw.dp.stats().acked, n - 1);
  }
}

TEST(P4SGDPaper, DuplicateAggregationIsNotAddedTwice) {
  Switch sw(PaperConfig(3));
  EXPECT_TRUE(sw.Send(0, Frame(PaperAgg(0, 7, Vals(10)))).empty());
  // Retransmission before completion: dropped, the bitmap says it is in.
  EXPECT_TRUE(sw.Send(0, Frame(PaperAgg(0, 7, Vals(10)))).empty());
  EXPECT_EQ(sw.dp.stats().agg_duplicate_dropped, 1u);
  EXPECT_EQ(sw.dp.AggCount(7), 1u);
  EXPECT_EQ(sw.dp.Aggregate(7), Vec(Vals(10)));
  EXPECT_TRUE(sw.Send(1, Frame(PaperAgg(1, 7, Vals(20)))).empty());
  const auto o = sw.Send(2, Frame(PaperAgg(2, 7, Vals(30))));
  ExpectMulticast(o, Frame(PaperAgg(2, 7, Sum(Sum(Vals(10), Vals(20)), Vals(30)))), Range(3));
}

TEST(P4SGDPaper, LostResultThenRetransmissionGetsTheResult) {
  Switch sw(PaperConfig(2));
  sw.Send(0, Frame(PaperAgg(0, 3, Vals(1))));
  sw.Send(1, Frame(PaperAgg(1, 3, Vals(2))));  // result multicast; say port 0's copy is lost
  // Worker 0's timer fires: it retransmits its aggregation packet and gets the
  // one stored copy of the result, to its own port only.
  const auto o = sw.Send(0, Frame(PaperAgg(0, 3, Vals(1))));
  ExpectUnicast(o, Frame(PaperAgg(0, 3, Sum(Vals(1), Vals(2)))), 0);
  EXPECT_EQ(sw.dp.stats().agg_resent, 1u);
  EXPECT_EQ(sw.dp.AggCount(3), 2u);
  EXPECT_EQ(sw.dp.Aggregate(3), Vec(Sum(Vals(1), Vals(2))));
}

TEST(P4SGDPaper, LostAckThenRetransmission) {
  Switch sw(PaperConfig(2));
  sw.Send(0, Frame(PaperAgg(0, 9, Vals(1))));
  sw.Send(1, Frame(PaperAgg(1, 9, Vals(2))));
  // Worker 0's ack is lost on the way: nothing reaches the switch; it retransmits.
  EXPECT_TRUE(sw.Send(0, Frame(PaperAck(0, 9))).empty());
  EXPECT_EQ(sw.dp.AckCount(9), 1u);
  // A second copy of the same ack before release: dropped, not counted.
  EXPECT_TRUE(sw.Send(0, Frame(PaperAck(0, 9))).empty());
  EXPECT_EQ(sw.dp.AckCount(9), 1u);
  EXPECT_EQ(sw.dp.stats().ack_duplicate_dropped, 1u);
  // Worker 1's ack releases the slot; the confirmation to worker 0 is lost.
  Hdr confirm = PaperAck(1, 9);
  confirm.byte0 = 0xc0;
  ExpectMulticast(sw.Send(1, Frame(PaperAck(1, 9))), Frame(confirm), Range(2));
  // Worker 0 retransmits its ack: the switch confirms to it alone.
  Hdr again = PaperAck(0, 9);
  again.byte0 = 0xc0;
  ExpectUnicast(sw.Send(0, Frame(PaperAck(0, 9))), Frame(again), 0);
  EXPECT_EQ(sw.dp.stats().ack_resent, 1u);
  EXPECT_EQ(sw.dp.AckCount(9), 0u);
}

TEST(P4SGDPaper, SlotIsReusedOnlyAfterEveryWorkerAcknowledged) {
  Switch sw(PaperConfig(3));
  const std::array<int32_t, 8> full = Sum(Sum(Vals(1), Vals(2)), Vals(3));
  for (uint32_t w = 0; w < 3; ++w) sw.Send(uint16_t(w), Frame(PaperAgg(w, 4, Vals(int32_t(w) + 1))));
  sw.Send(0, Frame(PaperAck(0, 4)));
  sw.Send(1, Frame(PaperAck(1, 4)));
  // Before worker 2's ack, a worker's next-operation packet for slot 4 is a
  // duplicate of this operation: it gets the old result, nothing is added.
  ExpectUnicast(sw.Send(0, Frame(PaperAgg(0, 4, Vals(500)))), Frame(PaperAgg(0, 4, full)), 0);
  EXPECT_EQ(sw.dp.Aggregate(4), Vec(full));
  EXPECT_EQ(sw.dp.AggCount(4), 3u);
  // The last ack releases the slot.
  sw.Send(2, Frame(PaperAck(2, 4)));
  EXPECT_EQ(sw.dp.Aggregate(4), std::vector<int32_t>(8, 0));
  // Next operation: worker 0 starts it; worker 1's confirmation was lost and
  // its ack retransmission still gets ack-complete, without touching the new
  // operation's counters.
  EXPECT_TRUE(sw.Send(0, Frame(PaperAgg(0, 4, Vals(500)))).empty());
  EXPECT_EQ(sw.dp.Aggregate(4), Vec(Vals(500)));
  EXPECT_EQ(sw.dp.AckBitmap(4), 0b110u);  // worker 0's bit cleared by its new aggregation
  Hdr again = PaperAck(1, 4);
  again.byte0 = 0xc0;
  ExpectUnicast(sw.Send(1, Frame(PaperAck(1, 4))), Frame(again), 1);
  EXPECT_EQ(sw.dp.AckCount(4), 0u);
  EXPECT_EQ(sw.dp.AggCount(4), 1u);
  sw.Send(1, Frame(PaperAgg(1, 4, Vals(600))));
  ExpectMulticast(sw.Send(2, Frame(PaperAgg(2, 4, Vals(700)))),
                  Frame(PaperAgg(2, 4, Sum(Sum(Vals(500), Vals(600)), Vals(700)))), Range(3));
}

TEST(P4SGDPaper, Int32WrapsAround) {
  Switch sw(PaperConfig(2));
  const int32_t kMax = std::numeric_limits<int32_t>::max();
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  const std::array<int32_t, 8> a = {kMax, kMin, -1, 0, kMax, 1, -5, kMin};
  const std::array<int32_t, 8> b = {1, -1, -1, 0, kMax, -1, 5, kMin};
  const std::array<int32_t, 8> want = {kMin, kMax, -2, 0, -2, 0, 0, 0};
  sw.Send(0, Frame(PaperAgg(0, 0, a)));
  ExpectMulticast(sw.Send(1, Frame(PaperAgg(1, 0, b))), Frame(PaperAgg(1, 0, want)), Range(2));
}

TEST(P4SGDPaper, BadBitmapsAreDroppedAndCounted) {
  Switch sw(PaperConfig(4));
  Hdr h = PaperAgg(0, 1, Vals(1));
  for (uint32_t bm : {0u, 0b11u, 1u << 4, 1u << 31}) {
    h.bitmap = bm;
    EXPECT_TRUE(sw.Send(0, Frame(h)).empty());
  }
  EXPECT_EQ(sw.dp.stats().bad_bitmap_dropped, 4u);
  EXPECT_EQ(sw.dp.AggCount(1), 0u);
}

TEST(P4SGDPaper, SlotsAreIndependentAndUseTheLowIndexBits) {
  sg::P4SGDConfig c = PaperConfig(2);
  c.slots = 1024;
  Switch sw(c);
  sw.Send(0, Frame(PaperAgg(0, 5, Vals(1))));
  EXPECT_TRUE(sw.Send(1, Frame(PaperAgg(1, 6, Vals(2)))).empty());  // another slot
  // Index 1029 addresses cell 5 of a 1024-cell register (Tofino low bits); the
  // header keeps 1029.
  ExpectMulticast(sw.Send(1, Frame(PaperAgg(1, 1029, Vals(3)))), Frame(PaperAgg(1, 1029, Sum(Vals(1), Vals(3)))),
                  Range(2));
}

TEST(P4SGDPaper, FpgaFrameIsAnAggregationWhenTheBitmapIsSet) {
  // The paper's worker sets its bitmap (Algorithm 3 line 5); the flags bits of
  // byte 0 are zero in an FPGA frame, i.e. aggregation.
  Switch sw(PaperConfig(1));
  Bytes f = FpgaFrame(2, Vals(3));
  f[11] = 1;  // bitmap = worker 0
  const auto o = sw.Send(0, f);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].bytes, f);  // one worker: the aggregate is its own values
  EXPECT_EQ(o[0].ports, std::vector<uint16_t>{0});
}

// ============================================================================
// public-p4 mode (RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4)
// ============================================================================

TEST(P4SGDPublic, NodeSizeOneMulticastsEveryFirstContributionWithTheRunningSum) {
  // p4fpga.p4:19 NODE_SIZE 1: n_node % 1 == 0 always, so each worker's first
  // packet is "fulfilled" and multicast to group 1 carrying the running sum.
  // Only the last worker's copy holds the full aggregate. Up to 16 workers,
  // all on pipe 0's device ports 0..60 (the cross-pipe case is its own test).
  for (uint32_t n = 2; n <= 16; ++n) {
    SCOPED_TRACE("workers " + std::to_string(n));
    Switch sw(PublicConfig(n));
    std::array<int32_t, 8> sum{};
    for (uint32_t w = 0; w < n; ++w) {
      const std::array<int32_t, 8> bank = Vals(int32_t(1000 * w));
      std::array<int32_t, 8> v{};
      for (int i = 0; i < 8; ++i) v[i] = bank[7 - i];
      sum = Sum(sum, v);
      // Simulator port w is device port kFrontPanelDevPorts[w]: bitmap 1 << w.
      const auto o = sw.Send(uint16_t(w), FpgaFrame(77, bank));
      Hdr want;
      want.index = 77;
      want.value = sum;
      ExpectMulticast(o, Frame(want), Range(uint16_t(n)));
    }
    EXPECT_EQ(sw.dp.Counter(0, 77), n);
    EXPECT_EQ(sw.dp.NodeMap(0, 77), (1u << n) - 1);
    EXPECT_EQ(sw.dp.Values(0, 77), Vec(sum));
    EXPECT_EQ(sw.dp.stats().fulfilled, n);
  }
}

TEST(P4SGDPublic, RecompiledNodeSizeSendsPartialsToPort192WithState) {
  Switch sw(PublicConfig(3, /*node_size=*/3));
  Hdr h;
  h.index = 12;
  h.value = Vals(1);
  // First of three: to device port 192 (simulator port 32) with counter_state,
  // map_state (the merge result: 0 = first time) and slot_state; values are
  // the running sum (add_0 ran).
  Hdr want = h;
  want.counter_state = 1;
  ExpectUnicast(sw.Send(0, Frame(h)), Frame(want), kCpuSimPort);
  h.value = Vals(10);
  want = h;
  want.value = Sum(Vals(1), Vals(10));
  want.counter_state = 2;
  ExpectUnicast(sw.Send(1, Frame(h)), Frame(want), kCpuSimPort);
  h.value = Vals(100);
  want = h;
  want.value = Sum(Sum(Vals(1), Vals(10)), Vals(100));
  ExpectMulticast(sw.Send(2, Frame(h)), Frame(want), Range(3));
  EXPECT_EQ(sw.dp.stats().partial_to_cpu, 2u);
}

TEST(P4SGDPublic, CountersAreNeverResetAndSlotsMustAlternate) {
  Switch sw(PublicConfig(2, /*node_size=*/2));
  auto round = [&](uint8_t slot, int32_t base) {
    std::vector<Out> last;
    for (uint32_t w = 0; w < 2; ++w) {
      Hdr h;
      h.slot = slot;
      h.index = 3;
      h.value = Vals(base + int32_t(w));
      last = sw.Send(uint16_t(w), Frame(h));
    }
    return last;
  };
  round(0, 10);
  EXPECT_EQ(sw.dp.Counter(0, 3), 2u);
  round(1, 20);  // slot 1: clears worker bits of slot 0, fulfilment clears slot-0 values
  EXPECT_EQ(sw.dp.NodeMap(0, 3), 0u);
  EXPECT_EQ(sw.dp.Values(0, 3), std::vector<int32_t>(8, 0));
  const auto o = round(0, 30);  // slot 0 again: counter continues 3, 4
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].kind, Out::kMulticast);
  EXPECT_EQ(sw.dp.Counter(0, 3), 4u);  // never reset; 4 % NODE_SIZE == 0 fulfils
  EXPECT_EQ(sw.dp.Counter(1, 3), 2u);
  EXPECT_EQ(sw.dp.Values(0, 3), Vec(Sum(Vals(30), Vals(31))));
  // Reusing slot 0 without going through slot 1: every bit is still set, so
  // each packet is a "duplicate" and echoed back with its own values.
  Hdr h;
  h.index = 3;
  h.value = Vals(90);
  ExpectUnicast(sw.Send(0, Frame(h)), Frame(h), 0);
  EXPECT_EQ(sw.dp.Values(0, 3), Vec(Sum(Vals(30), Vals(31))));
}

TEST(P4SGDPublic, RetransmissionIsEchoedWithItsOwnValuesNotTheResult) {
  Switch sw(PublicConfig(2));
  Hdr a;
  a.index = 8;
  a.value = Vals(1);
  Hdr b = a;
  b.value = Vals(2);
  sw.Send(0, Frame(a));
  sw.Send(1, Frame(b));  // the full-sum multicast; say port 0's copy is lost
  // Worker 0 retransmits (seq_no 0 always passes seq_check): status0 != 0,
  // n_node % 1 == 0 -> send(ingress_port), values untouched: the worker gets
  // its own contribution back, never the aggregate.
  ExpectUnicast(sw.Send(0, Frame(a)), Frame(a), 0);
  EXPECT_EQ(sw.dp.stats().echoed, 1u);
  EXPECT_EQ(sw.dp.Values(0, 8), Vec(Sum(Vals(1), Vals(2))));
  EXPECT_EQ(sw.dp.Counter(0, 8), 2u);
}

TEST(P4SGDPublic, SequenceCheckPerIngressPort) {
  Switch sw(PublicConfig(2));
  Hdr h;
  h.index = 1;
  h.seq_no = 5;
  h.value = Vals(1);
  EXPECT_EQ(sw.Send(0, Frame(h)).size(), 1u);
  EXPECT_EQ(sw.dp.Seq(0), 5u);
  // Same seq_no (a retransmission that kept its number): dropped, nothing runs.
  EXPECT_TRUE(sw.Send(0, Frame(h)).empty());
  h.seq_no = 4;
  EXPECT_TRUE(sw.Send(0, Frame(h)).empty());
  EXPECT_EQ(sw.dp.stats().seq_dropped, 2u);
  EXPECT_EQ(sw.dp.Counter(0, 1), 1u);
  // Another port has its own cell (device port 4).
  h.seq_no = 1;
  EXPECT_EQ(sw.Send(1, Frame(h)).size(), 1u);
  EXPECT_EQ(sw.dp.Seq(4), 1u);
  // seq_no 0 always passes and resets the cell.
  h.seq_no = 0;
  h.index = 2;
  EXPECT_EQ(sw.Send(0, Frame(h)).size(), 1u);
  EXPECT_EQ(sw.dp.Seq(0), 0u);
  h.seq_no = 1;
  h.index = 3;
  EXPECT_EQ(sw.Send(0, Frame(h)).size(), 1u);
}

TEST(P4SGDPublic, BitmapComesFromThePortOnlyWhenTheHeaderHasNone) {
  sg::P4SGDConfig c = PublicConfig(2);
  c.dev_ports = {0, 4, 5};  // simulator port 2 is device port 5: not in the table
  Switch sw(c);
  Hdr h;
  h.index = 6;
  h.value = Vals(1);
  EXPECT_TRUE(sw.Send(2, Frame(h)).empty());  // bitmap 0, no entry: dropped
  EXPECT_EQ(sw.dp.stats().no_bitmap_dropped, 1u);
  EXPECT_EQ(sw.dp.Seq(5), 0u);  // && short-circuits: seq_reg untouched
  // A non-zero header bitmap misses the table (key bitmap == 0) and is used as is.
  h.bitmap = 1u << 9;
  EXPECT_EQ(sw.Send(2, Frame(h)).size(), 1u);
  EXPECT_EQ(sw.dp.NodeMap(0, 6), 1u << 9);
  h.bitmap = 1u << 9;
  Hdr echo = h;
  ExpectUnicast(sw.Send(0, Frame(h)), Frame(echo), 0);  // same bit from port 0: a "duplicate"
  // An ingress port with no device port: dropped.
  EXPECT_TRUE(sw.Send(3, Frame(h)).empty());
  EXPECT_EQ(sw.dp.stats().unmapped_port_dropped, 1u);
}

TEST(P4SGDPublic, PartialWithoutACpuPortIsDropped) {
  sg::P4SGDConfig c = PublicConfig(2, 2);
  c.dev_ports = {0, 4};  // no simulator port for device port 192
  Switch sw(c);
  Hdr h;
  h.value = Vals(1);
  EXPECT_TRUE(sw.Send(0, Frame(h)).empty());
  EXPECT_EQ(sw.dp.stats().unmapped_egress_dropped, 1u);
  EXPECT_EQ(sw.dp.Counter(0, 0), 1u);  // the registers still ran
}

TEST(P4SGDPublic, Int32WrapsAround) {
  Switch sw(PublicConfig(2));
  const int32_t kMax = std::numeric_limits<int32_t>::max();
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  Hdr h;
  h.slot = 1;
  h.value = {kMax, kMin, -1, 0, kMax, 1, -5, kMin};
  sw.Send(0, Frame(h));
  h.value = {1, -1, -1, 0, kMax, -1, 5, kMin};
  Hdr want = h;
  want.value = {kMin, kMax, -2, 0, -2, 0, 0, 0};
  ExpectMulticast(sw.Send(1, Frame(h)), Frame(want), Range(2));
  EXPECT_EQ(sw.dp.Values(1, 0), Vec(want.value));
}

TEST(P4SGDPublic, PaddingAndTrailingBytesPassThrough) {
  Switch sw(PublicConfig(1));
  Hdr h;
  h.byte0 = 0x5a;
  h.pad0_low = 0x33;
  h.pad1_first = 0x11;
  h.map_state = 0x0000beef;
  h.value = Vals(4);
  const Bytes in = Frame(h, 10);
  const auto o = sw.Send(0, in);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].bytes, in);  // one worker: the sum is its own values
}

// ============================================================================
// Both modes: parsing, claiming, state, config, tool
// ============================================================================

TEST(P4SGDParse, TruncatedFramesAreDroppedAndCounted) {
  for (auto mode : {sg::Mode::kPaper, sg::Mode::kPublicP4}) {
    Switch sw(mode == sg::Mode::kPaper ? PaperConfig(2) : PublicConfig(2));
    const Bytes full = Frame(PaperAgg(0, 1, Vals(1)));
    for (size_t len : {size_t{0}, size_t{1}, size_t{13}, size_t{14}, size_t{32}, size_t{63}}) {
      const Bytes b(full.begin(), full.begin() + long(len));
      EXPECT_TRUE(sw.Send(0, b).empty());
      EXPECT_TRUE(sw.claimed);
    }
    EXPECT_EQ(sw.dp.stats().malformed_dropped, 6u);
    EXPECT_EQ(sw.dp.stats().processed, 6u);
  }
}

TEST(P4SGDParse, EthernetFramesAreNotClaimedAndRoutedUntouchedWhenAsked) {
  for (auto mode : {sg::Mode::kPaper, sg::Mode::kPublicP4}) {
    sg::P4SGDConfig c = mode == sg::Mode::kPaper ? PaperConfig(2) : PublicConfig(2);
    c.claim_all_traffic = false;  // our option: share the fabric with Ethernet II traffic
    Switch sw(c);
    // IPv4/UDP, ARP and a 0x0600 EtherType: all Ethernet II frames.
    for (uint16_t et : {uint16_t(0x0800), uint16_t(0x0806), uint16_t(0x0600), uint16_t(0x86dd)}) {
      Bytes b(64, 0);
      b[12] = uint8_t(et >> 8);
      b[13] = uint8_t(et);
      b[14] = 0x45;
      const auto o = sw.Send(0, b);
      EXPECT_FALSE(sw.claimed);
      ASSERT_EQ(o.size(), 1u);
      EXPECT_EQ(o[0].kind, Out::kRouted);
      EXPECT_EQ(o[0].bytes, b);
    }
    EXPECT_EQ(sw.dp.stats().not_p4sgd, 4u);
    // 0x05ff is below the EtherType range: a P4SGD frame.
    Bytes b = Frame(PaperAgg(0, 1, Vals(1)));
    b[12] = 0x05;
    b[13] = 0xff;
    sw.Send(0, b);
    EXPECT_TRUE(sw.claimed);
  }
}

TEST(P4SGDParse, EveryFrameIsALoadHeaderAsTheP4ParserReadsIt) {
  // p4fpga.p4:185-196: start -> meta_init -> parse_load, no EtherType test; an
  // Ethernet II / IPv4 frame is parsed as a load header like any other.
  // Bytes 0..11 (the MACs) are __pad0, slot, index, seq_no and bitmap.
  Switch sw(PublicConfig(2));
  Bytes a(64, 0);
  const uint8_t macs[12] = {0x02, 0x00, 0x00, 0x07, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x04};
  std::copy(std::begin(macs), std::end(macs), a.begin());
  a[12] = 0x08;  // EtherType IPv4: to the P4, map_state's top byte
  a[14] = 0x45;
  for (int i = 0; i < 8; ++i) Put32(&a[32 + 4 * i], uint32_t(3 * i + 1));
  // index = bytes 2..3 = 7, seq_no = bytes 4..7 = 0x00000200, bitmap = bytes
  // 8..11 = 4 (non-zero: the table misses, the header's bitmap is used).
  // First contribution: multicast (NODE_SIZE 1) with values + 0.
  auto o = sw.Send(0, a);
  EXPECT_TRUE(sw.claimed);
  ExpectMulticast(o, a, Range(2));
  EXPECT_EQ(sw.dp.Counter(0, 7), 1u);
  EXPECT_EQ(sw.dp.NodeMap(0, 7), 4u);
  EXPECT_EQ(sw.dp.Seq(0), 0x200u);
  // An ARP-typed frame from the other port, bitmap 8, same index: the running
  // sum of both frames' bytes 32..63 comes back in it.
  Bytes b = a;
  b[11] = 0x08;
  b[12] = 0x08;
  b[13] = 0x06;
  for (int i = 0; i < 8; ++i) Put32(&b[32 + 4 * i], uint32_t(100 * i));
  Bytes want = b;
  for (int i = 0; i < 8; ++i) Put32(&want[32 + 4 * i], uint32_t(3 * i + 1 + 100 * i));
  ExpectMulticast(sw.Send(1, b), want, Range(2));
  EXPECT_EQ(sw.dp.stats().not_p4sgd, 0u);
  EXPECT_EQ(sw.dp.stats().fulfilled, 2u);
}

TEST(P4SGDPipes, EachPipeHasItsOwnRegisters) {
  // p4fpga.p4:714-723 `Switch(pipe) main`: every pipe runs its own copy of
  // Ingress and its registers. Default port map: simulator port 0 is device
  // port 0 (pipe 0), simulator port 16 is device port 128 (pipe 1).
  Switch sw(PublicConfig(32));
  Hdr h;
  h.index = 5;
  h.value = Vals(10);
  ExpectMulticast(sw.Send(0, Frame(h)), Frame(h), Range(32));
  // Worker 16 (bit 16 from device port 128), same index and slot: pipe 1's
  // registers are still zero, so its copy carries its own values, not the sum.
  Hdr g = h;
  g.value = Vals(1000);
  ExpectMulticast(sw.Send(16, Frame(g)), Frame(g), Range(32));
  EXPECT_EQ(sw.dp.Counter(0, 5, 0), 1u);
  EXPECT_EQ(sw.dp.Counter(0, 5, 1), 1u);
  EXPECT_EQ(sw.dp.NodeMap(0, 5, 0), 1u << 0);
  EXPECT_EQ(sw.dp.NodeMap(0, 5, 1), 1u << 16);
  EXPECT_EQ(sw.dp.Values(0, 5, 0), Vec(Vals(10)));
  EXPECT_EQ(sw.dp.Values(0, 5, 1), Vec(Vals(1000)));
  // Worker 1, pipe 0: the sum of pipe 0's contributions only.
  Hdr k = h;
  k.value = Vals(7);
  Hdr want = k;
  want.value = Sum(Vals(10), Vals(7));
  ExpectMulticast(sw.Send(1, Frame(k)), Frame(want), Range(32));
  const auto j = State(sw.dp);
  ASSERT_EQ(j["slots"].size(), 2u);
  EXPECT_EQ(j["slots"][0]["pipe"], 0);
  EXPECT_EQ(j["slots"][1]["pipe"], 1);
  EXPECT_EQ(j["slots"][1]["counter_reg_0"], 1);
}

TEST(P4SGDPipes, SequenceRegistersArePerPipe) {
  // seq_reg (p4fpga.p4:456) has 256 cells indexed by the 9-bit port: device
  // ports 0 and 256 share cell 0 but sit on pipes 0 and 2, each its own copy.
  sg::P4SGDConfig c = PublicConfig(2);
  c.dev_ports = {0, 256};
  Switch sw(c);
  Hdr h;
  h.bitmap = 1;
  h.index = 1;
  h.seq_no = 5;
  h.value = Vals(1);
  EXPECT_EQ(sw.Send(0, Frame(h)).size(), 1u);
  h.bitmap = 2;
  h.seq_no = 3;  // below pipe 0's 5, but pipe 2's cell is 0: accepted
  EXPECT_EQ(sw.Send(1, Frame(h)).size(), 1u);
  EXPECT_EQ(sw.dp.Seq(0), 5u);
  EXPECT_EQ(sw.dp.Seq(256), 3u);
  EXPECT_EQ(sw.dp.stats().seq_dropped, 0u);
}

TEST(P4SGDPublic, WithoutSeqSupEverySequenceNumberIsAccepted) {
  // p4fpga.p4:463-475 compiled out: the action stores seq_no, result true.
  for (bool seq_sup : {true, false}) {
    SCOPED_TRACE(seq_sup ? "SEQ_SUP" : "no SEQ_SUP");
    sg::P4SGDConfig c = PublicConfig(2);
    c.seq_sup = seq_sup;
    Switch sw(c);
    Hdr h;
    h.index = 2;
    h.seq_no = 9;
    h.value = Vals(1);
    EXPECT_EQ(sw.Send(0, Frame(h)).size(), 1u);
    h.seq_no = 4;  // lower: rejected with SEQ_SUP; stored and echoed without
    const auto o = sw.Send(0, Frame(h));
    if (seq_sup) {
      EXPECT_TRUE(o.empty());
      EXPECT_EQ(sw.dp.Seq(0), 9u);
      EXPECT_EQ(sw.dp.stats().seq_dropped, 1u);
    } else {
      ExpectUnicast(o, Frame(h), 0);  // a duplicate of bit 0: echoed
      EXPECT_EQ(sw.dp.Seq(0), 4u);
      EXPECT_EQ(sw.dp.stats().echoed, 1u);
    }
  }
}

TEST(P4SGDState, LastPassesAndDumpState) {
  Switch sw(PaperConfig(2));
  sw.Send(0, Frame(PaperAgg(0, 2, Vals(1))));
  EXPECT_EQ(sw.dp.LastPasses(), 1u);
  EXPECT_EQ(sw.dp.PassLatency(), kPass);
  const auto j = State(sw.dp);
  EXPECT_EQ(j["mode"], "paper");
  EXPECT_EQ(j["stats"]["aggregated"], 1);
  ASSERT_EQ(j["slots"].size(), 1u);
  EXPECT_EQ(j["slots"][0]["index"], 2);
  EXPECT_EQ(j["slots"][0]["agg_cnt"], 1);
  EXPECT_EQ(j["slots"][0]["agg_bm"], 1);
  EXPECT_EQ(j["slots"][0]["value"][7], 8);

  Switch pub(PublicConfig(2));
  Hdr h;
  h.index = 9;
  h.seq_no = 3;
  h.value = Vals(1);
  pub.Send(1, Frame(h));
  const auto k = State(pub.dp);
  EXPECT_EQ(k["mode"], "public-p4");
  EXPECT_EQ(k["stats"]["fulfilled"], 1);
  ASSERT_EQ(k["slots"].size(), 1u);
  EXPECT_EQ(k["slots"][0]["node_map_reg_0"], 2);
  EXPECT_EQ(k["slots"][0]["counter_reg_0"], 1);
  ASSERT_EQ(k["seq_reg"].size(), 1u);
  EXPECT_EQ(k["seq_reg"][0]["port"], 4);
  EXPECT_EQ(k["seq_reg"][0]["seq"], 3);
}

TEST(P4SGDTable, BitmapMappingMatchesUpstreamEntries) {
  // p4fpga.p4:419-450: (0, 4k) -> 1 << k for k < 16; (0, 128 + 4(k-16)) -> 1 << k.
  int k = 0;
  for (const auto& e : sg::Ingress::kBitmapMappingEntries) {
    EXPECT_EQ(e.bitmap, 0u);
    EXPECT_EQ(e.ingress_port, k < 16 ? 4 * k : 128 + 4 * (k - 16));
    EXPECT_EQ(e.map, 1u << k);
    EXPECT_EQ(sg::kFrontPanelDevPorts[size_t(k)], e.ingress_port);
    ++k;
  }
  EXPECT_EQ(k, 32);
  EXPECT_EQ(sg::kFrontPanelDevPorts[32], 192);
}

TEST(P4SGDConfig, FromJsonReadsEveryKeyAndRejectsBadInput) {
  const auto c = sg::P4SGDConfig::FromJson(
      R"({"mode":"paper","num_workers":2,"workers":[{"id":0,"port":5,"mac":"02:00:00:00:00:01","ip":"10.0.0.1"},)"
      R"({"id":1,"port":6}],"multicast_ports":[5,6,7],"slots":4096,"pass_latency_ns":300})");
  EXPECT_EQ(c.mode, sg::Mode::kPaper);
  EXPECT_EQ(c.num_workers, 2u);
  ASSERT_EQ(c.workers.size(), 2u);
  EXPECT_EQ(c.workers[0].port, 5);
  EXPECT_EQ(c.workers[0].ip, 0x0a000001u);
  EXPECT_EQ(c.workers[0].mac[5], 1);
  EXPECT_EQ(c.multicast_ports, (std::vector<uint16_t>{5, 6, 7}));
  EXPECT_EQ(c.slots, 4096u);
  EXPECT_EQ(c.pass_latency_ps, 300 * kNs);
  // Defaults: workers on ports 0..n-1, multicast to them.
  const auto d = sg::P4SGDConfig::FromJson(R"({"num_workers":3})");
  EXPECT_EQ(d.mode, sg::Mode::kPaper);
  EXPECT_EQ(d.multicast_ports, (std::vector<uint16_t>{0, 1, 2}));
  EXPECT_EQ(d.slots, 65536u);
  const auto p = sg::P4SGDConfig::FromJson(R"({"mode":"public-p4","num_workers":2,"node_size":2})");
  EXPECT_EQ(p.mode, sg::Mode::kPublicP4);
  EXPECT_EQ(p.node_size, 2u);
  EXPECT_EQ(p.dev_ports.size(), 33u);
  EXPECT_EQ(sg::P4SGDConfig::FromJson(R"({"mode":"public-p4","dev_ports":"identity","multicast_ports":[1]})")
                .dev_ports.size(),
            512u);
  for (const char* bad : {"[]", "{", R"({"mode":"p4"})", R"({"num_workers":0})", R"({"num_workers":33})",
                          R"({"num_workers":2,"slots":1000})", R"({"num_workers":2,"node_size":2})",
                          R"({"num_workers":2,"bogus":1})", R"({"mode":"public-p4","slots":1024,"num_workers":1})",
                          R"({"mode":"public-p4","num_workers":1,"node_size":0})",
                          R"({"mode":"public-p4","num_workers":1,"dev_ports":[1,1]})",
                          R"({"num_workers":2,"workers":[{"port":1},{"port":2,"x":1}]})",
                          R"({"num_workers":2,"workers":[{"id":0,"port":1},{"id":0,"port":2}]})",
                          R"({"num_workers":2,"workers":[{"id":0,"port":1},{"id":5,"port":2}]})",
                          R"({"mode":"public-p4"})"}) {
    EXPECT_THROW(sg::P4SGDConfig::FromJson(bad), std::invalid_argument) << bad;
  }
}

TEST(P4SGDTool, ReplayProgramRow) {
  auto dp = inasim::p4tools::MakeProgram("p4sgd", R"({"mode":"public-p4","num_workers":2})");
  ASSERT_NE(dp, nullptr);
  EXPECT_EQ(dp->Name(), "p4sgd");
  EXPECT_NE(inasim::p4tools::ProgramNames().find("p4sgd"), std::string::npos);
  EXPECT_THROW(inasim::p4tools::MakeProgram("p4sgd", R"({"mode":"x"})"), std::invalid_argument);
}

}  // namespace

// --- UDP carriage (encap "udp"): the load header as a UDP payload ------------

namespace {

/// Ethernet/IPv4/UDP around `payload`, built here byte by byte (RFC 791/768).
Bytes UdpFrame(const std::array<uint8_t, 6>& dst_mac, const std::array<uint8_t, 6>& src_mac, uint32_t src_ip,
               uint32_t dst_ip, uint16_t sport, uint16_t dport, uint8_t tos, const Bytes& payload) {
  Bytes b;
  PutMac(b, dst_mac);
  PutMac(b, src_mac);
  Put16(b, 0x0800);
  PutIpv4Udp(b, {src_ip, dst_ip, sport, dport, 0, 0, 0, 64, tos}, payload.size());
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

constexpr uint32_t kSwitchIp = 0x0aff0001;  // 10.255.0.1
const std::array<uint8_t, 6> kSwitchMac = {0x02, 0, 0x0a, 0xff, 0, 0x01};
std::array<uint8_t, 6> WorkerMac(int i) { return {0x02, 0, 0x0a, 0, 0, uint8_t(i + 1)}; }
uint32_t WorkerIp(int i) { return 0x0a000001u + uint32_t(i); }

std::string UdpConfig(const std::string& mode, int n) {
  nlohmann::json j;
  j["mode"] = mode;
  j["encap"] = "udp";
  j["udp_port"] = 20050;
  j["switch_ip"] = "10.255.0.1";
  j["switch_mac"] = "02:00:0a:ff:00:01";
  for (int i = 0; i < n; ++i)
    j["workers"].push_back({{"id", i}, {"port", i}, {"mac", "02:00:0a:00:00:0" + std::to_string(i + 1)},
                            {"ip", "10.0.0." + std::to_string(i + 1)}});
  if (mode == "public-p4") j["node_size"] = n;
  return j.dump();
}

inasim::p4::FrameView View(const Bytes& b) {
  return inasim::p4::ParseFrame(b.data(), b.size(), uint32_t(b.size()));
}

}  // namespace

TEST(P4SGDUdp, PaperAggregationIsAddressedToEachWorker) {
  constexpr int kN = 3;
  sg::P4SGDDataplane dp(sg::P4SGDConfig::FromJson(UdpConfig("paper", kN)));
  Recorder rec;
  std::array<int32_t, 8> sum{};
  for (int w = 0; w < kN; ++w) {
    Hdr h;
    h.index = 7;
    h.bitmap = 1u << w;
    h.value = Vals(100 * (w + 1));
    sum = Sum(sum, h.value);
    const Bytes f = UdpFrame(kSwitchMac, WorkerMac(w), WorkerIp(w), kSwitchIp, 20050, 20050, 0xb8, Frame(h));
    ASSERT_TRUE(dp.Claims(View(f)));
    dp.Process(uint16_t(w), f, 0, rec);
  }
  // The last contribution completes the slot: one copy per worker, each
  // Ethernet/IPv4/UDP from the switch to that worker, TOS kept, the load
  // header of the last packet with the sum.
  ASSERT_EQ(rec.out.size(), size_t(kN));
  Hdr last;
  last.index = 7;
  last.bitmap = 1u << (kN - 1);
  last.value = sum;
  for (int w = 0; w < kN; ++w) {
    EXPECT_EQ(rec.out[w].kind, Out::kUnicast);
    EXPECT_EQ(rec.out[w].port, w);
    EXPECT_EQ(rec.out[w].latency, kPass);
    EXPECT_EQ(rec.out[w].bytes, UdpFrame(WorkerMac(w), kSwitchMac, kSwitchIp, WorkerIp(w), 20050, 20050, 0xb8,
                                         Frame(last)));
  }
  EXPECT_EQ(dp.stats().completed, 1u);
  EXPECT_EQ(dp.stats().multicast_copies, uint64_t(kN));
}

TEST(P4SGDUdp, DuplicateAfterCompletionIsResentToTheSenderOnly) {
  sg::P4SGDDataplane dp(sg::P4SGDConfig::FromJson(UdpConfig("paper", 2)));
  Recorder rec;
  Hdr a, b;
  a.bitmap = 1;
  a.value = Vals(1);
  b.bitmap = 2;
  b.value = Vals(10);
  const Bytes fa = UdpFrame(kSwitchMac, WorkerMac(0), WorkerIp(0), kSwitchIp, 20050, 20050, 0, Frame(a));
  dp.Process(0, fa, 0, rec);
  dp.Process(1, UdpFrame(kSwitchMac, WorkerMac(1), WorkerIp(1), kSwitchIp, 20050, 20050, 0, Frame(b)), 0, rec);
  rec.out.clear();
  dp.Process(0, fa, 0, rec);  // worker 0 lost its result and retransmits
  ASSERT_EQ(rec.out.size(), 1u);
  Hdr r = a;
  r.value = Sum(Vals(1), Vals(10));
  EXPECT_EQ(rec.out[0].port, 0);
  EXPECT_EQ(rec.out[0].bytes, UdpFrame(WorkerMac(0), kSwitchMac, kSwitchIp, WorkerIp(0), 20050, 20050, 0, Frame(r)));
  EXPECT_EQ(dp.stats().agg_resent, 1u);
}

TEST(P4SGDUdp, PublicP4RunsOnTheUdpPayload) {
  // NODE_SIZE recompiled to 2 (node_size): the second contribution fulfils.
  sg::P4SGDDataplane dp(sg::P4SGDConfig::FromJson(UdpConfig("public-p4", 2)));
  Recorder rec;
  Hdr a, b;
  a.index = 3;
  a.value = Vals(5);
  b.index = 3;
  b.value = Vals(7);
  dp.Process(0, UdpFrame(kSwitchMac, WorkerMac(0), WorkerIp(0), kSwitchIp, 20050, 20050, 0, Frame(a)), 0, rec);
  // The first is not fulfilled: send(192) (p4fpga.p4:522), simulator port 32,
  // which has no worker to address a UDP reply to: counted, not sent.
  EXPECT_TRUE(rec.out.empty());
  EXPECT_EQ(dp.stats().partial_to_cpu, 1u);
  EXPECT_EQ(dp.stats().no_worker_dropped, 1u);
  dp.Process(1, UdpFrame(kSwitchMac, WorkerMac(1), WorkerIp(1), kSwitchIp, 20050, 20050, 0, Frame(b)), 0, rec);
  ASSERT_EQ(rec.out.size(), 2u);
  EXPECT_EQ(dp.stats().fulfilled, 1u);
  for (int w = 0; w < 2; ++w) {
    EXPECT_EQ(rec.out[w].port, w);
    const Bytes& got = rec.out[w].bytes;
    ASSERT_EQ(got.size(), 42u + 64u);
    const Bytes head(got.begin(), got.begin() + 42);
    const Bytes expect_head = UdpFrame(WorkerMac(w), kSwitchMac, kSwitchIp, WorkerIp(w), 20050, 20050, 0, Bytes(64));
    EXPECT_EQ(head, Bytes(expect_head.begin(), expect_head.begin() + 42));
    for (int i = 0; i < 8; ++i) {
      const uint32_t v = uint32_t(got[42 + 32 + 4 * i]) << 24 | uint32_t(got[43 + 32 + 4 * i]) << 16 |
                         uint32_t(got[44 + 32 + 4 * i]) << 8 | got[45 + 32 + 4 * i];
      EXPECT_EQ(int32_t(v), 12 + 2 * i);
    }
  }
}

TEST(P4SGDUdp, OtherUdpAndRawFramesAreNotClaimed) {
  sg::P4SGDDataplane dp(sg::P4SGDConfig::FromJson(UdpConfig("paper", 2)));
  Hdr a;
  a.bitmap = 1;
  EXPECT_FALSE(dp.Claims(View(UdpFrame(kSwitchMac, WorkerMac(0), WorkerIp(0), kSwitchIp, 20050, 20051, 0, Frame(a)))));
  EXPECT_FALSE(dp.Claims(View(Frame(a))));  // a raw FPGA frame is not IPv4
  // A claimed frame whose UDP payload is shorter than the load header: dropped as malformed.
  Recorder rec;
  Bytes short_payload(40, 0);
  dp.Process(0, UdpFrame(kSwitchMac, WorkerMac(0), WorkerIp(0), kSwitchIp, 20050, 20050, 0, short_payload), 0, rec);
  EXPECT_TRUE(rec.out.empty());
  EXPECT_EQ(dp.stats().malformed_dropped, 1u);
}

TEST(P4SGDUdp, ConfigErrorsNameTheProblem) {
  auto err = [](const std::string& text) {
    try {
      sg::P4SGDConfig::FromJson(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(err(R"({"num_workers":2,"encap":"udp"})").find("needs an ip for worker 0"), std::string::npos);
  // The scenario's enum text (spec::Reader), as every key of a config has now.
  EXPECT_EQ(err(R"({"num_workers":1,"encap":"tcp"})"), "p4sgd config: encap: must be one of \"raw\", \"udp\", got \"tcp\"");
  EXPECT_NE(err(R"({"num_workers":1,"udp_port":70000})").find("udp_port: must be an integer in 1..65535, got 70000"),
            std::string::npos);
  EXPECT_NE(err(R"({"workers":[{"port":0,"ip":"10.0.0.1"}],"multicast_ports":[0,5],"encap":"udp"})")
                .find("multicast port 5 has no worker"),
            std::string::npos);
}
