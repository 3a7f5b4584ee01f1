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
  int failures = 0;  ///< register actions / tables / pipelines with at least one differing input
  int pipelines = 0;
  uint64_t pipeline_packets = 0;
};

/// Runs every register action and const/controller table the model binds for
/// `program`, `inputs` random inputs each (edge values included; exhaustive
/// when the key space is small), adding one row per action/table to `report`;
/// then, when the model binds its pipeline, inputs / 20 random frames (at least
/// 1,000) through the upstream parser, ingress and deparser (p4pipe.h) and the
/// model, 48 frames per fresh switch, comparing each frame's fate and bytes,
/// for each of the binding's variants (the program read again from
/// `source_root` with its #defines overridden).
DiffSummary RunDifferential(const std::string& program, const p4src::Program& prog, const nlohmann::json& manifest,
                            uint64_t inputs, uint64_t seed, CheckReport& report, const std::string& source_root);

}  // namespace inasim::p4tools
