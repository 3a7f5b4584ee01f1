// inasim-p4's entry to the static-tree switch: its configuration as JSON,
// with the key names and units of the scenario's workload.static_tree
// (elements_per_packet, slots_per_tree, pass_latency_ns: the same
// declarations, keys.h) and of the other programs' configs (switch_ip,
// switch_mac, num_ports, udp_port).
//   {"num_ports": 4, "elements_per_packet": 256, "slots_per_tree": 4096,
//    "trees": [{"tree_id": 0, "child_ports": [0, 1], "parent_port": 3}]}
// A tree without "parent_port" (or with -1) is rooted at this switch.
#include <algorithm>

#include "p4model/common/address_text.h"
#include "p4model/common/config_reader.h"
#include "protocols/static_tree/dataplane/keys.h"
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

const std::set<std::string> kTreeKeys = {"tree_id", "child_ports", "parent_port"};
using ConfigKeys = spec::Section<StaticTreeConfig>;

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

const ConfigKeys& Keys() {
  static const ConfigKeys section = [] {
    ConfigKeys k("", "inasim-p4 replay static_tree --config");
    Ipv4Key(k, "switch_ip", &StaticTreeConfig::switch_ip, false, "Source of the packets this switch builds.");
    MacKey(k, "switch_mac", &StaticTreeConfig::switch_mac, false, "Source MAC of the packets this switch builds.");
    k.U32("num_ports", &StaticTreeConfig::num_ports, 64, 1, 64, "ports", "Switch ports (the duplicate bitmap).")
        .U16("udp_port", &StaticTreeConfig::udp_port, kStaticTreeUdpPort, 0, 65535, "", "UDP port of tree packets.");
    keys::ElementsPerPacket(k, &StaticTreeConfig::num_elements);
    keys::SlotsPerTree(k, &StaticTreeConfig::slots_per_tree);
    keys::PassLatency(k, &StaticTreeConfig::pass_latency_ps);
    HandKey<StaticTreeConfig>(
        k, "trees",
        {"array of objects", "", "**required**", "`{\"tree_id\", \"child_ports\", \"parent_port\"}` each",
         "The trees this switch is in: its children's ports and its parent's (none or -1: the root)."},
        {{"type", "array"}, {"items", {{"type", "object"}, {"required", {"tree_id", "child_ports"}}}}},
        [](const nlohmann::json& v, StaticTreeConfig& c) {
          if (!v.is_array()) Fail("trees: must be an array of {tree_id, child_ports, parent_port}");
          for (size_t i = 0; i < v.size(); ++i) c.trees.push_back(TreeFromJson(v[i], "trees[" + std::to_string(i) + "]"));
        },
        true);
    return k;
  }();
  return section;
}

}  // namespace

StaticTreeConfig StaticTreeConfig::FromJson(const std::string& text) {
  return ReadConfig(text, "static_tree", Keys(), &StaticTreeConfig::Validate);
}

}  // namespace statictree

namespace static_tree {
std::unique_ptr<Dataplane> MakeProgram(const std::string& config_json) {
  return std::make_unique<statictree::StaticTreeDataplane>(statictree::StaticTreeConfig::FromJson(config_json));
}
}  // namespace static_tree

}  // namespace inasim::p4
