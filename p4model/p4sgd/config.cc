#include "p4model/p4sgd/config.h"

#include "p4model/common/address_text.h"

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

P4SGDConfig P4SGDConfig::FromJson(const std::string& text) {
  using nlohmann::json;
  P4SGDConfig c;
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    Fail(std::string("bad JSON: ") + e.what());
  }
  if (!j.is_object()) Fail("not a JSON object");
  static const std::set<std::string> kKeys = {"mode",  "num_workers", "workers",   "multicast_ports",
                                              "slots", "node_size",   "dev_ports", "pass_latency_ns",
                                              "encap", "udp_port",    "switch_mac", "switch_ip"};
  for (const auto& [k, v] : j.items())
    if (!kKeys.count(k)) Fail("unknown key \"" + k + "\"");
  try {
    const std::string mode = j.value("mode", std::string("paper"));
    if (mode == "paper") c.mode = Mode::kPaper;
    else if (mode == "public-p4") c.mode = Mode::kPublicP4;
    else Fail("mode must be \"paper\" or \"public-p4\"");
    if (c.mode == Mode::kPaper && (j.contains("node_size") || j.contains("dev_ports")))
      Fail("node_size and dev_ports are public-p4 settings");
    c.num_workers = j.value("num_workers", c.num_workers);
    if (j.contains("workers")) {
      if (!j["workers"].is_array()) Fail("workers must be an array");
      static const std::set<std::string> kWorkerKeys = {"id", "port", "mac", "ip"};
      uint16_t next_id = 0;
      for (const json& w : j["workers"]) {
        if (!w.is_object()) Fail("each worker must be an object");
        for (const auto& [k, v] : w.items())
          if (!kWorkerKeys.count(k)) Fail("unknown worker key \"" + k + "\"");
        if (!w.contains("port")) Fail("each worker needs a \"port\"");
        P4SGDWorker x;
        x.id = w.value("id", next_id);
        x.port = w.at("port").get<uint16_t>();
        if (w.contains("mac")) x.mac = ParseMac(w.at("mac").get<std::string>());
        if (w.contains("ip")) x.ip = ParseIpv4(w.at("ip").get<std::string>());
        next_id = static_cast<uint16_t>(x.id + 1);
        c.workers.push_back(x);
      }
    }
    if (j.contains("multicast_ports")) c.multicast_ports = j.at("multicast_ports").get<std::vector<uint16_t>>();
    c.slots = j.value("slots", c.mode == Mode::kPaper ? kPaperSlots : kIndexSize);
    c.node_size = j.value("node_size", c.node_size);
    if (j.contains("dev_ports")) {
      if (j["dev_ports"].is_string()) {
        if (j["dev_ports"].get<std::string>() != "identity") Fail("dev_ports must be an array or \"identity\"");
        for (uint16_t p = 0; p < 512; ++p) c.dev_ports.push_back(p);
      } else {
        c.dev_ports = j.at("dev_ports").get<std::vector<uint16_t>>();
        if (c.dev_ports.empty()) Fail("dev_ports must not be empty");
      }
    }
    if (j.contains("pass_latency_ns")) c.pass_latency_ps = j.at("pass_latency_ns").get<uint64_t>() * 1000;
    const std::string encap = j.value("encap", std::string("raw"));
    if (encap == "raw") c.encap = Encap::kRaw;
    else if (encap == "udp") c.encap = Encap::kUdp;
    else Fail("encap must be \"raw\" or \"udp\"");
    if (j.contains("udp_port")) {
      const int64_t port = j.at("udp_port").get<int64_t>();
      if (port < 1 || port > 65535) Fail("udp_port must be 1..65535");
      c.udp_port = static_cast<uint16_t>(port);
    }
    if (j.contains("switch_mac")) c.switch_mac = ParseMac(j.at("switch_mac").get<std::string>());
    if (j.contains("switch_ip")) c.switch_ip = ParseIpv4(j.at("switch_ip").get<std::string>());
  } catch (const json::exception& e) {
    Fail(e.what());
  }
  c.Finalize();
  return c;
}

}  // namespace inasim::p4::p4sgd
