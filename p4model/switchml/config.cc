#include "p4model/switchml/config.h"

#include "p4model/common/address_text.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <set>
#include <stdexcept>

namespace inasim::p4::switchml {

mac_addr_t ParseMac(const std::string& s) {
  mac_addr_t m{};
  if (!ParseMacText(s, m)) throw std::invalid_argument("switchml config: bad MAC address '" + s + "'");
  return m;
}

uint32_t ParseIpv4(const std::string& s) {
  uint32_t ip = 0;
  if (!ParseIpv4Text(s, ip)) throw std::invalid_argument("switchml config: bad IPv4 address '" + s + "'");
  return ip;
}

void SwitchMLConfig::Validate() const {
  auto fail = [](const std::string& m) { throw std::invalid_argument("switchml config: " + m); };
  if (packet_size != 256 && packet_size != 1024) fail("packet_size must be 256 or 1024");
  if (pool_size == 0 || pool_size > kNumSlots) fail("pool_size must be in 1..8192");
  if (harvest3_port >= 512) fail("harvest3_port must be a dev port of pipes 0..3 (< 512)");
  if (workers.empty()) fail("no workers");
  if (workers.size() > kMaxNumWorkers) fail("more than 32 workers");
  if (num_workers == 0 || num_workers > kMaxNumWorkers) fail("num_workers must be in 1..32");
  if (ingress_drop_probability < 0 || ingress_drop_probability > 1 || egress_drop_probability < 0 ||
      egress_drop_probability > 1) {
    fail("drop probabilities must be in [0, 1]");
  }
  std::set<uint16_t> ids;
  for (const auto& w : workers) {
    if (w.worker_id >= kMaxNumWorkers) fail("worker id >= 32");
    if (!ids.insert(w.worker_id).second) fail("duplicate worker id");
  }
}

SwitchMLConfig SwitchMLConfig::FromJson(const std::string& text) {
  using nlohmann::json;
  SwitchMLConfig c;
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("switchml config: bad JSON: ") + e.what());
  }
  try {
    if (!j.is_object()) throw std::invalid_argument("switchml config: not a JSON object");
    c.switch_mac = ParseMac(j.at("switch_mac").get<std::string>());
    c.switch_ip = ParseIpv4(j.at("switch_ip").get<std::string>());
    for (const auto& w : j.at("workers")) {
      SwitchMLWorker sw;
      sw.worker_id = w.at("id").get<uint16_t>();
      sw.port = w.at("port").get<uint16_t>();
      sw.mac = ParseMac(w.at("mac").get<std::string>());
      sw.ip = ParseIpv4(w.at("ip").get<std::string>());
      c.workers.push_back(sw);
    }
    const unsigned nw = j.value("num_workers", static_cast<unsigned>(c.workers.size()));
    if (nw == 0 || nw > kMaxNumWorkers) throw std::invalid_argument("switchml config: num_workers must be in 1..32");
    c.num_workers = static_cast<uint8_t>(nw);
    c.packet_size = j.value("packet_size", 256u);
    c.pool_size = j.value("pool_size", kNumSlots);
    c.folded_pipe = j.value("folded_pipe", c.packet_size == 1024);
    c.harvest3_port = j.value("harvest3_port", uint16_t{448});
    c.multicast_group = j.value("multicast_group", uint16_t{0});
    c.udp_port = j.value("udp_port", kUdpPortSwitchmlBase);
    c.udp_mask = j.value("udp_mask", kUdpPortSwitchmlMask);
    c.ingress_drop_probability = j.value("ingress_drop_probability", 0.0);
    c.egress_drop_probability = j.value("egress_drop_probability", 0.0);
    c.drop_seed = j.value("drop_seed", uint64_t{1});
    if (j.contains("pass_latency_ns")) c.pass_latency_ps = j.at("pass_latency_ns").get<uint64_t>() * 1000;
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("switchml config: ") + e.what());
  }
  c.Validate();
  return c;
}

}  // namespace inasim::p4::switchml
