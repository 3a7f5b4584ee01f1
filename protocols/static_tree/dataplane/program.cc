// inasim-p4's entry to the static-tree switch: its configuration as JSON,
// with the key names and units of the other programs' configs (canary's:
// switch_ip, switch_mac, num_ports, udp_port, num_elements, pass_latency_ns).
//   {"num_ports": 4, "num_elements": 256, "slots_per_tree": 4096,
//    "trees": [{"tree_id": 0, "child_ports": [0, 1], "parent_port": 3}]}
// A tree without "parent_port" (or with -1) is rooted at this switch.
#include <algorithm>

#include "p4model/common/address_text.h"
#include "p4model/common/dataplane_registry.h"
#include "protocols/static_tree/dataplane/static_tree_dataplane.h"

#include "common/json_text.h"

#include <nlohmann/json.hpp>

#include <set>
#include <stdexcept>
#include <string>

namespace inasim::p4 {
namespace statictree {
namespace {

[[noreturn]] void Fail(const std::string& m) { throw std::invalid_argument("static_tree config: " + m); }

const std::set<std::string> kConfigKeys = {"switch_ip", "switch_mac", "num_ports",      "udp_port",
                                           "num_elements", "slots_per_tree", "pass_latency_ns", "trees"};
const std::set<std::string> kTreeKeys = {"tree_id", "child_ports", "parent_port"};
constexpr uint64_t kMaxNs = 1'000'000'000;

TreeEntry TreeFromJson(const nlohmann::json& e, const std::string& path) {
  if (!e.is_object()) Fail(path + ": must be an object");
  util::CheckKnownKeys(e, kTreeKeys, path);
  if (!e.contains("tree_id") || !e.contains("child_ports")) Fail(path + ": needs tree_id and child_ports");
  TreeEntry t;
  t.tree_id = util::UnsignedField<uint32_t>(e, "tree_id", path, 0);
  const nlohmann::json& ports = e.at("child_ports");
  if (!ports.is_array()) Fail(path + ".child_ports: must be an array of port numbers");
  for (size_t i = 0; i < ports.size(); ++i)
    t.child_ports.push_back(static_cast<uint16_t>(
        util::CheckedUnsigned(ports[i], path + ".child_ports[" + std::to_string(i) + "]", 0, 63)));
  std::sort(t.child_ports.begin(), t.child_ports.end());
  if (e.contains("parent_port") && !(e["parent_port"].is_number_integer() && e["parent_port"].get<int64_t>() == -1))
    t.parent_port = static_cast<int32_t>(util::UnsignedField<uint32_t>(e, "parent_port", path, 0, 0, 63));
  return t;
}

void ReadConfigKeys(const nlohmann::json& j, StaticTreeConfig& c) {
  using util::UnsignedField;
  util::CheckKnownKeys(j, kConfigKeys, "");
  if (j.contains("switch_ip") && !ParseIpv4Text(util::StringField(j, "switch_ip", ""), c.switch_ip))
    Fail("bad IPv4 address in switch_ip");
  if (j.contains("switch_mac") && !ParseMacText(util::StringField(j, "switch_mac", ""), c.switch_mac))
    Fail("bad MAC address in switch_mac");
  c.num_ports = UnsignedField<uint32_t>(j, "num_ports", "", c.num_ports);
  c.udp_port = UnsignedField<uint16_t>(j, "udp_port", "", c.udp_port);
  c.num_elements = UnsignedField<uint32_t>(j, "num_elements", "", c.num_elements);
  c.slots_per_tree = UnsignedField<uint32_t>(j, "slots_per_tree", "", c.slots_per_tree);
  c.pass_latency_ps = UnsignedField<uint64_t>(j, "pass_latency_ns", "", c.pass_latency_ps / 1000, 0, kMaxNs) * 1000;
  if (!j.contains("trees") || !j["trees"].is_array()) Fail("trees: must be an array of {tree_id, child_ports, parent_port}");
  for (size_t i = 0; i < j["trees"].size(); ++i) c.trees.push_back(TreeFromJson(j["trees"][i], "trees[" + std::to_string(i) + "]"));
}

}  // namespace

StaticTreeConfig StaticTreeConfig::FromJson(const std::string& text) {
  StaticTreeConfig c;
  nlohmann::json j;
  try {
    j = util::ParseStrictJson(text, "");
  } catch (const std::exception& e) {
    Fail(std::string("bad JSON: ") + e.what());
  }
  if (!j.is_object()) Fail("not a JSON object");
  try {
    ReadConfigKeys(j, c);
  } catch (const nlohmann::json::exception& e) {
    Fail(e.what());
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    if (m.rfind("static_tree config: ", 0) == 0) throw;
    Fail(m);
  }
  c.Validate();
  return c;
}

}  // namespace statictree

namespace static_tree {
std::unique_ptr<Dataplane> MakeProgram(const std::string& config_json) {
  return std::make_unique<statictree::StaticTreeDataplane>(statictree::StaticTreeConfig::FromJson(config_json));
}
}  // namespace static_tree

}  // namespace inasim::p4
