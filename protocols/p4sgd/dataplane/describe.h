// The P4SGD model's description of itself in its public-p4 mode (the mode that
// claims to be RC4ML/P4FPGA p4/p4fpga.p4), for inasim-p4 check
// (p4model/tools/README.md). The paper mode has no P4 source to compare with.
#pragma once

#include "p4model/common/model_check.h"
#include "p4model/common/model_description.h"

namespace inasim::p4::p4sgd {

/// Built from the model's constants, register objects and entry arrays.
describe::ModelDescription Describe();
/// inasim-p4 check's differential runs (model_bindings.cc): the model function
/// of upstream register action / table "Control.name", or nullopt.
std::optional<RegisterActionBinding> BindRegisterAction(const std::string& name);
std::optional<TableBinding> BindTable(const std::string& name);

}  // namespace inasim::p4::p4sgd
