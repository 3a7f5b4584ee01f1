// Tests for src/ina/scenario: ParseScenario (types, ranges, enums, required and
// unknown keys, topology-dependent checks, defaults in `resolved`, time units),
// ApplyOverride (--set) and LoadScenarioJson. Every bad input is checked for the
// exact JSON path at the start of the message and for the problem words.
#include "ina/scenario.h"
#include "ina/scenario-checks.h"
#include "protocols/canary/host/spec.h"
#include "protocols/p4sgd/host/spec.h"
#include "protocols/panama/host/spec.h"
#include "protocols/ring/host/spec.h"
#include "protocols/static_tree/host/spec.h"
#include "protocols/switchml/host/spec.h"

#include "topology/topology.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <typeinfo>
#include <vector>

namespace inasim {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

namespace fs = std::filesystem;

// The repository root, from this file's own path (tests/unit/test_scenario.cc).
fs::path RepoRoot() { return fs::path(__FILE__).parent_path().parent_path().parent_path(); }

/// The smallest valid scenario: eight hosts on one rack, defaults elsewhere.
json Base() { return json::parse(R"({"topology": {"type": "single_rack", "hosts": 8}})"); }

/// Base() with `--set` style overrides applied in order.
json With(std::initializer_list<const char*> sets) {
  json doc = Base();
  for (const char* s : sets) ApplyOverride(doc, s);
  return doc;
}

/// The message ParseScenario fails with, or a marker that makes every
/// expectation below fail with a readable reason.
std::string ErrorOf(const json& doc) {
  try {
    ParseScenario(doc);
  } catch (const ScenarioError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not a ScenarioError: ") + typeid(e).name() + ": " + e.what() + ">";
  }
  return "<no error>";
}
std::string ErrorOf(std::initializer_list<const char*> sets) { return ErrorOf(With(sets)); }

std::string OverrideErrorOf(json doc, const std::string& assignment) {
  try {
    ApplyOverride(doc, assignment);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "<no error>";
}

std::string LoadErrorOf(const std::string& file) {
  try {
    LoadScenarioJson(file);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "<no error>";
}

/// "path: " at the very start: the error names exactly this JSON path.
auto AtPath(const std::string& path) { return StartsWith(path + ": "); }

// ------------------------------------------------------------------ positive

TEST(Scenario, DefaultScenarioFileParses) {
  const fs::path file = RepoRoot() / "scenarios" / "default.json";
  ASSERT_TRUE(fs::exists(file)) << file;
  const Scenario s = ParseScenario(LoadScenarioJson(file.string()));
  EXPECT_EQ(s.name, "default");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.topology.type, TopologyType::kSingleRack);
  EXPECT_EQ(s.topology.hosts, 8u);
  EXPECT_EQ(s.links.host_rate_gbps, 100.0);
  EXPECT_EQ(s.links.host_delay_ps, 500'000u);
  EXPECT_EQ(s.workload.type, WorkloadType::kAllreduce);
  EXPECT_EQ(s.workload.protocol, "ring");
  EXPECT_EQ(s.workload.bytes, 4194304u);
  EXPECT_EQ(s.workload.dtype, DType::kInt32);
  EXPECT_EQ(s.workload.data, DataPattern::kHashed);
  EXPECT_TRUE(s.workload.hosts.list.empty());
  EXPECT_EQ(s.workload.hosts.count, 0u);  // every host
  EXPECT_EQ(s.resolved["name"], "default");
  EXPECT_EQ(s.resolved["topology"], json::parse(R"({"type": "single_rack", "hosts": 8})"));
}

// Each protocol's spec is held by type (ProtocolSpecs): a copied Scenario is a
// deep copy (sweeps and tests change one without touching the other), and a
// protocol whose section was not parsed reads its defaults.
TEST(Scenario, ProtocolSpecsAreDeepCopiesAndDefaultWhenAbsent) {
  Scenario a = ParseScenario(With({"workload.protocol=switchml", "workload.switchml.pool_size=64"}));
  EXPECT_EQ(a.workload.spec<SwitchMLSpec>().pool_size, 64u);
  Scenario b = a;
  b.workload.spec<SwitchMLSpec>().pool_size = 8;
  EXPECT_EQ(a.workload.spec<SwitchMLSpec>().pool_size, 64u);
  EXPECT_EQ(b.workload.spec<SwitchMLSpec>().pool_size, 8u);
  a = b;
  EXPECT_EQ(a.workload.spec<SwitchMLSpec>().pool_size, 8u);
  const Scenario& c = a;
  EXPECT_EQ(c.workload.spec<CanarySpec>().table_size, CanarySpec{}.table_size);  // never parsed: defaults
}

TEST(Scenario, DefaultsAreFilledIntoResolved) {
  const Scenario s = ParseScenario(Base());
  const json& r = s.resolved;
  EXPECT_EQ(r["name"], "scenario");
  EXPECT_EQ(r["description"], "");
  EXPECT_EQ(r["seed"], 1);
  EXPECT_EQ(r["links"]["mtu_bytes"], 1500);
  EXPECT_EQ(r["links"]["host_rate_gbps"], 100.0);
  EXPECT_EQ(r["links"]["fabric_rate_gbps"], 100.0);
  EXPECT_EQ(r["links"]["host_delay_ns"], 500.0);
  EXPECT_EQ(r["links"]["wire_overhead_bytes"], 24);
  EXPECT_EQ(r["switch"]["buffer_bytes"], 1 << 20);
  EXPECT_EQ(r["switch"]["forwarding"], "ecmp");
  EXPECT_EQ(r["switch"]["ecn"]["enabled"], false);
  EXPECT_EQ(r["switch"]["ecn"]["unit"], "packets");
  EXPECT_EQ(r["switch"]["ecn"]["threshold"], 65);
  EXPECT_EQ(r["switch"]["pfc"]["enabled"], false);
  EXPECT_EQ(r["switch"]["pfc"]["xoff_bytes"], 256 << 10);
  EXPECT_EQ(r["switch"]["pfc"]["xon_bytes"], 128 << 10);
  EXPECT_EQ(r["host"]["nic_buffer_bytes"], 16 << 20);
  EXPECT_EQ(r["workload"]["type"], "allreduce");
  EXPECT_EQ(r["workload"]["protocol"], "ring");
  EXPECT_EQ(r["workload"]["bytes"], 4 << 20);
  EXPECT_EQ(r["workload"]["dtype"], "int32");
  EXPECT_EQ(r["workload"]["data"], "hashed");
  EXPECT_EQ(r["workload"]["iterations"], 1);
  EXPECT_EQ(r["workload"]["hosts"], json::parse(R"({"count": 0, "placement": "first"})"));
  EXPECT_EQ(r["workload"]["ring"]["window_packets"], 64);
  EXPECT_EQ(r["workload"]["ring"]["ack_every"], 8);
  EXPECT_EQ(r["workload"]["ring"]["elements_per_packet"], 0);
  EXPECT_EQ(r["workload"]["ring"]["rto_us"], 200.0);
  EXPECT_EQ(r["workload"]["ring"]["udp_port"], 4791);
  EXPECT_EQ(r["faults"]["loss_rate"], 0.0);
  EXPECT_EQ(r["faults"]["reconverge_us"], 1000.0);
  EXPECT_EQ(r["faults"]["links"], json::array());
  EXPECT_EQ(r["stop"]["max_sim_time_ms"], 1000.0);
  EXPECT_EQ(r["outputs"]["links_csv"], true);
  EXPECT_EQ(r["outputs"]["sample_interval_us"], 0.0);
  EXPECT_FALSE(r.contains("background"));

  // The typed values agree with the header's defaults.
  EXPECT_EQ(s.links.mtu_bytes, 1500u);
  EXPECT_EQ(s.workload.spec<RingSpec>().window_packets, 64u);
  EXPECT_EQ(s.sw.port.buffer_bytes, 1u << 20);
  EXPECT_EQ(s.host_port.buffer_bytes, 16u << 20);
  EXPECT_EQ(s.max_sim_time_ps, 1'000'000'000'000ULL);
  EXPECT_EQ(s.faults.loss_rate, 0.0);
  EXPECT_EQ(s.faults.reconverge_ps, 1'000'000'000u);  // 1 ms
  EXPECT_TRUE(s.faults.links.empty());
}

TEST(Scenario, FabricRateDefaultsToHostRateAndEcnBytesThreshold) {
  const Scenario s = ParseScenario(With({"links.host_rate_gbps=25", "switch.ecn.unit=bytes"}));
  EXPECT_EQ(s.links.fabric_rate_gbps, 25.0);
  EXPECT_EQ(s.resolved["links"]["fabric_rate_gbps"], 25.0);
  EXPECT_EQ(s.sw.port.ecn_unit, congestion::EcnUnit::kBytes);
  EXPECT_EQ(s.sw.port.ecn_threshold, 65u * 1500u);
  EXPECT_EQ(s.resolved["switch"]["ecn"]["threshold"], 65 * 1500);
}

TEST(Scenario, ResolvedParsesToTheSameScenario) {
  // The echoed scenario is itself a valid scenario with the same resolution.
  const Scenario a = ParseScenario(With({"topology={\"type\":\"fat_tree\",\"k\":4}", "workload.hosts.count=6",
                                         "workload.hosts.placement=spread", "faults.links=[{\"link\":3,\"loss_rate\":0.1}]",
                                         "switch.ecn.enabled=true", "workload.ring.window_packets=16"}));
  const Scenario b = ParseScenario(a.resolved);
  EXPECT_EQ(a.resolved, b.resolved);
}

TEST(Scenario, AdaptiveStartsFromTheFlowHashUnlessTheDestinationIsAsked) {
  EXPECT_FALSE(ParseScenario(With({"switch.forwarding=\"adaptive\""})).sw.adaptive_by_destination);
  EXPECT_TRUE(ParseScenario(With({"switch.forwarding=\"adaptive\"", "switch.adaptive_default=\"destination\""}))
                  .sw.adaptive_by_destination);
}

TEST(Scenario, TimesAreConvertedToPicoseconds) {
  const Scenario s = ParseScenario(With({
      "links.host_delay_ns=500",
      "links.fabric_delay_ns=1.5",
      "switch.forwarding_latency_ns=250",
      "workload.compute_gap_us=3",
      "workload.start_us=0.25",
      "workload.ring.rto_us=200",
      "workload.ring.ack_delay_us=2",
      "stop.max_sim_time_ms=0.5",
      "outputs.sample_interval_us=10",
      "faults.links=[{\"link\":0,\"down_at_us\":7}]",
      "faults.reconverge_us=50",
  }));
  EXPECT_EQ(s.links.host_delay_ps, 500'000u);
  EXPECT_EQ(s.links.fabric_delay_ps, 1'500u);
  EXPECT_EQ(s.sw.forwarding_latency_ps, 250'000u);
  EXPECT_EQ(s.workload.compute_gap_ps, 3'000'000u);
  EXPECT_EQ(s.workload.start_ps, 250'000u);
  EXPECT_EQ(s.workload.spec<RingSpec>().rto_ps, 200'000'000u);
  EXPECT_EQ(s.workload.spec<RingSpec>().ack_delay_ps, 2'000'000u);
  EXPECT_EQ(s.max_sim_time_ps, 500'000'000u);
  EXPECT_EQ(s.outputs.sample_interval_ps, 10'000'000u);
  ASSERT_EQ(s.faults.links.size(), 1u);
  ASSERT_TRUE(s.faults.links[0].down_at_ps.has_value());
  EXPECT_EQ(*s.faults.links[0].down_at_ps, 7'000'000u);
  EXPECT_LT(s.faults.links[0].loss_rate, 0);  // unchanged
  EXPECT_EQ(s.faults.reconverge_ps, 50'000'000u);
  // resolved keeps the user's unit.
  EXPECT_EQ(s.resolved["links"]["fabric_delay_ns"], 1.5);
  EXPECT_EQ(s.resolved["stop"]["max_sim_time_ms"], 0.5);
}

TEST(Scenario, IntegerKeysAcceptIntegralFloats) {
  const Scenario s = ParseScenario(With({"workload.bytes=1024.0", "seed=7e0"}));
  EXPECT_EQ(s.workload.bytes, 1024u);
  EXPECT_EQ(s.seed, 7u);
  EXPECT_THAT(ErrorOf({"workload.bytes=1024.5"}),
              AllOf(AtPath("workload.bytes"), HasSubstr("must be a non-negative integer"), HasSubstr("1024.5")));
}

TEST(Scenario, NullMeansAbsent) {
  json doc = Base();
  doc["links"] = nullptr;
  doc["workload"] = {{"bytes", nullptr}};
  const Scenario s = ParseScenario(doc);
  EXPECT_EQ(s.links.mtu_bytes, 1500u);
  EXPECT_EQ(s.workload.bytes, 4u << 20);
}

TEST(Scenario, LeafSpineAndFatTreeParse) {
  const Scenario ls = ParseScenario(
      With({"topology={\"type\":\"leaf_spine\",\"leaves\":4,\"spines\":2,\"hosts_per_leaf\":3}"}));
  EXPECT_EQ(ls.topology.type, TopologyType::kLeafSpine);
  EXPECT_EQ(ls.topology.leaves, 4u);
  EXPECT_EQ(ls.topology.spines, 2u);
  EXPECT_EQ(ls.topology.hosts_per_leaf, 3u);
  const Scenario ft = ParseScenario(With({"topology={\"type\":\"fat_tree\",\"k\":4}"}));
  EXPECT_EQ(ft.topology.type, TopologyType::kFatTree);
  EXPECT_EQ(ft.topology.k, 4u);
  EXPECT_EQ(ft.topology.hosts_per_edge, 0u);
  EXPECT_EQ(ft.resolved["topology"]["hosts_per_edge"], 0);
}

TEST(Scenario, HostSelectionForms) {
  EXPECT_EQ(ParseScenario(With({"workload.hosts=all"})).resolved["workload"]["hosts"], "all");
  const Scenario list = ParseScenario(With({"workload.hosts=[7,0,3]"}));
  EXPECT_EQ(list.workload.hosts.list, (std::vector<uint32_t>{7, 0, 3}));
  EXPECT_EQ(list.resolved["workload"]["hosts"], json::parse("[7,0,3]"));
  const Scenario obj = ParseScenario(With({"workload.hosts={\"count\":4,\"placement\":\"random\"}"}));
  EXPECT_EQ(obj.workload.hosts.count, 4u);
  EXPECT_EQ(obj.workload.hosts.placement, Placement::kRandom);
  EXPECT_EQ(ParseScenario(With({"workload.hosts.placement=spread"})).workload.hosts.placement, Placement::kSpread);
}

TEST(Scenario, PermutationWorkload) {
  const Scenario s = ParseScenario(With({"workload={\"type\":\"permutation\",\"flow_bytes\":10000}"}));
  EXPECT_EQ(s.workload.type, WorkloadType::kPermutation);
  EXPECT_EQ(s.workload.flow_bytes, 10000u);
  EXPECT_EQ(s.workload.payload_bytes, 1472u);  // mtu - 28
  EXPECT_EQ(s.workload.rate_gbps, 0.0);
  EXPECT_EQ(s.resolved["workload"]["payload_bytes"], 1472);
  EXPECT_FALSE(s.resolved["workload"].contains("ring"));
  // Allreduce-only keys are unknown for a permutation.
  EXPECT_THAT(ErrorOf({"workload={\"type\":\"permutation\",\"bytes\":1024}"}),
              AllOf(AtPath("workload.bytes"), HasSubstr("unknown key")));
  EXPECT_THAT(ErrorOf({"workload={\"type\":\"permutation\",\"payload_bytes\":1473}"}),
              AllOf(AtPath("workload.payload_bytes"), HasSubstr("between 12 and 1472"), HasSubstr("1473")));
  // And none takes no hosts.
  EXPECT_EQ(ParseScenario(With({"workload.type=none"})).workload.type, WorkloadType::kNone);
  EXPECT_THAT(ErrorOf({"workload={\"type\":\"none\",\"hosts\":\"all\"}"}),
              AllOf(AtPath("workload.hosts"), HasSubstr("unknown key")));
}

// ---------------------------------------------------------------- --set

TEST(ApplyOverride, SetsNestedValuesCreatingObjects) {
  json doc = Base();
  ApplyOverride(doc, "workload.ring.window_packets=16");
  EXPECT_EQ(doc["workload"]["ring"]["window_packets"], 16);
  EXPECT_TRUE(doc["workload"]["ring"]["window_packets"].is_number_unsigned());
  ApplyOverride(doc, "topology.hosts=4");  // replaces
  EXPECT_EQ(doc["topology"]["hosts"], 4);
  EXPECT_EQ(doc["topology"]["type"], "single_rack");  // siblings kept
  EXPECT_EQ(ParseScenario(doc).workload.spec<RingSpec>().window_packets, 16u);
}

TEST(ApplyOverride, ParsesJsonValuesAndBareWords) {
  json doc = Base();
  ApplyOverride(doc, "links.fabric_delay_ns=2.5");
  EXPECT_TRUE(doc["links"]["fabric_delay_ns"].is_number_float());
  EXPECT_EQ(doc["links"]["fabric_delay_ns"], 2.5);
  ApplyOverride(doc, "seed=-3");
  EXPECT_TRUE(doc["seed"].is_number_integer());
  EXPECT_EQ(doc["seed"], -3);
  ApplyOverride(doc, "switch.pfc={\"enabled\": true, \"xoff_bytes\": 1000}");
  EXPECT_EQ(doc["switch"]["pfc"], json::parse(R"({"enabled": true, "xoff_bytes": 1000})"));
  ApplyOverride(doc, "workload.hosts=[1,2]");
  EXPECT_EQ(doc["workload"]["hosts"], json::parse("[1,2]"));
  ApplyOverride(doc, "outputs.links_csv=false");
  EXPECT_EQ(doc["outputs"]["links_csv"], false);
  ApplyOverride(doc, "topology.type=fat_tree");  // bare word -> string
  EXPECT_EQ(doc["topology"]["type"], "fat_tree");
  ApplyOverride(doc, "name=\"42\"");  // quoted -> the string, not the number
  EXPECT_EQ(doc["name"], "42");
  ApplyOverride(doc, "description=a=b c");  // only the first '=' splits
  EXPECT_EQ(doc["description"], "a=b c");
  ApplyOverride(doc, "workload.dtype=");  // empty value -> empty string
  EXPECT_EQ(doc["workload"]["dtype"], "");
  ApplyOverride(doc, "workload.data=[1,");  // broken JSON -> the raw text
  EXPECT_EQ(doc["workload"]["data"], "[1,");
}

TEST(ApplyOverride, NullRemovesAKey) {
  json doc = With({"workload.bytes=1024", "workload.dtype=float32"});
  ApplyOverride(doc, "workload.bytes=null");
  EXPECT_FALSE(doc["workload"].contains("bytes"));
  EXPECT_EQ(doc["workload"]["dtype"], "float32");
  EXPECT_EQ(ParseScenario(doc).workload.bytes, 4u << 20);  // back to the default
  ApplyOverride(doc, "topology=null");
  EXPECT_FALSE(doc.contains("topology"));
  EXPECT_THAT(ErrorOf(doc), AllOf(AtPath("topology"), HasSubstr("is required")));
  ApplyOverride(doc, "stop.max_sim_time_ms=null");  // removing what is not there is fine
  EXPECT_FALSE(doc["stop"].contains("max_sim_time_ms"));
}

TEST(ApplyOverride, WithoutEqualsSign) {
  EXPECT_THAT(OverrideErrorOf(Base(), "workload.bytes"),
              AllOf(StartsWith("--set workload.bytes: "), HasSubstr("expected PATH=VALUE")));
  EXPECT_THAT(OverrideErrorOf(Base(), "=5"), AllOf(StartsWith("--set =5: "), HasSubstr("expected PATH=VALUE")));
}

TEST(ApplyOverride, EmptyPathSegment) {
  EXPECT_THAT(OverrideErrorOf(Base(), "workload..bytes=4"),
              AllOf(StartsWith("--set workload..bytes=4: "), HasSubstr("empty path segment")));
  EXPECT_THAT(OverrideErrorOf(Base(), "workload.=4"), HasSubstr("empty path segment"));
  EXPECT_THAT(OverrideErrorOf(Base(), ".seed=4"), HasSubstr("empty path segment"));
}

TEST(ApplyOverride, ThroughANonObject) {
  // (Which path the message names is not asserted: it currently names the full
  // walked path, e.g. "topology.type.name", rather than the non-object
  // "topology.type"; reported separately.)
  EXPECT_THAT(OverrideErrorOf(Base(), "topology.type.name=x"),
              AllOf(StartsWith("--set topology.type.name=x: "), HasSubstr("is not an object")));
  EXPECT_THAT(OverrideErrorOf(With({"workload.hosts=[1,2]"}), "workload.hosts.count=2"),
              AllOf(StartsWith("--set workload.hosts.count=2: "), HasSubstr("is not an object")));
  EXPECT_THAT(OverrideErrorOf(With({"seed=3"}), "seed.x=1"), HasSubstr("is not an object"));
}

// ---------------------------------------------------------------- files

class ScenarioFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("inasim_test_scenario_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
};

TEST_F(ScenarioFile, LoadsValidJson) {
  const std::string f = Write("ok.json", R"({"topology": {"type": "single_rack", "hosts": 4}})");
  const json doc = LoadScenarioJson(f);
  EXPECT_EQ(doc["topology"]["hosts"], 4);
  EXPECT_EQ(ParseScenario(doc).topology.hosts, 4u);
}

TEST_F(ScenarioFile, InvalidJsonSyntaxNamesFileLineAndColumn) {
  const std::string f = Write("bad.json", "{\n  \"topology\": {\"type\": \"single_rack\",\n    \"hosts\": 8,,\n}\n");
  EXPECT_THAT(LoadErrorOf(f), AllOf(StartsWith(f + ": "), HasSubstr("not valid JSON"), HasSubstr("line 3")));
  const std::string g = Write("trailing.json", "{\"seed\": 1} x");
  EXPECT_THAT(LoadErrorOf(g), AllOf(StartsWith(g + ": "), HasSubstr("not valid JSON")));
  const std::string e = Write("empty.json", "");
  EXPECT_THAT(LoadErrorOf(e), AllOf(StartsWith(e + ": "), HasSubstr("not valid JSON")));
}

TEST_F(ScenarioFile, MissingFile) {
  const std::string f = (dir_ / "does-not-exist.json").string();
  EXPECT_THAT(LoadErrorOf(f), AllOf(StartsWith(f + ": "), HasSubstr("cannot open scenario file")));
}

// ---------------------------------------------------------------- bad input

TEST(BadInput, UnknownTopLevelKey) {
  EXPECT_THAT(ErrorOf({"banana=1"}), AllOf(AtPath("banana"), HasSubstr("unknown key"), Not(HasSubstr("did you mean"))));
}

TEST(BadInput, UnknownTopLevelKeyNearMissSuggests) {
  EXPECT_THAT(ErrorOf({"worklaod.bytes=1024"}),
              AllOf(AtPath("worklaod"), HasSubstr("unknown key (did you mean \"workload\"?)")));
  EXPECT_THAT(ErrorOf({"topolgy={}"}), AllOf(AtPath("topolgy"), HasSubstr("did you mean \"topology\"?")));
  EXPECT_THAT(ErrorOf({"sed=2"}), AllOf(AtPath("sed"), HasSubstr("did you mean \"seed\"?")));
}

TEST(BadInput, UnknownNestedKey) {
  EXPECT_THAT(ErrorOf({"workload.ring.windw_packets=8"}),
              AllOf(AtPath("workload.ring.windw_packets"), HasSubstr("unknown key (did you mean \"window_packets\"?)")));
  EXPECT_THAT(ErrorOf({"switch.ecn.enable=true"}),
              AllOf(AtPath("switch.ecn.enable"), HasSubstr("did you mean \"enabled\"?")));
  EXPECT_THAT(ErrorOf({"links.mtu=9000"}), AllOf(AtPath("links.mtu"), HasSubstr("unknown key")));
  EXPECT_THAT(ErrorOf({"topology.leaves=2"}), AllOf(AtPath("topology.leaves"), HasSubstr("unknown key")));
  EXPECT_THAT(ErrorOf({"workload.hosts.cuont=2"}),
              AllOf(AtPath("workload.hosts.cuont"), HasSubstr("did you mean \"count\"?")));
}

TEST(BadInput, WrongType) {
  EXPECT_THAT(ErrorOf({"workload.bytes=lots"}),
              AllOf(AtPath("workload.bytes"), HasSubstr("must be a non-negative integer"), HasSubstr("the string \"lots\"")));
  EXPECT_THAT(ErrorOf({"links.host_rate_gbps=fast"}),
              AllOf(AtPath("links.host_rate_gbps"), HasSubstr("must be a number"), HasSubstr("the string \"fast\"")));
  EXPECT_THAT(ErrorOf({"links.host_rate_gbps=\"100\""}),
              AllOf(AtPath("links.host_rate_gbps"), HasSubstr("must be a number")));
  EXPECT_THAT(ErrorOf({"switch.ecn.enabled=1"}),
              AllOf(AtPath("switch.ecn.enabled"), HasSubstr("must be true or false"), HasSubstr("the integer 1")));
  EXPECT_THAT(ErrorOf({"name=5"}), AllOf(AtPath("name"), HasSubstr("must be a string")));
  EXPECT_THAT(ErrorOf({"workload.type=[1]"}), AllOf(AtPath("workload.type"), HasSubstr("must be a string, got an array")));
  EXPECT_THAT(ErrorOf({"links=[1,2]"}), AllOf(AtPath("links"), HasSubstr("must be an object, got an array")));
  EXPECT_THAT(ErrorOf({"workload.ring=4"}), AllOf(AtPath("workload.ring"), HasSubstr("must be an object")));
  EXPECT_THAT(ErrorOf({"faults.links={}"}), AllOf(AtPath("faults.links"), HasSubstr("must be an array")));
  EXPECT_THAT(ErrorOf(json::array({1, 2})), AllOf(AtPath("(top level)"), HasSubstr("must be an object")));
}

TEST(BadInput, OutOfRange) {
  EXPECT_THAT(ErrorOf({"workload.bytes=-4"}),
              AllOf(AtPath("workload.bytes"), HasSubstr("must be between 4 and"), HasSubstr("got -4")));
  EXPECT_THAT(ErrorOf({"workload.bytes=0"}), AllOf(AtPath("workload.bytes"), HasSubstr("must be between 4 and")));
  EXPECT_THAT(ErrorOf({"links.host_rate_gbps=0"}),
              AllOf(AtPath("links.host_rate_gbps"), HasSubstr("must be between 0.001 and 10000"), HasSubstr("got 0")));
  EXPECT_THAT(ErrorOf({"links.fabric_rate_gbps=-10"}), AllOf(AtPath("links.fabric_rate_gbps"), HasSubstr("must be between")));
  EXPECT_THAT(ErrorOf({"faults.loss_rate=1.5"}),
              AllOf(AtPath("faults.loss_rate"), HasSubstr("must be between 0 and 1"), HasSubstr("got 1.5")));
  EXPECT_THAT(ErrorOf({"faults.loss_rate=-0.1"}), AllOf(AtPath("faults.loss_rate"), HasSubstr("must be between 0 and 1")));
  EXPECT_THAT(ErrorOf({"seed=0"}), AllOf(AtPath("seed"), HasSubstr("must be between 1 and")));
  EXPECT_THAT(ErrorOf({"links.host_delay_ns=-1"}), AllOf(AtPath("links.host_delay_ns"), HasSubstr("must be between 0 and")));
  EXPECT_THAT(ErrorOf({"links.mtu_bytes=100"}), AllOf(AtPath("links.mtu_bytes"), HasSubstr("between 128 and 9216")));
  EXPECT_THAT(ErrorOf({"workload.ring.window_packets=0"}),
              AllOf(AtPath("workload.ring.window_packets"), HasSubstr("must be between 1 and")));
  EXPECT_THAT(ErrorOf({"workload.ring.udp_port=70000"}),
              AllOf(AtPath("workload.ring.udp_port"), HasSubstr("between 1 and 65535"), HasSubstr("70000")));
  EXPECT_THAT(ErrorOf({"workload.ring.rto_us=0"}), AllOf(AtPath("workload.ring.rto_us"), HasSubstr("must be between")));
  EXPECT_THAT(ErrorOf({"switch.adaptive_default=\"source\""}),
              AllOf(AtPath("switch.adaptive_default"), HasSubstr(R"(must be one of "flow", "destination", got "source")")));
  EXPECT_THAT(ErrorOf({"switch.adaptive_threshold=2"}),
              AllOf(AtPath("switch.adaptive_threshold"), HasSubstr("between 0 and 1")));
  EXPECT_THAT(ErrorOf({"switch.buffer_bytes=100"}), AllOf(AtPath("switch.buffer_bytes"), HasSubstr("must be between 1500")));
  EXPECT_THAT(ErrorOf({"host.nic_buffer_bytes=0"}), AllOf(AtPath("host.nic_buffer_bytes"), HasSubstr("must be between")));
  EXPECT_THAT(ErrorOf({"faults.reconverge_us=-1"}),
              AllOf(AtPath("faults.reconverge_us"), HasSubstr("must be between 0 and")));
  EXPECT_THAT(ErrorOf({"stop.max_sim_time_ms=0"}), AllOf(AtPath("stop.max_sim_time_ms"), HasSubstr("must be between")));
  EXPECT_THAT(ErrorOf({"workload.iterations=0"}), AllOf(AtPath("workload.iterations"), HasSubstr("must be between 1")));
  EXPECT_THAT(ErrorOf({"topology.hosts=0"}), AllOf(AtPath("topology.hosts"), HasSubstr("must be between 1 and")));
}

TEST(BadInput, ElementsPerPacketBoundedByMtu) {
  // (1500 - 20 IP - 8 UDP - 16 ring header) / 4 = 364 elements.
  EXPECT_EQ(ParseScenario(With({"workload.ring.elements_per_packet=364"})).workload.spec<RingSpec>().elements_per_packet, 364u);
  EXPECT_THAT(ErrorOf({"workload.ring.elements_per_packet=365"}),
              AllOf(AtPath("workload.ring.elements_per_packet"), HasSubstr("between 0 and 364")));
  EXPECT_THAT(ErrorOf({"links.mtu_bytes=9000", "workload.ring.elements_per_packet=2240"}),
              AllOf(AtPath("workload.ring.elements_per_packet"), HasSubstr("between 0 and 2239")));
}

TEST(BadInput, EnumValueNotInList) {
  EXPECT_THAT(ErrorOf({"topology.type=torus"}),
              AllOf(AtPath("topology.type"),
                    HasSubstr(R"(must be one of "single_rack", "leaf_spine", "fat_tree", got "torus")")));
  EXPECT_THAT(ErrorOf({"switch.forwarding=random"}),
              AllOf(AtPath("switch.forwarding"), HasSubstr(R"(must be one of "ecmp", "spray", "adaptive", got "random")")));
  EXPECT_THAT(ErrorOf({"workload.dtype=float64"}),
              AllOf(AtPath("workload.dtype"), HasSubstr(R"(must be one of "int32", "float32", got "float64")")));
  EXPECT_THAT(ErrorOf({"workload.type=alltoall"}),
              AllOf(AtPath("workload.type"), HasSubstr(R"("allreduce", "permutation", "none")")));
  EXPECT_THAT(ErrorOf({"workload.protocol=tree"}), AllOf(AtPath("workload.protocol"), HasSubstr(R"(got "tree")")));
  EXPECT_THAT(ErrorOf({"workload.data=zeros"}), AllOf(AtPath("workload.data"), HasSubstr(R"("hashed", "ones")")));
  EXPECT_THAT(ErrorOf({"switch.ecn.unit=kb"}), AllOf(AtPath("switch.ecn.unit"), HasSubstr(R"("packets", "bytes")")));
  EXPECT_THAT(ErrorOf({"workload.hosts.placement=packed"}),
              AllOf(AtPath("workload.hosts.placement"), HasSubstr(R"("first", "spread", "random")")));
}

TEST(BadInput, MissingRequiredKey) {
  EXPECT_THAT(ErrorOf(json::object()), AllOf(AtPath("topology"), HasSubstr("is required")));
  EXPECT_THAT(ErrorOf({"topology={}"}),
              AllOf(AtPath("topology.type"), HasSubstr("is required"), HasSubstr("single_rack")));
  EXPECT_THAT(ErrorOf({"topology={\"type\":\"single_rack\"}"}), AllOf(AtPath("topology.hosts"), HasSubstr("is required")));
  EXPECT_THAT(ErrorOf({"topology={\"type\":\"leaf_spine\",\"leaves\":2,\"hosts_per_leaf\":2}"}),
              AllOf(AtPath("topology.spines"), HasSubstr("is required")));
  EXPECT_THAT(ErrorOf({"topology={\"type\":\"leaf_spine\",\"spines\":2,\"hosts_per_leaf\":2}"}),
              AllOf(AtPath("topology.leaves"), HasSubstr("is required")));
  EXPECT_THAT(ErrorOf({"topology={\"type\":\"leaf_spine\",\"leaves\":2,\"spines\":2}"}),
              AllOf(AtPath("topology.hosts_per_leaf"), HasSubstr("is required")));
  EXPECT_THAT(ErrorOf({"topology={\"type\":\"fat_tree\"}"}), AllOf(AtPath("topology.k"), HasSubstr("is required")));
}

TEST(BadInput, FatTreeOddK) {
  EXPECT_THAT(ErrorOf({"topology={\"type\":\"fat_tree\",\"k\":5}"}),
              AllOf(AtPath("topology.k"), HasSubstr("must be even, got 5")));
  EXPECT_THAT(ErrorOf({"topology={\"type\":\"fat_tree\",\"k\":1}"}),
              AllOf(AtPath("topology.k"), HasSubstr("must be between 2 and 128")));
}

TEST(BadInput, TopologyBuilderLimits) {
  // A ToR has 16-bit port numbers, so a rack holds at most 65,535 hosts.
  EXPECT_THAT(ErrorOf({"topology.hosts=70000"}),
              AllOf(AtPath("topology.hosts"), HasSubstr("between 1 and 65535"), HasSubstr("got 70000")));
  // A leaf-spine of 10,000 x 10,000 would need 100 M links: refused before building.
  EXPECT_THAT(ErrorOf({"topology={\"type\":\"leaf_spine\",\"leaves\":10000,\"spines\":10000,\"hosts_per_leaf\":1}"}),
              AllOf(AtPath("topology"), HasSubstr("more than this simulator accepts")));
  // More than 1,000,000 vertices.
  EXPECT_THAT(ErrorOf({"topology={\"type\":\"fat_tree\",\"k\":64,\"hosts_per_edge\":2000}"}),
              AllOf(AtPath("topology"), HasSubstr("vertices")));
}

TEST(BadInput, BytesNotAMultipleOf4) {
  EXPECT_THAT(ErrorOf({"workload.bytes=1026"}),
              AllOf(AtPath("workload.bytes"), HasSubstr("must be a multiple of 4"), HasSubstr("got 1026")));
  EXPECT_EQ(ParseScenario(With({"workload.bytes=1028"})).workload.bytes, 1028u);
}

TEST(BadInput, NameRules) {
  // The name is the default output directory out/<name>: one safe file name.
  EXPECT_THAT(ErrorOf({"name=a/b"}), AllOf(AtPath("name"), HasSubstr("must not contain '/'")));
  EXPECT_THAT(ErrorOf({"name=/"}), AllOf(AtPath("name"), HasSubstr("must not contain '/'")));
  EXPECT_THAT(ErrorOf({"name=\"\""}), AllOf(AtPath("name"), HasSubstr("must not be empty")));
  EXPECT_THAT(ErrorOf({"name=."}), AllOf(AtPath("name"), HasSubstr("must not be \".\"")));
  EXPECT_THAT(ErrorOf({"name=.."}), AllOf(AtPath("name"), HasSubstr("must not be \"..\"")));
  json nul = Base();
  nul["name"] = std::string("a\0b", 3);
  EXPECT_THAT(ErrorOf(nul), AllOf(AtPath("name"), HasSubstr("NUL")));
  json long_name = Base();
  long_name["name"] = std::string(256, 'x');
  EXPECT_THAT(ErrorOf(long_name), AllOf(AtPath("name"), HasSubstr("256 bytes long, at most 255")));
  long_name["name"] = std::string(255, 'x');
  EXPECT_EQ(ErrorOf(long_name), "<no error>");
  EXPECT_EQ(ErrorOf({"name=.hidden..dots"}), "<no error>");  // dots inside a name are fine
}

TEST(BadInput, HostCountLargerThanTopology) {
  EXPECT_THAT(ErrorOf({"workload.hosts.count=9"}),
              AllOf(AtPath("workload.hosts.count"), HasSubstr("9 hosts asked for, the topology has 8")));
  EXPECT_EQ(ParseScenario(With({"workload.hosts.count=8"})).workload.hosts.count, 8u);
}

TEST(BadInput, HostListIdOutOfRange) {
  EXPECT_THAT(ErrorOf({"workload.hosts=[0,8]"}),
              AllOf(AtPath("workload.hosts[1]"), HasSubstr("host 8 does not exist"), HasSubstr("8 hosts")));
  EXPECT_THAT(ErrorOf({"workload.hosts=[0,-1]"}),
              AllOf(AtPath("workload.hosts[1]"), HasSubstr("must be a host id")));
  EXPECT_THAT(ErrorOf({"workload.hosts=[0,\"h1\"]"}),
              AllOf(AtPath("workload.hosts[1]"), HasSubstr("must be a host id"), HasSubstr("the string \"h1\"")));
  EXPECT_THAT(ErrorOf({"workload.hosts=[0,99999999999]"}),
              AllOf(AtPath("workload.hosts[1]"), HasSubstr("too large")));
}

TEST(BadInput, HostListDuplicates) {
  EXPECT_THAT(ErrorOf({"workload.hosts=[1,2,1]"}),
              AllOf(AtPath("workload.hosts[2]"), HasSubstr("host 1 is listed twice")));
}

TEST(BadInput, TooFewHostsAndBadHostsForm) {
  EXPECT_THAT(ErrorOf({"workload.hosts.count=1"}), AllOf(AtPath("workload.hosts"), HasSubstr("at least 2 hosts, got 1")));
  EXPECT_THAT(ErrorOf({"workload.hosts=[3]"}), AllOf(AtPath("workload.hosts"), HasSubstr("at least 2 host ids, got 1")));
  EXPECT_THAT(ErrorOf({"workload.hosts=[]"}), AllOf(AtPath("workload.hosts"), HasSubstr("at least 2 host ids, got 0")));
  EXPECT_THAT(ErrorOf({"topology.hosts=1"}), AllOf(AtPath("workload.hosts"), HasSubstr("at least 2 hosts")));
  EXPECT_THAT(ErrorOf({"workload.hosts=some"}),
              AllOf(AtPath("workload.hosts"), HasSubstr(R"(must be "all", a list of host ids)")));
}

TEST(BadInput, Float32HashedDataIsExactBeyondTheOld5792RankLimit) {
  // Weighted float32 data keeps n 2^(wb+k) <= 2^24 for up to 2^22 ranks
  // (tensor-data.h; the TensorData unit tests check the limit itself, which
  // no topology reaches).
  EXPECT_NO_THROW(ParseScenario(With({"topology.hosts=6000", "workload.dtype=float32"})));
  EXPECT_NO_THROW(ParseScenario(With({"topology.hosts=6000", "workload.dtype=float32", "workload.data=ones"})));
}

TEST(BadInput, PfcXonAboveXoff) {
  EXPECT_THAT(ErrorOf({"switch.pfc={\"enabled\":true,\"xoff_bytes\":1000,\"xon_bytes\":2000}"}),
              AllOf(AtPath("switch.pfc.xon_bytes"), HasSubstr("must not exceed xoff_bytes (1000)")));
  // The default xon (128 KiB) is checked against a smaller xoff too.
  EXPECT_THAT(ErrorOf({"switch.pfc.xoff_bytes=65536"}),
              AllOf(AtPath("switch.pfc.xon_bytes"), HasSubstr("must not exceed xoff_bytes (65536)")));
  const Scenario s = ParseScenario(With({"switch.pfc={\"enabled\":true,\"xoff_bytes\":1000,\"xon_bytes\":1000}"}));
  EXPECT_TRUE(s.sw.port.pfc_enabled);
  EXPECT_EQ(s.sw.port.pfc_xon_bytes, 1000u);
}

TEST(BadInput, CreditAndPfcTogether) {
  EXPECT_THAT(ErrorOf({"switch.pfc.enabled=true", "switch.credit.enabled=true"}),
              AllOf(AtPath("switch.credit"), HasSubstr("cannot both be enabled")));
  EXPECT_THAT(ErrorOf({"switch.credit={\"enabled\":true,\"bytes\":1000}"}),
              AtPath("switch.credit.bytes"));  // below one 1500-byte frame
  const Scenario s = ParseScenario(With({"switch.credit={\"enabled\":true,\"bytes\":4096}"}));
  EXPECT_TRUE(s.sw.port.credit_enabled);
  EXPECT_EQ(s.sw.port.credit_bytes, 4096u);
  EXPECT_FALSE(ParseScenario(With({})).sw.port.credit_enabled);
}

TEST(BadInput, FaultLinkIndexOutOfRange) {
  // Single rack of 8: links 0..7.
  EXPECT_THAT(ErrorOf({"faults.links=[{\"link\":8}]"}),
              AllOf(AtPath("faults.links[0].link"), HasSubstr("no link 8"), HasSubstr("8 links (0..7)")));
  EXPECT_THAT(ErrorOf({"faults.links=[{\"link\":0},{\"link\":-1}]"}),
              AllOf(AtPath("faults.links[1].link"), HasSubstr("must be between 0 and")));
  EXPECT_EQ(ParseScenario(With({"faults.links=[{\"link\":7,\"loss_rate\":0.5}]"})).faults.links.at(0).link, 7u);
}

TEST(BadInput, FaultBetweenNodesNotLinked) {
  EXPECT_THAT(ErrorOf({"faults.links=[{\"between\":[\"h0\",\"h1\"]}]"}),
              AllOf(AtPath("faults.links[0].between"), HasSubstr(R"("h0" and "h1" are not linked)")));
}

TEST(BadInput, FaultBetweenUnknownNode) {
  EXPECT_THAT(ErrorOf({"faults.links=[{\"between\":[\"h0\",\"leaf9\"]}]"}),
              AllOf(AtPath("faults.links[0].between"), HasSubstr(R"(no node named "leaf9")")));
  EXPECT_THAT(ErrorOf({"faults.links=[{\"between\":[\"h0\"]}]"}),
              AllOf(AtPath("faults.links[0].between"), HasSubstr("must be two node names")));
  EXPECT_THAT(ErrorOf({"faults.links=[{\"between\":[\"h0\",1]}]"}),
              AllOf(AtPath("faults.links[0].between"), HasSubstr("must be two node names")));
}

TEST(BadInput, FaultSwitchNamesASwitchAndATime) {
  // Single rack of 8: one switch, "tor".
  const Scenario s = ParseScenario(With({R"(faults.switches=[{"switch":"tor","down_at_us":5}])"}));
  ASSERT_EQ(s.faults.switches.size(), 1u);
  EXPECT_EQ(s.faults.switches[0].vertex, 8u);  // hosts are vertices 0..7
  EXPECT_EQ(s.faults.switches[0].down_at_ps, 5'000'000u);
  EXPECT_THAT(ErrorOf({R"(faults.switches=[{"switch":"h3","down_at_us":5}])"}),
              AllOf(AtPath("faults.switches[0].switch"), HasSubstr(R"("h3" is a host, not a switch)")));
  EXPECT_THAT(ErrorOf({R"(faults.switches=[{"switch":"spine9","down_at_us":5}])"}),
              AllOf(AtPath("faults.switches[0].switch"), HasSubstr(R"(no switch named "spine9")")));
  EXPECT_THAT(ErrorOf({R"(faults.switches=[{"down_at_us":5}])"}),
              AllOf(AtPath("faults.switches[0].switch"), HasSubstr("required")));
  EXPECT_THAT(ErrorOf({R"(faults.switches=[{"switch":"tor"}])"}), AtPath("faults.switches[0].down_at_us"));
  EXPECT_THAT(ErrorOf({R"(faults.switches=[{"switch":7,"down_at_us":5}])"}),
              AllOf(AtPath("faults.switches[0].switch"), HasSubstr("must be a switch's name")));
  EXPECT_THAT(ErrorOf({R"(faults.switches={"switch":"tor"})"}),
              AllOf(AtPath("faults.switches"), HasSubstr("must be an array")));
}

TEST(BadInput, FaultLinkAndBetweenMustAgree) {
  // results.json echoes both; they are accepted together only when they agree.
  EXPECT_EQ(ParseScenario(With({"faults.links=[{\"link\":0,\"between\":[\"h0\",\"tor\"]}]"})).faults.links[0].link, 0u);
  EXPECT_THAT(ErrorOf({"faults.links=[{\"link\":1,\"between\":[\"h0\",\"tor\"]}]"}),
              AllOf(AtPath("faults.links[0].link"), HasSubstr("disagrees with \"between\", which is link 0")));
  EXPECT_THAT(ErrorOf({"faults.links=[{\"loss_rate\":0.1}]"}),
              AllOf(AtPath("faults.links[0]"), HasSubstr(R"(give "link" (index) or "between")")));
  // null means absent, as everywhere else.
  EXPECT_EQ(ParseScenario(With({"faults.links=[{\"link\":1,\"between\":null}]"})).faults.links[0].link, 1u);
}

TEST(BadInput, MisspeltRequiredSectionGetsASuggestion) {
  nlohmann::json doc = nlohmann::json::parse(R"({"topolgy": {"type": "single_rack", "hosts": 4}})");
  try {
    ParseScenario(doc);
    ADD_FAILURE() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(std::string(e.what()), "topolgy: unknown key (did you mean \"topology\"?)");
  }
}

TEST(BadInput, FaultEntryShapeAndKeys) {
  EXPECT_THAT(ErrorOf({"faults.links=[3]"}), AllOf(AtPath("faults.links[0]"), HasSubstr("must be an object")));
  EXPECT_THAT(ErrorOf({"faults.links=[{\"link\":0,\"los_rate\":0.1}]"}),
              AllOf(AtPath("faults.links[0].los_rate"), HasSubstr("did you mean \"loss_rate\"?")));
  EXPECT_THAT(ErrorOf({"faults.links=[{\"link\":0,\"loss_rate\":2}]"}),
              AllOf(AtPath("faults.links[0].loss_rate"), HasSubstr("between -1 and 1")));
  EXPECT_THAT(ErrorOf({"faults.links=[{\"link\":0,\"down_at_us\":\"soon\"}]"}),
              AllOf(AtPath("faults.links[0].down_at_us"), HasSubstr("must be a number")));
}

TEST(Scenario, FaultBetweenResolvesLinkIndexOnLeafSpine) {
  // 3 leaves x 2 spines x 2 hosts: host links 0..5 first, then leaf i - spine j
  // at 6 + i * 2 + j (src/topology/README.md). Cross-checked with the builder.
  const char* topo = "topology={\"type\":\"leaf_spine\",\"leaves\":3,\"spines\":2,\"hosts_per_leaf\":2}";
  const topo::Topology t = topo::BuildLeafSpine(3, 2, 2, {}, {});
  auto link_of = [&](uint32_t a, uint32_t b) {
    for (const topo::Port& p : t.ports(a))
      if (p.peer == b) return p.link;
    ADD_FAILURE() << "not linked";
    return 0u;
  };
  const uint32_t leaf1 = t.num_hosts() + 1, spine1 = t.num_hosts() + 3 + 1;
  ASSERT_EQ(t.node(leaf1).name, "leaf1");
  ASSERT_EQ(t.node(spine1).name, "spine1");
  ASSERT_EQ(link_of(leaf1, spine1), 9u);

  const Scenario s = ParseScenario(With({topo, "faults.links=[{\"between\":[\"leaf1\",\"spine1\"],\"loss_rate\":0.25},"
                                               "{\"between\":[\"spine1\",\"leaf1\"],\"down_at_us\":5},"
                                               "{\"between\":[\"h3\",\"leaf1\"]}]"}));
  ASSERT_EQ(s.faults.links.size(), 3u);
  EXPECT_EQ(s.faults.links[0].link, 9u);
  EXPECT_EQ(s.faults.links[0].loss_rate, 0.25);
  EXPECT_FALSE(s.faults.links[0].down_at_ps.has_value());
  EXPECT_EQ(s.faults.links[1].link, 9u);  // either order
  EXPECT_EQ(s.faults.links[2].link, link_of(3, leaf1));
  EXPECT_EQ(s.faults.links[2].link, 3u);  // host links come first, in host order
  EXPECT_EQ(s.resolved["faults"]["links"][0]["link"], 9);
  EXPECT_EQ(s.resolved["faults"]["links"][0]["between"], json::parse(R"(["leaf1", "spine1"])"));

  // Leaves are not linked to each other.
  EXPECT_THAT(ErrorOf({topo, "faults.links=[{\"between\":[\"leaf0\",\"leaf1\"]}]"}),
              AllOf(AtPath("faults.links[0].between"), HasSubstr("are not linked")));
  // 6 host links + 6 fabric links.
  EXPECT_THAT(ErrorOf({topo, "faults.links=[{\"link\":12}]"}),
              AllOf(AtPath("faults.links[0].link"), HasSubstr("12 links (0..11)")));
}

TEST(BadInput, Background) {
  EXPECT_THAT(ErrorOf({"background={\"type\":\"permutation\"}"}),
              AllOf(AtPath("background.type"), HasSubstr("unknown key")));
  EXPECT_THAT(ErrorOf({"background.flows={\"load\":0.3}"}), AllOf(AtPath("background.flows.stop_us"), HasSubstr("required")));
  EXPECT_THAT(ErrorOf({"background.flows={\"stop_us\":10,\"start_us\":10}"}),
              AllOf(AtPath("background.flows.stop_us"), HasSubstr("after start_us")));
  EXPECT_THAT(ErrorOf({"background.flows={\"stop_us\":10,\"load\":1.5}"}),
              AllOf(AtPath("background.flows.load"), HasSubstr("between")));
  EXPECT_THAT(ErrorOf({"background.flows={\"stop_us\":10,\"size_distribution\":\"no/such.cdf\"}"}),
              AllOf(AtPath("background.flows.size_distribution"), HasSubstr("no/such.cdf"), HasSubstr("web_search")));
  EXPECT_THAT(ErrorOf({"background.flows={\"stop_us\":10,\"tcp\":{\"variant\":\"bbr\"}}"}),
              AllOf(AtPath("background.flows.tcp.variant"), HasSubstr("must be one of")));
  EXPECT_THAT(ErrorOf({"background.flows={\"stop_us\":10,\"tcp\":{\"segment_bytes\":1460}}"}),
              AllOf(AtPath("background.flows.tcp.segment_bytes"), HasSubstr("between 64 and 1448")));
  EXPECT_THAT(ErrorOf({"workload.type=none", "background.congestion={\"hosts\":\"others\"}"}),
              AllOf(AtPath("background.congestion.hosts"), HasSubstr("\"none\"")));
  EXPECT_THAT(ErrorOf({"background.congestion={\"hosts\":\"others\"}"}),
              AllOf(AtPath("background.congestion.hosts"), HasSubstr("leaves 0 hosts")));
  EXPECT_THAT(ErrorOf({"background.congestion={\"hosts\":[0,9]}"}),
              AllOf(AtPath("background.congestion.hosts[1]"), HasSubstr("does not exist")));
  EXPECT_THAT(ErrorOf({"background.congestion={\"udp_port\":4791}"}),
              AllOf(AtPath("background.congestion.udp_port"), HasSubstr("collides")));
  EXPECT_THAT(ErrorOf({"background.congestion={\"peers\":\"random\"}"}),
              AllOf(AtPath("background.congestion.peers"),
                    HasSubstr(R"(must be one of "uniform", "permutation", got "random")")));
  EXPECT_THAT(ErrorOf({"switch.ecn.threshold_by_rate_gbps={\"fast\":10}"}),
              AllOf(AtPath("switch.ecn.threshold_by_rate_gbps.fast"), HasSubstr("link rate in Gb/s")));
  EXPECT_THAT(ErrorOf({"switch.ecn.threshold_by_rate_gbps={\"100\":-1}"}),
              AllOf(AtPath("switch.ecn.threshold_by_rate_gbps.100"), HasSubstr("integer K")));
}

TEST(Background, DefaultsAndResolvedEcho) {
  const Scenario s = ParseScenario(With({"workload.hosts.count=4", "background.flows={\"stop_us\":50,\"hosts\":\"others\"}",
                                         "background.congestion={\"hosts\":[4,5,6]}",
                                         "switch.ecn.threshold_by_rate_gbps={\"100\":650,\"25\":160}"}));
  const BackgroundFlowsSpec& f = s.background.flows;
  EXPECT_TRUE(f.enabled);
  EXPECT_TRUE(f.hosts.others);
  EXPECT_EQ(f.size_distribution, "web_search");
  ASSERT_TRUE(f.sizes);
  EXPECT_EQ(f.sizes->points(), congestion::FlowSizeCdf::Builtin("web_search").points());
  EXPECT_EQ(f.load, 0.4);
  EXPECT_EQ(f.stop_ps, 50'000'000u);
  EXPECT_EQ(f.tcp.variant, "dctcp");
  EXPECT_EQ(f.tcp.segment_bytes, 1448u);
  EXPECT_EQ(f.tcp.min_rto_ps, 1'000'000'000u);
  EXPECT_TRUE(s.background.congestion.enabled);
  EXPECT_EQ(s.background.congestion.hosts.list, (std::vector<uint32_t>{4, 5, 6}));
  EXPECT_EQ(s.background.congestion.message_bytes, 1u << 20);
  EXPECT_EQ(s.background.congestion.payload_bytes, 1472u);
  ASSERT_EQ(s.sw.ecn_threshold_by_rate.size(), 2u);
  EXPECT_EQ(s.sw.ecn_threshold_by_rate[0], (std::pair<uint64_t, uint64_t>{100'000'000'000, 650}));
  // The echo re-parses to the same scenario.
  const Scenario again = ParseScenario(s.resolved);
  EXPECT_EQ(again.resolved.dump(), s.resolved.dump());
  EXPECT_EQ(s.resolved["background"]["flows"]["tcp"]["variant"], "dctcp");
}

TEST(Background, CdfFileRelativeToTheScenario) {
  const fs::path dir = fs::temp_directory_path() / "inasim_cdf_test";
  fs::create_directories(dir);
  {
    std::ofstream(dir / "tiny.cdf") << "# two sizes\n1000 0.5\n1000 0.5\n3000 1\n";
  }
  const Scenario s = ParseScenario(With({"background.flows={\"stop_us\":50,\"size_distribution\":\"tiny.cdf\"}"}),
                                   dir.string());
  EXPECT_NEAR(s.background.flows.sizes->Mean(), 0.5 * 1000 + 0.5 * 2000, 1e-9);
  // Without the base directory the same relative name is not found.
  EXPECT_THAT(ErrorOf({"background.flows={\"stop_us\":50,\"size_distribution\":\"tiny.cdf\"}"}),
              AtPath("background.flows.size_distribution"));
  fs::remove_all(dir);
}

TEST(BadInput, ErrorsNameTheFirstProblemOnly) {
  // Validation stops at the first problem, in document-reading order.
  EXPECT_THAT(ErrorOf({"links.mtu_bytes=1", "workload.bytes=3"}), AtPath("links.mtu_bytes"));
}


// ------------------------------------------------------- canary / static_tree

TEST(Scenario, CanaryAndStaticTreeSectionsParseWithDefaults) {
  const Scenario c = ParseScenario(With({"workload.protocol=canary", "workload.canary.timeout_us=2.5",
                                         "workload.canary.timeout_mode=clock_scan"}));
  EXPECT_EQ(c.workload.spec<CanarySpec>().timeout_ps, 2'500'000u);
  EXPECT_EQ(c.workload.spec<CanarySpec>().timeout_mode, CanaryTimeoutMode::kClockScan);
  EXPECT_EQ(c.workload.spec<CanarySpec>().elements_per_packet, 256u);
  EXPECT_EQ(c.workload.spec<CanarySpec>().table_size, 32768u);
  EXPECT_EQ(c.resolved["workload"]["canary"]["window_blocks"], 1024);
  EXPECT_EQ(c.resolved["workload"]["canary"]["nic_queue_bytes"], 8192);
  EXPECT_EQ(c.resolved["workload"]["canary"]["retransmit_timeout_us"], 500);
  EXPECT_EQ(c.resolved["workload"]["canary"]["table_partition"], "shared");
  EXPECT_FALSE(c.workload.spec<CanarySpec>().partition_per_job);
  EXPECT_TRUE(ParseScenario(With({"workload.protocol=canary", "workload.canary.table_partition=per_job"}))
                  .workload.spec<CanarySpec>().partition_per_job);
  // Four trees need four candidate roots (one rack has one: RunChecks below).
  const Scenario t = ParseScenario(With({"workload.protocol=static_tree", "workload.static_tree.trees=4",
                                         R"(topology={"type":"leaf_spine","leaves":2,"spines":4,"hosts_per_leaf":4})"}));
  EXPECT_EQ(t.workload.spec<StaticTreeSpec>().trees, 4u);
  EXPECT_EQ(t.resolved["workload"]["static_tree"]["slots_per_tree"], 4096);
}

TEST(BadInput, CanaryKeys) {
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.canary.timeout_us=0"}),
            "workload.canary.timeout_us: must be between 0.001 and 1000000, got 0");
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.canary.table_size=1000"}),
            "workload.canary.table_size: must be a power of two (the index is the id's low bits), got 1000");
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.canary.timeout_mode=polling"}),
            "workload.canary.timeout_mode: must be one of \"exact\", \"clock_scan\", got \"polling\"");
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.canary.elements_per_packet=400"}),
            "workload.canary.elements_per_packet: must be between 1 and 363, got 400");
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.canary.table_size=64",
                     "workload.canary.scan_entries_per_clock=3"}),
            "workload.canary.scan_entries_per_clock: must divide table_size (64), got 3");
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.canary.table_partition=tenant"}),
            "workload.canary.table_partition: must be one of \"shared\", \"per_job\", got \"tenant\"");
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.jobs=20", "workload.canary.table_size=16",
                     "workload.canary.table_partition=per_job"}),
            "workload.canary.table_partition: per_job needs a descriptor per job: 20 jobs, table_size 16");
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.canary.window=8"}),
            "workload.canary.window: unknown key");
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.canary.windows_blocks=8"}),
            "workload.canary.windows_blocks: unknown key (did you mean \"window_blocks\"?)");
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.jobs=2", "workload.job_split=racks"}),
            "workload.job_split: must be one of \"shuffled\", \"contiguous\", got \"racks\"");
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.canary.nic_queue_bytes=-1"}),
            "workload.canary.nic_queue_bytes: must be between 0 and 1073741824, got -1");
  EXPECT_EQ(ErrorOf({"workload.protocol=static_tree", "workload.static_tree.nic_queue_bytes=2e9"}),
            "workload.static_tree.nic_queue_bytes: must be between 0 and 1073741824, got 2000000000");
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.canary.application_id=256"}),
            "workload.canary.application_id: must be between 0 and 255, got 256");
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.dtype=float32"}),
            "workload.dtype: protocol \"canary\" aggregates int32 (the switches add 32-bit integers, "
            "canary-fgcs24 §4.1); use \"int32\"");
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.switchml.pool_size=8"}),
            "workload.switchml: only read with protocol \"switchml\" (this workload's protocol is \"canary\")");
  EXPECT_EQ(ErrorOf({"workload.protocol=ring", "workload.canary.timeout_us=1"}),
            "workload.canary: only read with protocol \"canary\" (this workload's protocol is \"ring\")");
  const std::string ids = ErrorOf({"workload.protocol=canary", "workload.bytes=1099511627776"});
  EXPECT_NE(ids.find("workload.canary.max_failures: "), std::string::npos) << ids;
  EXPECT_NE(ids.find("24-bit sequence"), std::string::npos) << ids;
}

TEST(Scenario, SendNoiseDefaultsOffAndParsesForCanaryAndStaticTree) {
  const Scenario c = ParseScenario(With({"workload.protocol=canary"}));
  EXPECT_EQ(c.workload.spec<SendNoiseSpec>().probability, 0.0);
  EXPECT_EQ(c.workload.spec<SendNoiseSpec>().delay_ps, 1'000'000u);
  EXPECT_EQ(c.resolved["workload"]["send_noise"]["delay_us"], 1);
  const Scenario t = ParseScenario(With({"workload.protocol=static_tree", "workload.send_noise.probability=0.01",
                                         "workload.send_noise.delay_us=2.5"}));
  EXPECT_EQ(t.workload.spec<SendNoiseSpec>().probability, 0.01);
  EXPECT_EQ(t.workload.spec<SendNoiseSpec>().delay_ps, 2'500'000u);
}

TEST(Scenario, JobsDefaultToOne) {
  EXPECT_EQ(ParseScenario(With({"workload.protocol=canary"})).workload.jobs, 1u);
  EXPECT_EQ(ParseScenario(With({"workload.protocol=static_tree", "workload.jobs=4"})).workload.jobs, 4u);
}

TEST(BadInput, JobsKeys) {
  EXPECT_EQ(ErrorOf({"workload.protocol=switchml", "workload.jobs=2"}),
            "workload.jobs: only protocols \"canary\", \"ring\" and \"static_tree\" run concurrent jobs; this "
            "workload's protocol is \"switchml\"");
  EXPECT_EQ(ParseScenario(With({"workload.protocol=ring", "workload.jobs=2"})).workload.jobs, 2u);
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.jobs=0"}),
            "workload.jobs: must be between 1 and 256, got 0");
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.jobs=8", "workload.canary.application_id=250"}),
            "workload.canary.application_id: job j uses application id 250 + j; 8 jobs need ids up to 257, beyond "
            "the 8-bit field (255)");
}

TEST(BadInput, SendNoiseKeys) {
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.send_noise.probability=1.5"}),
            "workload.send_noise.probability: must be between 0 and 1, got 1.5");
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.send_noise.probability=\"high\""}),
            "workload.send_noise.probability: must be a number, got the string \"high\"");
  EXPECT_EQ(ErrorOf({"workload.protocol=static_tree", "workload.send_noise.delay_us=-1"}),
            "workload.send_noise.delay_us: must be between 0 and 1000000, got -1");
  EXPECT_EQ(ErrorOf({"workload.protocol=canary", "workload.send_noise.probabilty=0.1"}),
            "workload.send_noise.probabilty: unknown key (did you mean \"probability\"?)");
  EXPECT_EQ(ErrorOf({"workload.protocol=ring", "workload.send_noise.probability=0.1"}),
            "workload.send_noise: only read with protocol \"canary\" or \"static_tree\" (this workload's protocol "
            "is \"ring\")");
}

TEST(BadInput, SwitchMLKeys) {
  EXPECT_EQ(ErrorOf({"workload.protocol=switchml", "workload.switchml.elements_per_packet=128"}),
            "workload.switchml.elements_per_packet: must be 64 (256 B packets) or 256 (1024 B packets), the two "
            "sizes the P4 program aggregates; got 128");
  EXPECT_EQ(ErrorOf({"workload.protocol=switchml", "workload.switchml.pool_size=8193"}),
            "workload.switchml.pool_size: must be between 1 and 8192, got 8193");
  EXPECT_EQ(ErrorOf({"workload.protocol=switchml", "workload.switchml.timer_mode=fast"}),
            "workload.switchml.timer_mode: must be one of \"paper\", \"upstream\", got \"fast\"");
  EXPECT_EQ(ErrorOf({"workload.protocol=switchml", "workload.switchml.tensors=[4096, 6]"}),
            "workload.switchml.tensors[1]: must be a positive multiple of 4 bytes (whole 32-bit elements), at most "
            "2^40; got 6");
  EXPECT_EQ(ErrorOf({"workload.protocol=switchml", "workload.switchml.worker_udp_port=48865"}),
            "workload.switchml.worker_udp_port: 48865 is in the switch's SwitchML range 0xbee0-0xbeef: switches "
            "would take results for worker packets");
  EXPECT_EQ(ErrorOf({"workload.protocol=switchml", "workload.switchml.warmup_tensors=1"}),
            "workload.switchml.warmup_tensors: 1 warm-up tensors leave nothing to measure: the workload aggregates 1 "
            "(iterations x tensors)");
  EXPECT_EQ(ErrorOf({"workload.protocol=switchml", "workload.switchml.harvest=pipe2"}),
            "workload.switchml.harvest: unknown key (did you mean \"harvest3\"?)");
  EXPECT_EQ(ErrorOf({"workload.protocol=switchml", "workload.ring.rto_us=5"}),
            "workload.ring: only read with protocol \"ring\" or \"panama\" (this workload's protocol is "
            "\"switchml\")");
  EXPECT_EQ(ErrorOf({"workload.data=uniform"}),
            "workload.data: \"uniform\" draws float32 gradients in (-1, 1); it needs dtype \"float32\"");
  EXPECT_EQ(ErrorOf({"workload.dtype=float32", "workload.data=uniform"}),
            "workload.data: \"uniform\" sums are inexact in float32; only protocols \"panama\" (the accelerators' "
            "adder order, bit for bit) and \"switchml\" (error bound) check them; protocol \"ring\" checks the exact "
            "sum bit for bit (use \"hashed\")");
}

TEST(BadInput, StaticTreeKeys) {
  EXPECT_EQ(ErrorOf({"workload.protocol=static_tree", "workload.static_tree.trees=0"}),
            "workload.static_tree.trees: must be between 1 and 1024, got 0");
  EXPECT_EQ(ErrorOf({"workload.protocol=static_tree", "workload.static_tree.slots_per_tree=100"}),
            "workload.static_tree.slots_per_tree: must be a power of two, got 100");
  EXPECT_EQ(ErrorOf({"workload.protocol=static_tree", "workload.static_tree.window_blocks=512",
                     "workload.static_tree.slots_per_tree=256"}),
            "workload.static_tree.slots_per_tree: must be at least window_blocks (512): a host's window of blocks "
            "must not share a slot, got 256");
  EXPECT_EQ(ErrorOf({"workload.protocol=static_tree", "workload.canary.timeout_us=1"}),
            "workload.canary: only read with protocol \"canary\" (this workload's protocol is \"static_tree\")");
  EXPECT_EQ(ErrorOf({"workload.protocol=static_tree", "workload.dtype=float32"}),
            "workload.dtype: protocol \"static_tree\" aggregates int32 (the switches add 32-bit integers, "
            "canary-fgcs24 §4.1); use \"int32\"");
}

TEST(BackgroundFlowList, ExplicitFlowsAreReadSortedAndChecked) {
  const Scenario s = ParseScenario(With({R"(background.flows={"list":[{"src":2,"dst":0,"bytes":1000,"start_us":5},
                                          {"src":1,"dst":3,"bytes":7}]})"}));
  ASSERT_EQ(s.background.flows.list.size(), 2u);
  EXPECT_EQ(s.background.flows.list[0].src, 1u);  // sorted by start time
  EXPECT_EQ(s.background.flows.list[0].start_ps, 0u);
  EXPECT_EQ(s.background.flows.list[1].bytes, 1000u);
  EXPECT_EQ(s.background.flows.list[1].start_ps, 5'000'000u);
  EXPECT_EQ(s.resolved["background"]["flows"]["list"][1]["start_us"], 0);  // echoed with defaults
  EXPECT_THAT(ErrorOf({R"(background.flows={"list":[]})"}), AllOf(AtPath("background.flows.list"), HasSubstr("non-empty")));
  EXPECT_THAT(ErrorOf({R"(background.flows={"list":[{"src":1,"dst":1,"bytes":5}]})"}),
              AllOf(AtPath("background.flows.list[0].dst"), HasSubstr("source")));
  EXPECT_THAT(ErrorOf({R"(background.flows={"list":[{"src":1,"bytes":5}]})"}), AtPath("background.flows.list[0].dst"));
  EXPECT_THAT(ErrorOf({R"(background.flows={"list":[{"src":1,"dst":2,"bytes":5}],"load":0.5})"}),
              AllOf(AtPath("background.flows.load"), HasSubstr("Poisson")));
  EXPECT_THAT(ErrorOf({R"(background.flows={"list":[{"src":1,"dst":9,"bytes":5}]})"}),
              HasSubstr("host 9 does not exist"));
  EXPECT_THAT(ErrorOf({R"(background.flows={"list":[{"src":1,"dst":2,"bytes":5,"size":3}]})"}),
              AtPath("background.flows.list[0].size"));
}

TEST(BadInput, SetValueThatIsNotUtf8) {
  // Found by tests/fuzz/fuzz_scenario.cc: a bare --set word is stored as a
  // string without passing the JSON parser's UTF-8 check, and writing
  // results.json (or quoting it in an error) then threw nlohmann's type_error.
  json doc = Base();
  EXPECT_THAT(OverrideErrorOf(doc, "name=\xff\xfe"), AllOf(StartsWith("--set "), HasSubstr("not valid UTF-8")));
  EXPECT_THAT(OverrideErrorOf(doc, "na\xffme=x"), HasSubstr("not valid UTF-8"));
  EXPECT_EQ(OverrideErrorOf(doc, "name=caf\xc3\xa9"), "<no error>");  // UTF-8 is fine
}

TEST(BadInput, NumbersOutOfRange) {
  // Found by tests/fuzz/fuzz_scenario.cc: nlohmann throws out_of_range (not
  // parse_error) for a number past double's range.
  json doc = Base();
  EXPECT_THAT(OverrideErrorOf(doc, "workload.bytes=0.5e2255555555555555"), HasSubstr("out of range"));
  const fs::path file = fs::temp_directory_path() / "inasim_huge_number.json";
  std::ofstream(file) << R"({"topology": {"type": "single_rack", "hosts": 1e999}})";
  try {
    LoadScenarioJson(file.string());
    ADD_FAILURE() << "accepted";
  } catch (const ScenarioError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("out of range"));
  }
  fs::remove(file);
}

TEST(BadInput, SlowHosts) {
  const Scenario s = ParseScenario(With({R"(faults.hosts=[{"host":3,"delay_us":50,"at_us":2}])"}));
  ASSERT_EQ(s.faults.hosts.size(), 1u);
  EXPECT_EQ(s.faults.hosts[0].host, 3u);
  EXPECT_EQ(s.faults.hosts[0].delay_ps, 50'000'000u);
  EXPECT_EQ(s.faults.hosts[0].at_ps, 2'000'000u);
  EXPECT_THAT(ErrorOf({R"(faults.hosts=[{"host":8,"delay_us":1}])"}),
              AllOf(AtPath("faults.hosts[0].host"), HasSubstr("8 hosts (0..7)")));
  EXPECT_THAT(ErrorOf({R"(faults.hosts=[{"host":1}])"}), AllOf(AtPath("faults.hosts[0].delay_us"), HasSubstr("required")));
  EXPECT_THAT(ErrorOf({R"(faults.hosts=[{"delay_us":1}])"}), AtPath("faults.hosts[0].host"));
  EXPECT_THAT(ErrorOf({R"(faults.hosts={"host":1})"}), AtPath("faults.hosts"));
}

// ------------------------------------------- issue 24: duplicate keys, caps

TEST_F(ScenarioFile, DuplicateKeysNameBothPlaces) {
  // nlohmann keeps the last of two equal keys: the first value was lost silently.
  const std::string f = Write("dup.json",
                              "{\"topology\": {\"type\": \"single_rack\", \"hosts\": 8},\n"
                              "  \"workload\": {\"bytes\": 1024,\n"
                              "                \"bytes\": 4096}}\n");
  EXPECT_THAT(LoadErrorOf(f), AllOf(StartsWith(f + ": "), HasSubstr("duplicate key \"workload.bytes\""),
                                    HasSubstr("line 2, column 16"), HasSubstr("line 3, column 17")));
  const std::string top = Write("top.json", R"({"seed": 1, "seed": 2, "topology": {"type": "single_rack", "hosts": 8}})");
  EXPECT_THAT(LoadErrorOf(top), AllOf(HasSubstr("duplicate key \"seed\""), HasSubstr("line 1, column 2"),
                                      HasSubstr("line 1, column 13")));
  // Escapes are compared decoded, as the parser compares them; arrays give indices.
  const std::string esc = Write("esc.json", R"({"faults": {"links": [{"link": 1}, {"link": 2, "li\u006ek": 3}]}})");
  EXPECT_THAT(LoadErrorOf(esc), HasSubstr("duplicate key \"faults.links[1].link\""));
  // The same key in different objects is fine.
  const std::string ok = Write("ok.json", R"({"topology": {"type": "single_rack", "hosts": 8}, "stop": {"type": 1}})");
  EXPECT_EQ(LoadErrorOf(ok), "<no error>");
}

TEST(BadInput, DuplicateKeysInSetValues) {
  EXPECT_THAT(OverrideErrorOf(Base(), R"(workload={"bytes": 1024, "bytes": 2048})"),
              AllOf(StartsWith("--set \"workload\": "), HasSubstr("duplicate key \"workload.bytes\""),
                    HasSubstr("line 1, column 2"), HasSubstr("line 1, column 17")));
  EXPECT_EQ(OverrideErrorOf(Base(), R"(workload={"bytes": 1024})"), "<no error>");
  EXPECT_EQ(OverrideErrorOf(Base(), R"(description={"bytes)"), "<no error>");  // not JSON: a string
}

TEST_F(ScenarioFile, NonRegularAndOversizedFilesAreRefused) {
  // /dev/zero would be read until memory runs out; a FIFO would block open().
  EXPECT_THAT(LoadErrorOf("/dev/zero"),
              AllOf(StartsWith("/dev/zero: "), HasSubstr("a character device, not a regular file")));
  const fs::path fifo = dir_ / "fifo.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(LoadErrorOf(fifo.string()), HasSubstr("is a FIFO, not a regular file"));
  EXPECT_THAT(LoadErrorOf(dir_.string()), HasSubstr("is a directory, not a regular file"));
  const fs::path big = dir_ / "big.json";
  std::ofstream(big).close();
  fs::resize_file(big, (64ull << 20) + 1);  // sparse: no disk used
  EXPECT_THAT(LoadErrorOf(big.string()), AllOf(HasSubstr("too large"), HasSubstr("at most 64 MiB")));
  // Files a scenario names: flow-size CDFs and LIBSVM datasets, with the key named.
  EXPECT_THAT(ErrorOf({R"(background.flows={"stop_us":50,"size_distribution":"/dev/zero"})"}),
              AllOf(AtPath("background.flows.size_distribution"), HasSubstr("/dev/zero: is a character device")));
  const std::string cdf_fifo = R"(background.flows={"stop_us":50,"size_distribution":")" + fifo.string() + "\"}";
  EXPECT_THAT(ErrorOf({cdf_fifo.c_str()}), AllOf(AtPath("background.flows.size_distribution"), HasSubstr("FIFO")));
  EXPECT_THAT(ErrorOf({"workload.protocol=p4sgd", R"(workload.p4sgd={"dataset":"/dev/zero"})"}),
              AllOf(AtPath("workload.p4sgd.dataset"), HasSubstr("/dev/zero: is a character device")));
}

// ------------------------------- issue 24: validate rejects what run rejects

TEST(RunChecks, SwitchMLAtMost32WorkersPerSwitch) {
  EXPECT_THAT(ErrorOf({"topology.hosts=33", "workload.protocol=switchml"}),
              AllOf(AtPath("workload.hosts"), HasSubstr("at most 32 children"), HasSubstr("tor")));
  // 32 workers need 256 B packets: 1024 B ones allow 16 (next test).
  EXPECT_EQ(ErrorOf({"topology.hosts=33", "workload.protocol=switchml", "workload.hosts.count=32",
                     "workload.switchml.elements_per_packet=64"}),
            "<no error>");
}

// Upstream's folded pipeline (1024 B packets) has next_step entries for worker
// ids 0..15 only; such a job used to run and stall until max_sim_time.
TEST(RunChecks, SwitchMLAtMost16WorkersPerSwitchWith1024BytePackets) {
  const auto folded = AllOf(AtPath("workload.hosts"), HasSubstr("1024 B"), HasSubstr("at most 16 children"),
                            HasSubstr("controller/next_step_selector.py:93"));
  EXPECT_THAT(ErrorOf({"topology.hosts=17", "workload.protocol=switchml"}),
              AllOf(folded, HasSubstr("tor would have 17")));
  EXPECT_EQ(ErrorOf({"topology.hosts=17", "workload.protocol=switchml", "workload.hosts.count=16"}), "<no error>");
  EXPECT_EQ(ErrorOf({"topology.hosts=17", "workload.protocol=switchml", "workload.switchml.elements_per_packet=64"}),
            "<no error>");
  // Two aggregation levels: a ToR with 18 hosts, and a root with 17 ToRs.
  EXPECT_THAT(ErrorOf({R"(topology={"type":"leaf_spine","leaves":2,"spines":2,"hosts_per_leaf":18})",
                       "workload.protocol=switchml"}),
              AllOf(folded, HasSubstr("leaf0 would have 18")));
  EXPECT_THAT(ErrorOf({R"(topology={"type":"leaf_spine","leaves":17,"spines":1,"hosts_per_leaf":1})",
                       "workload.protocol=switchml"}),
              AllOf(folded, HasSubstr("spine0 would have 17")));
  EXPECT_EQ(ErrorOf({R"(topology={"type":"leaf_spine","leaves":2,"spines":2,"hosts_per_leaf":18})",
                     "workload.protocol=switchml", "workload.switchml.elements_per_packet=64"}),
            "<no error>");
}

TEST(RunChecks, P4SGDOneSwitchAtMost32Workers) {
  EXPECT_THAT(ErrorOf({"topology.hosts=33", "workload.protocol=p4sgd"}),
              AllOf(AtPath("workload.hosts"), HasSubstr("1..32 workers"), HasSubstr("got 33")));
  EXPECT_THAT(ErrorOf({R"(topology={"type":"leaf_spine","leaves":2,"spines":1,"hosts_per_leaf":2})",
                       "workload.protocol=p4sgd"}),
              AllOf(AtPath("workload.hosts"), HasSubstr("p4sgd runs on one switch")));
  EXPECT_THAT(ErrorOf({"workload.protocol=p4sgd", R"(workload.p4sgd={"features":4})"}),
              AllOf(AtPath("workload.p4sgd.features"), HasSubstr("4 features cannot be split over 8 workers")));
  EXPECT_THAT(ErrorOf({"workload.protocol=p4sgd", "workload.hosts.count=3", R"(workload.p4sgd={"parallelism":"data"})"}),
              AllOf(AtPath("workload.p4sgd.minibatch"), HasSubstr("64 must split evenly over 3 workers")));
  EXPECT_THAT(ErrorOf({"workload.protocol=p4sgd", R"(workload.p4sgd={"samples":32,"minibatch":64})"}),
              AllOf(AtPath("workload.p4sgd.samples"), HasSubstr("make no mini-batch")));
}

TEST(RunChecks, MoreJobsThanHostsAllow) {
  EXPECT_THAT(ErrorOf({"workload.protocol=canary", "workload.jobs=5"}),
              AllOf(AtPath("workload.jobs"), HasSubstr("5 jobs need at least 2 hosts each; 8 hosts")));
  EXPECT_THAT(ErrorOf({"workload.jobs=3", "workload.hosts.count=5"}), AtPath("workload.jobs"));  // ring jobs
  EXPECT_EQ(ErrorOf({"workload.protocol=static_tree", "workload.jobs=4"}), "<no error>");
}

TEST(RunChecks, CanaryNeedsSwitchesOfAtMost64Ports) {
  EXPECT_THAT(ErrorOf({"topology.hosts=65", "workload.protocol=canary"}),
              AllOf(AtPath("workload.protocol"), HasSubstr("65 ports"), HasSubstr("holds 64")));
  EXPECT_EQ(ErrorOf({"topology.hosts=64", "workload.protocol=canary"}), "<no error>");
  // 31 ports per shard and 64 ports: 3 shards need 2 more bits than the 32-bit field has.
  EXPECT_THAT(ErrorOf({"topology.hosts=64", "workload.protocol=canary", "workload.canary.multicast_shard_ports=31"}),
              AllOf(AtPath("workload.canary"), HasSubstr("multicast_shard_ports")));
  EXPECT_THAT(ErrorOf({"workload.protocol=static_tree", "workload.static_tree.trees=2"}),
              AllOf(AtPath("workload.static_tree.trees"), HasSubstr("2 trees")));  // one rack: one root
}

TEST(RunChecks, PanamaJobsHostsAndTrees) {
  EXPECT_THAT(ErrorOf({"workload.protocol=panama", "workload.dtype=float32",
                       R"(workload.panama={"jobs":[{"hosts":{"count":9}}]})"}),
              AtPath("workload.panama.jobs[0].hosts.count"));
  EXPECT_THAT(ErrorOf({"workload.protocol=panama", "workload.dtype=float32",
                       R"(workload.panama={"jobs":[{"hosts":[0,1,2]},{"hosts":[2,3]}]})"}),
              AllOf(AtPath("workload.panama.jobs[1].hosts"), HasSubstr("host 2 is already a worker")));
  EXPECT_THAT(ErrorOf({"workload.protocol=panama", "workload.dtype=float32",
                       R"(workload.panama={"tree_roots":["spine9"]})"}),
              AllOf(AtPath("workload.panama.tree_roots"), HasSubstr("no switch named \"spine9\"")));
}

TEST(RunChecks, MemoryEstimateNamesTheKey) {
  // The documented maximum tensor over 1,024 hosts: terabytes of per-packet state.
  EXPECT_THAT(ErrorOf({"topology.hosts=1024", "workload.bytes=1099511627776"}),
              AllOf(AtPath("workload.bytes"), HasSubstr("per-packet state"), HasSubstr("of memory")));
  EXPECT_THAT(ErrorOf({"topology.hosts=1024", "workload.protocol=switchml", "workload.hosts.count=32",
                       "workload.dtype=float32", "workload.bytes=1099511627776",
                       "workload.switchml.elements_per_packet=64"}),
              AtPath("workload.bytes"));  // 32 workers x 2^32 packets x 5 bytes
  // Poisson flows are drawn up front: billions of them between start and stop.
  EXPECT_THAT(ErrorOf({"topology.hosts=1024", R"(background.flows={"stop_us":1e9,"load":1})"}),
              AllOf(AtPath("background.flows.stop_us"), HasSubstr("flows")));
  EXPECT_EQ(ErrorOf({R"(background.flows={"stop_us":1000})"}), "<no error>");
}

TEST(Warnings, TimersShorterThanAFrameAndLongPeriodicEvents) {
  auto warnings = [](std::initializer_list<const char*> sets) {
    const Scenario s = ParseScenario(With(sets));
    return SlowRunWarnings(s, BuildTopology(s));
  };
  EXPECT_TRUE(warnings({}).empty());
  // 1 ns against one 1524-byte frame at 100 Gb/s (122 ns).
  const auto rto = warnings({"workload.ring.rto_us=0.001"});
  ASSERT_EQ(rto.size(), 1u);
  EXPECT_THAT(rto[0], AllOf(StartsWith("workload.ring.rto_us: "), HasSubstr("shorter than one 1500-byte frame")));
  EXPECT_TRUE(warnings({"workload.ring.rto_us=0.2"}).empty());
  EXPECT_THAT(warnings({"workload.protocol=canary", "workload.canary.retransmit_timeout_us=0.01"}).at(0),
              StartsWith("workload.canary.retransmit_timeout_us: "));
  EXPECT_THAT(warnings({"workload.protocol=switchml", "workload.switchml.timeout_us=0.001"}).at(0),
              StartsWith("workload.switchml.timeout_us: "));
  EXPECT_THAT(warnings({"outputs.sample_interval_us=0.001"}).at(0), StartsWith("outputs.sample_interval_us: "));
  EXPECT_THAT(warnings({"workload.protocol=canary", "workload.canary.timeout_mode=clock_scan",
                        "stop.max_sim_time_ms=100000"}).at(0),  // 1e10 clock packets
              StartsWith("workload.canary.clock_period_ns: "));
}

TEST(Warnings, ShippedScenariosValidateWithoutWarnings) {
  size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(RepoRoot() / "scenarios")) {
    if (e.path().extension() != ".json" || e.path().parent_path().filename() == "sweeps") continue;
    if (e.path().filename() == "paper-claims.json") continue;  // a paper's claims (docs/PAPER-CLAIMS.md)
    // Committed figure results and their provenance (docs/PAPER-CLAIMS.md), not scenarios.
    if (e.path().string().find("/results/") != std::string::npos) continue;
    SCOPED_TRACE(e.path().string());
    const Scenario s = ParseScenario(LoadScenarioJson(e.path().string()), e.path().parent_path().string());
    EXPECT_EQ(SlowRunWarnings(s, BuildTopology(s)), std::vector<std::string>{});
    ++n;
  }
  EXPECT_GE(n, 40u);
}

}  // namespace
}  // namespace inasim
