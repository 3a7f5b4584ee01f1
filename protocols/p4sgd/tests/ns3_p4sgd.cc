// P4SGD end to end: FPGA workers (Algorithm 3, the Fig. 2c pipeline) on real
// UDP sockets around the P4SGD switch model (paper mode, UDP carriage). Every
// result is checked against the exact sum; trained models against the
// networkless run, bit for bit.
#include "protocols/p4sgd/glm/p4sgd-glm.h"
#include "protocols/p4sgd/host/p4sgd-job.h"
#include "ina/runner.h"
#include "ina/scenario.h"
#include "tests/common/run_scenario.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

using namespace inasim;
using nlohmann::json;
using inasim::testing::RunErrorOf;
using inasim::testing::RunQuietly;

namespace {

json Rack(uint32_t hosts, const std::string& p4sgd) {
  return json::parse(fmt::format(R"({{"name":"t","seed":3,"topology":{{"type":"single_rack","hosts":{}}},
    "links":{{"host_rate_gbps":100,"host_delay_ns":100}},
    "workload":{{"type":"allreduce","protocol":"p4sgd","p4sgd":{}}}}})",
                                 hosts, p4sgd));
}

class P4SGDScenario : public ::testing::Test {
 protected:
  void SetUp() override { EnsurePicosecondTime(); }
};

TEST_F(P4SGDScenario, AllreduceLatencyIsTheSumOfItsParts) {
  // 8 workers x 8 int32 (p4sgd Fig. 8). One operation's path: FPGA send path,
  // serialization of the 106-byte frame (64 B header + UDP/IPv4/Ethernet) +
  // 24 B preamble/FCS/gap at 100 Gb/s, 100 ns of wire, one switch pass,
  // the same back, FPGA receive path.
  const RunResult r = RunQuietly(Rack(8, R"({"task":"allreduce","operations":50})"));
  ASSERT_TRUE(r.correct);
  const json& w = r.json["workload"];
  const double ser_ns = (106 + 24) * 8 / 100.0;
  // FPGA paths: 310 ns out, 189 ns in (the RTL's stages and the MAC, spec.cc).
  const double base_us = (310 + ser_ns + 100 + 520 + ser_ns + 100 + 189) / 1e3;
  EXPECT_NEAR(w["p4sgd"]["allreduce_latency"]["min_us"].get<double>(), base_us, 1e-6);
  // Every later operation leaves behind the previous one's ack on the same link.
  EXPECT_NEAR(w["p4sgd"]["allreduce_latency"]["max_us"].get<double>(), base_us + ser_ns / 1e3, 1e-6);
  EXPECT_EQ(w["p4sgd"]["allreduce_latency"]["samples"].get<uint64_t>(), 8u * 50);
  EXPECT_EQ(w["p4sgd"]["ops_checked"].get<uint64_t>(), 8u * 50);
  EXPECT_EQ(w["p4sgd"]["switch"]["completed"].get<uint64_t>(), 50u);
  EXPECT_EQ(w["p4sgd"]["switch"]["released"].get<uint64_t>(), 50u);  // every slot freed after all acks
  EXPECT_EQ(w["p4sgd"]["packets_sent"].get<uint64_t>(), 8u * 50 * 2);
}

TEST_F(P4SGDScenario, ModelParallelTrainingEqualsTheNetworklessRunAndConverges) {
  const RunResult r = RunQuietly(Rack(4, R"({"samples":512,"features":256,"minibatch":32,"epochs":3})"));
  const json& w = r.json["workload"];
  ASSERT_TRUE(r.correct) << w.dump();
  EXPECT_TRUE(w["p4sgd"]["networkless_match"].get<bool>());
  ASSERT_EQ(w["p4sgd"]["epochs"].size(), 3u);
  EXPECT_LT(w["p4sgd"]["epochs"][2]["loss"].get<double>(), w["p4sgd"]["epochs"][0]["loss"].get<double>());
  EXPECT_LT(w["p4sgd"]["epochs"][0]["loss"].get<double>(), 0.6931);  // below the untrained model's ln 2
  // 512 / 32 = 16 mini-batches of 4 micro-batches per epoch: one op each.
  EXPECT_EQ(w["p4sgd"]["ops_checked"].get<uint64_t>(), 4u * 16 * 4 * 3);
}

TEST_F(P4SGDScenario, DataParallelTrainingEqualsTheNetworklessRun) {
  const RunResult r =
      RunQuietly(Rack(4, R"({"parallelism":"data","samples":256,"features":100,"minibatch":32,"epochs":2,"loss":"hinge"})"));
  const json& w = r.json["workload"];
  ASSERT_TRUE(r.correct) << w.dump();
  EXPECT_TRUE(w["p4sgd"]["networkless_match"].get<bool>());
  // 100 gradient words = 13 packets per mini-batch, 8 mini-batches, 2 epochs.
  EXPECT_EQ(w["p4sgd"]["switch"]["completed"].get<uint64_t>(), 13u * 8 * 2);
}

TEST_F(P4SGDScenario, TrainsFromALibsvmFile) {
  // 64 samples x 20 features written as LIBSVM text (values on a 1/15 grid,
  // so min-max scaling reproduces them), labels +-1.
  const std::string path = ::testing::TempDir() + "p4sgd-train.svm";
  {
    std::ofstream f(path);
    for (int i = 0; i < 64; ++i) {
      f << ((i * 7) % 3 ? "+1" : "-1");
      for (int j = 0; j < 20; ++j) {
        const int q = (i * 31 + j * 17) % 16;
        if (q) f << " " << j + 1 << ":" << q / 15.0;
      }
      f << "\n";
    }
  }
  const RunResult r = RunQuietly(Rack(2, fmt::format(R"({{"dataset":"{}","minibatch":16,"epochs":3,"loss":"hinge"}})",
                                                   path)));
  const json& w = r.json["workload"];
  ASSERT_TRUE(r.correct) << w.dump();
  EXPECT_TRUE(w["p4sgd"]["networkless_match"].get<bool>());
  EXPECT_EQ(w["p4sgd"]["dataset"]["samples"].get<uint32_t>(), 64u);
  EXPECT_EQ(w["p4sgd"]["dataset"]["features"].get<uint32_t>(), 20u);
  EXPECT_EQ(w["p4sgd"]["dataset"]["source"].get<std::string>(), path);
  EXPECT_EQ(w["p4sgd"]["ops_checked"].get<uint64_t>(), 2u * 8 * 3);  // 2 workers x 8 micro-batches x 3 epochs
}

TEST_F(P4SGDScenario, LossOnEveryLinkIsRecoveredByBothRetransmissionRounds) {
  const RunResult r = RunQuietly(Rack(4, R"({"samples":512,"features":128,"minibatch":64,"epochs":2,"timeout_us":5})"),
                          {"faults.loss_rate=0.05"});
  const json& w = r.json["workload"];
  ASSERT_TRUE(r.correct) << w.dump();
  EXPECT_TRUE(w["p4sgd"]["networkless_match"].get<bool>());
  EXPECT_GT(r.json["network"]["drops_loss"].get<uint64_t>(), 0u);
  EXPECT_GT(w["p4sgd"]["agg_retransmissions"].get<uint64_t>(), 0u);
  EXPECT_GT(w["p4sgd"]["ack_retransmissions"].get<uint64_t>(), 0u);
  // The switch answered lost results from its one copy, and lost confirmations after release.
  EXPECT_GT(w["p4sgd"]["switch"]["agg_resent"].get<uint64_t>(), 0u);
  EXPECT_GT(w["p4sgd"]["switch"]["ack_resent"].get<uint64_t>(), 0u);
}

TEST_F(P4SGDScenario, SlotsAreReusedOnlyAfterTheAckRound) {
  // Two register cells for 13 packets in flight: ops wait for ack-complete.
  const RunResult r = RunQuietly(Rack(3, R"({"parallelism":"data","samples":96,"features":100,"minibatch":48,
                                      "epochs":1,"slots":2,"window":13,"arithmetic":"hashed"})"));
  const json& w = r.json["workload"];
  ASSERT_TRUE(r.correct) << w.dump();
  EXPECT_GT(w["p4sgd"]["slot_stalls"].get<uint64_t>(), 0u);
  EXPECT_EQ(w["p4sgd"]["switch"]["released"].get<uint64_t>(), 13u * 2);
}

TEST_F(P4SGDScenario, SameSeedSameResults) {
  const std::vector<std::string> sets = {"faults.loss_rate=0.02"};
  const json doc = Rack(4, R"({"samples":256,"features":64,"minibatch":32,"epochs":1,"timeout_us":5})");
  const RunResult a = RunQuietly(doc, sets), b = RunQuietly(doc, sets);
  EXPECT_EQ(a.json["workload"].dump(), b.json["workload"].dump());
}

TEST_F(P4SGDScenario, BadInputIsRejectedWithTheFieldNamed) {
  const auto err = RunErrorOf;
  EXPECT_NE(err(Rack(4, R"({"minibatch":12})")).find("workload.p4sgd.minibatch: must be a multiple of 8"),
            std::string::npos);
  EXPECT_NE(err(Rack(4, R"({"slots":3})")).find("workload.p4sgd.slots: must be a power of two"), std::string::npos);
  EXPECT_NE(err(Rack(4, R"({"dataset":"/nonexistent.svm"})")).find("/nonexistent.svm: cannot open"),
            std::string::npos);
  // Memory is checked before anything is allocated (10^6 x 10^4 bytes of features).
  EXPECT_NE(err(Rack(4, R"({"samples":1000000,"features":10000})")).find("use arithmetic \"hashed\""),
            std::string::npos);
  json two_racks = Rack(4, "{}");
  two_racks["topology"] = {{"type", "leaf_spine"}, {"leaves", 2}, {"spines", 1}, {"hosts_per_leaf", 2}};
  EXPECT_NE(err(two_racks).find("p4sgd runs on one switch"), std::string::npos);
}

// A setup error found after the fabric exists (a LIBSVM file's contents, read
// only by the run) leaves ns-3 clean: the next run in the same process gives
// the same events and results as in a fresh one. Before, the failed run's
// nodes and events stayed (1,867 events instead of 1,850 in a sweep worker).
TEST_F(P4SGDScenario, ASetupErrorLeavesTheSimulatorCleanForTheNextRun) {
  const json good = Rack(4, R"({"samples":256,"features":64,"minibatch":32,"epochs":1})");
  const RunResult first = RunQuietly(good);
  const std::string path = ::testing::TempDir() + "p4sgd-garbage.svm";
  std::ofstream(path) << "not-a-label 1:1\n";
  EXPECT_THROW(RunQuietly(Rack(4, fmt::format(R"({{"dataset":"{}"}})", path))), ScenarioError);
  const RunResult again = RunQuietly(good);
  EXPECT_EQ(again.json["sim"].dump(), first.json["sim"].dump());
  EXPECT_EQ(again.json["workload"].dump(), first.json["workload"].dump());
}

}  // namespace
