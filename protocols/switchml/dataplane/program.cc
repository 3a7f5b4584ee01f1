// inasim-p4's entry to this program (p4model/common/dataplane_registry.h):
// the dataplane built from its JSON configuration.
#include "p4model/common/dataplane_registry.h"
#include "protocols/switchml/dataplane/config.h"
#include "protocols/switchml/dataplane/switchml_dataplane.h"

namespace inasim::p4::switchml {

std::unique_ptr<Dataplane> MakeProgram(const std::string& config_json) {
  return std::make_unique<SwitchMLDataplane>(SwitchMLConfig::FromJson(config_json));
}

}  // namespace inasim::p4::switchml
