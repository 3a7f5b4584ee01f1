#include "protocols/p4sgd/dataplane/config.h"

#include "p4model/common/address_text.h"

#include "common/json_text.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <set>
#include <stdexcept>

namespace inasim::p4::p4sgd {

namespace {
[[noreturn]] void Fail(const std::string& m) { throw std::invalid_argument("p4sgd config: " + m); }
}  // namespace

mac_addr_t ParseMac(const std::string& s) {
  mac_addr_t m{};
  if (!ParseMacText(s, m)) Fail("bad MAC address '" + s + "'");
  return m;
}

uint32_t ParseIpv4(const std::string& s) {
  uint32_t ip = 0;
  if (!ParseIpv4Text(s, ip)) Fail("bad IPv4 address '" + s + "'");
  return ip;
}

void P4SGDConfig::Finalize() {
  if (num_workers == 0) num_workers = static_cast<uint32_t>(workers.size());
  if (workers.empty()) {
    for (uint32_t i = 0; i < num_workers && i < kMaxWorkers; ++i)
      workers.push_back(P4SGDWorker{static_cast<uint16_t>(i), static_cast<uint16_t>(i), {}, 0});
  }
  if (multicast_ports.empty())
    for (const P4SGDWorker& w : workers) multicast_ports.push_back(w.port);
  if (dev_ports.empty()) dev_ports.assign(kFrontPanelDevPorts.begin(), kFrontPanelDevPorts.end());
  Validate();
}

void P4SGDConfig::Validate() const {
  if (mode == Mode::kPaper) {
    if (num_workers == 0 || num_workers > kMaxWorkers) Fail("num_workers must be in 1..32");
    if (workers.size() != num_workers) Fail("paper mode needs exactly num_workers workers");
    if (slots == 0 || slots > kPaperSlots || (slots & (slots - 1)) != 0)
      Fail("slots must be a power of two in 1..65536");
    if (node_size != kNodeSize) Fail("node_size is a public-p4 setting");
  } else {
    if (num_workers > kMaxWorkers) Fail("num_workers must be <= 32");
    if (node_size == 0) Fail("node_size must be > 0");
    if (slots != kIndexSize) Fail("public-p4 registers have 65536 cells (INDEX_SIZE)");
    std::set<uint16_t> seen;
    for (uint16_t d : dev_ports) {
      if (d > 511) Fail("dev_ports entries must be 9-bit Tofino ports (0..511)");
      if (!seen.insert(d).second) Fail("dev_ports lists device port " + std::to_string(d) + " twice");
    }
  }
  std::set<uint16_t> ids;
  for (const P4SGDWorker& w : workers) {
    if (w.id >= kMaxWorkers) Fail("worker id must be < 32");
    if (!ids.insert(w.id).second) Fail("worker id " + std::to_string(w.id) + " appears twice");
  }
  if (mode == Mode::kPaper)
    for (const P4SGDWorker& w : workers)
      if (w.id >= num_workers) Fail("paper mode worker ids must be 0..num_workers-1");
  if (multicast_ports.empty()) Fail("the multicast group has no ports");
  if (encap == Encap::kUdp) {
    if (udp_port == 0) Fail("udp_port must be 1..65535");
    for (const P4SGDWorker& w : workers)
      if (w.ip == 0) Fail("encap \"udp\" needs an ip for worker " + std::to_string(w.id));
    for (uint16_t p : multicast_ports) {
      bool found = false;
      for (const P4SGDWorker& w : workers) found = found || w.port == p;
      if (!found) Fail("encap \"udp\": multicast port " + std::to_string(p) + " has no worker to address");
    }
  }
}

namespace {

const std::set<std::string> kConfigKeys = {"mode",  "num_workers", "workers",   "multicast_ports",
                                           "slots", "node_size",   "dev_ports", "pass_latency_ns",
                                           "encap", "udp_port",    "switch_mac", "switch_ip"};
const std::set<std::string> kWorkerKeys = {"id", "port", "mac", "ip"};
constexpr uint64_t kMaxPassLatencyNs = 1'000'000'000;  // becomes ps: far from overflowing

/// A list of 16-bit port numbers, each range-checked (70000 is an error, not 4464).
std::vector<uint16_t> PortList(const nlohmann::json& v, const std::string& path) {
  if (!v.is_array()) Fail(path + ": must be an array of port numbers");
  std::vector<uint16_t> out;
  for (size_t i = 0; i < v.size(); ++i)
    out.push_back(static_cast<uint16_t>(util::CheckedUnsigned(v[i], path + "[" + std::to_string(i) + "]", 0, 65535)));
  return out;
}

std::vector<P4SGDWorker> WorkersFromJson(const nlohmann::json& list) {
  if (!list.is_array()) Fail("workers must be an array");
  std::vector<P4SGDWorker> out;
  uint16_t next_id = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& w = list[i];
    const std::string path = "workers[" + std::to_string(i) + "]";
    if (!w.is_object()) Fail("each worker must be an object");
    util::CheckKnownKeys(w, kWorkerKeys, path);
    if (!w.contains("port")) Fail("each worker needs a \"port\"");
    P4SGDWorker x;
    x.id = util::UnsignedField<uint16_t>(w, "id", path, next_id);
    x.port = util::UnsignedField<uint16_t>(w, "port", path, 0);
    if (w.contains("mac")) x.mac = ParseMac(util::StringField(w, "mac", path));
    if (w.contains("ip")) x.ip = ParseIpv4(util::StringField(w, "ip", path));
    next_id = static_cast<uint16_t>(x.id + 1);
    out.push_back(x);
  }
  return out;
}

void ReadDevPorts(const nlohmann::json& j, P4SGDConfig& c) {
  if (!j.contains("dev_ports")) return;
  if (j["dev_ports"].is_string()) {
    if (j["dev_ports"].get<std::string>() != "identity") Fail("dev_ports must be an array or \"identity\"");
    for (uint16_t p = 0; p < 512; ++p) c.dev_ports.push_back(p);
  } else {
    c.dev_ports = PortList(j.at("dev_ports"), "dev_ports");
    if (c.dev_ports.empty()) Fail("dev_ports must not be empty");
  }
}

void ReadConfigKeys(const nlohmann::json& j, P4SGDConfig& c) {
  using util::UnsignedField;
  util::CheckKnownKeys(j, kConfigKeys, "");
  const std::string mode = util::StringField(j, "mode", "", "paper");
  if (mode == "paper") c.mode = Mode::kPaper;
  else if (mode == "public-p4") c.mode = Mode::kPublicP4;
  else Fail("mode must be \"paper\" or \"public-p4\"");
  if (c.mode == Mode::kPaper && (j.contains("node_size") || j.contains("dev_ports")))
    Fail("node_size and dev_ports are public-p4 settings");
  c.num_workers = UnsignedField<uint32_t>(j, "num_workers", "", c.num_workers);
  if (j.contains("workers")) c.workers = WorkersFromJson(j.at("workers"));
  if (j.contains("multicast_ports")) c.multicast_ports = PortList(j.at("multicast_ports"), "multicast_ports");
  c.slots = UnsignedField<uint32_t>(j, "slots", "", c.mode == Mode::kPaper ? kPaperSlots : kIndexSize);
  c.node_size = UnsignedField<uint32_t>(j, "node_size", "", c.node_size);
  ReadDevPorts(j, c);
  c.pass_latency_ps =
      UnsignedField<uint64_t>(j, "pass_latency_ns", "", c.pass_latency_ps / 1000, 0, kMaxPassLatencyNs) * 1000;
  const std::string encap = util::StringField(j, "encap", "", "raw");
  if (encap == "raw") c.encap = Encap::kRaw;
  else if (encap == "udp") c.encap = Encap::kUdp;
  else Fail("encap must be \"raw\" or \"udp\"");
  c.udp_port = UnsignedField<uint16_t>(j, "udp_port", "", c.udp_port, 1, 65535);
  if (j.contains("switch_mac")) c.switch_mac = ParseMac(util::StringField(j, "switch_mac", ""));
  if (j.contains("switch_ip")) c.switch_ip = ParseIpv4(util::StringField(j, "switch_ip", ""));
}

}  // namespace

P4SGDConfig P4SGDConfig::FromJson(const std::string& text) {
  using nlohmann::json;
  P4SGDConfig c;
  json j;
  try {
    j = util::ParseStrictJson(text, "");
  } catch (const json::exception& e) {
    Fail(std::string("bad JSON: ") + e.what());
  } catch (const std::invalid_argument& e) {
    Fail(e.what());
  }
  if (!j.is_object()) Fail("not a JSON object");
  try {
    ReadConfigKeys(j, c);
  } catch (const json::exception& e) {
    Fail(e.what());
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    if (m.rfind("p4sgd config: ", 0) == 0) throw;
    Fail(m);
  }
  c.Finalize();
  return c;
}

}  // namespace inasim::p4::p4sgd
