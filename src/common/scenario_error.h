// ScenarioError: the one exception type for a problem in the user's input.
// Kept apart from ina/scenario.h so that code without ns-3 (common/spec_reader.h,
// tools, tests) can throw and catch it without pulling in the scenario types.
#pragma once

#include <stdexcept>

namespace inasim {

/// A problem in the user's input (scenario file, --set, CLI flag). Exit code 2.
class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace inasim
