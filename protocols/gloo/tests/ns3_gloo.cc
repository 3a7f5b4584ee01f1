// Gloo's ring allreduce over ns-3's TCP (protocols/gloo): the segment plan
// is Gloo's (docs/research/baselines.md §2's worked example), every rank
// ends with the exact sum, the bytes each rank sends are the plan's, and a
// lossy fabric is recovered by TCP alone.
#include "net_harness.h"

#include "tests/common/run_scenario.h"
#include "protocols/gloo/host/gloo-ring.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

using namespace inasim;
using namespace inasim::testing;
using nlohmann::json;

namespace {

// gloo@cc44198 allreduce.cc:196-218 on S = 10^8 B, n = 8: numSegments =
// roundUp(max(ceil(10^8 / 2^20), 16), 8) = 96, P = 12, segments of
// ceil(10^8 / 96) = 1,041,667 B rounded up to 4 B: 1,041,668 B.
TEST(GlooPlan, SegmentsAreGloosForTheWorkedExample) {
  const GlooPlan p(8, 100'000'000, 1u << 20);
  EXPECT_EQ(p.segments, 96u);
  EXPECT_EQ(p.per_rank, 12u);
  EXPECT_EQ(p.segment_elements * 4, 1'041'668u);
  EXPECT_EQ(p.transfers(), 84u);
  // A small tensor: at least 2n segments.
  const GlooPlan q(4, 4096, 1u << 20);
  EXPECT_EQ(q.segments, 8u);
  EXPECT_EQ(q.per_rank, 2u);
  // What rank r sends at reduce-scatter iteration i, rank r-1 receives then;
  // the segment received at iteration j is sent on at j + P (both phases).
  for (uint32_t phase : {0u, 1u})
    for (uint32_t r = 0; r < 8; ++r)
      for (uint32_t i = 0; i < p.transfers(); ++i) {
        EXPECT_EQ(p.sent(r, phase, i), p.received((r + 7) % 8, phase, i));
        if (i >= p.per_rank) {
          EXPECT_EQ(p.sent(r, phase, i), p.received(r, phase, i - p.per_rank));
        }
      }
}

json Rack(uint32_t hosts, uint64_t bytes, const char* dtype = "int32") {
  return json::parse(fmt::format(R"({{"name":"t","topology":{{"type":"single_rack","hosts":{}}},
    "links":{{"host_rate_gbps":10,"host_delay_ns":500}},
    "workload":{{"type":"allreduce","protocol":"gloo","bytes":{},"dtype":"{}","data":"hashed"}}}})",
                                 hosts, bytes, dtype));
}

// gloo/allgather.cc:63-96 on 4 ranks and 8,002 elements (2,000.5 per rank is
// refused; 8,000 is 2,000 each): pieces are each rank's two halves of
// 1,000; at iteration i rank r sends half i & 1 of rank (r - i/2)'s part to
// r + 1, so it starts with its own and ends, after 2(n-1) = 6 iterations,
// holding every other rank's two halves, each received once and sent on two
// iterations later unless it is among the last two.
TEST(GlooPlan, AnAllGatherIsGloosOwnRingOfHalves) {
  const uint32_t n = 4;
  const GlooPlan p(n, 8000 * 4, 1 << 20, CollectiveKind::kAllGather);
  EXPECT_THROW(GlooPlan(n, 8002 * 4, 1 << 20, CollectiveKind::kAllGather), std::invalid_argument);
  ASSERT_EQ(p.transfers(), 6u);
  EXPECT_EQ(p.phases(), 1u);
  EXPECT_EQ(p.first(5), 2u * 2000 + 1000);  // rank 2's second half
  EXPECT_EQ(p.count(5), 1000u);
  for (uint32_t r = 0; r < n; ++r) {
    EXPECT_EQ(p.sent(r, 0, 0), 2 * r);
    EXPECT_EQ(p.sent(r, 0, 1), 2 * r + 1);
    std::vector<int> got(2 * n, 0);
    for (uint32_t i = 0; i < p.transfers(); ++i) {
      EXPECT_EQ(p.received((r + 1) % n, 0, i), p.sent(r, 0, i)) << r << " " << i;
      if (i >= 2) {
        EXPECT_EQ(p.sent(r, 0, i), p.received(r, 0, i - 2)) << r << " " << i;  // sent on two later
      }
      ++got[p.received(r, 0, i)];
    }
    for (uint32_t piece = 0; piece < 2 * n; ++piece) EXPECT_EQ(got[piece], piece / 2 == r ? 0 : 1) << r;
  }
  EXPECT_TRUE(p.OwnData(0, 1));
  EXPECT_FALSE(p.OwnData(0, 2));
  EXPECT_TRUE(p.Forwards(0, 3));
  EXPECT_FALSE(p.Forwards(0, 4));
  const TensorData data(DType::kInt32, DataPattern::kHashed, 3, n);
  EXPECT_EQ(p.Expected(data, 5000), data.Contribution(2, 5000));
}

// gloo@cc44198 broadcast.cc:45-83 on P = 8, root 0: round 0: 0 -> 1;
// round 1: 0 -> 2, 1 -> 3; round 2: 0 -> 4, 1 -> 5, 2 -> 6, 3 -> 7. With
// root 3 the same tree on vranks r - 3 mod 8; with P = 5 the edges to
// vranks >= 5 are skipped (3 -> 7 and 1 -> 5 do not exist).
TEST(GlooPlan, ABroadcastIsGloosBinomialTree) {
  using V = std::vector<uint32_t>;
  const GlooPlan p(8, 4096, 1 << 20, CollectiveKind::kBroadcast, 0);
  EXPECT_EQ(p.Children(0), (V{1, 2, 4}));
  EXPECT_EQ(p.Children(1), (V{3, 5}));
  EXPECT_EQ(p.Children(2), (V{6}));
  EXPECT_EQ(p.Children(3), (V{7}));
  for (uint32_t r : {4u, 5u, 6u, 7u}) EXPECT_TRUE(p.Children(r).empty()) << r;
  EXPECT_FALSE(p.Parent(0));
  const V parents = {0, 0, 0, 1, 0, 1, 2, 3};  // ranks 1..7's
  for (uint32_t r = 1; r < 8; ++r) EXPECT_EQ(p.Parent(r), parents[r]) << r;
  const GlooPlan q(8, 4096, 1 << 20, CollectiveKind::kBroadcast, 3);
  EXPECT_EQ(q.Children(3), (V{4, 5, 7}));
  EXPECT_EQ(q.Children(4), (V{6, 0}));
  EXPECT_EQ(q.Parent(2), 6u);
  const GlooPlan five(5, 4096, 1 << 20, CollectiveKind::kBroadcast, 0);
  EXPECT_EQ(five.Children(0), (V{1, 2, 4}));
  EXPECT_EQ(five.Children(1), (V{3}));
  EXPECT_TRUE(five.Children(2).empty());
  EXPECT_EQ(five.segments, 1u);  // one unbound buffer, sent whole
  EXPECT_EQ(five.segment_elements, 1024u);
  EXPECT_THROW(GlooPlan(5, 4096, 1 << 20, CollectiveKind::kBroadcast, 5), std::invalid_argument);
}

TEST(GlooScenario, EveryRankEndsWithTheExactSumInBothDtypes) {
  for (const char* dtype : {"int32", "float32"}) {
    const RunResult r = RunQuietly(Rack(5, 3'000'004, dtype));
    const json& w = r.json["workload"];
    EXPECT_TRUE(r.correct) << dtype;
    EXPECT_EQ(w["elements_checked"].get<uint64_t>(), 5u * 750'001) << dtype;
    EXPECT_EQ(w["mismatches"].get<uint64_t>(), 0u) << dtype;
    // roundUp(max(ceil(3,000,004 / 2^20), 2 x 5), 5) = 10 segments, 2 per rank.
    EXPECT_EQ(w["gloo"]["segments"].get<uint32_t>(), 10u);
    EXPECT_EQ(w["gloo"]["segments_per_rank"].get<uint32_t>(), 2u);
    // No loss: TCP never timed out; the time is above 2(n-1)/n S / B.
    EXPECT_EQ(w["gloo"]["tcp_timeouts"].get<uint64_t>(), 0u);
    EXPECT_GT(w["mean_duration_s"].get<double>(), w["gloo"]["analytic_bound_s"].get<double>());
  }
}

// One per cent of the frames on every link lost: Gloo itself retries
// nothing, TCP's fast retransmits and timeouts bring every byte through.
TEST(GlooScenario, TcpRecoversEveryLossAndTheSumsStayExact) {
  const RunResult r = RunQuietly(Rack(4, 1'000'000), {"faults.loss_rate=0.01", "stop.max_sim_time_ms=600000"});
  const json& w = r.json["workload"];
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(w["mismatches"].get<uint64_t>(), 0u);
  EXPECT_GT(r.json["network"]["drops_loss"].get<uint64_t>(), 0u);
  EXPECT_GT(w["gloo"]["tcp_timeouts"].get<uint64_t>() + w["gloo"]["tcp_fast_recoveries"].get<uint64_t>(), 0u);
}

}  // namespace
