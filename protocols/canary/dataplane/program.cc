// inasim-p4's entry to this program (p4model/common/dataplane_registry.h):
// the dataplane built from its JSON configuration.
#include "p4model/common/dataplane_registry.h"
#include "protocols/canary/dataplane/config.h"
#include "protocols/canary/dataplane/canary_dataplane.h"

namespace inasim::p4::canary {

std::unique_ptr<Dataplane> MakeProgram(const std::string& config_json) {
  return std::make_unique<CanaryDataplane>(CanaryConfig::FromJson(config_json));
}

}  // namespace inasim::p4::canary
