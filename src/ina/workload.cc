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
  const std::vector<std::string_view>& texts = ProtocolMetadataTexts();
  for (size_t i = 0; i < texts.size(); ++i) {
    all.push_back(nlohmann::json::parse(texts[i]));
    all.back()["folder"] = Protocols()[i].folder;  // where it lives (protocols/<name>, or a test tree's)
  }
  return all;
}

}  // namespace inasim
