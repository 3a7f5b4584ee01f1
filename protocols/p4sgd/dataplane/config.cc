#include "protocols/p4sgd/dataplane/config.h"

#include "p4model/common/address_text.h"
#include "p4model/common/config_reader.h"
#include "protocols/p4sgd/dataplane/keys.h"

#include "common/json_text.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <set>
#include <stdexcept>

namespace inasim::p4::p4sgd {

namespace {
[[noreturn]] void Fail(const std::string& m) { throw std::invalid_argument("p4sgd config: " + m); }
}  // namespace

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
    if (seq_sup != kSeqSup) Fail("seq_sup is a public-p4 setting");
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

const std::set<std::string> kWorkerKeys = {"id", "port", "mac", "ip"};

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
    if (!w.is_object()) Fail(path + ": must be an object");
    util::CheckKnownKeys(w, kWorkerKeys, path);
    if (!w.contains("port")) Fail("each worker needs a \"port\"");
    P4SGDWorker x;
    x.id = util::UnsignedField<uint16_t>(w, "id", path, next_id);
    x.port = util::UnsignedField<uint16_t>(w, "port", path, 0);
    if (w.contains("mac")) x.mac = MacOrThrow(util::StringField(w, "mac", path), "p4sgd config: " + path + ".mac");
    if (w.contains("ip")) x.ip = Ipv4OrThrow(util::StringField(w, "ip", path), "p4sgd config: " + path + ".ip");
    next_id = static_cast<uint16_t>(x.id + 1);
    out.push_back(x);
  }
  return out;
}

void ReadDevPorts(const nlohmann::json& v, P4SGDConfig& c) {
  if (v.is_string()) {
    if (v.get<std::string>() != "identity") Fail("dev_ports must be an array or \"identity\"");
    for (uint16_t p = 0; p < 512; ++p) c.dev_ports.push_back(p);
  } else {
    c.dev_ports = PortList(v, "dev_ports");
    if (c.dev_ports.empty()) Fail("dev_ports must not be empty");
  }
}

using ConfigKeys = spec::Section<P4SGDConfig>;
const nlohmann::json kPortsSchema = {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}, {"maximum", 65535}}}};

/// The program, the job's workers and the switch's ports.
ConfigKeys& DeclareJob(ConfigKeys& k) {
  k.Enum("mode", &P4SGDConfig::mode, "paper", {{"paper", Mode::kPaper}, {"public-p4", Mode::kPublicP4}},
         "`paper`: Algorithms 2/3 (the simulator's); `public-p4`: the public P4 program (replay only).")
      .Check([](const P4SGDConfig& c, spec::Reader& r) {
        if (c.mode == Mode::kPaper && (r.Has("node_size") || r.Has("dev_ports") || r.Has("seq_sup")))
          r.Fail("mode", "node_size, dev_ports and seq_sup are public-p4 settings");
      })
      .U32("num_workers", &P4SGDConfig::num_workers, 0, 0, 1u << 20, "workers",
           "The job's workers (0: as many as `workers` lists).");
  HandKey<P4SGDConfig>(k, "workers",
                       {"array of objects", "", "ids 0 .. num_workers-1 on ports 0 ..", "`{\"id\", \"port\", \"mac\", \"ip\"}` each",
                        "The workers: id (default the previous + 1), switch port, MAC and IPv4 (encap `udp`)."},
                       {{"type", "array"}, {"items", {{"type", "object"}, {"required", {"port"}}}}},
                       [](const nlohmann::json& v, P4SGDConfig& c) { c.workers = WorkersFromJson(v); });
  HandKey<P4SGDConfig>(k, "multicast_ports", {"array of integers", "", "the workers' ports", "0 .. 65535 each",
                                              "The result multicast group's ports."},
                       kPortsSchema, [](const nlohmann::json& v, P4SGDConfig& c) {
                         c.multicast_ports = PortList(v, "multicast_ports");
                       });
  return k;
}

const ConfigKeys& Keys() {
  static const ConfigKeys section = [] {
    ConfigKeys k("", "inasim-p4 replay p4sgd --config");
    DeclareJob(k);
    keys::Slots(k, &P4SGDConfig::slots);  // shared with workload.p4sgd (keys.h)
    k.U32("node_size", &P4SGDConfig::node_size, kNodeSize, 1, 1u << 20, "", "public-p4: the program's NODE_SIZE.")
        .Bool("seq_sup", &P4SGDConfig::seq_sup, kSeqSup,
              "public-p4: the program's `#define SEQ_SUP` (false: every seq_no is accepted).")
        .Bool("claim_all_traffic", &P4SGDConfig::claim_all_traffic, true,
              "encap `raw`: every frame is a load header, as the P4 parses; false: only frames whose bytes "
              "12..13 are not an EtherType (< 0x0600), the rest routed.");
    HandKey<P4SGDConfig>(k, "dev_ports", {"array of integers", "", "the front-panel ports", "0 .. 511 each, or `\"identity\"`",
                                          "public-p4: the Tofino device port of each simulator port."},
                         {{"anyOf", {kPortsSchema, {{"const", "identity"}}}}}, ReadDevPorts);
    keys::PassLatency(k, &P4SGDConfig::pass_latency_ps);
    k.Enum("encap", &P4SGDConfig::encap, "raw", {{"raw", Encap::kRaw}, {"udp", Encap::kUdp}},
           "`raw`: the header right after Ethernet, as the P4 parses it; `udp`: as the UDP payload to `udp_port`.");
    keys::UdpPort(k, &P4SGDConfig::udp_port);
    MacKey(k, "switch_mac", &P4SGDConfig::switch_mac, false, "encap `udp`: the switch's MAC.");
    Ipv4Key(k, "switch_ip", &P4SGDConfig::switch_ip, false, "encap `udp`: the switch's IPv4 address.");
    return k;
  }();
  return section;
}

}  // namespace

P4SGDConfig P4SGDConfig::FromJson(const std::string& text) {
  return ReadConfig(text, "p4sgd", Keys(), &P4SGDConfig::Finalize);
}

}  // namespace inasim::p4::p4sgd
