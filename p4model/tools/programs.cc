#include "p4model/tools/programs.h"

#include "p4model/canary/canary_dataplane.h"
#include "p4model/canary/config.h"
#include "p4model/p4sgd/config.h"
#include "p4model/p4sgd/p4sgd_dataplane.h"
#include "p4model/panama/config.h"
#include "p4model/panama/panama_dataplane.h"
#include "p4model/switchml/config.h"
#include "p4model/switchml/switchml_dataplane.h"

#include <functional>
#include <utility>

namespace inasim::p4tools {

namespace {

using Factory = std::function<std::unique_ptr<p4::Dataplane>(const std::string&)>;

// One row per program; each later protocol adds its own.
const std::pair<const char*, Factory> kPrograms[] = {
    {"switchml",
     [](const std::string& config) {
       return std::make_unique<p4::switchml::SwitchMLDataplane>(p4::switchml::SwitchMLConfig::FromJson(config));
     }},
    {"canary",
     [](const std::string& config) {
       return std::make_unique<p4::canary::CanaryDataplane>(p4::canary::CanaryConfig::FromJson(config));
     }},
    {"p4sgd",
     [](const std::string& config) {
       return std::make_unique<p4::p4sgd::P4SGDDataplane>(p4::p4sgd::P4SGDConfig::FromJson(config));
     }},
    {"panama",
     [](const std::string& config) {
       return std::make_unique<p4::panama::PanamaDataplane>(p4::panama::PanamaConfig::FromJson(config));
     }},
};

}  // namespace

std::unique_ptr<p4::Dataplane> MakeProgram(const std::string& name, const std::string& config_json) {
  for (const auto& [n, make] : kPrograms)
    if (name == n) return make(config_json);
  return nullptr;
}

std::string ProgramNames() {
  std::string s;
  for (const auto& [n, make] : kPrograms) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

}  // namespace inasim::p4tools
