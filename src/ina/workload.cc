#include "ina/workload.h"

#include <algorithm>

namespace inasim {

bool Protocol::Accepts(DType t) const { return std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end(); }
bool Protocol::Accepts(DataPattern d) const { return std::find(data.begin(), data.end(), d) != data.end(); }

const Protocol* FindProtocol(std::string_view name) {
  for (const Protocol& p : Protocols())
    if (p.name == name) return &p;
  return nullptr;
}

std::string ProtocolNames(std::string_view workload_type) {
  std::string s;
  for (const Protocol& p : Protocols())
    if (p.workload_type == workload_type) s += (s.empty() ? "\"" : ", \"") + std::string(p.name) + "\"";
  return s;
}

nlohmann::json ProtocolsJson() {
  nlohmann::json all = nlohmann::json::array();
  for (std::string_view text : ProtocolMetadataTexts()) all.push_back(nlohmann::json::parse(text));
  return all;
}

}  // namespace inasim
