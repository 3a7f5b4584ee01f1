#include "ina/scenario.h"

#include "ina/addressing.h"
#include "ina/protocol-checks.h"
#include "ina/scenario-checks.h"
#include "ina/scenario-sections.h"
#include "ina/workload.h"
#include "topology/topology.h"

#include "common/bounded_file.h"
#include "common/json_text.h"
#include "common/spec_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <set>

namespace inasim {

using nlohmann::json;

namespace {

using spec::EditDistance;
using spec::Reader;
using spec::TypeName;

constexpr size_t kMaxNameBytes = 255;  // NAME_MAX of Linux file systems
constexpr uint64_t kMaxBuffer = 1ull << 40;


void ParsePortConfig(Reader& r, congestion::PortConfig& port, uint64_t def_buffer,
                     std::vector<std::pair<uint64_t, uint64_t>>& k_by_rate) {
  port.buffer_bytes = r.U64("buffer_bytes", def_buffer, 1500, kMaxBuffer);
  Reader ecn = r.Obj("ecn");
  port.ecn_enabled = ecn.Bool("enabled", false);
  const std::string unit = ecn.Enum("unit", "packets", {"packets", "bytes"});
  port.ecn_unit = unit == "packets" ? congestion::EcnUnit::kPackets : congestion::EcnUnit::kBytes;
  port.ecn_threshold = ecn.U64("threshold", unit == "packets" ? 65 : 65 * 1500, 0, kMaxBuffer);
  // K per link speed: {"10": 65, "100": 650} (keys in Gb/s, values in `unit`).
  const json* by_rate = ecn.Raw("threshold_by_rate_gbps");
  ecn.out()["threshold_by_rate_gbps"] = json::object();
  if (by_rate) {
    if (!by_rate->is_object())
      ecn.Fail("threshold_by_rate_gbps", "must be an object mapping a link rate in Gb/s to K, e.g. {\"100\": 650}");
    for (auto it = by_rate->begin(); it != by_rate->end(); ++it) {
      const std::string key = "threshold_by_rate_gbps." + it.key();
      double rate = 0;
      size_t used = 0;
      try {
        rate = std::stod(it.key(), &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != it.key().size() || !(rate > 0 && rate <= 10'000))
        ecn.Fail(key, "the key must be a link rate in Gb/s between 0 and 10000");
      if (!it.value().is_number_unsigned() || it.value().get<uint64_t>() > kMaxBuffer)
        ecn.Fail(key, fmt::format("must be an integer K between 0 and {}, got {}", kMaxBuffer, TypeName(it.value())));
      k_by_rate.emplace_back(static_cast<uint64_t>(std::llround(rate * 1e9)), it.value().get<uint64_t>());
      ecn.out()["threshold_by_rate_gbps"][it.key()] = it.value();
    }
  }
  ecn.Done();
}

}  // namespace

void ParseHosts(Reader& w, HostSelection& sel, bool allow_others) {
  const json* v = w.Raw("hosts");
  if (!v) {
    w.out()["hosts"] = {{"count", 0}, {"placement", "first"}};
    return;
  }
  if (v->is_string() && v->get<std::string>() == "all") {
    w.out()["hosts"] = "all";
    return;
  }
  if (allow_others && v->is_string() && v->get<std::string>() == "others") {
    sel.others = true;
    w.out()["hosts"] = "others";
    return;
  }
  if (v->is_array()) {
    if (v->size() < 2) w.Fail("hosts", fmt::format("needs at least 2 host ids, got {}", v->size()));
    std::set<uint32_t> seen;
    for (size_t i = 0; i < v->size(); ++i) {
      const json& e = (*v)[i];
      if (!e.is_number_unsigned())
        w.Fail(fmt::format("hosts[{}]", i), "must be a host id (non-negative integer), got " + TypeName(e));
      const uint64_t id = e.get<uint64_t>();
      if (id > kMaxHosts) w.Fail(fmt::format("hosts[{}]", i), "host id too large");
      if (!seen.insert(static_cast<uint32_t>(id)).second)
        w.Fail(fmt::format("hosts[{}]", i), fmt::format("host {} is listed twice", id));
      sel.list.push_back(static_cast<uint32_t>(id));
    }
    w.out()["hosts"] = *v;
    return;
  }
  if (!v->is_object())
    w.Fail("hosts", fmt::format("must be \"all\",{} a list of host ids, or {{\"count\", \"placement\"}}, got {}",
                                allow_others ? " \"others\"," : "", TypeName(*v)));
  Reader h = w.Obj("hosts");
  sel.count = h.U32("count", 0, 0, kMaxHosts);
  const std::string p = h.Enum("placement", "first", {"first", "spread", "random"});
  sel.placement = p == "first" ? Placement::kFirst : p == "spread" ? Placement::kSpread : Placement::kRandom;
  h.Done();
}

namespace {

/// `name` is the default output directory out/<name>: one safe path
/// component, or a run could write (and replace) a directory elsewhere.
void CheckScenarioName(Reader& top, const std::string& name) {
  const char* why = "; it names the output directory out/<name>, so it must be one file name";
  if (name.empty()) top.Fail("name", fmt::format("must not be empty{}", why));
  if (name == "." || name == "..") top.Fail("name", fmt::format("must not be \"{}\"{}", name, why));
  if (name.find('/') != std::string::npos) top.Fail("name", fmt::format("must not contain '/'{}", why));
  if (name.find('\0') != std::string::npos) top.Fail("name", fmt::format("must not contain a NUL character{}", why));
  if (name.size() > kMaxNameBytes)
    top.Fail("name", fmt::format("is {} bytes long, at most {} (a file name){}", name.size(), kMaxNameBytes, why));
}

}  // namespace

topo::Topology BuildTopology(const Scenario& s) {
  const topo::LinkSpec host{static_cast<uint64_t>(s.links.host_rate_gbps * 1e9), s.links.host_delay_ps};
  const topo::LinkSpec fabric{static_cast<uint64_t>(s.links.fabric_rate_gbps * 1e9), s.links.fabric_delay_ps};
  switch (s.topology.type) {
    case TopologyType::kSingleRack: return topo::BuildSingleRack(s.topology.hosts, host);
    case TopologyType::kLeafSpine:
      return topo::BuildLeafSpine(s.topology.leaves, s.topology.spines, s.topology.hosts_per_leaf, host, fabric);
    case TopologyType::kFatTree: return topo::BuildFatTree(s.topology.k, host, fabric, s.topology.hosts_per_edge);
  }
  throw ScenarioError("topology.type: unsupported");
}

// What a protocol accepts comes from its protocols/<name>/protocol.json
// (the registry); these say why a scenario asks for something else.

static std::string JoinNames(const std::vector<std::string>& names, const char* last_sep) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? last_sep : ", ") + names[i];
  return s;
}

static std::string DataRefusal(const Protocol& p, DataPattern data) {
  if (data != DataPattern::kUniform)
    return fmt::format("protocol \"{}\" does not check \"{}\" data", p.name, data == DataPattern::kOnes ? "ones" : "hashed");
  std::vector<std::string> checkers;
  for (const Protocol& q : Protocols())
    if (q.Accepts(DataPattern::kUniform)) checkers.push_back(fmt::format("\"{}\" ({})", q.name, q.uniform_note));
  return fmt::format("\"uniform\" sums are inexact in float32; only protocols {} check them; protocol \"{}\" checks "
                     "the exact sum bit for bit (use \"hashed\")", JoinNames(checkers, " and "), p.name);
}

static std::string JobsRefusal(const Protocol& p) {
  if (!p.jobs_note.empty()) return std::string(p.jobs_note);
  std::vector<std::string> able;
  for (const Protocol& q : Protocols())
    if (q.concurrent_jobs == "jobs") able.push_back(fmt::format("\"{}\"", q.name));
  return fmt::format("only protocols {} run concurrent jobs; this workload's protocol is \"{}\"",
                     JoinNames(able, " and "), p.name);
}

static std::string DtypeRefusal(const Protocol& p) {
  const bool int32 = p.Accepts(DType::kInt32);
  return fmt::format("protocol \"{}\" aggregates {} ({}); use \"{}\"", p.name, int32 ? "int32" : "IEEE-754 fp32",
                     p.dtype_note, int32 ? "int32" : "float32");
}

/// Whether `p` reads workload.<section>: its own, or one it also reads.
static bool Reads(const Protocol& p, std::string_view section) {
  return p.section == section || std::find(p.also_reads.begin(), p.also_reads.end(), section) != p.also_reads.end();
}

/// Each protocol reads its own section; another's is an error, not ignored.
static void RefuseOtherSections(Reader& w, const Protocol& p) {
  std::vector<std::string_view> sections;
  for (const Protocol& q : Protocols()) {
    if (!q.section.empty()) sections.push_back(q.section);
    for (std::string_view a : q.also_reads) sections.push_back(a);
  }
  std::sort(sections.begin(), sections.end());
  sections.erase(std::unique(sections.begin(), sections.end()), sections.end());
  for (std::string_view section : sections) {
    if (Reads(p, section)) continue;
    const std::string key(section);
    if (w.Has(key)) {
      std::vector<std::string> readers;  // the owner first, then protocols that also read it
      for (const Protocol& q : Protocols())
        if (q.section == section) readers.insert(readers.begin(), fmt::format("\"{}\"", q.name));
        else if (Reads(q, section)) readers.push_back(fmt::format("\"{}\"", q.name));
      w.Fail(key, fmt::format("only read with protocol {} (this workload's protocol is \"{}\")",
                              JoinNames(readers, " or "), p.name));
    }
    w.Raw(key);
  }
}

json LoadScenarioJson(const std::string& file) {
  std::string text;
  try {
    text = util::ReadBoundedFile(file, util::kMaxJsonFileBytes, "scenario file");
  } catch (const util::FileReadError& e) {
    throw ScenarioError(e.what());
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw ScenarioError(fmt::format("{}: not valid JSON: {}", file, e.what()));
  } catch (const json::out_of_range& e) {  // e.g. 1e999: not representable
    throw ScenarioError(fmt::format("{}: a number out of range: {}", file, e.what()));
  }
  // The parser keeps the last of two equal keys; a scenario must not lose the first silently.
  if (const auto dup = util::FindDuplicateKey(text)) throw ScenarioError(fmt::format("{}: {}", file, dup->Describe()));
  return doc;
}

void ApplyOverride(json& doc, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ScenarioError(fmt::format("--set {}: expected PATH=VALUE, e.g. workload.bytes=1048576", assignment));
  const std::string path = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  json value;
  bool is_json = true;
  try {
    value = json::parse(text);
  } catch (const json::parse_error&) {
    is_json = false;
    value = text;  // bare words are strings: --set topology.type=fat_tree
  } catch (const json::out_of_range& e) {  // a number past double's range (found by fuzz_scenario)
    throw ScenarioError(fmt::format("--set {}: the value is a number out of range ({})",
                                    json(path).dump(-1, ' ', false, json::error_handler_t::replace), e.what()));
  }
  if (is_json) {  // one key twice in an object of the value?
    if (const auto dup = util::FindDuplicateKey(text)) {
      util::DuplicateKey at_path = *dup;
      at_path.path = path + (dup->path.empty() || dup->path.front() == '[' ? "" : ".") + dup->path;
      throw ScenarioError(fmt::format("--set {}: {} in the value", json(path).dump(-1, ' ', false,
                                      json::error_handler_t::replace), at_path.Describe()));
    }
  }
  // Scenario text must be UTF-8 (a file's JSON parser checks that; a bare
  // --set word does not pass through it), or results.json could not be written.
  try {
    (void)json(path).dump();
    (void)value.dump();
  } catch (const json::type_error&) {
    throw ScenarioError(fmt::format("--set {}: not valid UTF-8", json(assignment).dump(-1, ' ', false,
                                                                                     json::error_handler_t::replace)));
  }
  json* cur = &doc;
  std::string walked;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string seg = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (seg.empty()) throw ScenarioError(fmt::format("--set {}: empty path segment", assignment));
    if (!cur->is_object())
      throw ScenarioError(fmt::format("--set {}: {} is not an object", assignment,
                                      walked.empty() ? "the scenario" : walked));
    walked += (walked.empty() ? "" : ".") + seg;
    if (dot == std::string::npos) {
      if (value.is_null()) cur->erase(seg);  // --set key=null removes a key
      else (*cur)[seg] = value;
      return;
    }
    json& next = (*cur)[seg];
    if (next.is_null()) next = json::object();
    cur = &next;
    start = dot + 1;
  }
}

namespace {

/// Unknown top-level keys first, so a misspelt required section is reported
/// as a misspelling ("did you mean"), not as missing.
void CheckTopLevelKeys(const json& doc) {
  if (doc.is_object()) {
    static const char* const kTop[] = {"name", "description", "seed", "topology", "links", "switch", "host",
                                       "workload", "background", "faults", "stop", "outputs"};
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      bool known = false;
      std::string best;
      size_t best_d = 3;
      for (const char* k : kTop) {
        known |= it.key() == k;
        const size_t d = EditDistance(it.key(), k);
        if (d < best_d) { best_d = d; best = k; }
      }
      if (!known)
        throw ScenarioError(best.empty() ? fmt::format("{}: unknown key", it.key())
                                         : fmt::format("{}: unknown key (did you mean \"{}\"?)", it.key(), best));
    }
  }
}

void ParseTopologySection(Reader& top, Scenario& s) {
  Reader t = top.Obj("topology");
  if (!top.Has("topology")) top.Fail("topology", "is required");
  const std::string type = t.Enum("type", "", {"single_rack", "leaf_spine", "fat_tree"}, true);
  if (type == "single_rack") {
    s.topology.type = TopologyType::kSingleRack;
    s.topology.hosts = t.U32("hosts", 0, 1, 65'535, true);  // a switch has 16-bit port numbers
  } else if (type == "leaf_spine") {
    s.topology.type = TopologyType::kLeafSpine;
    s.topology.leaves = t.U32("leaves", 0, 1, 10'000, true);
    s.topology.spines = t.U32("spines", 0, 1, 10'000, true);
    s.topology.hosts_per_leaf = t.U32("hosts_per_leaf", 0, 1, 10'000, true);
    const uint64_t links = uint64_t{s.topology.leaves} * (s.topology.spines + s.topology.hosts_per_leaf);
    if (links > 4'000'000)
      t.Fail("", fmt::format("{} links is more than this simulator accepts (4,000,000)", links));
  } else {
    s.topology.type = TopologyType::kFatTree;
    s.topology.k = t.U32("k", 0, 2, 128, true);
    if (s.topology.k % 2) t.Fail("k", fmt::format("must be even, got {}", s.topology.k));
    s.topology.hosts_per_edge = t.U32("hosts_per_edge", 0, 0, 10'000);
  }
  t.Done();
}

void ParseLinksSection(Reader& top, Scenario& s) {
  Reader l = top.Obj("links");
  s.links.host_rate_gbps = l.Num("host_rate_gbps", 100, 0.001, 10'000);
  s.links.fabric_rate_gbps = l.Num("fabric_rate_gbps", s.links.host_rate_gbps, 0.001, 10'000);
  s.links.host_delay_ps = l.TimePs("host_delay_ns", 500, 0, 1e9, kPsPerNs);
  s.links.fabric_delay_ps = l.TimePs("fabric_delay_ns", 500, 0, 1e9, kPsPerNs);
  s.links.mtu_bytes = l.U32("mtu_bytes", 1500, 128, 9216);
  s.links.wire_overhead_bytes = l.U32("wire_overhead_bytes", 24, 0, 1000);
  l.Done();
}

void ParseSwitchSection(Reader& top, Scenario& s) {
  Reader w = top.Obj("switch");
  ParsePortConfig(w, s.sw.port, 1ull << 20, s.sw.ecn_threshold_by_rate);
  const std::string f = w.Enum("forwarding", "ecmp", {"ecmp", "spray", "adaptive"});
  s.sw.forwarding = f == "ecmp" ? congestion::ForwardingPolicy::kEcmp
                  : f == "spray" ? congestion::ForwardingPolicy::kSpray
                                 : congestion::ForwardingPolicy::kAdaptive;
  s.sw.adaptive_threshold = w.Num("adaptive_threshold", 0.5, 0.0, 1.0);
  s.sw.adaptive_by_destination = w.Enum("adaptive_default", "flow", {"flow", "destination"}) == "destination";
  s.sw.hash_seed = w.U64("hash_seed", 0, 0, UINT64_MAX);
  s.sw.forwarding_latency_ps = w.TimePs("forwarding_latency_ns", 0, 0, 1e6, kPsPerNs);
  Reader pfc = w.Obj("pfc");
  s.sw.port.pfc_enabled = pfc.Bool("enabled", false);
  s.sw.port.pfc_xoff_bytes = pfc.U64("xoff_bytes", 256 << 10, 1, kMaxBuffer);
  s.sw.port.pfc_xon_bytes = pfc.U64("xon_bytes", 128 << 10, 0, kMaxBuffer);
  if (s.sw.port.pfc_xon_bytes > s.sw.port.pfc_xoff_bytes)
    pfc.Fail("xon_bytes", fmt::format("must not exceed xoff_bytes ({})", s.sw.port.pfc_xoff_bytes));
  pfc.Done();
  w.Done();
}

void ParseHostSection(Reader& top, Scenario& s) {
  Reader h = top.Obj("host");
  s.host_port.buffer_bytes = h.U64("nic_buffer_bytes", 16ull << 20, 1500, kMaxBuffer);
  h.Done();
}

/// The keys every allreduce shares, then the protocol's own (its registry entry).
void ParseAllreduceKeys(Reader& w, Scenario& s) {
  s.workload.protocol = w.Str("protocol", std::string(DefaultProtocol()));
  const Protocol* protocol = FindProtocol(s.workload.protocol);
  if (!protocol || protocol->workload_type != "allreduce")
    w.Fail("protocol", fmt::format("must be one of {}, got \"{}\"", ProtocolNames(), s.workload.protocol));
  s.workload.bytes = w.U64("bytes", 4ull << 20, 4, 1ull << 40);
  if (s.workload.bytes % 4) w.Fail("bytes", fmt::format("must be a multiple of 4 (whole 32-bit elements), got {}", s.workload.bytes));
  s.workload.dtype = w.Enum("dtype", "int32", {"int32", "float32"}) == "int32" ? DType::kInt32 : DType::kFloat32;
  const std::string data = w.Enum("data", "hashed", {"hashed", "ones", "uniform"});
  s.workload.data = data == "hashed" ? DataPattern::kHashed : data == "ones" ? DataPattern::kOnes : DataPattern::kUniform;
  if (s.workload.data == DataPattern::kUniform && s.workload.dtype != DType::kFloat32)
    w.Fail("data", "\"uniform\" draws float32 gradients in (-1, 1); it needs dtype \"float32\"");
  if (!protocol->Accepts(s.workload.data)) w.Fail("data", DataRefusal(*protocol, s.workload.data));
  s.workload.iterations = w.U32("iterations", 1, 1, 1'000'000);
  s.workload.compute_gap_ps = w.TimePs("compute_gap_us", 0, 0, 1e9, kPsPerUs);
  s.workload.start_ps = w.TimePs("start_us", 0, 0, 1e9, kPsPerUs);
  // canary-fgcs24 §5.2.4 (Fig. 10): concurrent allreduces, the hosts split between them.
  s.workload.jobs = w.U32("jobs", 1, 1, 256);
  s.workload.jobs_contiguous = w.Enum("job_split", "shuffled", {"shuffled", "contiguous"}) == "contiguous";
  if (s.workload.jobs > 1 && protocol->concurrent_jobs != "jobs") w.Fail("jobs", JobsRefusal(*protocol));
  // Each protocol reads its own section; another's is an error, not ignored.
  RefuseOtherSections(w, *protocol);
  if (!protocol->Accepts(s.workload.dtype)) w.Fail("dtype", DtypeRefusal(*protocol));
  protocol->parse(w, s);  // its own section (protocols/<name>/host/spec.cc)
}

void ParseWorkloadSection(Reader& top, Scenario& s) {
  Reader w = top.Obj("workload");
  const std::string type = w.Enum("type", "allreduce", {"allreduce", "permutation", "none"});
  s.workload.type = type == "allreduce" ? WorkloadType::kAllreduce
                  : type == "permutation" ? WorkloadType::kPermutation
                                          : WorkloadType::kNone;
  if (s.workload.type != WorkloadType::kNone) ParseHosts(w, s.workload.hosts);
  if (s.workload.type == WorkloadType::kAllreduce) {
    ParseAllreduceKeys(w, s);
  } else if (s.workload.type == WorkloadType::kPermutation) {
    FindProtocol("permutation")->parse(w, s);
  }
  w.Done();
}

/// background.flows.list: explicit flows (e.g. PANAMA Fig. 10's one long flow).
void ParseFlowList(Reader& f, BackgroundFlowsSpec& bf) {
  if (const json* list = f.Raw("list")) {
    // Explicit flows (e.g. PANAMA Fig. 10's one long flow): the Poisson keys do not apply.
    if (!list->is_array() || list->empty())
      f.Fail("list", "must be a non-empty array of {\"src\", \"dst\", \"bytes\", \"start_us\"}");
    json resolved_list = json::array();
    for (size_t i = 0; i < list->size(); ++i) {
      json resolved;
      Reader e(&(*list)[i], fmt::format("background.flows.list[{}]", i), &resolved);
      congestion::FlowSpec fs;
      fs.src = e.U32("src", 0, 0, UINT32_MAX, true);
      fs.dst = e.U32("dst", 0, 0, UINT32_MAX, true);
      if (fs.src == fs.dst) e.Fail("dst", fmt::format("is the source ({}): a flow needs two hosts", fs.src));
      fs.bytes = e.U64("bytes", 0, 1, 1ull << 40, true);
      fs.start_ps = e.TimePs("start_us", 0, 0, 1e9, kPsPerUs);
      e.Done();
      bf.list.push_back(fs);
      resolved_list.push_back(resolved);
    }
    f.out()["list"] = resolved_list;
    std::stable_sort(bf.list.begin(), bf.list.end(),
                     [](const congestion::FlowSpec& a, const congestion::FlowSpec& c) { return a.start_ps < c.start_ps; });
    for (const char* key : {"hosts", "size_distribution", "size_scale", "load", "only", "start_us", "stop_us"}) {
      if (f.Has(key)) f.Fail(key, "is for Poisson arrivals; not used with \"list\"");
      f.Raw(key);
    }
  }
}

/// background.flows as Poisson arrivals of a flow-size distribution.
void ParsePoissonFlows(Reader& f, BackgroundFlowsSpec& bf, const std::string& base_dir) {
ParseHosts(f, bf.hosts, true);
bf.size_distribution = f.Str("size_distribution", "web_search");
try {
  const auto names = congestion::BuiltinFlowSizeNames();
  if (std::find(names.begin(), names.end(), bf.size_distribution) != names.end()) {
    bf.sizes = std::make_shared<congestion::FlowSizeCdf>(congestion::FlowSizeCdf::Builtin(bf.size_distribution));
  } else {
    std::filesystem::path file(bf.size_distribution);
    if (file.is_relative() && !base_dir.empty()) file = std::filesystem::path(base_dir) / file;
    bf.sizes = std::make_shared<congestion::FlowSizeCdf>(congestion::FlowSizeCdf::Load(file.string()));
  }
} catch (const std::invalid_argument& e) {
  f.Fail("size_distribution", fmt::format("{} (built-in: web_search, data_mining; or a CDF file)", e.what()));
}
bf.size_scale = f.Num("size_scale", 1, 1e-6, 1e3);
if (bf.size_scale != 1) bf.sizes = std::make_shared<congestion::FlowSizeCdf>(bf.sizes->Scaled(bf.size_scale));
bf.load = f.Num("load", 0.4, 1e-6, 1.0);
bf.only = f.Enum("only", "all", {"all", "short", "long"});
bf.start_ps = f.TimePs("start_us", 0, 0, 1e9, kPsPerUs);
if (!f.Has("stop_us")) f.Fail("stop_us", "is required (when flow arrivals stop, in us)");
bf.stop_ps = f.TimePs("stop_us", 0, 0, 1e9, kPsPerUs);
if (bf.stop_ps <= bf.start_ps) f.Fail("stop_us", "must be after start_us");
}

void ParseTcp(Reader& f, uint32_t mtu_bytes, congestion::TcpConfig& tcp) {
  Reader t = f.Obj("tcp");
  tcp.variant = t.Enum("variant", "dctcp", {"dctcp", "cubic", "newreno"});
  tcp.ecn = t.Bool("ecn", true);
  tcp.initial_cwnd_segments = t.U32("initial_cwnd_segments", 10, 1, 65'535);
  const uint32_t max_mss = mtu_bytes - 52;  // IP 20 + TCP 20 + timestamps 12
  tcp.segment_bytes = t.U32("segment_bytes", max_mss, 64, max_mss);
  tcp.min_rto_ps = t.TimePs("min_rto_us", 1000, 1, 1e7, kPsPerUs);
  tcp.buffer_bytes = t.U32("buffer_bytes", 4u << 20, tcp.segment_bytes, 1u << 30);
  tcp.del_ack_count = t.U32("del_ack_count", 2, 1, 64);
  tcp.del_ack_timeout_ps = t.TimePs("del_ack_timeout_us", 10, 0.001, 1e6, kPsPerUs);
  tcp.port = static_cast<uint16_t>(t.U32("port", 5001, 1, 65'535));
  tcp.small_queue_bytes = t.U32("small_queue_bytes", congestion::TcpConfig{}.small_queue_bytes, 0, 1u << 30);
  t.Done();
}

void ParseFlows(Reader& b, Scenario& s, const std::string& base_dir) {
  BackgroundFlowsSpec& bf = s.background.flows;
  bf.enabled = true;
  Reader f = b.Obj("flows");
  ParseFlowList(f, bf);
  if (bf.list.empty()) ParsePoissonFlows(f, bf, base_dir);
  bf.wait_for_completion = f.Bool("wait_for_completion", true);
  ParseTcp(f, s.links.mtu_bytes, bf.tcp);
  f.Done();
}

void ParseCongestion(Reader& b, Scenario& s) {
  CongestionSpec& c = s.background.congestion;
  c.enabled = true;
  Reader g = b.Obj("congestion");
  ParseHosts(g, c.hosts, true);
  c.message_bytes = g.U64("message_bytes", 1 << 20, 1, 1ull << 40);
  c.payload_bytes = g.U32("payload_bytes", s.links.mtu_bytes - 28, 1, s.links.mtu_bytes - 28);
  c.rate_gbps = g.Num("rate_gbps", 0, 0, 10'000);
  c.start_ps = g.TimePs("start_us", 0, 0, 1e9, kPsPerUs);
  c.stop_ps = g.TimePs("stop_us", 0, 0, 1e9, kPsPerUs);
  if (c.stop_ps != 0 && c.stop_ps <= c.start_ps) g.Fail("stop_us", "must be after start_us (or 0: until the workload ends)");
  c.udp_port = static_cast<uint16_t>(g.U32("udp_port", 7, 1, 65'535));
  c.socket_buffer_bytes = g.U32("socket_buffer_bytes", CongestionSpec{}.socket_buffer_bytes, 0, 1u << 30);
  c.permutation = g.Enum("peers", "uniform", {"uniform", "permutation"}) == "permutation";
  // Its senders must not hit a port the workload's hosts receive on.
  std::vector<std::pair<const char*, uint16_t>> ports;
  if (const Protocol* p = s.workload.type == WorkloadType::kNone ? nullptr
                          : FindProtocol(s.workload.type == WorkloadType::kPermutation ? std::string_view("permutation")
                                                                                       : std::string_view(s.workload.protocol)))
    p->checks->add_udp_ports(s, ports);
  for (const auto& [key, port] : ports)
    if (c.udp_port == port) g.Fail("udp_port", fmt::format("collides with {} ({})", key, port));
  g.Done();
}

void ParseBackgroundSection(Reader& top, Scenario& s, const std::string& base_dir) {
if (!top.Has("background")) {
  top.Raw("background");  // absent (or null): not echoed
} else {
  Reader b = top.Obj("background");
  if (b.Has("flows")) {
    ParseFlows(b, s, base_dir);
  } else {
    b.Raw("flows");
  }
  if (b.Has("congestion")) {
    ParseCongestion(b, s);
  } else {
    b.Raw("congestion");
  }
  b.Done();
}
}

void ParseStopAndOutputs(Reader& top, Scenario& s) {
s.max_sim_time_ps = 0;
{
  Reader st = top.Obj("stop");
  s.max_sim_time_ps = st.TimePs("max_sim_time_ms", 1000, 1e-6, 1e7, kPsPerMs);
  st.Done();
}
{
  Reader o = top.Obj("outputs");
  s.outputs.links_csv = o.Bool("links_csv", true);
  s.outputs.sample_interval_ps = o.TimePs("sample_interval_us", 0, 0, 1e9, kPsPerUs);
  o.Done();
}
}

LinkFault ParseLinkFault(const json& entry, size_t i, const topo::Topology& t, json& resolved) {
  Reader lr(&entry, fmt::format("faults.links[{}]", i), &resolved);
  LinkFault lf;
  if (!lr.Has("link") && !lr.Has("between")) lr.Fail("", "give \"link\" (index) or \"between\" ([node, node])");
  if (lr.Has("link") && !lr.Has("between")) {
    lr.Raw("between");  // present as null: absent, like everywhere else
    lf.link = lr.U32("link", 0, 0, UINT32_MAX);
    if (lf.link >= t.links().size())
      lr.Fail("link", fmt::format("no link {}: the topology has {} links (0..{})", lf.link, t.links().size(), t.links().size() - 1));
  } else {
    const json* b = lr.Raw("between");
    if (!b->is_array() || b->size() != 2 || !(*b)[0].is_string() || !(*b)[1].is_string())
      lr.Fail("between", "must be two node names, e.g. [\"leaf0\", \"spine1\"]");
    auto find = [&](const std::string& name) -> uint32_t {
      for (uint32_t v = 0; v < t.num_vertices(); ++v)
        if (t.node(v).name == name) return v;
      lr.Fail("between", fmt::format("no node named \"{}\"", name));
    };
    const uint32_t a = find((*b)[0]), c = find((*b)[1]);
    bool found = false;
    for (const auto& p : t.ports(a))
      if (p.peer == c) { lf.link = p.link; found = true; break; }
    if (!found) lr.Fail("between", fmt::format("\"{}\" and \"{}\" are not linked", (*b)[0].get<std::string>(), (*b)[1].get<std::string>()));
    // Both given (as results.json echoes them): they must agree.
    const json* given = lr.Raw("link");
    if (given && !(given->is_number_unsigned() && given->get<uint64_t>() == lf.link))
      lr.Fail("link", fmt::format("disagrees with \"between\", which is link {}", lf.link));
    resolved["between"] = *b;
    resolved["link"] = lf.link;
  }
  lf.loss_rate = lr.Num("loss_rate", -1, -1, 1);
  if (lr.Has("down_at_us")) lf.down_at_ps = lr.TimePs("down_at_us", 0, 0, 1e10, kPsPerUs);
  else lr.Raw("down_at_us");
  lr.Done();
  return lf;
}

HostFault ParseHostFault(const json& entry, size_t i, const topo::Topology& t, json& resolved) {
  Reader hr(&entry, fmt::format("faults.hosts[{}]", i), &resolved);
  HostFault hf;
  hf.host = hr.U32("host", 0, 0, UINT32_MAX, true);
  if (hf.host >= t.num_hosts())
    hr.Fail("host", fmt::format("no host {}: the topology has {} hosts (0..{})", hf.host, t.num_hosts(),
                                t.num_hosts() - 1));
  hf.delay_ps = hr.TimePs("delay_us", 0, 0, 1e9, kPsPerUs);
  if (!hr.Has("delay_us")) hr.Fail("delay_us", "is required (how much later the host's frames arrive, in us)");
  hf.at_ps = hr.TimePs("at_us", 0, 0, 1e10, kPsPerUs);
  hr.Done();
  return hf;
}

void ParseFaultsSection(Reader& top, Scenario& s, const topo::Topology& t) {
  Reader f = top.Obj("faults");
  s.faults.loss_rate = f.Num("loss_rate", 0, 0, 1);
  s.faults.reconverge_ps = f.TimePs("reconverge_us", 1000, 0, 1e10, kPsPerUs);
  const json* links = f.Raw("links");
  f.out()["links"] = json::array();
  if (links) {
    if (!links->is_array()) f.Fail("links", "must be an array of {\"link\" or \"between\", \"loss_rate\", \"down_at_us\"}");
    for (size_t i = 0; i < links->size(); ++i) {
      json resolved;
      const LinkFault lf = ParseLinkFault((*links)[i], i, t, resolved);
      s.faults.links.push_back(lf);
      f.out()["links"].push_back(resolved);
    }
  }
  const json* slow = f.Raw("hosts");
  f.out()["hosts"] = json::array();
  if (slow) {
    if (!slow->is_array()) f.Fail("hosts", "must be an array of {\"host\", \"delay_us\", \"at_us\"}");
    for (size_t i = 0; i < slow->size(); ++i) {
      json resolved;
      const HostFault hf = ParseHostFault((*slow)[i], i, t, resolved);
      s.faults.hosts.push_back(hf);
      f.out()["hosts"].push_back(resolved);
    }
  }
  f.Done();
}

/// Workload hosts must fit the topology.
void CheckWorkloadHosts(const Scenario& s, uint32_t nh) {
  if (s.workload.type != WorkloadType::kNone) {
    const HostSelection& sel = s.workload.hosts;
    for (size_t i = 0; i < sel.list.size(); ++i)
      if (sel.list[i] >= nh)
        throw ScenarioError(fmt::format("workload.hosts[{}]: host {} does not exist (the topology has {} hosts)", i, sel.list[i], nh));
    if (sel.count > nh)
      throw ScenarioError(fmt::format("workload.hosts.count: {} hosts asked for, the topology has {}", sel.count, nh));
    const uint32_t n = !sel.list.empty() ? static_cast<uint32_t>(sel.list.size()) : sel.count ? sel.count : nh;
    // One P4SGD worker still aggregates through the switch (the baseline of p4sgd Fig. 12).
    const uint32_t min_hosts =
        s.workload.type == WorkloadType::kAllreduce ? FindProtocol(s.workload.protocol)->min_hosts_per_job : 2;
    if (n < min_hosts)
      throw ScenarioError(fmt::format("workload.hosts: needs at least {} hosts, got {}", min_hosts, n));
    if (s.workload.type == WorkloadType::kAllreduce && s.workload.dtype == DType::kFloat32 &&
        s.workload.data == DataPattern::kHashed && n > TensorData::kMaxFloatHashedRanks)
      throw ScenarioError(fmt::format("workload.dtype: float32 hashed data is exact up to {} ranks; use int32",
                                      TensorData::kMaxFloatHashedRanks));
  }
}

void CheckBackgroundHosts(const Scenario& s, uint32_t nh, const char* path, const HostSelection& sel) {
  for (size_t i = 0; i < sel.list.size(); ++i)
    if (sel.list[i] >= nh)
      throw ScenarioError(fmt::format("{}.hosts[{}]: host {} does not exist (the topology has {} hosts)", path, i, sel.list[i], nh));
  if (sel.count > nh)
    throw ScenarioError(fmt::format("{}.hosts.count: {} hosts asked for, the topology has {}", path, sel.count, nh));
  if (!sel.others && sel.list.empty() && sel.count == 1)
    throw ScenarioError(fmt::format("{}.hosts.count: needs at least 2 hosts, got 1", path));
  if (sel.others) {
    if (s.workload.type == WorkloadType::kNone)
      throw ScenarioError(fmt::format("{}.hosts: \"others\" means the hosts the workload does not use, but workload.type is \"none\"", path));
    const HostSelection& w = s.workload.hosts;
    const uint32_t used = !w.list.empty() ? static_cast<uint32_t>(w.list.size()) : w.count ? w.count : nh;
    if (nh - used < 2)
      throw ScenarioError(fmt::format("{}.hosts: \"others\" leaves {} hosts outside the workload; at least 2 are needed", path, nh - used));
  }
}

/// Background hosts must fit the topology (and leave room for "others").
void CheckBackgroundHostsFit(const Scenario& s, uint32_t nh) {
  if (s.background.flows.enabled && s.background.flows.list.empty())
    CheckBackgroundHosts(s, nh, "background.flows", s.background.flows.hosts);
  for (size_t i = 0; i < s.background.flows.list.size(); ++i) {
    const congestion::FlowSpec& f = s.background.flows.list[i];
    for (const uint32_t h : {f.src, f.dst})
      if (h >= nh)
        throw ScenarioError(fmt::format("background.flows.list: host {} does not exist (the topology has {} hosts)", h, nh));
  }
  if (s.background.congestion.enabled) CheckBackgroundHosts(s, nh, "background.congestion", s.background.congestion.hosts);
}

}  // namespace

Scenario ParseScenario(const json& doc, const std::string& base_dir) {
  Scenario s;
  if (doc.is_object()) CheckTopLevelKeys(doc);
  Reader top(&doc, "", &s.resolved);
  s.name = top.Str("name", "scenario");
  CheckScenarioName(top, s.name);
  s.description = top.Str("description", "");
  s.seed = top.U64("seed", 1, 1, (1ull << 62));
  ParseTopologySection(top, s);
  ParseLinksSection(top, s);
  ParseSwitchSection(top, s);
  ParseHostSection(top, s);
  ParseWorkloadSection(top, s);
  ParseBackgroundSection(top, s, base_dir);
  ParseStopAndOutputs(top, s);

  // Topology-dependent checks: build the (cheap) graph once.
  topo::Topology t;
  try {
    t = BuildTopology(s);
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(fmt::format("topology: {}", e.what()));
  }
  const uint32_t nh = t.num_hosts();
  if (nh > kMaxHosts) throw ScenarioError(fmt::format("topology: {} hosts exceed the address plan ({})", nh, kMaxHosts));
  ParseFaultsSection(top, s, t);
  top.Done();
  CheckWorkloadHosts(s, nh);
  CheckBackgroundHostsFit(s, nh);
  CheckWorkloadPlacement(s, t);  // what building the workload would reject at run time
  return s;
}

}  // namespace inasim
