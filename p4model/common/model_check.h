// The programs `inasim-p4 check` compares with the upstream P4 source they
// mirror (p4model/tools/README.md), generated at configure time from the
// protocols whose protocol.json says "model_check": true (by
// cmake/InasimProtocols.cmake, next to the dataplane registry). Each such
// protocol's dataplane folder gives its description (describe.cc) and the
// bindings below (model_bindings.cc): which of its C++ functions mirrors which
// upstream register action and table. Pure C++, no ns-3.
#pragma once

#include "p4model/common/model_description.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace inasim::p4 {

/// The model side of a register action: `cell` in/out (one uint64_t per
/// element field, masked), `in` in the order of `inputs` (the names of the
/// action's outside reads, as the upstream body spells them); returns the result.
struct RegisterActionBinding {
  std::vector<std::string> inputs;
  std::function<uint64_t(uint64_t* cell, const uint64_t* in)> run;
};

/// The model side of a table: its action's name and arguments for key values
/// given in the table's key order.
using TableResult = std::pair<std::string, std::vector<uint64_t>>;
using TableBinding = std::function<TableResult(const uint64_t* keys)>;

struct ModelCheckedProgram {
  std::string_view name;  ///< inasim-p4 check PROGRAM (the protocol's name)
  describe::ModelDescription (*describe)();
  /// The model function of upstream register action "Control.action"; nullopt: none.
  std::optional<RegisterActionBinding> (*bind_register_action)(const std::string& name);
  /// The model lookup of upstream table "Control.table"; nullopt: none.
  std::optional<TableBinding> (*bind_table)(const std::string& name);
};

/// Every model-checked program, in protocol-folder order (generated).
const std::vector<ModelCheckedProgram>& ModelCheckedPrograms();

}  // namespace inasim::p4
