// inasim-p4 check / manifest: compares a model's description of itself with the
// declarations extracted from the upstream P4 source (and the controller's
// Python entry lists), through the committed upstream-manifest.json.
#pragma once

#include "p4model/common/model_check.h"
#include "p4model/common/model_description.h"
#include "p4model/tools/p4reader.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace inasim::p4tools {
namespace describe = inasim::p4::describe;  // the models' self-descriptions

/// One line of the check's table.
struct CheckRow {
  enum class Status { kMatch, kMismatch, kNotModeled };
  std::string kind;  ///< "header", "register", "table", "entry", "drift", "differential", ...
  std::string item;
  Status status = Status::kMatch;
  std::string detail;
};

struct CheckReport {
  std::vector<CheckRow> rows;
  void Add(std::string kind, std::string item, CheckRow::Status s, std::string detail = "") {
    rows.push_back({std::move(kind), std::move(item), s, std::move(detail)});
  }
  int Count(CheckRow::Status s) const;
  /// Prints the table (mismatches with their details; matches one line each unless !verbose).
  void Print(std::ostream& out, bool verbose) const;
};

/// A model-checked program by name (p4model/common/model_check.h); throws
/// std::invalid_argument naming the known ones.
const p4::ModelCheckedProgram& ModelChecked(const std::string& program);
/// Its description.
describe::ModelDescription ModelFor(const std::string& program);
/// The model-checked programs' names, joined with `separator` (usage and errors).
std::string ModelCheckedNames(const std::string& separator);

/// Reads the upstream program under `src_root` (the checkout's root) and returns
/// its manifest: every header/struct with field widths and offsets, registers,
/// register actions (no bodies), tables with keys, actions and const entries,
/// and the entries the model says its controller installs
/// (ModelDescription::controller_entries). Throws p4src::ReadError.
nlohmann::json ExtractManifest(const describe::ModelDescription& model, const p4src::Program& program,
                               const std::string& src_root);

/// Model description vs manifest: headers, registers, tables and their entries.
void CompareModel(const describe::ModelDescription& model, const nlohmann::json& manifest, CheckReport& report);

/// Committed manifest vs a fresh extraction: any difference is drift.
void CompareDrift(const nlohmann::json& committed, const nlohmann::json& fresh, CheckReport& report);

/// Parses the entry tuples a controller's Python installs, as `desc` says
/// where and how (SwitchML's NextStepSelector: next_step_selector.py's
/// add_default_entries, with the IntEnums of common.py); returns the entries
/// as the manifest's JSON list. Throws p4src::ReadError naming file:line.
nlohmann::json ReadControllerEntries(const std::string& src_root, const describe::ControllerEntriesDesc& desc);

}  // namespace inasim::p4tools

namespace inasim::p4tools {

/// `inasim-p4 check ...` and `inasim-p4 manifest ...` (args[0] is the subcommand).
/// Returns the exit code: 0 no mismatch, 1 mismatches, 2 bad usage or unreadable input.
int CheckCommand(const std::vector<std::string>& args);
/// `inasim-p4 check|manifest --help`: the usage on stdout, exit code 0.
int CommandHelp(const std::string& command);
int ManifestCommand(const std::vector<std::string>& args);

}  // namespace inasim::p4tools
