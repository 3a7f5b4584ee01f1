#include "ina/scenario.h"

#include "ina/addressing.h"
#include "ina/protocol-checks.h"
#include "ina/scenario-checks.h"
#include "ina/scenario-sections.h"
#include "ina/workload.h"
#include "topology/topology.h"

#include "common/bounded_file.h"
#include "common/json_text.h"
#include "common/spec_reader.h"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace inasim {

using nlohmann::json;

namespace {

using spec::EditDistance;
using spec::Reader;

}  // namespace

topo::Topology BuildTopology(const Scenario& s) {
  const topo::LinkSpec host{static_cast<uint64_t>(s.links.host_rate_gbps * 1e9), s.links.host_delay_ps};
  const topo::LinkSpec fabric{static_cast<uint64_t>(s.links.fabric_rate_gbps * 1e9), s.links.fabric_delay_ps};
  switch (s.topology.type) {
    case TopologyType::kSingleRack: return topo::BuildSingleRack(s.topology.hosts, host);
    case TopologyType::kLeafSpine:
      return topo::BuildLeafSpine(s.topology.leaves, s.topology.spines, s.topology.hosts_per_leaf, host, fabric);
    case TopologyType::kFatTree: return topo::BuildFatTree(s.topology.k, host, fabric, s.topology.hosts_per_edge);
  }
  throw ScenarioError("topology.type: unsupported");
}

json LoadScenarioJson(const std::string& file) {
  std::string text;
  try {
    text = util::ReadBoundedFile(file, util::kMaxJsonFileBytes, "scenario file");
  } catch (const util::FileReadError& e) {
    throw ScenarioError(e.what());
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw ScenarioError(fmt::format("{}: not valid JSON: {}", file, e.what()));
  } catch (const json::out_of_range& e) {  // e.g. 1e999: not representable
    throw ScenarioError(fmt::format("{}: a number out of range: {}", file, e.what()));
  }
  // The parser keeps the last of two equal keys; a scenario must not lose the first silently.
  if (const auto dup = util::FindDuplicateKey(text)) throw ScenarioError(fmt::format("{}: {}", file, dup->Describe()));
  return doc;
}

void ApplyOverride(json& doc, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ScenarioError(fmt::format("--set {}: expected PATH=VALUE, e.g. workload.bytes=1048576", assignment));
  const std::string path = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  json value;
  bool is_json = true;
  try {
    value = json::parse(text);
  } catch (const json::parse_error&) {
    is_json = false;
    value = text;  // bare words are strings: --set topology.type=fat_tree
  } catch (const json::out_of_range& e) {  // a number past double's range (found by fuzz_scenario)
    throw ScenarioError(fmt::format("--set {}: the value is a number out of range ({})",
                                    json(path).dump(-1, ' ', false, json::error_handler_t::replace), e.what()));
  }
  if (is_json) {  // one key twice in an object of the value?
    if (const auto dup = util::FindDuplicateKey(text)) {
      util::DuplicateKey at_path = *dup;
      at_path.path = path + (dup->path.empty() || dup->path.front() == '[' ? "" : ".") + dup->path;
      throw ScenarioError(fmt::format("--set {}: {} in the value", json(path).dump(-1, ' ', false,
                                      json::error_handler_t::replace), at_path.Describe()));
    }
  }
  // Scenario text must be UTF-8 (a file's JSON parser checks that; a bare
  // --set word does not pass through it), or results.json could not be written.
  try {
    (void)json(path).dump();
    (void)value.dump();
  } catch (const json::type_error&) {
    throw ScenarioError(fmt::format("--set {}: not valid UTF-8", json(assignment).dump(-1, ' ', false,
                                                                                     json::error_handler_t::replace)));
  }
  json* cur = &doc;
  std::string walked;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string seg = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (seg.empty()) throw ScenarioError(fmt::format("--set {}: empty path segment", assignment));
    if (!cur->is_object())
      throw ScenarioError(fmt::format("--set {}: {} is not an object", assignment,
                                      walked.empty() ? "the scenario" : walked));
    walked += (walked.empty() ? "" : ".") + seg;
    if (dot == std::string::npos) {
      if (value.is_null()) cur->erase(seg);  // --set key=null removes a key
      else (*cur)[seg] = value;
      return;
    }
    json& next = (*cur)[seg];
    if (next.is_null()) next = json::object();
    cur = &next;
    start = dot + 1;
  }
}

namespace {

/// Unknown top-level keys first, so a misspelt required section is reported
/// as a misspelling ("did you mean"), not as missing.
void CheckTopLevelKeys(const json& doc) {
  if (doc.is_object()) {
    static const std::vector<std::string> kTop = ScenarioSection().Keys();
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      bool known = false;
      std::string best;
      size_t best_d = 3;
      for (const std::string& k : kTop) {
        known |= it.key() == k;
        const size_t d = EditDistance(it.key(), k);
        if (d < best_d) { best_d = d; best = k; }
      }
      if (!known)
        throw ScenarioError(best.empty() ? fmt::format("{}: unknown key", it.key())
                                         : fmt::format("{}: unknown key (did you mean \"{}\"?)", it.key(), best));
    }
  }
}

/// Workload hosts must fit the topology.
void CheckWorkloadHosts(const Scenario& s, uint32_t nh) {
  if (s.workload.type != WorkloadType::kNone) {
    const HostSelection& sel = s.workload.hosts;
    for (size_t i = 0; i < sel.list.size(); ++i)
      if (sel.list[i] >= nh)
        throw ScenarioError(fmt::format("workload.hosts[{}]: host {} does not exist (the topology has {} hosts)", i, sel.list[i], nh));
    if (sel.count > nh)
      throw ScenarioError(fmt::format("workload.hosts.count: {} hosts asked for, the topology has {}", sel.count, nh));
    const uint32_t n = !sel.list.empty() ? static_cast<uint32_t>(sel.list.size()) : sel.count ? sel.count : nh;
    // One P4SGD worker still aggregates through the switch (the baseline of p4sgd Fig. 12).
    const uint32_t min_hosts =
        s.workload.type == WorkloadType::kAllreduce ? FindProtocol(s.workload.protocol)->min_hosts_per_job : 2;
    if (n < min_hosts)
      throw ScenarioError(fmt::format("workload.hosts: needs at least {} hosts, got {}", min_hosts, n));
    if (s.workload.type == WorkloadType::kAllreduce && s.workload.dtype == DType::kFloat32 &&
        s.workload.data == DataPattern::kHashed && n > TensorData::kMaxFloatHashedRanks)
      throw ScenarioError(fmt::format("workload.dtype: float32 hashed data is exact up to {} ranks; use int32",
                                      TensorData::kMaxFloatHashedRanks));
  }
}

void CheckBackgroundHosts(const Scenario& s, uint32_t nh, const char* path, const HostSelection& sel) {
  for (size_t i = 0; i < sel.list.size(); ++i)
    if (sel.list[i] >= nh)
      throw ScenarioError(fmt::format("{}.hosts[{}]: host {} does not exist (the topology has {} hosts)", path, i, sel.list[i], nh));
  if (sel.count > nh)
    throw ScenarioError(fmt::format("{}.hosts.count: {} hosts asked for, the topology has {}", path, sel.count, nh));
  if (!sel.others && sel.list.empty() && sel.count == 1)
    throw ScenarioError(fmt::format("{}.hosts.count: needs at least 2 hosts, got 1", path));
  if (sel.others) {
    if (s.workload.type == WorkloadType::kNone)
      throw ScenarioError(fmt::format("{}.hosts: \"others\" means the hosts the workload does not use, but workload.type is \"none\"", path));
    const HostSelection& w = s.workload.hosts;
    const uint32_t used = !w.list.empty() ? static_cast<uint32_t>(w.list.size()) : w.count ? w.count : nh;
    if (nh - used < 2)
      throw ScenarioError(fmt::format("{}.hosts: \"others\" leaves {} hosts outside the workload; at least 2 are needed", path, nh - used));
  }
}

/// Background hosts must fit the topology (and leave room for "others").
void CheckBackgroundHostsFit(const Scenario& s, uint32_t nh) {
  if (s.background.flows.enabled && s.background.flows.list.empty())
    CheckBackgroundHosts(s, nh, "background.flows", s.background.flows.hosts);
  for (size_t i = 0; i < s.background.flows.list.size(); ++i) {
    const congestion::FlowSpec& f = s.background.flows.list[i];
    for (const uint32_t h : {f.src, f.dst})
      if (h >= nh)
        throw ScenarioError(fmt::format("background.flows.list: host {} does not exist (the topology has {} hosts)", h, nh));
  }
  if (s.background.congestion.enabled) CheckBackgroundHosts(s, nh, "background.congestion", s.background.congestion.hosts);
}

}  // namespace

Scenario ParseScenario(const json& doc, const std::string& base_dir) {
  Scenario s;
  s.base_dir = base_dir;
  if (doc.is_object()) CheckTopLevelKeys(doc);
  Reader top(&doc, "", &s.resolved);
  topo::Topology t;  // built by the section once the keys it depends on were read
  ScenarioSection().Parse(top, s, ScenarioInput{&s, base_dir, &t});
  top.Done();
  const uint32_t nh = t.num_hosts();
  CheckWorkloadHosts(s, nh);
  CheckBackgroundHostsFit(s, nh);
  CheckWorkloadPlacement(s, t);  // what building the workload would reject at run time
  return s;
}

}  // namespace inasim
