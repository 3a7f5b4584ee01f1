// inasim-p4's entry to the toy switch: its configuration as JSON, with the
// scenario's key names and units where they are the same knob
// (workload.toy.elements_per_packet, .window_packets -> slots, .udp_port):
//   {"worker_ports": [0, 1, 2], "elements_per_packet": 4, "window_packets": 2,
//    "udp_port": 47000, "pass_latency_ns": 500,
//    "switch_ip": "10.255.0.1", "switch_mac": "02:00:00:00:01:00"}
#include "p4model/common/address_text.h"
#include "p4model/common/dataplane_registry.h"
#include "tests/toy/protocols/toy/dataplane/toy_dataplane.h"

#include "common/json_text.h"

#include <nlohmann/json.hpp>

#include <set>
#include <stdexcept>
#include <string>

namespace inasim::p4::toy {
namespace {

const std::set<std::string> kKeys = {"worker_ports", "elements_per_packet", "window_packets", "udp_port",
                                     "pass_latency_ns", "switch_ip", "switch_mac"};

ToyConfig ConfigFromJson(const nlohmann::json& j) {
  util::CheckKnownKeys(j, kKeys, "");
  ToyConfig c;
  if (!j.contains("worker_ports") || !j["worker_ports"].is_array())
    throw std::invalid_argument("worker_ports: is required, an array of switch port numbers");
  for (size_t i = 0; i < j["worker_ports"].size(); ++i)
    c.worker_ports.push_back(static_cast<uint16_t>(
        util::CheckedUnsigned(j["worker_ports"][i], "worker_ports[" + std::to_string(i) + "]", 0, 65535)));
  c.elements_per_packet = util::UnsignedField<uint32_t>(j, "elements_per_packet", "", c.elements_per_packet, 1, 256);
  c.slots = util::UnsignedField<uint32_t>(j, "window_packets", "", c.slots, 1, 65536);
  c.udp_port = util::UnsignedField<uint16_t>(j, "udp_port", "", c.udp_port, 1);
  c.pass_latency_ps = util::UnsignedField<uint64_t>(j, "pass_latency_ns", "", 500, 0, 1'000'000'000) * 1000;
  if (j.contains("switch_ip") && !ParseIpv4Text(util::StringField(j, "switch_ip", ""), c.switch_ip))
    throw std::invalid_argument("switch_ip: not an IPv4 address");
  if (j.contains("switch_mac") && !ParseMacText(util::StringField(j, "switch_mac", ""), c.switch_mac))
    throw std::invalid_argument("switch_mac: not a MAC address");
  return c;
}

}  // namespace

std::unique_ptr<Dataplane> MakeProgram(const std::string& config_json) {
  nlohmann::json j;
  try {
    j = util::ParseStrictJson(config_json, "");
    if (!j.is_object()) throw std::invalid_argument("not a JSON object");
    return std::make_unique<ToyDataplane>(ConfigFromJson(j));
  } catch (const std::exception& e) {
    const std::string m = e.what();
    throw std::invalid_argument(m.rfind("toy config: ", 0) == 0 ? m : "toy config: " + m);
  }
}

}  // namespace inasim::p4::toy
