// SwitchML's RDMA backend end to end (protocols/switchml/host/rdma-worker.h,
// docs/research/switchml-rdma.md): RDMA UC writes through the switch
// program's RoCE path, exact sums, whole-message recovery, refusals.
#include "net_harness.h"
#include "tests/common/run_scenario.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

using namespace inasim;
using namespace inasim::testing;
using nlohmann::json;

namespace {

json RdmaRack(uint32_t hosts, uint64_t bytes) {
  return json::parse(fmt::format(R"({{"name":"t","topology":{{"type":"single_rack","hosts":{}}},
    "links":{{"host_rate_gbps":100}},
    "workload":{{"type":"allreduce","protocol":"switchml","bytes":{},"dtype":"int32","data":"hashed",
                 "switchml":{{"backend":"rdma","pool_size":32,"rdma_message_packets":4}}}}}})",
                                 hosts, bytes));
}

class SwitchMLRdmaScenario : public ::testing::Test {
 protected:
  void SetUp() override { EnsurePicosecondTime(); }
};

::testing::AssertionResult Mentions(const std::string& error, const std::string& what) {
  return error.find(what) != std::string::npos ? ::testing::AssertionSuccess()
                                               : ::testing::AssertionFailure() << "no \"" << what << "\" in: " << error;
}

}  // namespace

// 75,001 elements in messages of 4 x 256: 74 messages per worker, the last
// one partial but sent whole; 8 queue pairs (pool 32 / 4). Every element of
// every worker's result matches the exact sum; each packet's slot completes
// once, so the switch broadcasts 74 x 4 times, and each message is one
// completion at each worker.
TEST_F(SwitchMLRdmaScenario, MessagesOfFourPacketsGiveExactSumsAndOneCompletionPerMessage) {
  const RunResult r = RunQuietly(RdmaRack(5, 300'004), {});
  const json& w = r.json["workload"];
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(w["elements_checked"].get<uint64_t>(), 5u * 75'001);
  EXPECT_EQ(w["mismatches"].get<uint64_t>(), 0u);
  const json& host = w["switchml"]["host"];
  EXPECT_EQ(host["backend"], "rdma");
  EXPECT_EQ(host["worker_threads"].get<uint32_t>(), 1u);  // "a single CPU core" (:432)
  EXPECT_EQ(host["queue_pairs_per_host"].get<uint32_t>(), 8u);
  EXPECT_EQ(host["messages_posted"].get<uint64_t>(), 5u * 74);
  EXPECT_EQ(host["completions"].get<uint64_t>(), 5u * 74);
  EXPECT_EQ(host["retransmissions"].get<uint64_t>(), 0u);
  EXPECT_EQ(host["packets_sent"].get<uint64_t>(), 5u * 74 * 4);
  EXPECT_EQ(host["packets_placed"].get<uint64_t>(), 5u * 74 * 4);
  EXPECT_EQ(w["switchml"]["programs"][0]["broadcasts"].get<uint64_t>(), 74u * 4);
  EXPECT_EQ(w["collectives"][0]["packets_sent"].get<uint64_t>(), 5u * 74 * 4);
  // The mean frame on the wire: 4 x (1024 + 12 + 4 + 8 + 20 + 14 + 24) + 16 + 4 over 4.
  EXPECT_DOUBLE_EQ(w["switchml"]["packet_wire_bytes"].get<double>(), (4.0 * 1106 + 20) / 4);
}

// 1 % loss on every link: a lost packet in either direction costs the whole
// message (the switch drops the rest of a message after a PSN gap, the
// worker NIC the rest of a result), recovered by the message's timeout,
// which runs in whole milliseconds (50 us -> 0 ms -> fires after 1 ms).
// When several workers resend one message, the switch answers each resent
// packet of a completed slot by unicast besides the broadcast that completes
// it, so a worker's result stream holds the same slot twice in PSN order:
// its NIC, placing by sequence, drops such a message on the write's length
// (C9-92) or, where a loss leaves the count right, places it shifted.
// Every element is still checked, and the verdict counts what was wrong.
TEST_F(SwitchMLRdmaScenario, OnePercentLossResendsWholeMessagesAndDuplicateSlotsBreakTheWritesLength) {
  const RunResult r = RunQuietly(RdmaRack(4, 1 << 20), {"faults.loss_rate=0.01", "workload.switchml.timeout_us=50"});
  const json& w = r.json["workload"];
  EXPECT_EQ(w["elements_checked"].get<uint64_t>(), 4u << 18);  // every tensor finished
  EXPECT_EQ(r.correct, w["mismatches"].get<uint64_t>() == 0);
  const json& host = w["switchml"]["host"];
  EXPECT_GT(host["retransmissions"].get<uint64_t>(), 0u);
  EXPECT_GT(w["switchml"]["programs"][0]["rdma_sequence_drops"].get<uint64_t>(), 0u);
  EXPECT_GT(host["packets_dropped_psn_gap"].get<uint64_t>(), 0u);
  EXPECT_GT(host["packets_dropped_length"].get<uint64_t>(), 0u);
  EXPECT_GT(w["switchml"]["programs"][0]["retransmits"].get<uint64_t>(), 0u);
  EXPECT_GT(r.json["network"]["drops_loss"].get<uint64_t>(), 0u);
  EXPECT_GE(w["switchml"]["tat_mean_s"].get<double>(), 1e-3);  // no timeout before 1 ms
}

// What the backend does not model, or the switch cannot hold, is refused
// naming the key, at validation.
TEST_F(SwitchMLRdmaScenario, FloatTensorsOddMessagesAndTooManyQueuePairsAreRefused) {
  // Refused by validation (ParseScenario: `inasim validate`), before a run.
  auto parse_error = [](const json& doc) {
    try {
      (void)ParseScenario(doc);
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  json bad = RdmaRack(4, 1 << 16);
  bad["workload"]["dtype"] = "float32";
  EXPECT_TRUE(Mentions(parse_error(bad), "workload.switchml.backend: \"rdma\" models int32 tensors only"));
  bad = RdmaRack(4, 1 << 16);
  bad["topology"] = {{"type", "leaf_spine"}, {"leaves", 2}, {"spines", 1}, {"hosts_per_leaf", 2}};
  EXPECT_TRUE(Mentions(parse_error(bad), "\"rdma\" needs the workers under one switch"));
  bad = RdmaRack(4, 1 << 16);
  bad["topology"]["hosts"] = 8;
  bad["workload"]["hosts"] = {{"count", 4}, {"placement", "first"}};
  bad["workload"]["switchml"]["ps"] = "dedicated";
  EXPECT_TRUE(Mentions(parse_error(bad), "\"rdma\" has no parameter-server variant"));
  bad = RdmaRack(4, 1 << 16);
  bad["workload"]["switchml"]["rdma_message_packets"] = 3;
  EXPECT_TRUE(Mentions(RunErrorOf(bad), "workload.switchml.rdma_message_packets: 3 is not a power of two"));
  bad = RdmaRack(4, 1 << 16);
  bad["workload"]["switchml"]["pool_size"] = 34;
  EXPECT_TRUE(Mentions(RunErrorOf(bad), "workload.switchml.pool_size: 34 is not a multiple of"));
  bad = RdmaRack(4, 1 << 16);
  bad["workload"]["switchml"]["pool_size"] = 4096;
  bad["workload"]["switchml"]["rdma_message_packets"] = 1;
  EXPECT_TRUE(Mentions(RunErrorOf(bad), "more than the switch's 512 per worker"));
}

// Tensors back to back: a 3-message tensor uses queue pairs 0..2 only
// (B = min(Q, messages)), the next one all 8, and each queue pair's set bit
// keeps alternating across tensors (never reset, rdma_worker_thread.cc:118).
// Reusing a set before its previous round completed would add into a slot
// another message still needs: every element of both tensors stays exact.
TEST_F(SwitchMLRdmaScenario, TensorsBackToBackKeepEachQueuePairsSetAlternating) {
  json s = RdmaRack(3, 10'000);
  s["workload"]["switchml"]["tensors"] = json::array({10'000, 300'000, 40'000});
  s["workload"]["iterations"] = 2;
  const RunResult r = RunQuietly(s, {}), again = RunQuietly(s, {});
  const json& w = r.json["workload"];
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(w["elements_checked"].get<uint64_t>(), 2u * 3 * (2'500 + 75'000 + 10'000));
  ASSERT_EQ(w["collectives"].size(), 6u);
  // Messages of 1,024 elements: 3 + 74 + 10 per iteration and worker.
  EXPECT_EQ(w["switchml"]["host"]["messages_posted"].get<uint64_t>(), 2u * 3 * (3 + 74 + 10));
  EXPECT_EQ(w["switchml"]["host"]["retransmissions"].get<uint64_t>(), 0u);
  // Same scenario, same seed: the same results, byte for byte.
  json a = r.json, b = again.json;
  a.erase("perf");
  b.erase("perf");
  EXPECT_EQ(a.dump(), b.dump());
  EXPECT_EQ(r.csv_texts, again.csv_texts);
}
