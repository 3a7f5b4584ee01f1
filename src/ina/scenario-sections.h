// What the protocols' scenario parsers (protocols/<name>/host/spec.cc) share
// with the scenario core: the time units of key names, the host-selection
// reader and its declaration, and the core's own sections (spec::Section:
// one declaration per key gives parsing, docs tables and the JSON Schema). A
// protocol parses its own section through its registry entry
// (Protocol::parse), after the core has read the keys every allreduce shares.
#pragma once

#include "common/spec_fields.h"
#include "common/spec_reader.h"
#include "ina/scenario.h"

#include <nlohmann/json.hpp>

#include <string>

namespace inasim {

/// Picoseconds per unit of a key written in _ns, _us, _ms.
inline constexpr double kPsPerNs = 1e3, kPsPerUs = 1e6, kPsPerMs = 1e9;

/// `hosts`: "all", a list of host ids, {"count", "placement"}, or (when
/// `allow_others`) "others", into `sel`; echoed into the resolved scenario.
void ParseHosts(spec::Reader& w, HostSelection& sel, bool allow_others = false);
/// The schema of a `hosts` key (every form ParseHosts reads).
nlohmann::json HostSelectionSchema(bool allow_others);
/// The object form of `hosts` ({"count", "placement"}): its docs table.
const spec::Doc& HostSelectionObjectDoc();
/// The docs row of a `hosts` key (`help` its meaning where it is read).
spec::KeyDoc HostSelectionKeyDoc(const char* help);

/// What the core sections' bounds and checks may look at besides their own
/// struct: the scenario parsed so far (sections are read in declaration
/// order), the scenario file's directory (relative file names), and the
/// topology, built after the sections it depends on (for faults).
struct ScenarioInput {
  const Scenario* scenario = nullptr;
  std::string base_dir;
  topo::Topology* topology = nullptr;
};

/// The whole scenario, declared: the top-level keys and every core section
/// below them; protocols' sections come in through the registry
/// (Protocol::sections). ParseScenario reads with it; docs and `inasim
/// schema` are generated from it.
const spec::Section<Scenario, ScenarioInput>& ScenarioSection();
/// The workload object (type, hosts, the allreduce keys, the protocol's own).
const spec::Section<Scenario, ScenarioInput>& WorkloadSection();

/// The scenario's JSON Schema (draft 2020-12), for editor completion.
nlohmann::json ScenarioJsonSchema();
/// Every declared section (the core's and each registered protocol's), once,
/// in docs order: one docs/SCENARIO.md table each.
std::vector<const spec::Doc*> ScenarioDocs();

}  // namespace inasim
