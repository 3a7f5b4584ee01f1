// The SwitchML model's description of itself (headers, registers, tables and
// their entries), for inasim-p4 check (p4model/tools/README.md).
#pragma once

#include "p4model/common/model_check.h"
#include "p4model/common/model_description.h"
#include "protocols/switchml/dataplane/controls.h"
#include "protocols/switchml/dataplane/next_step_selector.h"

namespace inasim::p4::switchml {

/// Built from the model's constants, register objects and entry arrays: a
/// change to any of them shows up as a mismatch against the upstream manifest.
describe::ModelDescription Describe();
/// inasim-p4 check's differential runs (model_bindings.cc): the model function
/// of upstream register action / table "Control.name", or nullopt.
std::optional<RegisterActionBinding> BindRegisterAction(const std::string& name);
std::optional<TableBinding> BindTable(const std::string& name);

// P4 action names of the model's action enums (the table descriptions and the
// differential runs compare actions by these names).
const char* ActionName(UpdateAndCheckWorkerBitmap::Action a);
const char* ActionName(WorkersCounter::Action a);
const char* ActionName(Exponents::Action a);
const char* ActionName(Processor::Action a);
const char* ActionName(NextStepSelector::Action a);

}  // namespace inasim::p4::switchml
