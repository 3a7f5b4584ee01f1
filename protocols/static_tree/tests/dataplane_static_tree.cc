// The static-tree switch (p4model/statictree), canary-fgcs24 §5.2's baseline:
// expected packets are built here byte by byte from the documented layout.
#include "protocols/static_tree/dataplane/static_tree_dataplane.h"
#include "tests/common/recording_emitter.h"
#include "tests/common/test_bytes.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace st = inasim::p4::statictree;
using namespace inasim::testing;  // Bytes, Put16/32, Checksum

namespace {

constexpr uint32_t kK = 4;
constexpr uint32_t kSwitchIp = 0x0aff0003;
constexpr Picoseconds kPass = 520'000;

using Out = inasim::testing::Emitted;

class Recorder : public inasim::testing::RecordingEmitter {
 public:
  void EmitRouted(inasim::Span<const uint8_t>, Picoseconds) override { ADD_FAILURE() << "static trees never route"; }
};

/// Ethernet / IPv4 (no checksum) / UDP 45503 / header / kK elements.
Bytes Packet(uint32_t id, uint16_t counter, uint16_t hosts, uint32_t tree, bool down, std::vector<uint32_t> data) {
  Bytes b(14 + 20 + 8 + 19 + 4 * kK, 0);
  Put16(&b[12], 0x0800);
  b[14] = 0x45;
  Put16(&b[16], static_cast<uint16_t>(20 + 8 + 19 + 4 * kK));
  b[22] = 64;
  b[23] = 17;
  Put32(&b[26], 0x0a000001);
  Put32(&b[30], 0x0aff0003);
  Put16(&b[34], 40000);
  Put16(&b[36], 45503);
  Put16(&b[38], static_cast<uint16_t>(8 + 19 + 4 * kK));
  Put32(&b[42 + 4], id);
  Put16(&b[42 + 8], counter);
  Put16(&b[42 + 10], hosts);
  Put32(&b[42 + 12], tree);
  b[42 + 18] = down ? 0x40 : 0;
  for (uint32_t i = 0; i < kK; ++i) Put32(&b[61 + 4 * i], data[i]);
  return b;
}

/// What the switch builds: from switch_ip to 255.255.255.255, UDP 45503 both
/// ways, no UDP checksum, IPv4 checksum computed by hand here.
Bytes Built(uint32_t id, uint16_t counter, uint16_t hosts, uint32_t tree, bool down, std::vector<uint32_t> data) {
  Bytes b = Packet(id, counter, hosts, tree, down, data);
  for (int i = 0; i < 6; ++i) b[i] = 0xff;
  const uint8_t mac[6] = {0x02, 0x00, 0x0a, 0xff, 0x00, 0x03};
  for (int i = 0; i < 6; ++i) b[6 + i] = mac[i];
  Put32(&b[26], kSwitchIp);
  Put32(&b[30], 0xffffffff);
  Put16(&b[34], 45503);
  Put16(&b[24], Checksum(&b[14], 20));
  return b;
}

st::StaticTreeConfig Config() {
  st::StaticTreeConfig c;
  c.switch_ip = kSwitchIp;
  c.switch_mac = {0x02, 0x00, 0x0a, 0xff, 0x00, 0x03};
  c.num_ports = 8;
  c.num_elements = kK;
  c.slots_per_tree = 16;
  // Tree 0: children on ports 0, 1, 2, parent on port 5. Tree 3: root, children 0 and 6.
  c.trees = {{0, {0, 1, 2}, 5}, {3, {0, 6}, -1}};
  return c;
}

TEST(StaticTree, AggregatesItsChildrenAndSendsThePartialSumUpThenMulticastsTheResultDown) {
  st::StaticTreeDataplane dp(Config());
  Recorder r;
  dp.Process(0, Packet(9, 1, 8, 0, false, {1, 2, 3, 0xffffffff}), 0, r);
  dp.Process(2, Packet(9, 2, 8, 0, false, {10, 20, 30, 1}), 0, r);
  EXPECT_TRUE(r.out.empty());  // two of three children
  dp.Process(2, Packet(9, 1, 8, 0, false, {5, 5, 5, 5}), 0, r);
  EXPECT_EQ(dp.stats().duplicates, 1u);  // port 2 again: dropped
  dp.Process(1, Packet(9, 1, 8, 0, false, {100, 200, 300, 7}), 0, r);
  ASSERT_EQ(r.out.size(), 1u);
  EXPECT_EQ(r.out[0].kind, Out::kUnicast);
  EXPECT_EQ(r.out[0].port, 5);
  EXPECT_EQ(r.out[0].latency, kPass);
  EXPECT_EQ(r.out[0].bytes, Built(9, 4, 8, 0, false, {111, 222, 333, 7}));  // int32 wraps
  EXPECT_EQ(dp.slots_in_use(), 0u);
  EXPECT_EQ(dp.stats().peak_slots, 1u);
  // The result comes down from the parent: multicast, unmodified, to the children.
  const Bytes result = Packet(9, 8, 8, 0, true, {1, 1, 1, 1});
  dp.Process(5, result, 0, r);
  ASSERT_EQ(r.out.size(), 2u);
  EXPECT_EQ(r.out[1].kind, Out::kMulticast);
  EXPECT_EQ(r.out[1].ports, (std::vector<uint16_t>{0, 1, 2}));
  EXPECT_EQ(r.out[1].bytes, result);
  dp.Process(1, result, 0, r);  // a "result" from a child port
  EXPECT_EQ(dp.stats().not_from_parent, 1u);
}

TEST(StaticTree, RootMulticastsTheResultWithTheMulticastBit) {
  st::StaticTreeDataplane dp(Config());
  Recorder r;
  dp.Process(6, Packet(4, 3, 5, 3, false, {1, 2, 3, 4}), 0, r);
  dp.Process(0, Packet(4, 2, 5, 3, false, {1, 1, 1, 1}), 0, r);
  ASSERT_EQ(r.out.size(), 1u);
  EXPECT_EQ(r.out[0].kind, Out::kMulticast);
  EXPECT_EQ(r.out[0].ports, (std::vector<uint16_t>{0, 6}));
  EXPECT_EQ(r.out[0].bytes, Built(4, 5, 5, 3, true, {2, 3, 4, 5}));
  EXPECT_EQ(dp.stats().results, 1u);
}

TEST(StaticTree, AccumulatorCellsFollowTheSlotsInUseAndAreReusedClean) {
  st::StaticTreeDataplane dp(Config());
  Recorder r;
  EXPECT_EQ(dp.accumulator_cells(), 0u);
  dp.Process(0, Packet(9, 1, 3, 0, false, {1, 2, 3, 4}), 0, r);   // tree 0, block 9: 1 of 3
  dp.Process(6, Packet(4, 1, 2, 3, false, {5, 6, 7, 8}), 0, r);   // tree 3, block 4: 1 of 2
  EXPECT_EQ(dp.accumulator_cells(), 2 * kK);                     // two slots in use, not 2 x 16
  dp.Process(0, Packet(4, 1, 2, 3, false, {1, 1, 1, 1}), 0, r);   // tree 3 done: its cells are freed
  ASSERT_EQ(r.out.size(), 1u);
  EXPECT_EQ(r.out[0].bytes, Built(4, 2, 2, 3, true, {6, 7, 8, 9}));
  // Block 10 of tree 0 takes the freed cells: its sum holds none of block 4's values.
  dp.Process(1, Packet(10, 1, 3, 0, false, {100, 0, 0, 0}), 0, r);
  dp.Process(0, Packet(10, 1, 3, 0, false, {0, 200, 0, 0}), 0, r);
  dp.Process(2, Packet(10, 1, 3, 0, false, {0, 0, 300, 0}), 0, r);
  ASSERT_EQ(r.out.size(), 2u);
  EXPECT_EQ(r.out[1].bytes, Built(10, 3, 3, 0, false, {100, 200, 300, 0}));
  dp.Process(1, Packet(9, 1, 3, 0, false, {10, 20, 30, 40}), 0, r);
  dp.Process(2, Packet(9, 1, 3, 0, false, {100, 200, 300, 400}), 0, r);
  ASSERT_EQ(r.out.size(), 3u);
  EXPECT_EQ(r.out[2].bytes, Built(9, 3, 3, 0, false, {111, 222, 333, 444}));
  EXPECT_EQ(dp.accumulator_cells(), 2 * kK);  // the peak, two slots at once
  EXPECT_EQ(dp.stats().peak_slots, 2u);
  EXPECT_EQ(dp.slots_in_use(), 0u);
}

TEST(StaticTree, DropsWhatItCannotTakeAndCountsIt) {
  st::StaticTreeDataplane dp(Config());
  Recorder r;
  dp.Process(0, Packet(1, 1, 2, 7, false, {0, 0, 0, 0}), 0, r);  // no tree 7 here
  EXPECT_EQ(dp.stats().unknown_tree, 1u);
  dp.Process(4, Packet(1, 1, 2, 0, false, {0, 0, 0, 0}), 0, r);  // port 4 is no child of tree 0
  EXPECT_EQ(dp.stats().not_a_child, 1u);
  dp.Process(0, Packet(1, 1, 2, 0, false, {0, 0, 0, 0}), 0, r);
  dp.Process(1, Packet(17, 1, 2, 0, false, {0, 0, 0, 0}), 0, r);  // 17 & 15 = 1: the slot is block 1's
  EXPECT_EQ(dp.stats().slot_conflicts, 1u);
  Bytes shorter = Packet(1, 1, 2, 0, false, {0, 0, 0, 0});
  shorter.resize(shorter.size() - 1);
  dp.Process(1, shorter, 0, r);
  EXPECT_EQ(dp.stats().malformed_dropped, 1u);
  dp.Process(1, Bytes(10, 0), 0, r);
  EXPECT_EQ(dp.stats().malformed_dropped, 2u);
  EXPECT_TRUE(r.out.empty());
}

TEST(StaticTree, TreesAddedByALaterJobAreAsIfInstalledTogether) {
  st::StaticTreeConfig first = Config();
  first.trees.resize(1);  // tree 0; tree 3 comes with the second job
  st::StaticTreeDataplane joined(first);
  joined.AddTrees({Config().trees[1]});
  st::StaticTreeDataplane together(Config());
  Recorder a, b;
  for (st::StaticTreeDataplane* dp : {&joined, &together}) {
    Recorder& r = dp == &joined ? a : b;
    dp->Process(6, Packet(4, 3, 5, 3, false, {1, 2, 3, 4}), 0, r);
    dp->Process(0, Packet(4, 2, 5, 3, false, {1, 1, 1, 1}), 0, r);
    dp->Process(0, Packet(9, 1, 8, 0, false, {1, 2, 3, 4}), 0, r);
  }
  ASSERT_EQ(a.out.size(), 1u);
  EXPECT_EQ(a.out[0].bytes, Built(4, 5, 5, 3, true, {2, 3, 4, 5}));
  EXPECT_EQ(a.out[0].ports, b.out[0].ports);
  EXPECT_EQ(joined.DumpState(), together.DumpState());
  EXPECT_EQ(joined.config().trees.size(), 2u);
  try {
    joined.AddTrees({Config().trees[0]});
    FAIL() << "a tree id installed twice";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "static_tree: tree 0 given twice");
  }
  EXPECT_EQ(joined.config().trees.size(), 2u);  // unchanged by the refused call
}

TEST(StaticTree, ConfigErrorsNameTheProblem) {
  st::StaticTreeConfig c = Config();
  c.slots_per_tree = 12;
  EXPECT_THROW(st::StaticTreeDataplane{c}, std::invalid_argument);
  c = Config();
  c.trees[0].child_ports.push_back(5);  // the parent port as a child
  EXPECT_THROW(st::StaticTreeDataplane{c}, std::invalid_argument);
  c = Config();
  c.trees.clear();
  EXPECT_THROW(st::StaticTreeDataplane{c}, std::invalid_argument);
}

}  // namespace
