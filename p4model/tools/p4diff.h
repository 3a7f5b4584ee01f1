// Differential runs: the upstream RegisterAction bodies and const-entry tables,
// evaluated by p4eval from the P4 source, against the C++ model's register
// action functions and table lookups, on the same inputs.
#pragma once

#include "p4model/tools/p4check.h"

namespace inasim::p4tools {

struct DiffSummary {
  int register_actions = 0;
  int tables = 0;
  uint64_t inputs = 0;
  int failures = 0;  ///< register actions / tables with at least one differing input
};

/// Runs every register action and const/controller table the model binds for
/// `program`, `inputs` random inputs each (edge values included; exhaustive
/// when the key space is small), adding one row per action/table to `report`.
DiffSummary RunDifferential(const std::string& program, const p4src::Program& prog, const nlohmann::json& manifest,
                            uint64_t inputs, uint64_t seed, CheckReport& report);

}  // namespace inasim::p4tools
