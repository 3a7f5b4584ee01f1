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

#include <cstdlib>
#include <iostream>
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
  if (std::getenv("SHOW")) std::cout << r.summary;
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
    EXPECT_FALSE(r.json["workload"]["networkless_match"].get<bool>()) << static_cast<int>(f);
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
