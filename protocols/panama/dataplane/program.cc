// inasim-p4's entry to this program (p4model/common/dataplane_registry.h):
// the dataplane built from its JSON configuration.
#include "p4model/common/dataplane_registry.h"
#include "protocols/panama/dataplane/config.h"
#include "protocols/panama/dataplane/panama_dataplane.h"
#include "protocols/panama/dataplane/tree_switch.h"

namespace inasim::p4::panama {

// With "tree_routes" in a job, the accelerator of a tree switch (results
// steered along the job's trees, as in a simulation); else the accelerator alone.
std::unique_ptr<Dataplane> MakeProgram(const std::string& config_json) {
  if (TreeSwitchConfig::HasRoutes(config_json))
    return std::make_unique<PanamaTreeSwitch>(TreeSwitchConfig::FromJson(config_json));
  return std::make_unique<PanamaDataplane>(PanamaConfig::FromJson(config_json));
}

}  // namespace inasim::p4::panama
