// The ring's packet layout and the closed-form expected sums, against brute force.
#include "protocols/ring/host/ring-allreduce.h"
#include "ina/tensor-data.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

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
    const TensorData job(DType::kInt32, DataPattern::kHashed, 42, n);
    for (uint32_t it : {0u, 1u, 7u}) {
      const TensorData d = job.ForIteration(it);
      for (uint64_t e : {0ull, 1ull, 7ull, 12345ull, 1ull << 33}) {
        uint32_t sum = 0;
        for (uint32_t r = 0; r < n; ++r) sum += d.Value(r, e);
        EXPECT_EQ(sum, d.Expected(e)) << "n=" << n << " it=" << it << " e=" << e;
      }
    }
  }
}

TEST(TensorData, Float32SumsAreExactInAnyOrder) {
  for (uint32_t n : {2u, 8u, 100u, 1024u, 6000u}) {
    const TensorData d = TensorData(DType::kFloat32, DataPattern::kHashed, 7, n).ForIteration(1);
    for (uint64_t e = 0; e < 50; ++e) {
      uint32_t fwd = d.Value(0, e), bwd = d.Value(n - 1, e);
      for (uint32_t r = 1; r < n; ++r) fwd = AddElements(DType::kFloat32, fwd, d.Value(r, e));
      for (uint32_t r = n - 1; r-- > 0;) bwd = AddElements(DType::kFloat32, bwd, d.Value(r, e));
      EXPECT_EQ(fwd, d.Expected(e)) << "n=" << n << " e=" << e;
      EXPECT_EQ(bwd, d.Expected(e)) << "n=" << n << " e=" << e;
    }
  }
  // Values are not all trivial: some element differs between ranks.
  TensorData d(DType::kFloat32, DataPattern::kHashed, 7, 4);
  int differing = 0;
  for (uint64_t e = 0; e < 20; ++e) differing += d.Value(0, e) != d.Value(1, e);
  EXPECT_GT(differing, 10);
  EXPECT_NO_THROW(TensorData(DType::kFloat32, DataPattern::kHashed, 1, TensorData::kMaxFloatHashedRanks));
  EXPECT_THROW(TensorData(DType::kFloat32, DataPattern::kHashed, 1, TensorData::kMaxFloatHashedRanks + 1),
               std::invalid_argument);
}

// The faults linear data let through (rank 0 sending rank 1's values and rank
// n-1 rank n-2's keeps the count and the sum of rank ids; a stale iteration;
// a lost rank) change almost every element's sum.
uint32_t SumWith(const TensorData& d, uint32_t n, uint64_t e, int fault) {
  uint32_t sum = 0;
  bool first = true;
  for (uint32_t r = 0; r < n; ++r) {
    uint32_t v = d.Value(r, e);
    if (fault == 0 && r == 0) v = d.Value(1, e);
    if (fault == 0 && r == n - 1) v = d.Value(n - 2, e);
    if (fault == 1 && r == 0) continue;
    sum = first ? v : AddElements(d.dtype(), sum, v);
    first = false;
  }
  return sum;
}

TEST(TensorData, SubstitutedLostAndStaleContributionsChangeTheSum) {
  for (DType t : {DType::kInt32, DType::kFloat32})
    for (uint32_t n : {3u, 8u, 64u, 1024u}) {
      const TensorData job(t, DataPattern::kHashed, 11, n);
      const TensorData d = job.ForIteration(1), prev = job.ForIteration(0);
      int same_sub = 0, same_lost = 0, same_stale = 0;
      const int elements = 2000;
      for (uint64_t e = 0; e < elements; ++e) {
        same_sub += SumWith(d, n, e, 0) == d.Expected(e);
        same_lost += SumWith(d, n, e, 1) == d.Expected(e);
        same_stale += prev.Expected(e) == d.Expected(e);
      }
      // An element hides the substitution when its slope d(e) is 0 or the
      // weights of its class cancel: int32 almost never; float32's 7-8 bit
      // weights cancel in a class with probability ~0.5 %, in all 8 classes
      // (the whole tensor passing) ~10^-18. Here one class of eight did at
      // n = 1024.
      EXPECT_LT(same_sub, t == DType::kInt32 ? elements / 50 : elements / 4)
          << "n=" << n << " dtype=" << static_cast<int>(t);
      EXPECT_LT(same_lost, elements / 50) << "n=" << n;
      EXPECT_LT(same_stale, elements / 50) << "n=" << n;
    }
}

TEST(TensorData, WireWordsMatchTheValuesAndTheCheckMatchesTheSums) {
  for (DType t : {DType::kInt32, DType::kFloat32}) {
    const TensorData d = TensorData(t, DataPattern::kHashed, 5, 6).ForIteration(2);
    std::vector<uint8_t> words(4 * 100), sums(4 * 100);
    d.FillBe32(3, 1000, 100, words.data());
    for (uint64_t i = 0; i < 100; ++i) {
      EXPECT_EQ(__builtin_bswap32(*reinterpret_cast<const uint32_t*>(&words[4 * i])), d.Value(3, 1000 + i));
      const uint32_t be = __builtin_bswap32(d.Expected(1000 + i));
      std::memcpy(&sums[4 * i], &be, 4);
    }
    EXPECT_EQ(d.CountMismatchesBe32(1000, 100, sums.data()), 0u);
    sums[4 * 37 + 3] ^= 1;  // one element one bit off
    EXPECT_EQ(d.CountMismatchesBe32(1000, 100, sums.data()), 1u);
    EXPECT_EQ(d.CountMismatchesBe32(1001, 99, sums.data()), 99u);  // shifted by one element: every one wrong
  }
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

// A reduce-scatter is the allreduce's first n-1 steps and an all-gather its
// last n-1, numbered from their own first step: the same chunks, the same
// packets, each stream half the allreduce's.
TEST(RingPlan, ReduceScatterAndAllGatherAreTheAllreducesHalves) {
  for (uint32_t n : {2u, 3u, 6u, 8u}) {
    for (uint64_t elements : {5ull, 600ull, 4097ull}) {
      const RingPlan ar(n, elements, 10);
      const RingPlan rs(n, elements, 10, CollectiveKind::kReduceScatter);
      const RingPlan ag(n, elements, 10, CollectiveKind::kAllGather);
      ASSERT_EQ(rs.steps(), n - 1);
      ASSERT_EQ(ag.steps(), n - 1);
      for (uint32_t r = 0; r < n; ++r) {
        for (uint32_t t = 0; t < n - 1; ++t) {
          EXPECT_EQ(rs.chunk_sent(r, t), ar.chunk_sent(r, t));
          EXPECT_EQ(ag.chunk_sent(r, t), ar.chunk_sent(r, n - 1 + t));
          EXPECT_EQ(rs.allreduce_step(t), t);
          EXPECT_EQ(ag.allreduce_step(t), n - 1 + t);
        }
        for (uint32_t t = 0; t <= n - 1; ++t) {
          EXPECT_EQ(rs.step_base(r, t), ar.step_base(r, t));
          EXPECT_EQ(ag.step_base(r, t), ar.step_base(r, n - 1 + t) - ar.step_base(r, n - 1));
        }
        EXPECT_EQ(rs.stream_packets(r) + ag.stream_packets(r), ar.stream_packets(r));
        // The all-gather starts from the chunk the reduce-scatter completed there.
        EXPECT_EQ(ag.chunk_sent(r, 0), (r + 1) % n);
      }
      EXPECT_EQ(ar.checks(), n * elements);
      EXPECT_EQ(rs.checks(), elements);
      EXPECT_EQ(ag.checks(), (n - 1) * elements);
      EXPECT_STREQ(rs.bound_formula(), "(n-1)/n * S / B");
      EXPECT_STREQ(ar.bound_formula(), "2(n-1)/n * S / B");
    }
  }
}

// What an all-gather's element must end as: chunk c is owned (sent first)
// by rank c - 1, so its elements are that rank's contribution; the other
// kinds end with the sum.
TEST(RingPlan, AnAllGathersElementIsItsOwnersValue) {
  const uint32_t n = 4;
  const TensorData data(DType::kInt32, DataPattern::kHashed, 9, n);
  const RingPlan ag(n, 400, 10, CollectiveKind::kAllGather), rs(n, 400, 10, CollectiveKind::kReduceScatter);
  for (uint32_t c = 0; c < n; ++c)
    for (uint64_t e : {uint64_t{0}, uint64_t{57}, uint64_t{399}}) {
      EXPECT_EQ(ag.Expected(data, c, e), data.Contribution((c + n - 1) % n, e));
      EXPECT_EQ(rs.Expected(data, c, e), data.Expected(e));
    }
  // Hashed contributions differ, so a chunk taken from the wrong rank fails.
  EXPECT_NE(data.Contribution(0, 57), data.Contribution(1, 57));
}

// A broadcast from rank 2 of 5 (1,000 elements, 10 per packet): one step of
// the whole tensor (100 packets) at the root and the middle ranks, none at
// the root's previous rank (4, the chain's last); only the root sends its
// own values, nobody reduces, every received packet completes its elements
// (the root's values) and is sent on at step 0 except at rank 4.
TEST(RingPlan, ABroadcastIsAChainFromTheRoot) {
  const uint32_t n = 5, root = 2;
  const RingPlan b(n, 1000, 10, CollectiveKind::kBroadcast, root);
  const TensorData data(DType::kInt32, DataPattern::kHashed, 9, n);
  ASSERT_EQ(b.steps(), 1u);
  for (uint32_t r = 0; r < n; ++r) {
    EXPECT_EQ(b.stream_packets(r), r == 1 ? 0u : 100u) << r;
    EXPECT_EQ(b.OwnData(r, 0), r == root) << r;
    uint32_t out = 7;
    EXPECT_EQ(b.Forwards(r, 0, out), r != 1) << r;
    EXPECT_EQ(out, 0u);
  }
  EXPECT_EQ(b.chunk_sent(3, 0), 0u);
  EXPECT_EQ(b.chunk_packets(0), 100u);
  EXPECT_FALSE(b.Reduces(0));
  EXPECT_TRUE(b.Completes(0));
  EXPECT_EQ(b.Expected(data, 0, 57), data.Contribution(root, 57));
  EXPECT_EQ(b.checks(), (n - 1) * 1000u);
  EXPECT_STREQ(b.bound_formula(), "S / B");
  EXPECT_THROW(RingPlan(n, 1000, 10, CollectiveKind::kBroadcast, n), std::invalid_argument);
}
