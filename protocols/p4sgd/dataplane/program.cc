// inasim-p4's entry to this program (p4model/common/dataplane_registry.h):
// the dataplane built from its JSON configuration.
#include "p4model/common/dataplane_registry.h"
#include "protocols/p4sgd/dataplane/config.h"
#include "protocols/p4sgd/dataplane/p4sgd_dataplane.h"

namespace inasim::p4::p4sgd {

std::unique_ptr<Dataplane> MakeProgram(const std::string& config_json) {
  return std::make_unique<P4SGDDataplane>(P4SGDConfig::FromJson(config_json));
}

}  // namespace inasim::p4::p4sgd
