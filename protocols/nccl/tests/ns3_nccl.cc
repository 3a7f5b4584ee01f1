// NCCL's ring allreduce over RoCE queue pairs (protocols/nccl): NCCL's
// slice plan, exact sums, and the queue pair's recovery: one lost packet in
// the middle of a message costs one NAK and one go-back; a lost last packet
// (nothing behind it to reveal the gap) waits for the local ACK timeout.
#include "net_harness.h"

#include "protocols/nccl/host/nccl-ring.h"
#include "tests/common/run_scenario.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

using namespace inasim;
using namespace inasim::testing;
using nlohmann::json;

namespace {

// all_reduce.h:20-36 with 4 MiB buffers (chunk 2 MiB), 8 ranks, 2 channels,
// 4 MiB of int32: one loop, realChunkSize = ceil(2^20 / 16) = 65,536
// elements, 2(n-1) = 14 steps of 2 slices: 28 messages per channel.
TEST(NcclPlan, SlicesAreNcclsForFourMiBOnEightRanks) {
  NcclSpec spec;
  const NcclPlan p(8, 1u << 20, spec);
  ASSERT_EQ(p.streams.size(), 2u);
  EXPECT_EQ(p.streams[0].size(), 28u);
  EXPECT_EQ(p.streams[1][0].real_chunk, 65'536u);
  EXPECT_EQ(p.streams[1][0].chunk_first, 8u * 65'536);  // channel 1 takes the loop's second half
  // What rank r sends as message m, rank r+1 receives as message m.
  for (uint32_t c = 0; c < 2; ++c)
    for (size_t m = 0; m < p.streams[c].size(); ++m)
      for (uint32_t r = 0; r < 8; ++r) EXPECT_EQ(p.Range(r, c, m, false), p.Range((r + 1) % 8, c, m, true));
  // Every element is the final sum somewhere: step n-2 and later of every rank cover the tensor n times.
  uint64_t final_elements = 0;
  for (uint32_t c = 0; c < 2; ++c)
    for (size_t m = 0; m < p.streams[c].size(); ++m)
      if (p.streams[c][m].step >= 6)
        for (uint32_t r = 0; r < 8; ++r) final_elements += p.Range(r, c, m, true).second;
  EXPECT_EQ(final_elements, 8u << 20);
}

// reduce_scatter.h / all_gather.h with the same buffers, 8 ranks, 2 channels
// and a segment (NCCL's per-rank count) of 2^20 elements: one loop of
// channels x chunk = 2^20, realChunkSize = min(2^19, ceil(2^20 / 2)) = 2^19,
// n-1 = 7 sending steps of 2 slices: 14 messages per channel.
TEST(NcclPlan, ReduceScatterAndAllGatherWalkEachRanksSegmentAsNcclDoes) {
  NcclSpec spec;
  for (CollectiveKind kind : {CollectiveKind::kReduceScatter, CollectiveKind::kAllGather}) {
    const NcclPlan p(8, 8u << 20, spec, kind);
    ASSERT_EQ(p.segment, 1u << 20);
    ASSERT_EQ(p.streams[0].size(), 14u);
    EXPECT_EQ(p.streams[1][0].real_chunk, 1u << 19);
    EXPECT_EQ(p.streams[1][0].chunk_first, 1u << 19);  // channel 1: the segment's second half
    EXPECT_EQ(p.Ops(0), 16u);                          // n = 8 steps of 2 slices
    // Step 0 of rank 3, slice 0 on channel 0: segment devUserRanks[n-1] = 2
    // (reduce-scatter) or devUserRanks[0] = 3 (all-gather), from its start.
    const uint64_t seg = kind == CollectiveKind::kReduceScatter ? 2 : 3;
    EXPECT_EQ(p.Range(3, 0, 0, false), std::make_pair(seg << 20, uint64_t{1} << 18));
    for (uint32_t c = 0; c < 2; ++c)
      for (size_t m = 0; m < p.streams[c].size(); ++m)
        for (uint32_t r = 0; r < 8; ++r) EXPECT_EQ(p.Range(r, c, m, false), p.Range((r + 1) % 8, c, m, true));
  }
  EXPECT_THROW(NcclPlan(8, (8u << 20) + 1, spec, CollectiveKind::kAllGather), std::invalid_argument);
}

// Every rank's GPU runs its ops in lockstep, each slice handed straight to
// the next rank (from a broadcast's root on): no network, only the plan's
// ranges and NcclPlan::Take. With hashed values a segment sent or reduced at
// the wrong step, or a chain that does not start at the root, cannot come
// out right.
TEST(NcclPlan, EachKindEndsExactWhenTheRanksRunThePlan) {
  NcclSpec spec;
  spec.buffer_bytes = 4096;  // chunks of 512 (128 for a broadcast) elements: several loops and a short last one
  const uint32_t n = 5;
  const uint64_t elements = 5 * 1'999;
  const std::vector<std::pair<CollectiveKind, uint32_t>> cases = {
      {CollectiveKind::kAllreduce, 0}, {CollectiveKind::kReduceScatter, 0}, {CollectiveKind::kAllGather, 0},
      {CollectiveKind::kBroadcast, 0}, {CollectiveKind::kBroadcast, 3}};
  for (const auto& [kind, root] : cases) {
    const NcclPlan p(n, elements, spec, kind, root);
    const TensorData data(DType::kInt32, DataPattern::kHashed, 7, n);
    uint64_t checked = 0, mismatches = 0, sent_bytes = 0;
    for (uint32_t c = 0; c < p.channels; ++c) {
      std::vector<std::vector<std::vector<uint8_t>>> sent(n, std::vector<std::vector<uint8_t>>(p.streams[c].size()));
      for (size_t o = 0; o < p.Ops(c); ++o)
        for (uint32_t i = 0; i < n; ++i) {
          const uint32_t r = (root + i) % n;
          const NcclPlan::Op op = p.OpAt(o, r);
          const uint8_t* in = op.recv ? sent[(r + n - 1) % n][op.received_message].data() : nullptr;
          std::vector<uint8_t> out(op.send ? 4 * p.Range(r, c, op.sent_message, false).second : 0);
          if (op.recv) {
            ASSERT_EQ(sent[(r + n - 1) % n][op.received_message].size(),
                      4 * p.Range(r, c, op.received_message, true).second);
          }
          p.RunGpuOp(data, r, c, op, in, out.data(), checked, mismatches);
          sent_bytes += out.size();
          if (op.send) sent[r][op.sent_message] = std::move(out);
        }
    }
    const std::string what = fmt::format("{} from {}", CollectiveKindName(kind), root);
    EXPECT_EQ(checked, p.checks()) << what;
    EXPECT_EQ(mismatches, 0u) << what;
    // What the ranks sent, as a factor of the tensor: 2(n-1), n-1 or (a chain) n-1.
    EXPECT_DOUBLE_EQ(static_cast<double>(sent_bytes) / (4.0 * elements), p.traffic_factor() * (p.broadcast() ? n - 1 : n))
        << what;
  }
}

// broadcast.h with 4 MiB buffers: chunks of buffer / 8 = 131,072 elements,
// one slice each, 8 slots (NCCL_STEPS / BROADCAST_SLICESTEPS); 1 MiB of
// elements on 2 channels: 4 loops of 2 x 131,072, one message per loop. The
// root (2) only sends and the rank before it (1) only receives.
TEST(NcclPlan, ABroadcastIsAChainFromTheRootInChunksOfAnEighthOfTheBuffer) {
  NcclSpec spec;
  const NcclPlan p(4, 1u << 20, spec, CollectiveKind::kBroadcast, 2);
  EXPECT_EQ(p.slots, 2 * spec.slots);
  ASSERT_EQ(p.streams[1].size(), 4u);
  EXPECT_EQ(p.streams[1][3].chunk_first, 3u * 262'144 + 131'072);
  EXPECT_EQ(p.Range(0, 1, 3, false), std::make_pair(uint64_t{3 * 262'144 + 131'072}, uint64_t{131'072}));
  EXPECT_EQ(p.Ops(1), 4u);
  const NcclPlan::Op root = p.OpAt(0, 2), last = p.OpAt(0, 1), middle = p.OpAt(0, 3);
  EXPECT_TRUE(root.send && !root.recv);
  EXPECT_TRUE(last.recv && !last.send);
  EXPECT_TRUE(middle.recv && middle.send);
  EXPECT_FALSE(p.Receives(2));
  EXPECT_THROW(NcclPlan(4, 64, spec, CollectiveKind::kBroadcast, 4), std::invalid_argument);
}

TEST(NcclScenario, EveryRankEndsWithTheExactSumInBothDtypes) {
  for (const char* dtype : {"int32", "float32"}) {
    const RunResult r = RunQuietly(json::parse(fmt::format(
        R"({{"name":"t","topology":{{"type":"single_rack","hosts":5}},"links":{{"host_rate_gbps":100}},
        "workload":{{"type":"allreduce","protocol":"nccl","bytes":3000004,"dtype":"{}","data":"hashed"}}}})", dtype)));
    const json& w = r.json["workload"];
    EXPECT_TRUE(r.correct) << dtype;
    EXPECT_EQ(w["elements_checked"].get<uint64_t>(), 5u * 750'001) << dtype;
    EXPECT_EQ(w["nccl"]["packets_retransmitted"].get<uint64_t>(), 0u);
    EXPECT_GT(w["mean_duration_s"].get<double>(), w["nccl"]["analytic_bound_s"].get<double>());
  }
}

class NcclRecovery : public NetTest {
 protected:
  /// Host 0's k-th packet of slice data (counting from 1; not the grants,
  /// 98-byte frames) is lost on its link; `last_only`: counting only the
  /// last packets of messages (opcode RDMA WRITE Last).
  void DropDataPacket(uint64_t k, bool last_only = false) {
    auto seen = std::make_shared<uint64_t>(0);
    fabric_->device(0, 0).SetLossFilter([seen, k, last_only](const ns3::Packet& p) {
      uint8_t b[43];
      if (p.GetSize() < sizeof b) return false;
      p.CopyData(b, sizeof b);
      const bool roce = p4::LoadBe16(b + 36) == 4791 &&
                        (last_only ? b[42] == 0x08 : b[42] >= 0x06 && b[42] <= 0x0a && p.GetSize() > 200);
      return roce && ++*seen == k;
    });
  }
  std::unique_ptr<NcclRing> Ring(uint64_t bytes) {
    NcclSpec spec;
    spec.ib_timeout = 6;  // 262 us
    auto ring = std::make_unique<NcclRing>(*fabric_, std::vector<uint32_t>{0, 1, 2}, std::vector<uint64_t>{bytes / 4},
                                           DType::kInt32, DataPattern::kHashed, 1, spec, 1, 0, ScheduleSpec{});
    ring->Start(0);
    return ring;
  }
};

TEST_F(NcclRecovery, AMidMessageLossCostsOneNakAndOneGoBack) {
  Build(topo::BuildSingleRack(3, Link(100, 1 * kUs)));
  DropDataPacket(10);  // the 10th packet of rank 0's first message (64 packets of 1 KiB)
  auto ring = Ring(3 * 2 * 2 * 65'536 * 4);
  RunFor(50'000 * kUs);
  ASSERT_TRUE(ring->done());
  EXPECT_EQ(ring->records()[0].mismatches, 0u);
  EXPECT_EQ(ring->records()[0].elements_checked, 3u * 3 * 2 * 2 * 65'536);
  const RcCounters q = ring->counters();
  EXPECT_EQ(q.naks_sent, 1u);
  EXPECT_EQ(q.go_backs, 1u);
  EXPECT_EQ(q.timeouts, 0u);
  EXPECT_GT(q.dropped_out_of_order, 0u);
}

TEST_F(NcclRecovery, ALostLastPacketWaitsForTheAckTimeout) {
  Build(topo::BuildSingleRack(3, Link(100, 1 * kUs)));
  // 3 ranks, 2 channels, slices of 256 elements (1 KiB + an 8-byte header:
  // a first and a last packet each): rank 0 sends 2 x 2(n-1) x 2 = 16
  // slices; the last packet of its 16th is the last of its queue pair.
  auto ring = Ring(3 * 2 * 2 * 256 * 4);
  DropDataPacket(16, true);
  RunFor(50'000 * kUs);
  ASSERT_TRUE(ring->done());
  EXPECT_EQ(ring->records()[0].mismatches, 0u);
  const RcCounters q = ring->counters();
  EXPECT_EQ(q.timeouts, 1u);
  EXPECT_EQ(q.naks_sent, 0u);
  // The run took the 262 us timeout longer than without the loss.
  EXPECT_GT(ring->records()[0].last_end_ps(), 262 * kUs);
}

}  // namespace

// NCCL over TCP (the NET/Socket transport, docs/research/nccl-socket.md):
// every element exact in both dtypes, and each connection's stream exactly
// its 4-byte index, then per slice a 4-byte size and the slice's bytes.
TEST(NcclTcp, EveryRankExactAndEachStreamIsSizeThenBytesPerSlice) {
  for (const char* dtype : {"int32", "float32"}) {
    const RunResult r = RunQuietly(json::parse(fmt::format(
        R"({{"name":"t","topology":{{"type":"single_rack","hosts":5}},"links":{{"host_rate_gbps":100}},
        "workload":{{"type":"allreduce","protocol":"nccl","bytes":3000004,"dtype":"{}","data":"hashed",
                     "nccl":{{"transport":"tcp"}}}}}})", dtype)));
    const json& w = r.json["workload"];
    EXPECT_TRUE(r.correct) << dtype;
    EXPECT_EQ(w["elements_checked"].get<uint64_t>(), 5u * 750'001) << dtype;
    EXPECT_EQ(w["nccl"]["transport"], "tcp");
    EXPECT_EQ(w["nccl"]["tcp_timeouts"].get<uint64_t>(), 0u);
    EXPECT_GT(w["mean_duration_s"].get<double>(), w["nccl"]["analytic_bound_s"].get<double>());
    NcclSpec spec;
    const NcclPlan plan(5, 750'001, spec);
    uint64_t bytes = 0;
    for (uint32_t rank = 0; rank < 5; ++rank)
      for (uint32_t c = 0; c < plan.channels; ++c) {
        bytes += 4;  // the connection's index
        for (size_t m = 0; m < plan.streams[c].size(); ++m) bytes += 4 + 4 * plan.Range(rank, c, m, false).second;
      }
    EXPECT_EQ(w["nccl"]["stream_bytes"].get<uint64_t>(), bytes) << dtype;
  }
}

// Channel c listens on tcp_port + c: a port range past 65535 is refused at
// validation, naming the key.
TEST(NcclTcp, ListeningPortsPast65535AreRefused) {
  try {
    (void)ParseScenario(json::parse(
        R"({"name":"t","topology":{"type":"single_rack","hosts":4},"links":{"host_rate_gbps":100},
            "workload":{"type":"allreduce","protocol":"nccl","bytes":4096,
                        "nccl":{"transport":"tcp","tcp_port":65535,"channels":2}}})"));
    FAIL() << "accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("workload.nccl.tcp_port"), std::string::npos) << e.what();
  }
}

// TCP recovers what the links lose; NCCL retries nothing (Gloo's test twin).
TEST(NcclTcp, OnePercentLossIsRecoveredByTcp) {
  const RunResult r = RunQuietly(json::parse(
      R"({"name":"t","topology":{"type":"single_rack","hosts":4},"links":{"host_rate_gbps":100},
          "faults":{"loss_rate":0.01},
          "workload":{"type":"allreduce","protocol":"nccl","bytes":1048576,"data":"hashed",
                      "nccl":{"transport":"tcp","min_rto_us":1000}}})"));
  const json& w = r.json["workload"];
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(w["elements_checked"].get<uint64_t>(), 4u << 18);
  EXPECT_GT(w["nccl"]["tcp_timeouts"].get<uint64_t>() + w["nccl"]["tcp_fast_recoveries"].get<uint64_t>(), 0u);
  EXPECT_GT(r.json["network"]["drops_loss"].get<uint64_t>(), 0u);
}

// NCCL's flow control over RoCE (net.cc:238, :307-315, :345-348): a channel
// holds at most `slots` slices in its receive slots (granted again only once
// the GPU consumed one) and `slots` in its send slots (freed only once the
// next rank's NIC acknowledged them). A lost packet stalls a queue pair
// until its NAK or timeout: behind it the stalled channel fills both.
TEST(NcclFlowControl, SlotsBoundWhatAChannelHolds) {
  for (const uint32_t slots : {2u, 4u, 8u})
    for (const double loss : {0.0, 0.001}) {
      const RunResult r = RunQuietly(json::parse(fmt::format(
          R"({{"name":"t","seed":1,"topology":{{"type":"single_rack","hosts":8}},"links":{{"host_rate_gbps":100}},
          "faults":{{"loss_rate":{}}},
          "workload":{{"type":"allreduce","protocol":"nccl","bytes":8388608,"dtype":"float32","data":"hashed",
                       "nccl":{{"slots":{}}}}}}})", loss, slots)));
      const json& w = r.json["workload"];
      const std::string what = fmt::format("slots {} loss {}", slots, loss);
      EXPECT_TRUE(r.correct) << what;
      EXPECT_EQ(w["elements_checked"].get<uint64_t>(), 8u * 2'097'152) << what;
      const auto held = w["nccl"]["max_slices_held"].get<uint64_t>();
      if (loss > 0) {
        EXPECT_GT(w["nccl"]["packets_retransmitted"].get<uint64_t>(), 0u) << what;
        EXPECT_EQ(held, 2u * slots) << what;
      } else {
        EXPECT_LE(held, 2u * slots) << what;
        EXPECT_GE(held, 2u) << what;  // a step's slice waits for the previous one's
      }
    }
}

// Fewer send slots than a chunk's 2 slices: every rank's second slice waits
// for a grant that needs the next rank's send slot. Refused before it hangs.
TEST(NcclFlowControl, OneSlotOverRoceIsRefused) {
  try {
    (void)ParseScenario(json::parse(
        R"({"name":"t","topology":{"type":"single_rack","hosts":4},"links":{"host_rate_gbps":100},
            "workload":{"type":"allreduce","protocol":"nccl","bytes":4096,"nccl":{"slots":1}}})"));
    FAIL() << "accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("workload.nccl.slots: 1 over RoCE deadlocks"), std::string::npos)
        << e.what();
  }
}

// Over TCP the RTO follows the RTT in microseconds (congestion::
// CreateTcpSocket gives TsqTcpSocket, whose samples are not ns-3's
// millisecond timestamp echoes): with a 5 us minimum RTO the ring still
// runs near its bound. With ns-3's estimate every RTT was 1 us and the RTO
// 5 us: 17,360 timeouts and 27x the bound.
TEST(NcclTcp, TheRtoFollowsTheMicrosecondRtt) {
  const RunResult r = RunQuietly(json::parse(
      R"({"name":"t","topology":{"type":"single_rack","hosts":8},"links":{"host_rate_gbps":100,"host_delay_ns":500},
          "workload":{"type":"allreduce","protocol":"nccl","bytes":4194304,"dtype":"float32","data":"hashed",
                      "nccl":{"transport":"tcp","min_rto_us":5}}})"));
  const json& w = r.json["workload"];
  EXPECT_TRUE(r.correct);
  EXPECT_LT(w["mean_duration_s"].get<double>(), 2 * w["nccl"]["analytic_bound_s"].get<double>());
  EXPECT_LT(w["nccl"]["tcp_timeouts"].get<uint64_t>(), 500u);
}
