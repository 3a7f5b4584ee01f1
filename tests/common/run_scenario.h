// Whole-scenario runs for the ns-3 tests: a scenario document with `--set`
// style overrides, run without progress output, and the ScenarioError a bad
// one is rejected with.
#pragma once

#include "ina/runner.h"
#include "ina/scenario.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace inasim::testing {

/// Runs `doc` with `sets` ("key=value", as `--set`) applied in order.
inline RunResult RunQuietly(nlohmann::json doc, const std::vector<std::string>& sets = {}) {
  for (const auto& s : sets) ApplyOverride(doc, s);
  RunOptions o;
  o.progress = ProgressMode::kOff;
  return RunScenario(ParseScenario(doc), o);
}

/// The message of the ScenarioError a run of `doc` throws; "no error" if none.
inline std::string RunErrorOf(const nlohmann::json& doc) {
  try {
    RunQuietly(doc);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace inasim::testing
