// The ring's packet layout and the closed-form expected sums, against brute force.
#include "ina/ring-allreduce.h"
#include "ina/tensor-data.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

using namespace inasim;

TEST(RingPlan, StepBasesMatchBruteForce) {
  for (uint32_t n : {2u, 3u, 5u, 8u, 13u}) {
    for (uint64_t elements : {1ull, 7ull, 100ull, 1000ull, 4096ull}) {
      RingPlan plan(n, elements, 37);
      for (uint32_t r = 0; r < n; ++r) {
        uint64_t base = 0;
        for (uint32_t t = 0; t <= plan.steps(); ++t) {
          ASSERT_EQ(plan.step_base(r, t), base) << "n=" << n << " E=" << elements << " r=" << r << " t=" << t;
          if (t < plan.steps()) base += plan.chunk_packets(plan.chunk_sent(r, t));
        }
      }
    }
  }
}

TEST(RingPlan, ChunksFollowTheRingSchedule) {
  // Reduce-scatter: rank r sends chunk r - t; after n-1 steps rank r holds chunk
  // r+1 fully reduced; allgather forwards what arrived. Each rank must receive
  // every chunk other than ... exactly as the schedule says: check that the chunk
  // rank r sends at step t+1 is the one its predecessor sent at step t.
  const uint32_t n = 6;
  RingPlan plan(n, 600, 10);
  for (uint32_t r = 0; r < n; ++r) {
    EXPECT_EQ(plan.chunk_sent(r, 0), r);
    for (uint32_t t = 0; t + 1 < plan.steps(); ++t)
      EXPECT_EQ(plan.chunk_sent(r, t + 1), plan.chunk_sent((r + n - 1) % n, t));
    // Allgather step 0 sends the chunk completed at the last reduce step.
    EXPECT_EQ(plan.chunk_sent(r, n - 1), (r + 1) % n);
    // Over the allgather the rank receives every chunk but the one it completed.
    std::set<uint32_t> got;
    for (uint32_t t = n - 1; t < plan.steps(); ++t) got.insert(plan.chunk_sent((r + n - 1) % n, t));
    EXPECT_EQ(got.size(), n - 1);
    EXPECT_EQ(got.count((r + 1) % n), 0u);
  }
}

TEST(RingPlan, ChunksPartitionThePackets) {
  RingPlan plan(7, 1000, 9);  // 112 packets over 7 chunks of 16
  uint64_t sum = 0;
  for (uint32_t c = 0; c < 7; ++c) sum += plan.chunk_packets(c);
  EXPECT_EQ(sum, plan.total_packets());
  EXPECT_EQ(plan.total_packets(), 112u);
  EXPECT_EQ(plan.packet_elements(111), 1000u - 111 * 9);
  RingPlan tiny(8, 3, 100);  // fewer packets than ranks: empty chunks are legal
  uint64_t tiny_sum = 0;
  for (uint32_t c = 0; c < 8; ++c) tiny_sum += tiny.chunk_packets(c);
  EXPECT_EQ(tiny_sum, 1u);
}

TEST(TensorData, Int32ClosedFormEqualsBruteForceSum) {
  for (uint32_t n : {2u, 3u, 17u, 1024u}) {
    TensorData d(DType::kInt32, DataPattern::kHashed, 42, n);
    for (uint64_t e : {0ull, 1ull, 12345ull, 1ull << 33}) {
      uint32_t sum = 0;
      for (uint32_t r = 0; r < n; ++r) sum += d.Value(r, e);
      EXPECT_EQ(sum, d.Expected(e)) << "n=" << n << " e=" << e;
    }
  }
}

TEST(TensorData, Float32SumsAreExactInAnyOrder) {
  for (uint32_t n : {2u, 8u, 100u, 1024u}) {
    TensorData d(DType::kFloat32, DataPattern::kHashed, 7, n);
    for (uint64_t e = 0; e < 50; ++e) {
      uint32_t fwd = d.Value(0, e), bwd = d.Value(n - 1, e);
      for (uint32_t r = 1; r < n; ++r) fwd = AddElements(DType::kFloat32, fwd, d.Value(r, e));
      for (uint32_t r = n - 1; r-- > 0;) bwd = AddElements(DType::kFloat32, bwd, d.Value(r, e));
      EXPECT_EQ(fwd, d.Expected(e));
      EXPECT_EQ(bwd, d.Expected(e));
    }
  }
  // Values are not all trivial: some element differs between ranks.
  TensorData d(DType::kFloat32, DataPattern::kHashed, 7, 4);
  int differing = 0;
  for (uint64_t e = 0; e < 20; ++e) differing += d.Value(0, e) != d.Value(1, e);
  EXPECT_GT(differing, 10);
  EXPECT_THROW(TensorData(DType::kFloat32, DataPattern::kHashed, 1, 6000), std::invalid_argument);
}

TEST(TensorData, OnesAndInt32Wraparound) {
  TensorData f(DType::kFloat32, DataPattern::kOnes, 1, 16);
  float v;
  uint32_t bits = f.Expected(3);
  std::memcpy(&v, &bits, 4);
  EXPECT_EQ(v, 16.0f);
  TensorData i(DType::kInt32, DataPattern::kOnes, 1, 5);
  EXPECT_EQ(i.Expected(0), 5u);
  EXPECT_EQ(AddElements(DType::kInt32, 0x7fffffffu, 1u), 0x80000000u);  // INT32_MAX + 1 wraps
}
