// The exactness check cannot be fooled: for every protocol, a fault injected
// into the hosts' contributions (tensor-data.h testing_hooks, a test-only
// seam) must turn the verdict to WRONG (exit status 1), while the same run
// without it is CORRECT. The four faults are the ones linear test data let
// through: a rank's values replaced by another's with the sum of rank ids
// kept, a stale previous-iteration result, one element shifted by one, and a
// lost contribution.
#include "ina/runner.h"
#include "ina/scenario.h"
#include "ina/tensor-data.h"

#include <gtest/gtest.h>

#include <string>

using namespace inasim;
using nlohmann::json;
using testing_hooks::ContributionFault;

namespace {

struct Case {
  const char* protocol;
  const char* workload;  ///< merged into the base scenario's workload
  const char* topology;  ///< empty: the base leaf-spine
};

// Each protocol small (8 hosts, 64 KiB, 2 iterations so a stale result can
// exist), as in analysis/fault_matrix.py.
const Case kCases[] = {
    {"ring", R"({"protocol": "ring"})", ""},
    {"ring_float32", R"({"protocol": "ring", "dtype": "float32"})", ""},
    {"switchml", R"({"protocol": "switchml", "switchml": {"pool_size": 64}})", ""},
    {"switchml_float32", R"({"protocol": "switchml", "dtype": "float32", "switchml": {"pool_size": 64}})", ""},
    {"canary", R"({"protocol": "canary"})", ""},
    {"static_tree", R"({"protocol": "static_tree", "static_tree": {"trees": 2}})", ""},
    {"panama", R"({"protocol": "panama", "dtype": "float32", "panama": {"trees": 2}})", ""},
    {"p4sgd", R"({"protocol": "p4sgd", "p4sgd": {"task": "allreduce", "operations": 64}})",
     R"({"type": "single_rack", "hosts": 8})"},
    {"p4sgd_train_hashed",
     R"({"protocol": "p4sgd", "p4sgd": {"arithmetic": "hashed", "samples": 256, "features": 512, "minibatch": 64,
         "epochs": 1}})",
     R"({"type": "single_rack", "hosts": 8})"},
};

json Scenario(const Case& c) {
  json doc = json::parse(R"({
    "name": "exactness",
    "seed": 3,
    "topology": {"type": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 4},
    "links": {"host_rate_gbps": 100},
    "workload": {"type": "allreduce", "bytes": 65536, "iterations": 2},
    "stop": {"max_sim_time_ms": 20}
  })");
  doc["workload"].update(json::parse(c.workload));
  if (*c.topology) doc["topology"] = json::parse(c.topology);
  if (std::string(c.protocol).rfind("p4sgd", 0) == 0) doc["workload"].erase("iterations");
  return doc;
}

RunResult RunWithFault(const json& doc, ContributionFault fault) {
  struct Restore {  // the hook is process-wide: never leak it into another test
    ~Restore() { testing_hooks::InjectedFault() = ContributionFault::kNone; }
  } restore;
  testing_hooks::InjectedFault() = fault;
  RunOptions o;
  o.progress = ProgressMode::kOff;
  return RunScenario(ParseScenario(doc), o);
}

class Exactness : public ::testing::TestWithParam<Case> {};

TEST_P(Exactness, FaultFreeRunIsCorrect) {
  const RunResult r = RunWithFault(Scenario(GetParam()), ContributionFault::kNone);
  EXPECT_TRUE(r.correct) << r.summary;
  EXPECT_NE(r.summary.find("result: CORRECT"), std::string::npos) << r.summary;
  EXPECT_EQ(r.json["sim"]["stopped_by"], "workload_done") << r.summary;
  ASSERT_TRUE(r.json.contains("check"));
  EXPECT_EQ(r.json["check"].get<std::string>().rfind("values:", 0), 0u) << r.json["check"];
}

void ExpectWrong(const Case& c, ContributionFault fault) {
  const RunResult r = RunWithFault(Scenario(c), fault);
  EXPECT_FALSE(r.correct) << r.summary;  // inasim run exits 1
  EXPECT_NE(r.summary.find("result: WRONG"), std::string::npos) << r.summary;
  EXPECT_FALSE(r.json["correct"].get<bool>());
}

TEST_P(Exactness, AnotherRanksValuesWithTheRankSumKeptAreWrong) {
  ExpectWrong(GetParam(), ContributionFault::kOtherRank);
}
TEST_P(Exactness, AStalePreviousIterationResultIsWrong) {
  ExpectWrong(GetParam(), ContributionFault::kStaleIteration);
}
TEST_P(Exactness, OneElementShiftedByOneIsWrong) {
  ExpectWrong(GetParam(), ContributionFault::kShiftedElement);
}
TEST_P(Exactness, ALostContributionIsWrong) {
  ExpectWrong(GetParam(), ContributionFault::kLostContribution);
}

INSTANTIATE_TEST_SUITE_P(AllProtocols, Exactness, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.protocol); });

// P4SGD real training: the ledger holds what the workers computed, so a
// fault at the source shows in the trained model, compared bit for bit with
// the networkless run (another rank's values exist only as hashed values).
json RealTraining() {
  return json::parse(R"({
    "name": "exactness-train", "seed": 3,
    "topology": {"type": "single_rack", "hosts": 8},
    "links": {"host_rate_gbps": 100},
    "workload": {"type": "allreduce", "protocol": "p4sgd",
                 "p4sgd": {"samples": 512, "features": 512, "minibatch": 64, "epochs": 1}},
    "stop": {"max_sim_time_ms": 20}
  })");
}

TEST(ExactnessP4sgdRealTraining, FaultsAtTheSourceChangeTheModelAndAreWrong) {
  EXPECT_TRUE(RunWithFault(RealTraining(), ContributionFault::kNone).correct);
  for (ContributionFault f : {ContributionFault::kStaleIteration, ContributionFault::kShiftedElement,
                              ContributionFault::kLostContribution}) {
    const RunResult r = RunWithFault(RealTraining(), f);
    EXPECT_FALSE(r.correct) << static_cast<int>(f) << "\n" << r.summary;
    EXPECT_FALSE(r.json["workload"]["p4sgd"]["networkless_match"].get<bool>()) << static_cast<int>(f);
  }
}

// "ones" data checks counts only: it says so, and a substitution passes it
// (which is why it cannot say CORRECT).
TEST(ExactnessOnesData, SaysCountOnlyAndCannotSeeASubstitution) {
  json doc = Scenario(kCases[0]);
  doc["workload"]["data"] = "ones";
  const RunResult clean = RunWithFault(doc, ContributionFault::kNone);
  EXPECT_TRUE(clean.correct);
  EXPECT_EQ(clean.json["check"].get<std::string>().rfind("count only", 0), 0u) << clean.json["check"];
  EXPECT_EQ(clean.summary.find("result: CORRECT"), std::string::npos) << clean.summary;
  EXPECT_NE(clean.summary.find("result: COUNTS CORRECT (ones data: values not checked)"), std::string::npos);
  EXPECT_TRUE(RunWithFault(doc, ContributionFault::kOtherRank).correct);      // invisible to ones data
  EXPECT_FALSE(RunWithFault(doc, ContributionFault::kLostContribution).correct);  // a count it sees
}

}  // namespace

namespace {

// PANAMA-<quorum> (§7): worker 0's host link carries a line-rate flow, so at
// quorum 0.75 the leaves sum without it. The oracle finds each partial sum's
// contributors from the hosts' sends, not from the switches' record.
json PanamaQuorum() {
  return json::parse(R"({
    "name": "exactness-quorum", "seed": 3,
    "topology": {"type": "leaf_spine", "leaves": 2, "spines": 4, "hosts_per_leaf": 6},
    "links": {"host_rate_gbps": 10},
    "switch": {"ecn": {"enabled": true, "threshold": 20}, "pfc": {"enabled": true}},
    "workload": {"type": "allreduce", "protocol": "panama", "dtype": "float32", "bytes": 262144,
                 "hosts": [0, 1, 2, 3, 6, 7, 8, 9], "iterations": 2, "compute_gap_us": 20,
                 "panama": {"trees": 4, "quorum": 0.75}},
    "background": {"flows": {"list": [{"src": 4, "dst": 0, "bytes": 20000000}]}},
    "stop": {"max_sim_time_ms": 100}
  })");
}

TEST(ExactnessPanamaQuorum, PartialSumsAreCheckedFromTheHostsSends) {
  for (const char* data : {"hashed", "uniform"}) {
    json doc = PanamaQuorum();
    doc["workload"]["data"] = data;
    const RunResult r = RunWithFault(doc, ContributionFault::kNone);
    const json& w = r.json["workload"];
    EXPECT_TRUE(r.correct) << data << "\n" << r.summary;
    EXPECT_GT(w["panama"]["accelerators"]["partial_aggregations"].get<uint64_t>(), 0u) << data;
    EXPECT_EQ(w["panama"]["accelerators"]["quorum_unresolved_results"].get<uint64_t>(), 0u) << data;
    EXPECT_EQ(w["check"].get<std::string>().rfind("values: each partial sum", 0), 0u);
    // A lost contribution looks like a worker the quorum left out; here it is
    // still caught, in the results where leaf 0's accelerator also left out
    // another worker: explaining them takes two of its four workers out,
    // below its quorum of three. Where the quorum could have left worker 0
    // out, no host-side oracle can tell the two apart.
    for (ContributionFault f : {ContributionFault::kOtherRank, ContributionFault::kStaleIteration,
                                ContributionFault::kShiftedElement, ContributionFault::kLostContribution}) {
      const RunResult bad = RunWithFault(doc, f);
      EXPECT_FALSE(bad.correct) << data << " fault " << static_cast<int>(f) << "\n" << bad.summary;
    }
  }
}

}  // namespace
