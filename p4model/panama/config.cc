#include "p4model/panama/config.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <set>
#include <stdexcept>

namespace inasim::p4::panama {

namespace {
[[noreturn]] void Fail(const std::string& m) { throw std::invalid_argument("panama config: " + m); }

uint64_t NsToPs(const nlohmann::json& v, const char* key) {
  if (!v.is_number()) Fail(std::string(key) + " must be a number");
  const double ns = v.get<double>();
  if (!(ns >= 0) || ns > 1e9) Fail(std::string(key) + " must be in 0..1e9 ns");
  return static_cast<uint64_t>(std::llround(ns * 1000.0));
}
}  // namespace

void PanamaConfig::Validate() const {
  if (num_ports == 0 || num_ports > kMaxPorts) Fail("num_ports must be in 1..64");
  if (slot_bytes == 0) Fail("slot_bytes must be > 0");
  if (latency.bus_bits == 0 || latency.bus_bits % 8 != 0) Fail("latency.bus_bits must be a positive multiple of 8");
  if (latency.clock_hz == 0) Fail("latency.clock_mhz must be > 0");
  const uint64_t all = num_ports == 64 ? ~uint64_t{0} : (uint64_t{1} << num_ports) - 1;
  std::set<uint16_t> jids;
  for (const PanamaJob& j : jobs) {
    const std::string name = "job " + std::to_string(j.jid);
    if (!jids.insert(j.jid).second) Fail(name + " appears twice");
    if (j.ports_bitmap == 0) Fail(name + " has no ports");
    if (j.ports_bitmap & ~all) Fail(name + " lists a port >= num_ports");
    if (j.num_trees == 0 || j.num_trees > 256) Fail(name + ": trees must be in 1..256 (TID is 8 bits)");
    if (!(j.quorum > 0 && j.quorum <= 1)) Fail(name + ": quorum must be in (0, 1]");
    if (!j.port_workers.empty() && j.port_workers.size() != num_ports)
      Fail(name + ": port_workers must list num_ports (" + std::to_string(num_ports) + ") counts");
    if (j.result == ResultRoute::kPorts) {
      if (j.result_ports.empty()) Fail(name + ": result ports list is empty");
      for (uint16_t p : j.result_ports)
        if (p >= num_ports) Fail(name + ": result port " + std::to_string(p) + " >= num_ports");
    }
  }
}

PanamaConfig PanamaConfig::FromJson(const std::string& text) {
  using nlohmann::json;
  PanamaConfig c;
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    Fail(std::string("bad JSON: ") + e.what());
  }
  if (!j.is_object()) Fail("not a JSON object");
  static const std::set<std::string> kKeys = {"num_ports",    "float_mode", "claim_all_traffic", "buffer_bytes",
                                              "slot_bytes",   "latency",    "jobs"};
  for (const auto& [k, v] : j.items())
    if (!kKeys.count(k)) Fail("unknown key \"" + k + "\"");
  try {
    c.num_ports = j.value("num_ports", c.num_ports);
    const std::string fm = j.value("float_mode", std::string("fpga"));
    if (fm == "fpga") c.float_mode = FloatMode::kFpga;
    else if (fm == "ieee") c.float_mode = FloatMode::kIeee;
    else Fail("float_mode must be \"fpga\" or \"ieee\"");
    c.claim_all_traffic = j.value("claim_all_traffic", c.claim_all_traffic);
    c.buffer_bytes = j.value("buffer_bytes", c.buffer_bytes);
    c.slot_bytes = j.value("slot_bytes", c.slot_bytes);
    if (j.contains("latency")) {
      const json& l = j["latency"];
      if (!l.is_object()) Fail("latency must be an object");
      static const std::set<std::string> kLat = {"mode", "bus_bits", "clock_mhz", "adder_ns", "fixed_ns",
                                                 "agg_fixed_ns"};
      for (const auto& [k, v] : l.items())
        if (!kLat.count(k)) Fail("unknown latency key \"" + k + "\"");
      const std::string mode = l.value("mode", std::string("equation"));
      if (mode == "equation") c.latency.mode = LatencyMode::kEquation;
      else if (mode == "table1") c.latency.mode = LatencyMode::kTable1;
      else Fail("latency.mode must be \"equation\" or \"table1\"");
      c.latency.bus_bits = l.value("bus_bits", c.latency.bus_bits);
      if (l.contains("clock_mhz")) {
        if (!l["clock_mhz"].is_number() || !(l["clock_mhz"].get<double>() > 0)) Fail("latency.clock_mhz must be > 0");
        c.latency.clock_hz = static_cast<uint64_t>(std::llround(l["clock_mhz"].get<double>() * 1e6));
      }
      if (l.contains("adder_ns")) c.latency.adder_ps = NsToPs(l["adder_ns"], "latency.adder_ns");
      if (l.contains("fixed_ns")) c.latency.fixed_ps = NsToPs(l["fixed_ns"], "latency.fixed_ns");
      if (l.contains("agg_fixed_ns")) c.latency.agg_fixed_ps = NsToPs(l["agg_fixed_ns"], "latency.agg_fixed_ns");
    }
    if (j.contains("jobs")) {
      if (!j["jobs"].is_array()) Fail("jobs must be an array");
      static const std::set<std::string> kJobKeys = {"jid", "ports", "trees", "result", "quorum", "port_workers"};
      for (const json& x : j["jobs"]) {
        if (!x.is_object()) Fail("each job must be an object");
        for (const auto& [k, v] : x.items())
          if (!kJobKeys.count(k)) Fail("unknown job key \"" + k + "\"");
        if (!x.contains("jid") || !x.contains("ports")) Fail("each job needs \"jid\" and \"ports\"");
        PanamaJob job;
        job.jid = x.at("jid").get<uint16_t>();
        for (uint32_t p : x.at("ports").get<std::vector<uint32_t>>()) {
          if (p >= kMaxPorts) Fail("job " + std::to_string(job.jid) + ": port " + std::to_string(p) + " >= 64");
          job.ports_bitmap |= uint64_t{1} << p;
        }
        job.num_trees = x.value("trees", job.num_trees);
        job.quorum = x.value("quorum", job.quorum);
        if (x.contains("port_workers")) job.port_workers = x["port_workers"].get<std::vector<uint32_t>>();
        if (x.contains("result")) {
          const json& r = x["result"];
          if (r.is_string() && r.get<std::string>() == "routed") job.result = ResultRoute::kRouted;
          else if (r.is_string() && r.get<std::string>() == "echo") job.result = ResultRoute::kEcho;
          else if (r.is_array()) {
            job.result = ResultRoute::kPorts;
            job.result_ports = r.get<std::vector<uint16_t>>();
          } else Fail("job result must be \"routed\", \"echo\" or a list of ports");
        }
        c.jobs.push_back(job);
      }
    }
  } catch (const json::exception& e) {
    Fail(e.what());
  }
  c.Validate();
  return c;
}

}  // namespace inasim::p4::panama
