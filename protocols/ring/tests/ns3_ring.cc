// Ring allreduce through the whole runner: exact sums for awkward sizes and
// both dtypes, time against the analytic bound, completion under loss and link
// failure, iterations, and byte-identical results for the same seed.
#include "ina/runner.h"
#include "ina/scenario.h"
#include "tests/common/run_scenario.h"

#include <gtest/gtest.h>

using namespace inasim;
using nlohmann::json;
using inasim::testing::RunQuietly;

namespace {

json Base() {
  return json::parse(R"({
    "name": "t",
    "topology": {"type": "single_rack", "hosts": 8},
    "links": {"host_rate_gbps": 100, "host_delay_ns": 500},
    "workload": {"type": "allreduce", "bytes": 262144}
  })");
}

void ExpectExact(const RunResult& r, uint64_t ranks, uint64_t elements, uint32_t iterations = 1) {
  const json& w = r.json["workload"];
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(w["iterations_completed"].get<uint32_t>(), iterations);
  EXPECT_EQ(w["mismatches"].get<uint64_t>(), 0u);
  // Every rank checks every element of the result, every iteration.
  EXPECT_EQ(w["elements_checked"].get<uint64_t>(), ranks * elements * iterations);
}

}  // namespace

TEST(Ring, TwoRanksInt32) {
  const RunResult r = RunQuietly(Base(), {"topology.hosts=2", "workload.bytes=4000"});
  ExpectExact(r, 2, 1000);
}

TEST(Ring, AwkwardSizesThreeAndFiveRanks) {
  // 1001 elements over 3 ranks and 37 per packet: uneven chunks, a short last packet.
  ExpectExact(RunQuietly(Base(), {"topology.hosts=3", "workload.bytes=4004", "workload.ring.elements_per_packet=37"}), 3,
              1001);
  // Fewer packets than ranks: some chunks are empty.
  ExpectExact(RunQuietly(Base(), {"topology.hosts=5", "workload.bytes=12"}), 5, 3);
}

TEST(Ring, Float32ExactAndOnes) {
  ExpectExact(RunQuietly(Base(), {"workload.dtype=float32"}), 8, 65536);
  ExpectExact(RunQuietly(Base(), {"workload.dtype=float32", "workload.data=ones"}), 8, 65536);
}

TEST(Ring, TimeIsCloseToTheFramingBound) {
  const RunResult r = RunQuietly(Base(), {"workload.bytes=4194304"});
  ExpectExact(r, 8, 1 << 20);
  const json& w = r.json["workload"];
  const double t = w["mean_duration_s"], bound = w["ring"]["analytic_bound_s"], framing = w["ring"]["framing_bound_s"];
  EXPECT_NEAR(bound, 2.0 * 7 / 8 * 4194304 * 8 / 100e9, 1e-12);
  EXPECT_GT(t, framing);         // nothing beats the wire
  EXPECT_LT(t, 1.05 * framing);  // pipelining hides all but a few hop latencies
}

TEST(Ring, CompletesExactlyUnderOnePercentLoss) {
  const RunResult r = RunQuietly(Base(), {"faults.loss_rate=0.01", "workload.ring.rto_us=20"});
  ExpectExact(r, 8, 65536);
  EXPECT_GT(r.json["network"]["drops_loss"].get<uint64_t>(), 0u);
  EXPECT_GT(r.json["workload"]["collectives"][0]["retransmissions"].get<uint64_t>(), 0u);
}

TEST(Ring, SurvivesASpineLinkFailureOnALeafSpine) {
  json doc = Base();
  doc["topology"] = {{"type", "leaf_spine"}, {"leaves", 4}, {"spines", 2}, {"hosts_per_leaf", 2}};
  // Packets in flight on the link are lost; spine0 keeps a dead route to leaf0
  // until routing reconverges 50 us later; retransmissions then get through.
  doc["faults"] = json::parse(R"({"reconverge_us": 50,
                                  "links": [{"between": ["leaf0", "spine0"], "down_at_us": 5}]})");
  const RunResult r = RunQuietly(doc, {"workload.ring.rto_us=20"});
  ExpectExact(r, 8, 65536);
  EXPECT_GT(r.json["network"]["drops_link_down"].get<uint64_t>(), 0u);
  EXPECT_GT(r.json["workload"]["collectives"][0]["retransmissions"].get<uint64_t>(), 0u);
}

TEST(Ring, IterationsAreSeparatedByTheComputeGap) {
  const RunResult r = RunQuietly(Base(), {"workload.iterations=3", "workload.compute_gap_us=10"});
  ExpectExact(r, 8, 65536, 3);
  const json& c = r.json["workload"]["collectives"];
  ASSERT_EQ(c.size(), 3u);
  EXPECT_NEAR(c[1]["start_s"].get<double>() - c[0]["end_s"].get<double>(), 10e-6, 1e-12);
  EXPECT_NEAR(c[2]["start_s"].get<double>() - c[1]["end_s"].get<double>(), 10e-6, 1e-12);
}

TEST(Ring, UnfinishedRunIsReportedNotCorrect) {
  const RunResult r = RunQuietly(Base(), {"stop.max_sim_time_ms=0.005"});
  EXPECT_FALSE(r.correct);
  EXPECT_EQ(r.json["sim"]["stopped_by"], "max_sim_time");
  EXPECT_EQ(r.json["workload"]["iterations_completed"].get<uint32_t>(), 0u);
}

TEST(Ring, SameSeedGivesIdenticalResults) {
  auto strip = [](RunResult r) {
    r.json.erase("perf");
    return r;
  };
  const std::initializer_list<std::string> lossy = {"faults.loss_rate=0.005", "workload.ring.rto_us=20",
                                                    "switch.forwarding=spray"};
  json doc = Base();
  doc["topology"] = {{"type", "fat_tree"}, {"k", 4}};
  const RunResult a = strip(RunQuietly(doc, lossy)), b = strip(RunQuietly(doc, lossy));
  EXPECT_EQ(a.json.dump(), b.json.dump());
  EXPECT_EQ(a.csv_texts, b.csv_texts);
  ApplyOverride(doc, "seed=2");
  const RunResult c = strip(RunQuietly(doc, lossy));
  EXPECT_NE(a.csv_texts, c.csv_texts);  // another seed draws other losses
}
