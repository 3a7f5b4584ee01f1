#include "protocols/switchml/dataplane/config.h"

#include "p4model/common/address_text.h"
#include "p4model/common/config_reader.h"
#include "protocols/switchml/dataplane/keys.h"

#include "common/json_text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <stdexcept>

namespace inasim::p4::switchml {

void SwitchMLConfig::Validate() const {
  auto fail = [](const std::string& m) { throw std::invalid_argument("switchml config: " + m); };
  if (elements_per_packet != 64 && elements_per_packet != 256) fail("elements_per_packet must be 64 or 256");
  if (pool_size == 0 || pool_size > kNumSlots) fail("pool_size must be in 1..8192");
  if (harvest3_port >= 512) fail("harvest3_port must be a dev port of pipes 0..3 (< 512)");
  if (workers.empty()) fail("no workers");
  if (workers.size() > kMaxNumWorkers) fail("more than 32 workers");
  if (num_workers == 0 || num_workers > kMaxNumWorkers) fail("num_workers must be in 1..32");
  if (ingress_drop_probability < 0 || ingress_drop_probability > 1 || egress_drop_probability < 0 ||
      egress_drop_probability > 1) {
    fail("drop probabilities must be in [0, 1]");
  }
  std::set<uint16_t> ids, dev_ports;
  for (size_t i = 0; i < workers.size(); ++i) {
    const SwitchMLWorker& w = workers[i];
    if (w.worker_id >= kMaxNumWorkers) fail("worker id >= 32");
    if (!ids.insert(w.worker_id).second) fail("duplicate worker id");
    const std::string at = "workers[" + std::to_string(i) + "].dev_port";
    const uint16_t dev = DevPortOf(i);
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:50-57: ports 64
    // and 68 and every port of pipes 1-3 are parsed as recirculated passes.
    if (dev >= 512) fail(at + ": " + std::to_string(dev) + " is not a 9-bit device port");
    if (dev >= 128 || dev == kRecirculationPort64 || dev == kRecirculationPort68)
      fail(at + ": " + std::to_string(dev) +
           " is a recirculation port to upstream (parsers.p4:50-57: ports 64, 68 and pipes 1-3), where a "
           "worker's frames are never aggregated; use a pipe-0 front-panel port (0-127 but 64 and 68)");
    if (!dev_ports.insert(dev).second) fail(at + ": device port " + std::to_string(dev) + " appears twice");
  }
  if (transport == SwitchMLTransport::kRdma) ValidateRdma();
}

void SwitchMLConfig::ValidateRdma() const {
  auto fail = [](const std::string& m) { throw std::invalid_argument("switchml config: " + m); };
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/rdma_sender.py:140
  const uint32_t ppm = PacketsPerMessage();
  if (message_size % PacketBytes() != 0 || ppm == 0 || (ppm & (ppm - 1)) != 0) {
    fail("message_size: must be a power-of-two number of " + std::to_string(PacketBytes()) + " B packets, got " +
         std::to_string(message_size) + " B");
  }
  for (const auto& w : workers) {
    const std::string at = "workers[id " + std::to_string(w.worker_id) + "].qpns";
    if (w.qpns_and_psns.empty()) fail(at + ": an RDMA worker needs at least one queue pair");
    if (w.qpns_and_psns.size() > kMaxNumQueuePairsPerWorker) fail(at + ": more than 512 queue pairs");
    // Message i of a worker covers pool indices [2 i ppm, 2 (i + 1) ppm): they
    // must fit the 15-bit pool index (rdma_sender.py:156).
    if (uint64_t{2} * ppm * w.qpns_and_psns.size() > uint64_t{kRegisterSize})
      fail(at + ": queue pairs x packets per message exceed the 8192 slots");
    for (const auto& [qpn, psn] : w.qpns_and_psns)
      if (qpn > 0xffffff || psn > 0xffffff) fail(at + ": QPNs and PSNs are 24-bit");
  }
}

namespace {

using nlohmann::json;
using ConfigKeys = spec::Section<SwitchMLConfig>;

const std::set<std::string> kWorkerKeys = {"id", "port", "mac", "ip", "rkey", "qpns", "dev_port"};

/// "qpns": [[qpn, initial_psn], ...] of an RDMA worker.
std::vector<std::pair<uint32_t, uint32_t>> QpnsFromJson(const json& list, const std::string& path) {
  if (!list.is_array()) throw std::invalid_argument(path + ": must be an array of [qpn, initial_psn] pairs");
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    const json& p = list[i];
    if (!p.is_array() || p.size() != 2 || !p[0].is_number_unsigned() || !p[1].is_number_unsigned() ||
        p[0].get<uint64_t>() > 0xffffff || p[1].get<uint64_t>() > 0xffffff) {
      throw std::invalid_argument(at + ": must be [qpn, initial_psn], two integers in 0..0xffffff");
    }
    out.emplace_back(p[0].get<uint32_t>(), p[1].get<uint32_t>());
  }
  return out;
}

SwitchMLWorker WorkerFromJson(const json& w, const std::string& path) {
  if (!w.is_object()) throw std::invalid_argument(path + ": must be an object {\"id\", \"port\", \"mac\", \"ip\"}");
  util::CheckKnownKeys(w, kWorkerKeys, path);
  for (const char* key : {"id", "port", "mac", "ip"})
    if (!w.contains(key)) throw std::invalid_argument(path + "." + key + ": is required");
  SwitchMLWorker sw;
  sw.worker_id = util::UnsignedField<uint16_t>(w, "id", path, 0, 0, kMaxNumWorkers - 1);
  sw.port = util::UnsignedField<uint16_t>(w, "port", path, 0);
  sw.mac = MacOrThrow(util::StringField(w, "mac", path), "switchml config: " + path + ".mac");
  sw.ip = Ipv4OrThrow(util::StringField(w, "ip", path), "switchml config: " + path + ".ip");
  if (w.contains("rkey")) sw.rkey = util::UnsignedField<uint32_t>(w, "rkey", path, 0);
  if (w.contains("dev_port")) sw.dev_port = util::UnsignedField<uint16_t>(w, "dev_port", path, 0, 0, 511);
  if (w.contains("qpns")) sw.qpns_and_psns = QpnsFromJson(w["qpns"], path + ".qpns");
  return sw;
}

std::vector<SwitchMLWorker> WorkersFromJson(const json& list) {
  if (!list.is_array()) throw std::invalid_argument("workers: must be an array");
  std::vector<SwitchMLWorker> out;
  for (size_t i = 0; i < list.size(); ++i) out.push_back(WorkerFromJson(list[i], "workers[" + std::to_string(i) + "]"));
  return out;
}

std::vector<std::pair<mac_addr_t, uint16_t>> ForwardFromJson(const json& list) {
  if (!list.is_array()) throw std::invalid_argument("forward: must be an array");
  std::vector<std::pair<mac_addr_t, uint16_t>> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = "forward[" + std::to_string(i) + "]";
    const json& e = list[i];
    if (!e.is_object()) throw std::invalid_argument(path + ": must be an object {\"mac\", \"port\"}");
    util::CheckKnownKeys(e, {"mac", "port"}, path);
    if (!e.contains("mac") || !e.contains("port")) throw std::invalid_argument(path + ": needs \"mac\" and \"port\"");
    out.emplace_back(MacOrThrow(util::StringField(e, "mac", path), "switchml config: " + path + ".mac"),
                     util::UnsignedField<uint16_t>(e, "port", path, 0));
  }
  return out;
}

json WorkersSchema() {
  return {{"type", "array"},
          {"items", {{"type", "object"},
                     {"required", {"id", "port", "mac", "ip"}},
                     {"additionalProperties", false},
                     {"properties", {{"id", {{"type", "integer"}, {"minimum", 0}, {"maximum", kMaxNumWorkers - 1}}},
                                     {"port", {{"type", "integer"}, {"minimum", 0}, {"maximum", 65535}}},
                                     {"mac", {{"type", "string"}}},
                                     {"ip", {{"type", "string"}}},
                                     {"rkey", {{"type", "integer"}, {"minimum", 0}, {"maximum", 4294967295u}}},
                                     {"qpns", {{"type", "array"},
                                               {"items", {{"type", "array"}, {"minItems", 2}, {"maxItems", 2}}}}}}}}}};
}

/// The switch's addresses and the job's workers: what the controller installs per job.
// p4lang/p4app-switchML@b5c74a04:dev_root/controller/switchml.py:506
ConfigKeys& DeclareJob(ConfigKeys& k) {
  MacKey(k, "switch_mac", &SwitchMLConfig::switch_mac, true, "The switch's MAC address (udp_sender.py:49).");
  Ipv4Key(k, "switch_ip", &SwitchMLConfig::switch_ip, true, "The switch's IPv4 address.");
  HandKey<SwitchMLConfig>(k, "workers",
                          {"array of objects", "", "**required**",
                           "`{\"id\", \"port\", \"mac\", \"ip\"}` each (RDMA: also `\"rkey\"`, `\"qpns\"`)",
                           "The job's workers in PRE node order: rank (< 32), switch port, MAC, IPv4; RDMA workers "
                           "add their remote key and `[qpn, initial_psn]` per queue pair (rdma_sender.py:100)."},
                          WorkersSchema(), [](const json& v, SwitchMLConfig& c) { c.workers = WorkersFromJson(v); },
                          true);
  return k.U8("num_workers", &SwitchMLConfig::num_workers, 1, 1, kMaxNumWorkers, "workers",
               "receive_udp's set_bitmap num_workers.")
      .DefaultFrom([](const SwitchMLConfig& c, const spec::NoContext&) {
        return std::max<size_t>(1, std::min<size_t>(c.workers.size(), kMaxNumWorkers));
      }, "the number of workers");
}

const ConfigKeys& Keys() {
  static const ConfigKeys section = [] {
    ConfigKeys k("", "inasim-p4 replay switchml --config");
    DeclareJob(k);
    keys::ElementsPerPacket(k, &SwitchMLConfig::elements_per_packet, 64);
    keys::PoolSize(k, &SwitchMLConfig::pool_size, kNumSlots);
    k.Step([](spec::Reader&, SwitchMLConfig& c, const spec::NoContext&) { c.folded_pipe = c.elements_per_packet == 256; });
    // The controller's --enable-folded-pipe: the 1024 B next_step entries.
    // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:88
    HandKey<SwitchMLConfig>(k, "folded_pipe", {"boolean", "", "`elements_per_packet == 256`", "",
                                               "Install the 1024 B (folded 4-pipe) next_step entries."},
                            {{"type", "boolean"}}, [](const json& v, SwitchMLConfig& c) {
                              if (!v.is_boolean()) throw std::invalid_argument("folded_pipe: must be true or false");
                              c.folded_pipe = v.get<bool>();
                            });
    keys::Harvest3(k, &SwitchMLConfig::harvest3_port, "upstream");
    k.U16("multicast_group", &SwitchMLConfig::multicast_group, 0, 0, 65535, "", "The session's multicast group.")
        .U16("udp_port", &SwitchMLConfig::udp_port, kUdpPortSwitchmlBase, 0, 65535, "",
             "receive_udp's UDP destination port value (switchml.py:63).")
        .U16("udp_mask", &SwitchMLConfig::udp_mask, kUdpPortSwitchmlMask, 0, 65535, "", "... and mask.")
        .Num("ingress_drop_probability", &SwitchMLConfig::ingress_drop_probability, 0, 0, 1, "probability",
             "Simulated ingress drops (drop_simulator.py:64).")
        .Num("egress_drop_probability", &SwitchMLConfig::egress_drop_probability, 0, 0, 1, "probability",
             "Simulated egress drops.")
        .U64("drop_seed", &SwitchMLConfig::drop_seed, 1, 0, UINT64_MAX, "", "Seed of the drops' random stream.")
        .Enum("transport", &SwitchMLConfig::transport, "udp",
              {{"udp", SwitchMLTransport::kUdp}, {"rdma", SwitchMLTransport::kRdma}},
              "The workers' transport: SwitchML's UDP header (receive_udp, udp_sender) or RDMA UC writes over "
              "RoCEv2 (receive_roce, rdma_sender).")
        .U16("partition_key", &SwitchMLConfig::partition_key, 0xffff, 0, 65535, "",
             "RDMA: the session's partition key (rdma_receiver.py:146).")
        .U32("message_size", &SwitchMLConfig::message_size, 0, 0, 1u << 24, "bytes",
             "RDMA: bytes per message, a power-of-two number of packets (rdma_sender.py:138).");
    k.Enum("forwarding", &SwitchMLConfig::forwarding, "routed",
           {{"routed", SwitchMLForwarding::kRouted}, {"l2", SwitchMLForwarding::kL2}},
           "Frames that are not SwitchML passes: `routed` by the simulator's table (ours, for fabrics) or `l2`: "
           "upstream's ARP/ICMP responder and MAC forwarder (forwarder.p4, arp_icmp_responder.p4).");
    HandKey<SwitchMLConfig>(k, "forward",
                            {"array of objects", "", "each worker's MAC -> its port", "`{\"mac\", \"port\"}` each",
                             "`l2`: the forward table's entries, destination MAC -> switch port."},
                            {{"type", "array"}, {"items", {{"type", "object"}, {"required", {"mac", "port"}}}}},
                            [](const json& v, SwitchMLConfig& c) { c.forward = ForwardFromJson(v); });
    HandKey<SwitchMLConfig>(k, "flood_ports",
                            {"array of integers", "", "the workers' ports", "0 .. 65535 each",
                             "`l2`: the flood group's ports (the ingress port's copy excluded)."},
                            {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}, {"maximum", 65535}}}},
                            [](const json& v, SwitchMLConfig& c) {
                              if (!v.is_array()) throw std::invalid_argument("flood_ports: must be an array");
                              c.flood_ports.clear();
                              for (size_t i = 0; i < v.size(); ++i)
                                c.flood_ports.push_back(static_cast<uint16_t>(
                                    util::CheckedUnsigned(v[i], "flood_ports[" + std::to_string(i) + "]", 0, 65535)));
                            });
    keys::PassLatency(k, &SwitchMLConfig::pass_latency_ps);
    return k;
  }();
  return section;
}

}  // namespace

SwitchMLConfig SwitchMLConfig::FromJson(const std::string& text) {
  return ReadConfig(text, "switchml", Keys(), &SwitchMLConfig::Validate);
}

}  // namespace inasim::p4::switchml
