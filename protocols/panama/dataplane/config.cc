#include "protocols/panama/dataplane/config.h"

#include "p4model/common/config_reader.h"
#include "protocols/panama/dataplane/keys.h"

#include "common/json_text.h"

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
    // An empty bitmap is a job with no member port: fp_datapath.v's per-port
    // FSM takes FORWARD_OUT_RESULT for every port with PORTS_BITMAP[i] == 0
    // (:449-450), so each of its packets passes through (counted forwarded).
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

namespace {

const std::set<std::string> kLatencyKeys = {"bus_bits", "clock_mhz", "adder_ns", "fixed_ns", "agg_fixed_ns"};
const std::set<std::string> kJobKeys = {"jid", "ports", "trees", "result", "quorum", "port_workers"};
constexpr double kMaxClockMhz = 1e6;  // 1 THz: anything beyond is a typo (and would overflow the Hz count)

template <class T>
std::vector<T> UnsignedList(const nlohmann::json& v, const std::string& path, uint64_t hi) {
  if (!v.is_array()) Fail(path + ": must be an array of integers");
  std::vector<T> out;
  for (size_t i = 0; i < v.size(); ++i)
    out.push_back(static_cast<T>(util::CheckedUnsigned(v[i], path + "[" + std::to_string(i) + "]", 0, hi)));
  return out;
}

/// latency_model: the constants of eq. (3) (the model is `latency`).
void LatencyModelFromJson(const nlohmann::json& l, PanamaLatency& lat) {
  if (!l.is_object()) Fail("latency_model must be an object");
  util::CheckKnownKeys(l, kLatencyKeys, "latency_model");
  lat.bus_bits = util::UnsignedField<uint32_t>(l, "bus_bits", "latency_model", lat.bus_bits);
  if (l.contains("clock_mhz")) {
    const nlohmann::json& v = l["clock_mhz"];
    if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > kMaxClockMhz)
      Fail("latency_model.clock_mhz must be > 0 and at most 1e6");
    lat.clock_hz = static_cast<uint64_t>(std::llround(v.get<double>() * 1e6));
  }
  if (l.contains("adder_ns")) lat.adder_ps = NsToPs(l["adder_ns"], "latency_model.adder_ns");
  if (l.contains("fixed_ns")) lat.fixed_ps = NsToPs(l["fixed_ns"], "latency_model.fixed_ns");
  if (l.contains("agg_fixed_ns")) lat.agg_fixed_ps = NsToPs(l["agg_fixed_ns"], "latency_model.agg_fixed_ns");
}

PanamaJob JobFromJson(const nlohmann::json& x, const std::string& path) {
  if (!x.is_object()) Fail(path + ": must be an object");
  util::CheckKnownKeys(x, kJobKeys, path);
  if (!x.contains("jid") || !x.contains("ports")) Fail("each job needs \"jid\" and \"ports\"");
  PanamaJob job;
  job.jid = util::UnsignedField<uint16_t>(x, "jid", path, 0);
  const std::vector<uint32_t> ports = UnsignedList<uint32_t>(x.at("ports"), path + ".ports", UINT32_MAX);
  for (size_t i = 0; i < ports.size(); ++i) {
    const uint32_t p = ports[i];
    if (p >= kMaxPorts)
      Fail(path + ".ports[" + std::to_string(i) + "]: port " + std::to_string(p) + " must be < " + std::to_string(kMaxPorts));
    job.ports_bitmap |= uint64_t{1} << p;
  }
  job.num_trees = util::UnsignedField<uint32_t>(x, "trees", path, job.num_trees);
  if (x.contains("quorum")) {
    if (!x["quorum"].is_number()) Fail(path + ".quorum: must be a number in (0, 1]");
    job.quorum = x["quorum"].get<double>();
  }
  if (x.contains("port_workers"))
    job.port_workers = UnsignedList<uint32_t>(x["port_workers"], path + ".port_workers", UINT32_MAX);
  if (x.contains("result")) {
    const nlohmann::json& r = x["result"];
    if (r.is_string() && r.get<std::string>() == "routed") job.result = ResultRoute::kRouted;
    else if (r.is_string() && r.get<std::string>() == "echo") job.result = ResultRoute::kEcho;
    else if (r.is_array()) {
      job.result = ResultRoute::kPorts;
      job.result_ports = UnsignedList<uint16_t>(r, path + ".result", 65535);
    } else Fail("job result must be \"routed\", \"echo\" or a list of ports");
  }
  return job;
}

using ConfigKeys = spec::Section<PanamaConfig>;

const ConfigKeys& Keys() {
  static const ConfigKeys section = [] {
    ConfigKeys k("", "inasim-p4 replay panama --config");
    k.U32("num_ports", &PanamaConfig::num_ports, kPrototypePorts, 1, kMaxPorts, "ports", "The accelerator's ports.")
        .Bool("claim_all_traffic", &PanamaConfig::claim_all_traffic, true,
              "Claim every packet (the FPGA sits inline); false: only PANAMA's.");
    // Shared with workload.panama (keys.h).
    keys::Accelerator(k, &PanamaConfig::buffer_bytes, &PanamaConfig::float_mode, FloatMode::kFpga, FloatMode::kIeee,
                      spec::In(&PanamaConfig::latency, &PanamaLatency::mode), LatencyMode::kEquation,
                      LatencyMode::kTable1)
        .U32("slot_bytes", &PanamaConfig::slot_bytes, kMaxPacketBytes, 1, 1u << 20, "bytes",
             "Bytes per packet slot of the accelerator's memory.");
    HandKey<PanamaConfig>(k, "latency_model",
                          {"object", "", "`{}`", "`bus_bits`, `clock_mhz`, `adder_ns`, `fixed_ns`, `agg_fixed_ns`",
                           "The constants of eq. (3): bus width, clock, adder and fixed latencies."},
                          {{"type", "object"}},
                          [](const nlohmann::json& v, PanamaConfig& c) { LatencyModelFromJson(v, c.latency); });
    HandKey<PanamaConfig>(k, "jobs",
                          {"array of objects", "", "`[]`", "`{\"jid\", \"ports\", \"trees\", \"result\", "
                           "\"quorum\", \"port_workers\"}` each", "The jobs this accelerator serves."},
                          {{"type", "array"}, {"items", {{"type", "object"}, {"required", {"jid", "ports"}}}}},
                          [](const nlohmann::json& v, PanamaConfig& c) {
                            if (!v.is_array()) Fail("jobs must be an array");
                            for (size_t i = 0; i < v.size(); ++i)
                              c.jobs.push_back(JobFromJson(v[i], "jobs[" + std::to_string(i) + "]"));
                          });
    return k;
  }();
  return section;
}

}  // namespace

PanamaConfig PanamaConfig::FromJson(const std::string& text) {
  return ReadConfig(text, "panama", Keys(), &PanamaConfig::Validate);
}

}  // namespace inasim::p4::panama
