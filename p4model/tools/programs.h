// The dataplane programs inasim-p4 can drive, by name.
#pragma once

#include "p4model/common/dataplane.h"

#include <memory>
#include <string>

namespace inasim::p4tools {

/// A program built from its JSON configuration (what its controller would
/// install); nullptr for an unknown name; std::invalid_argument for a bad config.
std::unique_ptr<p4::Dataplane> MakeProgram(const std::string& name, const std::string& config_json);
/// "switchml, ..." for usage messages.
std::string ProgramNames();

}  // namespace inasim::p4tools
