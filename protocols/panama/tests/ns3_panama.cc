// PANAMA end to end on ns-3: workers on real UDP sockets, the accelerator
// model on every tree switch, Fig. 5's windows, ECN from real queues, PFC.
#include "ina/dnn-models.h"
#include "protocols/panama/host/panama-job.h"
#include "ina/runner.h"
#include "ina/scenario.h"
#include "ina/tensor-data.h"
#include "protocols/panama/dataplane/fp32.h"
#include "net_harness.h"
#include "tests/common/run_scenario.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

using namespace inasim;
using nlohmann::json;
using inasim::testing::RunErrorOf;
using inasim::testing::RunQuietly;

namespace {

/// 2 leaves x 4 spines at 10 Gb/s, `per_leaf` hosts per leaf; the job's
/// workers are the first 4 hosts of each leaf.
json TwoLeaves(uint32_t per_leaf, uint64_t bytes, uint32_t trees = 4) {
  std::string hosts;
  for (uint32_t l = 0; l < 2; ++l)
    for (uint32_t h = 0; h < 4; ++h) hosts += fmt::format("{}{}", hosts.empty() ? "" : ",", l * per_leaf + h);
  return json::parse(fmt::format(R"({{"name":"t","topology":{{"type":"leaf_spine","leaves":2,"spines":4,
    "hosts_per_leaf":{}}}, "links":{{"host_rate_gbps":10}},
    "switch":{{"ecn":{{"enabled":true,"threshold":20}},"pfc":{{"enabled":true}}}},
    "workload":{{"type":"allreduce","protocol":"panama","dtype":"float32","bytes":{},"hosts":[{}],
                "panama":{{"trees":{}}}}}, "stop":{{"max_sim_time_ms":100}}}})",
                                 per_leaf, bytes, hosts, trees));
}

class PanamaScenario : public ::testing::Test {
 protected:
  void SetUp() override { EnsurePicosecondTime(); }
};

// ------------------------------------------------- shared cluster (§7) ----

json Cluster(uint32_t jobs, double rate) {
  return json::parse(fmt::format(R"({{"name":"c","seed":2,
    "topology":{{"type":"leaf_spine","leaves":4,"spines":2,"hosts_per_leaf":8}},
    "links":{{"host_rate_gbps":10,"fabric_rate_gbps":10}}, "switch":{{"pfc":{{"enabled":true}}}},
    "workload":{{"type":"allreduce","protocol":"panama","dtype":"float32",
      "panama":{{"trees":2,"cluster":{{"jobs":{},"arrival_rate_per_s":{},"min_workers":4,"max_workers":12,
                 "iterations":2,"scale":0.0005}}}}}}}})",
                                 jobs, rate));
}

TEST_F(PanamaScenario, ClusterJobsArriveWaitForTheirHostsAndEndExact) {
  const RunResult r = RunQuietly(Cluster(10, 50000));
  const json& c = r.json["workload"]["panama"]["cluster"];
  ASSERT_TRUE(r.correct) << r.json["workload"].dump();
  ASSERT_EQ(c["jobs"].size(), 10u);
  EXPECT_EQ(c["finished_jobs"].get<uint32_t>(), 10u);
  double last_arrival = -1;
  uint32_t waited = 0;
  for (const json& j : c["jobs"]) {
    const double arrival = j["arrival_s"], start = j["start_s"], end = j["end_s"];
    EXPECT_GT(arrival, last_arrival);  // Poisson arrivals in order
    last_arrival = arrival;
    EXPECT_GE(start, arrival);
    EXPECT_GT(end, start);
    EXPECT_DOUBLE_EQ(j["jct_s"].get<double>(), end - arrival);
    waited += start > arrival;
    const uint32_t w = j["workers"];
    EXPECT_GE(w, 4u);
    EXPECT_LE(w, 12u);
    EXPECT_EQ(j["hosts"].size(), w);
  }
  EXPECT_GT(waited, 0u);  // 50,000 jobs/s on 32 hosts: some wait for hosts
  // No host ever runs two jobs at once.
  for (size_t a = 0; a < c["jobs"].size(); ++a)
    for (size_t b = a + 1; b < c["jobs"].size(); ++b) {
      const json &ja = c["jobs"][a], &jb = c["jobs"][b];
      const bool overlap = ja["start_s"].get<double>() < jb["end_s"].get<double>() &&
                           jb["start_s"].get<double>() < ja["end_s"].get<double>();
      if (!overlap) continue;
      std::set<uint32_t> ha(ja["hosts"].begin(), ja["hosts"].end());
      for (const auto& h : jb["hosts"]) EXPECT_EQ(ha.count(h.get<uint32_t>()), 0u) << a << " and " << b;
    }
  // Every job's values were checked bit for bit.
  for (const json& j : r.json["workload"]["per_job"]) {
    EXPECT_TRUE(j["correct"].get<bool>());
    EXPECT_EQ(j["mismatches"].get<uint64_t>(), 0u);
  }
  const RunResult again = RunQuietly(Cluster(10, 50000));
  EXPECT_EQ(again.json["workload"]["panama"]["cluster"].dump(), c.dump());
}

TEST_F(PanamaScenario, ClusterPlacementUsesFewRacksAndTheModelTable) {
  const topo::Topology t = topo::BuildLeafSpine(4, 2, 8, topo::LinkSpec{}, topo::LinkSpec{});
  PanamaClusterSpec spec;
  spec.jobs = 40;
  spec.arrival_rate_per_s = 1;  // far apart: every job finds the cluster free
  spec.min_workers = 3;
  spec.max_workers = 8;
  spec.models = {*FindDnnModel(BuiltinDnnModels(), "resnet50"), *FindDnnModel(BuiltinDnnModels(), "vgg16")};
  spec.iterations = 1;
  spec.scale = 0.5;
  std::vector<uint32_t> pool(32);
  for (uint32_t h = 0; h < 32; ++h) pool[h] = h;
  const auto jobs = PanamaJobSet::PlaceCluster(t, spec, pool, 10, 7);
  ASSERT_EQ(jobs.size(), 40u);
  std::set<uint32_t> sizes;
  for (const auto& j : jobs) {
    EXPECT_EQ(j.racks, 1u);  // at most 8 workers fit one free rack
    EXPECT_TRUE(j.after.empty() || j.arrival_ps > 0);
    sizes.insert(static_cast<uint32_t>(j.hosts.size()));
    const DnnModel& m = *FindDnnModel(BuiltinDnnModels(), j.model);
    EXPECT_TRUE(j.model == "resnet50" || j.model == "vgg16");
    EXPECT_EQ(j.bytes, m.parameters * 4 / 2);  // scaled by 0.5 (both counts are even)
    EXPECT_EQ(j.compute_ps, static_cast<uint64_t>(std::llround(64.0 / m.images_per_s * 0.5 * 1e12)));
  }
  EXPECT_EQ(sizes.size(), 6u);  // 3..8 all drawn
  EXPECT_EQ(PanamaJobSet::PlaceCluster(t, spec, pool, 10, 7)[5].hosts, jobs[5].hosts);  // seeded
}

TEST_F(PanamaScenario, ClusterBadInputNamesTheField) {
  const auto err = RunErrorOf;
  json doc = Cluster(3, 100);
  doc["workload"]["panama"]["cluster"]["models"] = {"resnet50", "gpt3"};
  EXPECT_NE(err(doc).find("workload.panama.cluster.models[1]: \"gpt3\" is not one of vgg16, alexnet"),
            std::string::npos);
  doc = Cluster(3, 100);
  doc["workload"]["panama"]["cluster"]["max_workers"] = 64;
  EXPECT_NE(err(doc).find("max_workers: 64 workers, but the cluster has 32 hosts"), std::string::npos);
  doc = Cluster(3, 100);
  doc["workload"]["panama"]["jobs"] = json::parse(R"([{"hosts":[0,1]}])");
  EXPECT_NE(err(doc).find("give either jobs (fixed) or cluster"), std::string::npos);
}

TEST_F(PanamaScenario, ClusterOfRingJobsRunsTheSamePlacementExact) {
  // Ring-AllReduce (§7's baseline): the same arrivals, models and hosts, each
  // job a host ring; every rank's every element checked against the exact sum.
  const RunResult panama = RunQuietly(Cluster(10, 50000));
  const RunResult ring = RunQuietly(Cluster(10, 50000), {"workload.panama.cluster.allreduce=\"ring\"",
                                                        "workload.ring.rto_us=2000"});
  ASSERT_TRUE(ring.correct) << ring.summary;
  const json& c = ring.json["workload"]["panama"]["cluster"];
  EXPECT_EQ(c["allreduce"], "ring");
  EXPECT_EQ(c["finished_jobs"].get<uint32_t>(), 10u);
  for (size_t i = 0; i < 10; ++i) {
    const json& pj = panama.json["workload"]["panama"]["cluster"]["jobs"][i];
    EXPECT_EQ(c["jobs"][i]["hosts"], pj["hosts"]);
    EXPECT_EQ(c["jobs"][i]["model"], pj["model"]);
    EXPECT_DOUBLE_EQ(c["jobs"][i]["arrival_s"].get<double>(), pj["arrival_s"].get<double>());
    const json& rj = ring.json["workload"]["per_job"][i];
    EXPECT_EQ(rj["bytes"], PanamaJobSet::ScaledGradientBytes(*FindDnnModel(BuiltinDnnModels(), pj["model"].get<std::string>()), 0.0005));
    EXPECT_FALSE(rj.contains("panama"));  // a ring job
    EXPECT_EQ(rj["mismatches"].get<uint64_t>(), 0u);
    // Two iterations, every rank every element.
    const uint64_t bytes =
        PanamaJobSet::ScaledGradientBytes(*FindDnnModel(BuiltinDnnModels(), pj["model"].get<std::string>()), 0.0005);
    EXPECT_EQ(rj["elements_checked"].get<uint64_t>(), c["jobs"][i]["workers"].get<uint64_t>() * bytes / 4 * 2);
  }
  // In-network aggregation moves a worker's gradient once each way; the ring 2(n-1)/n times.
  EXPECT_GT(ring.json["network"]["host_bytes_tx"].get<double>(),
            1.2 * panama.json["network"]["host_bytes_tx"].get<double>());
}

TEST_F(PanamaScenario, ClusterLoadSetsTheArrivalRateAndTheWindowEndsArrivals) {
  PanamaClusterSpec spec;
  spec.models = {*FindDnnModel(BuiltinDnnModels(), "resnet50"), *FindDnnModel(BuiltinDnnModels(), "vgg16")};
  spec.min_workers = 4;
  spec.max_workers = 8;
  spec.iterations = 2;
  spec.scale = 0.001;
  spec.load = 0.5;
  // lambda x E[workers] x iterations x E[bytes] x 8 = load x hosts x rate.
  const double mean_bytes = 0.5 * (PanamaJobSet::ScaledGradientBytes(*FindDnnModel(BuiltinDnnModels(), "resnet50"), 0.001) +
                                   PanamaJobSet::ScaledGradientBytes(*FindDnnModel(BuiltinDnnModels(), "vgg16"), 0.001));
  const double rate = PanamaJobSet::ArrivalRateForLoad(spec, 32, 10);
  EXPECT_NEAR(rate * 6 * 2 * mean_bytes * 8, 0.5 * 32 * 10e9, 1e-3);
  // A window of 5 ms holds about rate x 5 ms arrivals, all inside it.
  const topo::Topology t = topo::BuildLeafSpine(4, 2, 8, topo::LinkSpec{}, topo::LinkSpec{});
  std::vector<uint32_t> pool(32);
  for (uint32_t h = 0; h < 32; ++h) pool[h] = h;
  spec.jobs = 255;
  spec.window_ps = 5'000'000'000ull;
  const auto jobs = PanamaJobSet::PlaceCluster(t, spec, pool, 10, 3);
  ASSERT_FALSE(jobs.empty());
  EXPECT_LT(jobs.size(), 255u);
  for (const auto& j : jobs) EXPECT_LT(j.arrival_ps, spec.window_ps);
  const double expected = rate * 5e-3;
  EXPECT_NEAR(static_cast<double>(jobs.size()), expected, 4 * std::sqrt(expected) + 1);  // Poisson
}

TEST_F(PanamaScenario, ClusterSlotsLetAHostRunSeveralJobsSpreadOverHosts) {
  const topo::Topology t = topo::BuildLeafSpine(4, 2, 8, topo::LinkSpec{}, topo::LinkSpec{});
  PanamaClusterSpec spec;
  spec.jobs = 12;
  spec.arrival_rate_per_s = 1e9;  // all at once: no job has ended when the next arrives
  spec.min_workers = 8;
  spec.max_workers = 8;
  spec.models = {*FindDnnModel(BuiltinDnnModels(), "resnet50")};
  spec.iterations = 1;
  spec.scale = 0.01;
  std::vector<uint32_t> pool(32);
  for (uint32_t h = 0; h < 32; ++h) pool[h] = h;
  // One slot: the first 4 jobs fill the 32 hosts, the rest wait for them.
  spec.slots_per_host = 1;
  auto jobs = PanamaJobSet::PlaceCluster(t, spec, pool, 10, 1);
  for (size_t j = 0; j < 4; ++j) EXPECT_TRUE(jobs[j].after.empty()) << j;
  for (size_t j = 4; j < 12; ++j) EXPECT_FALSE(jobs[j].after.empty()) << j;
  // Three slots: 12 x 8 = 96 = 3 x 32 workers fit at once, three jobs per host,
  // each job in one rack (the least-loaded hosts first, racks kept whole).
  spec.slots_per_host = 3;
  jobs = PanamaJobSet::PlaceCluster(t, spec, pool, 10, 1);
  std::vector<uint32_t> per_host(32, 0);
  for (const auto& j : jobs) {
    EXPECT_TRUE(j.after.empty());
    EXPECT_EQ(j.racks, 1u);
    for (uint32_t h : j.hosts) ++per_host[h];
  }
  for (uint32_t h = 0; h < 32; ++h) EXPECT_EQ(per_host[h], 3u) << h;
  // And the run: every job exact, hosts shared by concurrent jobs.
  json doc = Cluster(6, 1e6);
  doc["workload"]["panama"]["cluster"]["slots_per_host"] = 4;
  doc["workload"]["panama"]["cluster"]["min_workers"] = 16;
  doc["workload"]["panama"]["cluster"]["max_workers"] = 24;
  const RunResult r = RunQuietly(doc);
  ASSERT_TRUE(r.correct) << r.summary;
  EXPECT_EQ(r.json["workload"]["panama"]["cluster"]["finished_jobs"].get<uint32_t>(), 6u);
  EXPECT_DOUBLE_EQ(r.json["workload"]["panama"]["cluster"]["mean_wait_s"].get<double>(), 0.0);
}

TEST_F(PanamaScenario, QuorumSumsWithoutTheLastWorkersAndChecksThePartialSums) {
  // PANAMA-<quorum> (§7): one worker's host link carries a line-rate flow, so
  // its packets come last; at 0.75 each leaf (4 workers) sums without it and
  // its late packets are dropped as stale. Every result is checked against
  // the adder order replayed over the workers it holds.
  json doc = TwoLeaves(6, 1 << 20);
  doc["workload"]["iterations"] = 2;
  doc["workload"]["compute_gap_us"] = 20;
  doc["background"] = json::parse(R"({"flows":{"list":[{"src":4,"dst":0,"bytes":20000000}]}})");
  const RunResult full = RunQuietly(doc);
  const RunResult partial = RunQuietly(doc, {"workload.panama.quorum=0.75"});
  ASSERT_TRUE(full.correct) << full.summary;
  ASSERT_TRUE(partial.correct) << partial.summary;
  const json& w = partial.json["workload"];
  EXPECT_EQ(full.json["workload"]["panama"]["accelerators"]["partial_aggregations"].get<uint64_t>(), 0u);
  EXPECT_GT(w["panama"]["accelerators"]["partial_aggregations"].get<uint64_t>(), 0u);
  EXPECT_GT(w["panama"]["accelerators"]["vid_mismatch_dropped"].get<uint64_t>(), 0u);  // the late packets
  EXPECT_EQ(w["mismatches"].get<uint64_t>(), 0u);
  EXPECT_EQ(w["elements_checked"].get<uint64_t>(), 2u * 8u * (1u << 18));  // every worker every result
  EXPECT_EQ(w["panama"]["workers"]["timeouts"].get<uint64_t>(), 0u);
  EXPECT_EQ(w["panama"]["workers"]["unexpected_results"].get<uint64_t>(), 0u);
  // Not waiting for the slow worker is faster.
  EXPECT_LT(w["mean_duration_s"].get<double>(), full.json["workload"]["mean_duration_s"].get<double>());
  // Uniform fp32 too: the partial sums bit for bit in the FPGA adder's order.
  doc["workload"]["data"] = "uniform";
  const RunResult uni = RunQuietly(doc, {"workload.panama.quorum=0.75"});
  ASSERT_TRUE(uni.correct) << uni.summary;
  EXPECT_GT(uni.json["workload"]["panama"]["accelerators"]["partial_aggregations"].get<uint64_t>(), 0u);
}

TEST_F(PanamaScenario, QuorumPartialSumsOfALargeJobAreCheckedThroughTheSwitchesRecord) {
  // 40 workers (20 per leaf), 8 of them slowed by line-rate flows into their
  // host links; at 0.8 a leaf sums without up to 4 of its 20 and the root
  // without up to 8 of 40. Searching the senders for the left-out set would
  // try C(40, k) sets (91,390 at k = 4, far past the search's 16,384); the
  // oracle checks the set the switches' partial sums name instead (the
  // quorum at every switch, the adder-order sum bit for bit), so every result
  // is resolved and exact.
  std::string workers, flows;
  for (uint32_t l = 0; l < 2; ++l)
    for (uint32_t h = 0; h < 20; ++h) workers += fmt::format("{}{}", workers.empty() ? "" : ",", l * 24 + h);
  for (uint32_t l = 0; l < 2; ++l)
    for (uint32_t i = 0; i < 4; ++i)
      flows += fmt::format(R"({}{{"src":{},"dst":{},"bytes":20000000}})", flows.empty() ? "" : ",", l * 24 + 20 + i,
                           l * 24 + i);
  const json doc = json::parse(fmt::format(R"({{"name":"q","topology":{{"type":"leaf_spine","leaves":2,"spines":2,
    "hosts_per_leaf":24}}, "links":{{"host_rate_gbps":10}},
    "switch":{{"ecn":{{"enabled":true,"threshold":20}},"pfc":{{"enabled":true}}}},
    "workload":{{"type":"allreduce","protocol":"panama","dtype":"float32","bytes":262144,"iterations":2,
                "compute_gap_us":20,"hosts":[{}],"panama":{{"trees":2,"quorum":0.8}}}},
    "background":{{"flows":{{"list":[{}]}}}}, "stop":{{"max_sim_time_ms":100}}}})",
                                            workers, flows));
  const RunResult r = RunQuietly(doc);
  ASSERT_TRUE(r.correct) << r.summary;
  const json& w = r.json["workload"];
  EXPECT_GT(w["panama"]["accelerators"]["partial_aggregations"].get<uint64_t>(), 0u);
  EXPECT_GT(w["panama"]["accelerators"]["vid_mismatch_dropped"].get<uint64_t>(), 0u);  // the late packets
  EXPECT_EQ(w["panama"]["accelerators"]["quorum_unresolved_results"].get<uint64_t>(), 0u);
  EXPECT_EQ(w["mismatches"].get<uint64_t>(), 0u);
  EXPECT_EQ(w["elements_checked"].get<uint64_t>(), 2u * 40u * (262144u / 4));
}

TEST_F(PanamaScenario, ClusterKeysBadInputNamesTheField) {
  const auto err = RunErrorOf;
  json doc = Cluster(3, 100);
  doc["workload"]["panama"]["cluster"]["load"] = 0.5;
  EXPECT_NE(err(doc).find("workload.panama.cluster.load: give either arrival_rate_per_s or load"), std::string::npos);
  doc = Cluster(3, 100);
  doc["workload"]["panama"]["cluster"]["allreduce"] = "tree";
  EXPECT_NE(err(doc).find("workload.panama.cluster.allreduce"), std::string::npos);
  doc = Cluster(3, 100);
  doc["workload"]["panama"]["quorum"] = 1.5;
  EXPECT_NE(err(doc).find("workload.panama.quorum"), std::string::npos);
  doc = Cluster(3, 100);
  doc["workload"]["panama"]["cluster"]["allreduce"] = "ring";
  doc["workload"]["data"] = "uniform";
  EXPECT_NE(err(doc).find("workload.data: \"uniform\""), std::string::npos);
}

}  // namespace

TEST_F(PanamaScenario, FourTreesThroughFourSpinesSumExactly) {
  const RunResult r = RunQuietly(TwoLeaves(4, 1 << 20));
  const json& w = r.json["workload"];
  ASSERT_TRUE(r.correct) << r.summary;
  EXPECT_EQ(w["elements_checked"].get<uint64_t>(), 8u * (1u << 18));
  EXPECT_EQ(w["mismatches"].get<uint64_t>(), 0u);
  const std::set<std::string> roots(w["panama"]["tree_roots"].begin(), w["panama"]["tree_roots"].end());
  EXPECT_EQ(roots, (std::set<std::string>{"spine0", "spine1", "spine2", "spine3"}));
  // Every packet index is aggregated at both leaves and at its tree's spine.
  const uint64_t packets = (1u << 18) / 256;
  EXPECT_EQ(w["panama"]["accelerators"]["aggregations"].get<uint64_t>(), 3 * packets);
  EXPECT_EQ(w["panama"]["workers"]["results"].get<uint64_t>(), 8 * packets);
  EXPECT_EQ(w["panama"]["workers"]["timeouts"].get<uint64_t>(), 0u);
  EXPECT_EQ(w["panama"]["accelerators"]["fin_resets"].get<uint64_t>(), 4u * 3);  // each tree's FIN at its 3 switches
  // Without congestion nothing is marked and the windows grow past slow start.
  EXPECT_EQ(w["panama"]["workers"]["results_ecn_marked"].get<uint64_t>(), 0u);
  EXPECT_GT(w["panama"]["workers"]["mean_cwnd"].get<double>(), 16.0);
}

TEST_F(PanamaScenario, UniformGradientsMatchTheAcceleratorsAdderOrderBitForBit) {
  for (const char* mode : {"fpga", "ieee"}) {
    const RunResult r = RunQuietly(TwoLeaves(4, 1 << 18), {"workload.data=uniform", std::string("workload.panama.float_mode=") + mode});
    EXPECT_TRUE(r.correct) << mode << ": " << r.summary;
    EXPECT_EQ(r.json["workload"]["check"].get<std::string>().rfind("values: against the accelerators' adder order", 0), 0u);
  }
  // The check can fail: for these gradients the adder order matters, i.e. a
  // sequential sum of the 8 workers' values differs from the tree's for some
  // elements (so a wrong order in the network would be caught).
  const TensorData d(DType::kFloat32, DataPattern::kUniform, 1, 8);
  int differ = 0;
  for (uint64_t e = 0; e < 256; ++e) {
    float seq = 0;
    for (uint32_t k = 0; k < 8; ++k) {
      float x;
      const uint32_t b = d.Value(k, e);
      std::memcpy(&x, &b, 4);
      seq += x;
    }
    // Tree: each leaf sums its 4 workers ((w0+w1)+(w2+w3)), the spine the two leaves.
    auto v = [&](uint32_t k) {
      float x;
      const uint32_t b = d.Value(k, e);
      std::memcpy(&x, &b, 4);
      return x;
    };
    const float tree = ((v(0) + v(1)) + (v(2) + v(3))) + ((v(4) + v(5)) + (v(6) + v(7)));
    differ += seq != tree;
  }
  EXPECT_GT(differ, 0);
}

TEST_F(PanamaScenario, OneRackTreesShareTheToRAndDifferByTreeId) {
  const RunResult r = RunQuietly(json::parse(R"({"name":"t","topology":{"type":"single_rack","hosts":6},
    "links":{"host_rate_gbps":10},
    "workload":{"type":"allreduce","protocol":"panama","dtype":"float32","bytes":262144,"panama":{"trees":4}}})"));
  const json& w = r.json["workload"];
  ASSERT_TRUE(r.correct) << r.summary;
  EXPECT_EQ(w["panama"]["tree_roots"], json::array({"tor", "tor", "tor", "tor"}));
  EXPECT_EQ(w["panama"]["accelerators"]["aggregations"].get<uint64_t>(), 65536u / 256);
}

TEST_F(PanamaScenario, WndCapBoundsTheWindowAtTheSmallestAccelerator) {
  // Leaves have 8 ports, spines 2: with 128,000 B of accelerator memory a
  // leaf offers 128000 / 8 / 1600 = 10 packets per port, a spine 40.
  const RunResult r = RunQuietly(TwoLeaves(4, 1 << 20), {"workload.panama.accelerator_buffer_bytes=128000"});
  const json& w = r.json["workload"];
  ASSERT_TRUE(r.correct) << r.summary;
  EXPECT_EQ(w["panama"]["workers"]["min_wnd_cap"].get<uint32_t>(), 10u);
  EXPECT_GT(w["panama"]["workers"]["wnd_cap_hits"].get<uint64_t>(), 0u);
  EXPECT_LE(w["panama"]["workers"]["mean_cwnd"].get<double>(), 10.0);
  EXPECT_EQ(w["panama"]["accelerators"]["buffer_overflow_dropped"].get<uint64_t>(), 0u);
}

TEST_F(PanamaScenario, CongestionMarksResultsAndTheWindowsBackOff) {
  // Two more hosts per leaf send line-rate messages to random peers.
  json doc = TwoLeaves(6, 1 << 20);
  doc["background"] = json::parse(R"({"congestion":{"hosts":"others","message_bytes":1048576}})");
  const RunResult cc = RunQuietly(doc);
  const RunResult fixed = RunQuietly(doc, {"workload.panama.congestion_control=false"});
  ASSERT_TRUE(cc.correct) << cc.summary;
  ASSERT_TRUE(fixed.correct) << fixed.summary;
  const json& w = cc.json["workload"];
  EXPECT_GT(w["panama"]["workers"]["results_ecn_marked"].get<uint64_t>(), 0u);
  EXPECT_GT(cc.json["network"]["ecn_marks"].get<uint64_t>(), 0u);
  // Marks cut the windows well below the uncongested run's.
  const RunResult quiet = RunQuietly(TwoLeaves(6, 1 << 20));
  EXPECT_LT(w["panama"]["workers"]["mean_cwnd"].get<double>(), 0.8 * quiet.json["workload"]["panama"]["workers"]["mean_cwnd"].get<double>());
}

/// From rank 0's panama_windows.csv: the largest lead, in packets sent, that
/// any tree had over another at a result. At each row, tree t has sent
/// vid + 1 + in_flight packets (its VIDs are consecutive); another tree u has
/// sent at least what its last row showed.
uint64_t LargestTreeLead(const RunResult& r, uint32_t trees) {
  const auto rows = inasim::testing::CsvRows(inasim::testing::Table(r, "panama_windows.csv"));
  std::vector<uint64_t> sent(trees, 0);
  uint64_t lead = 0;
  for (const auto& row : rows) {
    // Columns: time_s,jid,iteration,tree,vid,cwnd,ssthresh,alpha,ecn_marked,in_flight,rtt_us.
    const auto t = static_cast<uint32_t>(std::stoul(row.at(3)));
    sent[t] = std::stoull(row.at(4)) + 1 + std::stoull(row.at(9));
    for (uint32_t u = 0; u < trees; ++u) lead = std::max(lead, sent[u] > sent[t] ? sent[u] - sent[t] : 0);
  }
  return lead;
}

TEST_F(PanamaScenario, RoundRobinInOrderHoldsEveryTreeBehindAFullWindow) {
  // §4.1: "p5 is only sent after the preceding packets have been sent to other
  // trees". A line-rate flow between the spare hosts congests one spine; in
  // order, no tree can have sent more than one packet beyond any other (a
  // result row knows the others' counts only as of their last row, so the
  // lead seen can only be smaller than the true one). Per tree, the trees away
  // from the congested spine run ahead.
  json doc = TwoLeaves(6, 1 << 20);
  doc["workload"]["panama"]["window_trace"] = true;
  doc["background"] = json::parse(R"({"congestion":{"hosts":"others","message_bytes":1048576}})");
  const RunResult in_order = RunQuietly(doc);
  const RunResult per_tree = RunQuietly(doc, {"workload.panama.round_robin=\"per_tree\""});
  ASSERT_TRUE(in_order.correct) << in_order.summary;
  ASSERT_TRUE(per_tree.correct) << per_tree.summary;
  ASSERT_GT(in_order.json["workload"]["panama"]["workers"]["results_ecn_marked"].get<uint64_t>(), 0u);
  EXPECT_LE(LargestTreeLead(in_order, 4), 1u);
  EXPECT_GT(LargestTreeLead(per_tree, 4), 16u);
  // One row per result of rank 0: 1 MiB / 1 KiB packets.
  EXPECT_EQ(inasim::testing::CsvRows(inasim::testing::Table(in_order, "panama_windows.csv")).size(), 1024u);
}

TEST_F(PanamaScenario, FixedPoolSpreadsSwitchMLsSlotsOverTheTrees) {
  // SwitchML* (no congestion control): `fixed_pool` packets in flight per
  // worker over all its trees, the first fixed_pool mod trees one more: 10
  // over 4 trees is 3, 3, 2, 2. Per tree, so each tree fills its own share;
  // a result row shows the tree's packets in flight after that result, so
  // the fullest row is its share less one.
  json doc = TwoLeaves(4, 1 << 18);
  doc["workload"]["panama"]["window_trace"] = true;
  doc["workload"]["panama"]["congestion_control"] = false;
  doc["workload"]["panama"]["round_robin"] = "per_tree";
  doc["workload"]["panama"]["fixed_pool"] = 10;
  const RunResult r = RunQuietly(doc);
  ASSERT_TRUE(r.correct) << r.summary;
  std::vector<uint64_t> most(4, 0);
  for (const auto& row : inasim::testing::CsvRows(inasim::testing::Table(r, "panama_windows.csv")))
    most.at(std::stoul(row.at(3))) = std::max<uint64_t>(most.at(std::stoul(row.at(3))), std::stoull(row.at(9)) + 1);
  EXPECT_EQ(most, (std::vector<uint64_t>{3, 3, 2, 2}));
  EXPECT_NE(r.summary.find("fixed pool of 10 over the trees"), std::string::npos) << r.summary;
  // Fewer packets than trees would leave a tree with none: refused.
  doc["workload"]["panama"]["fixed_pool"] = 3;
  try {
    RunQuietly(doc);
    ADD_FAILURE() << "a pool of 3 over 4 trees accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("workload.panama.fixed_pool"), std::string::npos) << e.what();
  }
}

TEST_F(PanamaScenario, PfcKeepsAnOverloadedFabricLossless) {
  // Small switch buffers, line-rate congestion into the workers' racks, and
  // no congestion control (SwitchML*-like; 64 packets per tree, twice
  // SwitchML's 10 Gb/s pool, so that the workers overload their racks).
  json doc = TwoLeaves(6, 1 << 20);
  doc["background"] = json::parse(R"({"congestion":{"hosts":"others","message_bytes":1048576}})");
  doc["switch"]["buffer_bytes"] = 65536;
  doc["switch"]["pfc"] = json::parse(R"({"enabled":true,"xoff_bytes":16384,"xon_bytes":8192})");
  doc["workload"]["panama"]["congestion_control"] = false;
  doc["workload"]["panama"]["fixed_pool"] = 256;
  doc["workload"]["panama"]["timeout_us"] = 2000;
  doc["stop"]["max_sim_time_ms"] = 20;
  const RunResult pfc = RunQuietly(doc);
  ASSERT_TRUE(pfc.correct) << pfc.summary;
  EXPECT_EQ(pfc.json["network"]["drops_buffer"].get<uint64_t>(), 0u);
  EXPECT_GT(pfc.json["network"]["pfc_pause_frames"].get<uint64_t>(), 0u);
  EXPECT_EQ(pfc.json["workload"]["panama"]["accelerators"]["vid_mismatch_dropped"].get<uint64_t>(), 0u);
  // Without PFC the same overload drops aggregation packets: the accelerators
  // drop the rest of those vectors (VID check), the trees time out, and the
  // run ends unfinished with a clear report, never with a wrong sum.
  doc["switch"]["pfc"]["enabled"] = false;
  const RunResult lossy = RunQuietly(doc);
  EXPECT_FALSE(lossy.correct);
  EXPECT_GT(lossy.json["network"]["drops_buffer"].get<uint64_t>(), 0u);
  EXPECT_GT(lossy.json["workload"]["panama"]["accelerators"]["vid_mismatch_dropped"].get<uint64_t>(), 0u);
  EXPECT_GT(lossy.json["workload"]["panama"]["workers"]["timeouts"].get<uint64_t>(), 0u);
  EXPECT_EQ(lossy.json["workload"]["mismatches"].get<uint64_t>(), 0u);
  EXPECT_NE(lossy.summary.find("tree timeouts: packets were lost"), std::string::npos) << lossy.summary;
}

TEST_F(PanamaScenario, ConcurrentJobsShareTheAcceleratorsAndTheirBuffer) {
  // Two 4-worker jobs on the same leaves and spines. A leaf (8 ports) with
  // 256,000 B offers 256000 / 8 / 1600 = 20 packets per port, split over the
  // jobs active on it (§4.2.2): 10 each while both run.
  json doc = TwoLeaves(4, 1 << 20);
  doc["workload"]["panama"]["accelerator_buffer_bytes"] = 256000;
  doc["workload"]["panama"]["jobs"] = json::parse(R"([{"hosts":[0,1,4,5]},{"hosts":[2,3,6,7],"bytes":262144}])");
  const RunResult r = RunQuietly(doc);
  ASSERT_TRUE(r.correct) << r.summary;
  const json& jobs = r.json["workload"]["per_job"];
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0]["jid"], 1);
  EXPECT_EQ(jobs[1]["jid"], 2);
  EXPECT_EQ(jobs[0]["elements_checked"].get<uint64_t>(), 4u * (1u << 18));
  EXPECT_EQ(jobs[1]["elements_checked"].get<uint64_t>(), 4u * (1u << 16));
  for (const json& j : jobs) {
    EXPECT_TRUE(j["correct"].get<bool>());
    EXPECT_EQ(j["panama"]["workers"]["min_wnd_cap"].get<uint32_t>(), 10u);
  }
  // One collectives.csv: job 0's iteration, then job 1's.
  const auto rows = inasim::testing::CsvRows(inasim::testing::Table(r, "collectives.csv"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][0], "0");
  EXPECT_EQ(rows[1][0], "1");
  // Alone, the same job gets the whole share.
  json alone = TwoLeaves(4, 1 << 20);
  alone["workload"]["panama"]["accelerator_buffer_bytes"] = 256000;
  alone["workload"]["hosts"] = json::parse("[0,1,4,5]");
  EXPECT_EQ(RunQuietly(alone).json["workload"]["panama"]["workers"]["min_wnd_cap"].get<uint32_t>(), 20u);
  // Jobs need disjoint workers.
  doc["workload"]["panama"]["jobs"] = json::parse(R"([{"hosts":[0,1,4,5]},{"hosts":[5,6]}])");
  try {
    RunQuietly(doc);
    ADD_FAILURE() << "overlapping jobs accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("workload.panama.jobs[1].hosts: host 5"), std::string::npos) << e.what();
  }
}

TEST_F(PanamaScenario, SameSeedSameBytes) {
  json doc = TwoLeaves(6, 1 << 18);
  doc["background"] = json::parse(R"({"congestion":{"hosts":"others","message_bytes":262144}})");
  const RunResult a = RunQuietly(doc), b = RunQuietly(doc);
  EXPECT_EQ(a.json["workload"].dump(), b.json["workload"].dump());
  EXPECT_EQ(a.csv_texts, b.csv_texts);
}

TEST_F(PanamaScenario, BadInputNamesTheField) {
  auto error = [](json doc) {
    try {
      ParseScenario(doc);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  json d = TwoLeaves(4, 1 << 18);
  d["workload"]["dtype"] = "int32";
  EXPECT_NE(error(d).find("workload.dtype"), std::string::npos) << error(d);
  d = TwoLeaves(4, 1 << 18);
  d["workload"]["panama"]["elements_per_packet"] = 400;
  EXPECT_NE(error(d).find("workload.panama.elements_per_packet"), std::string::npos) << error(d);
  d = TwoLeaves(4, 1 << 18);
  d["workload"]["panama"]["float_mode"] = "fp16";
  EXPECT_NE(error(d).find("workload.panama.float_mode"), std::string::npos) << error(d);
  d = TwoLeaves(4, 1 << 18);
  d["workload"]["panama"]["windw"] = 3;
  EXPECT_NE(error(d).find("windw"), std::string::npos) << error(d);
  d = TwoLeaves(4, 1 << 18);
  d["workload"]["canary"] = json::object();
  EXPECT_NE(error(d).find("workload.canary"), std::string::npos) << error(d);
}

TEST_F(PanamaScenario, IdealSplitsTheSameFlowDrawsIntoShortAndLong) {
  // Fig. 8's Ideal puts short and long flows on networks of their own:
  // `background.flows.only` keeps one class of the very draws of "all", so the
  // two runs' flows are exactly the shared run's, split at 40 MB x size_scale.
  json doc = json::parse(R"({"name":"only","seed":3,"topology":{"type":"single_rack","hosts":8},
    "links":{"host_rate_gbps":10},
    "switch":{"ecn":{"enabled":true,"threshold":85}},
    "workload":{"type":"none"},
    "background":{"flows":{"size_distribution":"data_mining","size_scale":0.01,"load":0.3,
                           "stop_us":2000}},
    "stop":{"max_sim_time_ms":2000}})");
  auto flows = [](const RunResult& r) {
    std::multiset<std::string> rows;  // "src,dst,bytes,start_s" of every flow
    for (size_t i = 0; i < r.csv_names.size(); ++i) {
      if (r.csv_names[i] != "flows.csv") continue;
      std::string t = r.csv_texts[i];
      size_t p = t.find('\n') + 1;
      while (p < t.size()) {
        const size_t e = t.find('\n', p);
        std::string line = t.substr(p, e - p);
        line = line.substr(line.find(',') + 1);  // drop the index
        size_t c = 0;
        for (int k = 0; k < 4; ++k) c = line.find(',', c) + 1;
        rows.insert(line.substr(0, c - 1));
        p = e + 1;
      }
    }
    return rows;
  };
  const RunResult all = RunQuietly(doc);
  const RunResult short_only = RunQuietly(doc, {"background.flows.only=short"});
  const RunResult long_only = RunQuietly(doc, {"background.flows.only=long"});
  const auto a = flows(all), s = flows(short_only), l = flows(long_only);
  ASSERT_FALSE(s.empty());
  ASSERT_FALSE(l.empty());
  std::multiset<std::string> both = s;
  both.insert(l.begin(), l.end());
  EXPECT_EQ(both, a);
  EXPECT_EQ(long_only.json["background"]["flows"]["long_flow_bytes"], 400000u);
  EXPECT_EQ(long_only.json["background"]["flows"]["fct"]["short"]["count"], 0u);
  EXPECT_EQ(short_only.json["background"]["flows"]["fct"]["long"]["count"], 0u);
  EXPECT_EQ(short_only.json["background"]["flows"]["only"], "short");
  doc["background"]["flows"]["only"] = "medium";
  EXPECT_NE(RunErrorOf(doc).find("background.flows.only: must be one of"), std::string::npos)
      << RunErrorOf(doc);
}

TEST_F(PanamaScenario, Fig10PortTwoDctcpFlowsShareOnlyWithTcpSmallQueues) {
  // The finding behind Fig. 10's unfairness (scenarios/panama/README.md): on
  // the ToR's port to h0, a 40 MB DCTCP flow from h2 (t = 0) and another from
  // h1 (t = 5 ms). Without TCP Small Queues (`small_queue_bytes: 0`, ns-3's
  // own TCP) the first flow's window grows into its own 16 MiB NIC queue
  // (unmarked, a multi-ms RTT), so the ToR's marks barely slow it and it keeps
  // ~85 % of the port: it ends near 45 ms. With Linux's TSQ (the default,
  // 1 MiB) the backlog waits in the socket and DCTCP converges to fair
  // shares: the first flow ends near 59 ms (5 ms alone, then half of
  // 10 Gb/s), and no host NIC drops anything.
  json doc = json::parse(R"({"name":"f10","topology":{"type":"single_rack","hosts":3},
    "links":{"host_rate_gbps":10,"host_delay_ns":500},
    "switch":{"buffer_bytes":1048576,"ecn":{"enabled":true,"threshold":85},"pfc":{"enabled":true}},
    "workload":{"type":"none"},
    "background":{"flows":{"list":[{"src":2,"dst":0,"bytes":40000000},
                                   {"src":1,"dst":0,"bytes":40000000,"start_us":5000}]}},
    "stop":{"max_sim_time_ms":500}})");
  auto first_end = [](const RunResult& r) {
    for (size_t i = 0; i < r.csv_names.size(); ++i) {
      if (r.csv_names[i] != "flows.csv") continue;
      const std::string& t = r.csv_texts[i];
      const size_t row = t.find("\n0,") + 1;  // flow 0: flow,src,dst,bytes,start_s,end_s,...
      size_t p = row;
      for (int c = 0; c < 5; ++c) p = t.find(',', p) + 1;
      return std::stod(t.substr(p, t.find(',', p) - p));
    }
    return -1.0;
  };
  const RunResult deep = RunQuietly(doc, {"background.flows.tcp.small_queue_bytes=0"});
  const RunResult tsq = RunQuietly(doc);
  EXPECT_LT(first_end(deep), 0.050);
  EXPECT_GT(first_end(tsq), 0.055);
  EXPECT_LT(first_end(tsq), 0.063);
  const json& flows = tsq.json["background"]["flows"];
  EXPECT_EQ(flows["tcp_small_queue_bytes"], 1u << 20);
  EXPECT_GT(flows["tsq_throttles"].get<uint64_t>(), 0u);
  EXPECT_GT(flows["cwnd_growth_withheld"].get<uint64_t>(), 0u);
  EXPECT_EQ(deep.json["background"]["flows"]["tsq_throttles"], 0u);
  EXPECT_EQ(tsq.json["network"]["drops_buffer"], 0u) << tsq.json["network"].dump();
}

TEST_F(PanamaScenario, TcpSmallQueuesKeepALoneFlowAtLineRateWithAShortNicQueue) {
  // One 20 MB DCTCP flow h1 -> h0 alone: TSQ must not slow it (the NIC is
  // never left idle: the limit is far above a frame), and whatever the limit,
  // both runs move every byte at the 10 Gb/s line rate (slowdown under 1.05).
  // A limit of a single frame still runs (the frame crossing it is sent, as in
  // Linux) at line rate: the socket is woken as each frame leaves the queue.
  json doc = json::parse(R"({"name":"tsq","topology":{"type":"single_rack","hosts":2},
    "links":{"host_rate_gbps":10,"host_delay_ns":500},
    "switch":{"buffer_bytes":1048576,"ecn":{"enabled":true,"threshold":85}},
    "workload":{"type":"none"},
    "background":{"flows":{"list":[{"src":1,"dst":0,"bytes":20000000}]}},
    "stop":{"max_sim_time_ms":100}})");
  for (const char* limit : {"0", "1048576", "1500"}) {
    SCOPED_TRACE(limit);
    const RunResult r = RunQuietly(doc, {std::string("background.flows.tcp.small_queue_bytes=") + limit});
    const json& f = r.json["background"]["flows"];
    ASSERT_EQ(f["completed"], 1u) << r.summary;
    EXPECT_LT(f["fct"]["all"]["slowdown"]["max"].get<double>(), 1.05) << f.dump();
    if (std::string(limit) != "0") {
      EXPECT_GT(f["tsq_throttles"].get<uint64_t>(), 0u);
    }
  }
}
