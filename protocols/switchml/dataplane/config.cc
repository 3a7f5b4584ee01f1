#include "protocols/switchml/dataplane/config.h"

#include "p4model/common/address_text.h"

#include "common/json_text.h"

#include <nlohmann/json.hpp>

#include <algorithm>

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

namespace {

// Every key FromJson reads; anything else is an error (a misspelt key would
// otherwise leave its default in place without a word).
const std::set<std::string> kConfigKeys = {
    "switch_mac",   "switch_ip",       "workers",  "num_workers", "packet_size",
    "pool_size",    "folded_pipe",     "harvest3_port", "multicast_group", "udp_port",
    "udp_mask",     "ingress_drop_probability", "egress_drop_probability", "drop_seed", "pass_latency_ns"};
const std::set<std::string> kWorkerKeys = {"id", "port", "mac", "ip"};
// pass_latency_ns becomes picoseconds: at most 1 s, far from overflowing.
constexpr uint64_t kMaxPassLatencyNs = 1'000'000'000;

double ProbabilityField(const nlohmann::json& j, const std::string& key) {
  if (!j.contains(key)) return 0.0;
  const nlohmann::json& v = j.at(key);
  if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 1))
    throw std::invalid_argument(key + ": must be a probability in [0, 1], got " + v.dump());
  return v.get<double>();
}

SwitchMLWorker WorkerFromJson(const nlohmann::json& w, const std::string& path) {
  if (!w.is_object()) throw std::invalid_argument(path + ": must be an object {\"id\", \"port\", \"mac\", \"ip\"}");
  util::CheckKnownKeys(w, kWorkerKeys, path);
  for (const char* key : {"id", "port", "mac", "ip"})
    if (!w.contains(key)) throw std::invalid_argument(path + "." + key + ": is required");
  SwitchMLWorker sw;
  sw.worker_id = util::UnsignedField<uint16_t>(w, "id", path, 0, 0, kMaxNumWorkers - 1);
  sw.port = util::UnsignedField<uint16_t>(w, "port", path, 0);
  sw.mac = ParseMac(util::StringField(w, "mac", path));
  sw.ip = ParseIpv4(util::StringField(w, "ip", path));
  return sw;
}

void ReadConfigKeys(const nlohmann::json& j, SwitchMLConfig& c) {
  using util::UnsignedField;
  util::CheckKnownKeys(j, kConfigKeys, "");
  for (const char* key : {"switch_mac", "switch_ip", "workers"})
    if (!j.contains(key)) throw std::invalid_argument(std::string(key) + ": is required");
  c.switch_mac = ParseMac(util::StringField(j, "switch_mac", ""));
  c.switch_ip = ParseIpv4(util::StringField(j, "switch_ip", ""));
  if (!j.at("workers").is_array()) throw std::invalid_argument("workers: must be an array");
  for (size_t i = 0; i < j.at("workers").size(); ++i)
    c.workers.push_back(WorkerFromJson(j.at("workers")[i], "workers[" + std::to_string(i) + "]"));
  const size_t given = std::max<size_t>(1, std::min<size_t>(c.workers.size(), kMaxNumWorkers));
  c.num_workers = UnsignedField<uint8_t>(j, "num_workers", "", static_cast<uint8_t>(given), 1, kMaxNumWorkers);
  c.packet_size = UnsignedField<uint32_t>(j, "packet_size", "", 256);
  c.pool_size = UnsignedField<uint32_t>(j, "pool_size", "", kNumSlots);
  c.folded_pipe = c.packet_size == 1024;
  if (j.contains("folded_pipe")) {
    if (!j.at("folded_pipe").is_boolean()) throw std::invalid_argument("folded_pipe: must be true or false");
    c.folded_pipe = j.at("folded_pipe").get<bool>();
  }
  c.harvest3_port = UnsignedField<uint16_t>(j, "harvest3_port", "", 448);
  c.multicast_group = UnsignedField<uint16_t>(j, "multicast_group", "", 0);
  c.udp_port = UnsignedField<uint16_t>(j, "udp_port", "", kUdpPortSwitchmlBase);
  c.udp_mask = UnsignedField<uint16_t>(j, "udp_mask", "", kUdpPortSwitchmlMask);
  c.ingress_drop_probability = ProbabilityField(j, "ingress_drop_probability");
  c.egress_drop_probability = ProbabilityField(j, "egress_drop_probability");
  c.drop_seed = UnsignedField<uint64_t>(j, "drop_seed", "", 1);
  c.pass_latency_ps = UnsignedField<uint64_t>(j, "pass_latency_ns", "", 520, 0, kMaxPassLatencyNs) * 1000;
}

}  // namespace

SwitchMLConfig SwitchMLConfig::FromJson(const std::string& text) {
  using nlohmann::json;
  SwitchMLConfig c;
  json j;
  try {
    j = util::ParseStrictJson(text, "");
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("switchml config: bad JSON: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("switchml config: ") + e.what());
  }
  try {
    if (!j.is_object()) throw std::invalid_argument("not a JSON object");
    ReadConfigKeys(j, c);
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("switchml config: ") + e.what());
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    throw std::invalid_argument(m.rfind("switchml config: ", 0) == 0 ? m : "switchml config: " + m);
  }
  c.Validate();
  return c;
}

}  // namespace inasim::p4::switchml
