// The dataplane programs of the registered protocols (generated at configure
// time from protocols/*/protocol.json's "dataplane" by
// cmake/InasimProtocols.cmake): what inasim-p4, the fuzz targets and the
// conformance tools can drive by name. Pure C++, no ns-3.
#pragma once

#include "p4model/common/dataplane.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace inasim::p4 {

struct DataplaneProgram {
  std::string_view name;  ///< the program's name (inasim-p4 PROGRAM)
  /// Built from its JSON configuration (what its controller would install);
  /// std::invalid_argument for a bad configuration.
  std::unique_ptr<Dataplane> (*make)(const std::string& config_json);
};

/// Every registered program, in protocol-folder order.
const std::vector<DataplaneProgram>& DataplanePrograms();

}  // namespace inasim::p4
