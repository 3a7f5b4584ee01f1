#include "p4model/tools/programs.h"

#include "p4model/common/dataplane_registry.h"

namespace inasim::p4tools {

std::unique_ptr<p4::Dataplane> MakeProgram(const std::string& name, const std::string& config_json) {
  for (const p4::DataplaneProgram& p : p4::DataplanePrograms())
    if (name == p.name) return p.make(config_json);
  return nullptr;
}

std::string ProgramNames() {
  std::string s;
  for (const p4::DataplaneProgram& p : p4::DataplanePrograms()) s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

}  // namespace inasim::p4tools
