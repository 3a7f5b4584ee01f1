// The scenario core's sections, each key declared once (spec::Section): the
// top level, topology, links, switch, host, background, faults, stop and
// outputs (the workload's are in scenario-workload.cc). ParseScenario reads
// with these declarations; docs/SCENARIO.md's tables and `inasim schema` are
// generated from them.
#include "ina/scenario-sections.h"

#include "ina/addressing.h"
#include "ina/event-trace.h"
#include "ina/protocol-checks.h"
#include "ina/workload.h"
#include "topology/topology.h"

#include <fmt/format.h>

#include <limits>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

namespace inasim {

using nlohmann::json;
using spec::Reader;
using spec::TimeUnit;
using spec::TypeName;

namespace {

constexpr size_t kMaxNameBytes = 255;  // NAME_MAX of Linux file systems
constexpr uint64_t kMaxBuffer = 1ull << 40;

template <class T>
using CoreSection = spec::Section<T, ScenarioInput>;

const spec::Section<HostSelection>& HostsObject() {
  static const auto section =
      spec::Section<HostSelection>("workload.hosts", "Hosts by count and placement")
          .U32("count", &HostSelection::count, 0, 0, kMaxHosts, "", "How many hosts; `0` means all.")
          .Allowed("0 .. number of hosts in the topology")
          .Enum("placement", &HostSelection::placement, "first",
                {{"first", Placement::kFirst}, {"spread", Placement::kSpread}, {"random", Placement::kRandom}},
                "`first`: hosts 0..count-1; `spread`: host floor(i x H / count) for i = 0..count-1 (H = hosts in the "
                "topology), i.e. evenly over racks; `random`: a seeded random subset, sorted by id.");
  return section;
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
  HostsObject().ParseObject(w, "hosts", sel);
}

json HostSelectionSchema(bool allow_others) {
  json forms = json::array({{{"const", "all"}}});
  if (allow_others) forms.push_back({{"const", "others"}});
  forms.push_back({{"type", "array"},
                   {"minItems", 2},
                   {"uniqueItems", true},
                   {"items", {{"type", "integer"}, {"minimum", 0}, {"maximum", kMaxHosts}}}});
  forms.push_back(HostsObject().JsonSchema());
  return {{"anyOf", std::move(forms)},
          {"description", fmt::format("\"all\",{} a list of host ids, or {{\"count\", \"placement\"}}",
                                      allow_others ? " \"others\" (the hosts the workload does not use)," : "")}};
}

const spec::Doc& HostSelectionObjectDoc() { return HostsObject(); }

spec::KeyDoc HostSelectionKeyDoc(const char* help) {
  return {"see [workload.hosts](#workloadhosts)", "", "every host", "see [workload.hosts](#workloadhosts)", help};
}

namespace {

// --- topology -----------------------------------------------------------------

const CoreSection<TopologySpec>& SingleRack() {
  static const auto section =
      CoreSection<TopologySpec>("topology", "single_rack: n hosts on one switch")
          .Named("topology:single_rack")
          .Required().U32("hosts", &TopologySpec::hosts, 0, 1, 65'535, "hosts", "Number of hosts.")
          .AllowedNote("a switch's port numbers are 16-bit");
  return section;
}

const CoreSection<TopologySpec>& LeafSpine() {
  static const auto section =
      CoreSection<TopologySpec>("topology", "leaf_spine: a two-level Clos")
          .Named("topology:leaf_spine")
          .Required().U32("leaves", &TopologySpec::leaves, 0, 1, 10'000, "switches", "Number of leaves (ToRs).")
          .Required().U32("spines", &TopologySpec::spines, 0, 1, 10'000, "switches", "Number of spines.")
          .Required().U32("hosts_per_leaf", &TopologySpec::hosts_per_leaf, 0, 1, 10'000, "hosts",
                          "Hosts under each leaf.")
          .Check([](const TopologySpec& t, Reader& r) {
            const uint64_t links = uint64_t{t.leaves} * (t.spines + t.hosts_per_leaf);
            if (links > 4'000'000)
              r.Fail("", fmt::format("{} links is more than this simulator accepts (4,000,000)", links));
          });
  return section;
}

const CoreSection<TopologySpec>& FatTree() {
  static const auto section =
      CoreSection<TopologySpec>("topology", "fat_tree: a 3-tier k-ary fat tree")
          .Named("topology:fat_tree")
          .Required().U32("k", &TopologySpec::k, 0, 2, 128, "ports", "Switch radix.")
          .AllowedNote("even")
          .SchemaAlso({{"multipleOf", 2}})
          .Check([](const TopologySpec& t, Reader& r) {
            if (t.k % 2) r.Fail("k", fmt::format("must be even, got {}", t.k));
          })
          .U32("hosts_per_edge", &TopologySpec::hosts_per_edge, 0, 0, 10'000, "hosts",
               "Hosts per edge switch; `0` means k/2 (non-blocking), more oversubscribes the edge layer.");
  return section;
}

const CoreSection<TopologySpec>& Topology() {
  static const auto section =
      CoreSection<TopologySpec>("topology", "Topology")
          .Required().Enum("type", &TopologySpec::type, "",
                           {{"single_rack", TopologyType::kSingleRack},
                            {"leaf_spine", TopologyType::kLeafSpine},
                            {"fat_tree", TopologyType::kFatTree}},
                           "Which builder to use.")
          .When("type", {"single_rack"}, SingleRack())
          .When("type", {"leaf_spine"}, LeafSpine())
          .When("type", {"fat_tree"}, FatTree());
  return section;
}

// --- links, switch, host -------------------------------------------------------

const CoreSection<LinksSpec>& Links() {
  static const auto section =
      CoreSection<LinksSpec>("links", "Links")
          .Num("host_rate_gbps", &LinksSpec::host_rate_gbps, 100, 0.001, 10'000, "Gb/s", "Rate of every host-ToR link.")
          .Num("fabric_rate_gbps", &LinksSpec::fabric_rate_gbps, 100, 0.001, 10'000, "Gb/s",
               "Rate of every switch-switch link.")
          .DefaultFrom([](const LinksSpec& l, const ScenarioInput&) { return l.host_rate_gbps; },
                       "`links.host_rate_gbps`")
          .TimePs("host_delay_ns", &LinksSpec::host_delay_ps, 500, 0, 1e9, TimeUnit::kNs,
                  "One-way propagation delay of host links.")
          .TimePs("fabric_delay_ns", &LinksSpec::fabric_delay_ps, 500, 0, 1e9, TimeUnit::kNs,
                  "One-way propagation delay of switch-switch links.")
          .U32("mtu_bytes", &LinksSpec::mtu_bytes, 1500, 128, 9216, "bytes", 
               "IP MTU of host interfaces; bounds every workload's packets (each protocol's `elements_per_packet`, "
               "the permutation's `payload_bytes`) and the background traffic's.")
          .U32("wire_overhead_bytes", &LinksSpec::wire_overhead_bytes, 24, 0, 1000, "bytes",
               "Bytes each frame occupies on the wire beyond the frame itself (FCS 4 + preamble/SFD 8 + inter-frame "
               "gap 12).");
  return section;
}

/// K per link speed: {"10": 65, "100": 650} (keys in Gb/s, values in `unit`).
void ParseKByRate(Reader& ecn, SwitchSpec& sw, const ScenarioInput&) {
  const json* by_rate = ecn.Raw("threshold_by_rate_gbps");
  ecn.out()["threshold_by_rate_gbps"] = json::object();
  if (!by_rate) return;
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
    sw.ecn_threshold_by_rate.emplace_back(static_cast<uint64_t>(std::llround(rate * 1e9)), it.value().get<uint64_t>());
    ecn.out()["threshold_by_rate_gbps"][it.key()] = it.value();
  }
}

const CoreSection<SwitchSpec>& Ecn() {
  using congestion::EcnUnit;
  using congestion::PortConfig;
  static const auto section =
      CoreSection<SwitchSpec>("switch.ecn", "ECN marking on every switch egress port")
          .Bool("enabled", spec::In(&SwitchSpec::port, &PortConfig::ecn_enabled), false,
                "Mark ECN CE on enqueue when over the threshold.")
          .Enum("unit", spec::In(&SwitchSpec::port, &PortConfig::ecn_unit), "packets",
                {{"packets", EcnUnit::kPackets}, {"bytes", EcnUnit::kBytes}}, "Unit of `threshold`.")
          .U64("threshold", spec::In(&SwitchSpec::port, &PortConfig::ecn_threshold), 65, 0, kMaxBuffer,
               "packets or bytes", "K: a packet is marked when the queue occupancy it finds on arrival is > K.")
          .DefaultFrom([](const SwitchSpec& sw, const ScenarioInput&) -> uint64_t {
            return sw.port.ecn_unit == EcnUnit::kPackets ? 65 : 65 * 1500;
          }, "`65` if unit is packets, `97500` (65 x 1500) if bytes")
          .Custom("threshold_by_rate_gbps",
                  {"object", "Gb/s -> packets or bytes", "`{}`", "keys: rates 0 .. 10000; values 0 .. 2^40",
                   "K per link speed (DCTCP's K grows with C x RTT): a switch port whose link runs at exactly a listed "
                   "rate uses that K instead of `threshold`, e.g. `{\"10\": 65, \"100\": 200}`."},
                  [] {
                    return json{{"type", "object"},
                                {"propertyNames", {{"pattern", "^[0-9.eE+-]+$"}}},
                                {"additionalProperties", {{"type", "integer"}, {"minimum", 0}, {"maximum", kMaxBuffer}}},
                                {"description", "K per link rate in Gb/s (keys), in `unit` (values)."}};
                  },
                  ParseKByRate);
  return section;
}

const CoreSection<congestion::PortConfig>& Pfc() {
  using congestion::PortConfig;
  static const auto section =
      CoreSection<PortConfig>("switch.pfc", "Priority flow control on every switch port")
          .Bool("enabled", &PortConfig::pfc_enabled, false, "Priority flow control (PAUSE/RESUME towards the upstream transmitter).")
          .U64("xoff_bytes", &PortConfig::pfc_xoff_bytes, 256 << 10, 1, kMaxBuffer, "bytes", "Per ingress port: send PAUSE when its buffered bytes exceed this. Buffered bytes are the frames from "
                                                                                             "that port still waiting for an egress wire. A multicast counts once, however many of its copies "
                                                                                             "wait: the buffer is shared, as on a Tofino.")
          .DocDefault("`262144` (256 KiB)")
          .U64("xon_bytes", &PortConfig::pfc_xon_bytes, 128 << 10, 0, kMaxBuffer, "bytes", "Per ingress port: send RESUME when they fall below this.")
          .DocDefault("`131072` (128 KiB)")
          .AllowedNote("and at most `xoff_bytes`")
          .Check([](const PortConfig& p, Reader& r) {
            if (p.pfc_xon_bytes > p.pfc_xoff_bytes)
              r.Fail("xon_bytes", fmt::format("must not exceed xoff_bytes ({})", p.pfc_xoff_bytes));
          });
  return section;
}

const CoreSection<congestion::PortConfig>& Credit() {
  using congestion::PortConfig;
  static const auto section =
      CoreSection<PortConfig>("switch.credit", "Credit-based link-level flow control on every switch ingress")
          .Bool("enabled", &PortConfig::credit_enabled, false,
                "Credit-based flow control, as the routers of SST's merlin network model do it: the "
                "transmitter towards every switch port (a host NIC or another switch) holds `bytes` of credit, "
                "starts a frame only when its bytes are in credit and spends them (`sstsimulator/sst-elements@"
                "f782290d064f82afaaf39ae08605b5435ff0f034:src/sst/elements/merlin/interfaces/portControl.cc:1247`); "
                "the switch gives them back, one link delay later, when the frame leaves its ingress's share of the "
                "buffer (portControl.cc:133-140): when it, and every frame the dataplane made of it while processing "
                "it (a multicast's copies: the last one), has left by an egress wire, or at once when the dataplane "
                "consumed it. Our switches are output-queued over a shared buffer, so the credit is each ingress's "
                "reserved share of it, where merlin's router holds a frame in an input buffer while its output "
                "buffer is full. Lossless without thresholds; exclusive with `switch.pfc`.")
          .U64("bytes", &PortConfig::credit_bytes, 32 << 10, 1500, kMaxBuffer, "bytes",
               "Credit per switch ingress port: the input buffer the upstream transmitter may fill. SST requires "
               "it (`input_buf_size`, no default); 32 kB is the value most of sst-elements' merlin test "
               "configurations use. Lossless when `buffer_bytes` >= ports x `bytes` (the most one egress queue "
               "can then hold).")
          .DocDefault("`32768` (32 KiB)");
  return section;
}

const CoreSection<SwitchSpec>& Switch() {
  using congestion::ForwardingPolicy;
  static const auto section =
      CoreSection<SwitchSpec>("switch", "Every switch egress port")
          .U64("buffer_bytes", spec::In(&SwitchSpec::port, &congestion::PortConfig::buffer_bytes), 1ull << 20, 1500,
               kMaxBuffer, "bytes", "Drop-tail limit of the bytes waiting in one egress queue.")
          .DocDefault("`1048576` (1 MiB)")
          .Object("ecn", spec::Self<SwitchSpec>(), Ecn(), "See [switch.ecn](#switchecn).")
          .Enum("forwarding", &SwitchSpec::forwarding, "ecmp",
                {{"ecmp", ForwardingPolicy::kEcmp}, {"spray", ForwardingPolicy::kSpray},
                 {"adaptive", ForwardingPolicy::kAdaptive}},
                "Choice among equal-cost next hops: `ecmp` hashes the 5-tuple (one path per flow); `spray` picks "
                "uniformly at random per packet; `adaptive` takes the hash-chosen port unless its queue is above "
                "`adaptive_threshold` of the buffer, then the least-queued port.")
          .Num("adaptive_threshold", &SwitchSpec::adaptive_threshold, 0.5, 0.0, 1.0, "fraction",
               "Queue fill (fraction of `buffer_bytes`) above which `adaptive` leaves the hashed port.")
          .Enum("adaptive_default", &SwitchSpec::adaptive_by_destination, "flow", {{"flow", false}, {"destination", true}},
                "The port `adaptive` starts from: `flow` hashes the 5-tuple (salted per switch); `destination` is "
                "d-mod-k up/down routing, port (destination host / n^(tier-1)) mod n among the n equal-cost ports, "
                "the same at every switch of a tier (\"a default up port (selected depending on the packet "
                "destination)\", see below).")
          .U64("hash_seed", &SwitchSpec::hash_seed, 0, 0, UINT64_MAX, "", "Salt of the ECMP hash.")
          .TimePs("forwarding_latency_ns", &SwitchSpec::forwarding_latency_ps, 0, 0, 1e6, TimeUnit::kNs,
                  "Added to every hop that ends at a switch (pipeline latency).")
          .Object("pfc", &SwitchSpec::port, Pfc(), "See [switch.pfc](#switchpfc).")
          .Object("credit", &SwitchSpec::port, Credit(), "See [switch.credit](#switchcredit).")
          .Check([](const SwitchSpec& sw, Reader& r) {
            if (sw.port.credit_enabled && sw.port.pfc_enabled)
              r.Fail("credit", "credit-based flow control and switch.pfc cannot both be enabled: choose one");
          });
  return section;
}

const CoreSection<congestion::PortConfig>& Host() {
  static const auto section =
      CoreSection<congestion::PortConfig>("host", "Every host NIC")
          .U64("nic_buffer_bytes", &congestion::PortConfig::buffer_bytes, 16ull << 20, 1500, kMaxBuffer, "bytes",
               "Drop-tail limit of each host NIC's transmit queue. It stands for the host's socket buffers too: UDP "
               "senders (aggregation, congestion traffic) have no other backpressure. Background TCP flows keep only "
               "`background.flows.tcp.small_queue_bytes` each in it.")
          .DocDefault("`16777216` (16 MiB)")
          .Enum("nic_tx_queues", &congestion::PortConfig::tx_queue_per_endpoint, "shared",
                {{"per_endpoint", true}, {"shared", false}},
                "`per_endpoint`: the host's ns-3 stack (TCP, its UDP sockets) and each kernel-bypass endpoint (an "
                "aggregation worker: DPDK, RDMA, FPGA) have a transmit queue of their own, each up to "
                "`nic_buffer_bytes`, and the NIC serves them round robin, a frame at a time, as a multi-queue NIC "
                "arbitrates its send queues (Intel 82575EB SDM rev. 2.1 p. 161: \"Round robin arbitration is "
                "performed among the LP queues\"): a short TCP flow does not wait behind a worker's window, but the "
                "stack gets one turn in (endpoints + 1) while they all have frames waiting. `shared` (the default): "
                "one FIFO for every frame of the host (the simulated papers do not say which their hosts had).");
  return section;
}

// --- stop, outputs ---------------------------------------------------------------

const CoreSection<Scenario>& Stop() {
  static const auto section =
      CoreSection<Scenario>("stop", "When the simulation stops")
          .TimePs("max_sim_time_ms", &Scenario::max_sim_time_ps, 1000, 1e-6, 1e7, TimeUnit::kMs,
                  "Simulated-time limit. A run normally stops when the workload finishes; if the limit comes first, the "
                  "results say `\"stopped_by\": \"max_sim_time\"` (an unfinished allreduce exits with code 1).");
  return section;
}

/// A list of node names, or of numbers (link numbers, trace ids, flow
/// numbers: `what` says which, for the message), read by hand, each entry
/// checked (outputs.pcap.links / .nodes, outputs.sample_links / .sample_nodes,
/// outputs.trace.ids, outputs.tcp_trace.flows).
template <class E>
void ReadIdList(Reader& r, const char* key, std::vector<E>& out, const char* what = "a link number (links.csv's `link`)") {
  const json* v = r.Raw(key);
  if (!v) return;
  if (!v->is_array()) r.Fail(key, "must be an array, got " + v->dump());
  for (size_t i = 0; i < v->size(); ++i) {
    const json& e = (*v)[i];
    if constexpr (std::is_same_v<E, std::string>) {
      if (!e.is_string()) r.Fail(fmt::format("{}[{}]", key, i), "must be a node name (a string), got " + e.dump());
      out.push_back(e.get<std::string>());
    } else {
      if (!e.is_number_unsigned() || e.get<uint64_t>() > std::numeric_limits<E>::max())
        r.Fail(fmt::format("{}[{}]", key, i), fmt::format("must be {}, got {}", what, e.dump()));
      out.push_back(static_cast<E>(e.get<uint64_t>()));
    }
  }
  r.out()[key] = *v;
}

/// A trace's window (`from_us`, `until_us`, checked) and row cap
/// (`max_rows`): outputs.trace and outputs.tcp_trace. `rows`: what the window
/// keeps, for the help.
template <class T>
CoreSection<T>& TraceWindowKeys(CoreSection<T>& s, const char* section, const char* rows) {
  return s.TimePs("from_us", &T::from_ps, 0, 0, 1e10, TimeUnit::kUs, fmt::format("{} at or after this time.", rows).c_str())
      .TimePs("until_us", &T::until_ps, 1e10, 0, 1e10, TimeUnit::kUs, "... and before this time.")
      .U64("max_rows", &T::max_rows, 1'000'000, 1, 1ull << 32, "rows",
           fmt::format("Rows kept (about 80 bytes each, in memory until the results are written); later ones are "
                       "counted in results.json (`{}.left_out_max_rows`).", section).c_str())
      .Check([](const T& t, Reader& r) {
        if (t.until_ps <= t.from_ps) r.Fail("until_us", "must be after from_us");
      });
}

/// A key listing link numbers (links.csv's `link`) into `member`
/// (outputs.pcap.links, outputs.trace.links, outputs.sample_links).
template <class T>
CoreSection<T>& LinkListKey(CoreSection<T>& s, const char* key, std::vector<uint32_t> T::*member, const char* absent,
                            const char* help) {
  return s.Custom(key, {"array of integers", "", absent, "link numbers (links.csv's `link`)", help},
                  [] { return json{{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}}}}; },
                  [key, member](Reader& r, T& t, const ScenarioInput&) { ReadIdList(r, key, t.*member); });
}

/// A key listing node names into `member` (the same sections' `nodes`).
template <class T>
CoreSection<T>& NodeListKey(CoreSection<T>& s, const char* key, std::vector<std::string> T::*member,
                            const char* absent, const char* help) {
  return s.Custom(key, {"array of strings", "", absent, "node names (links.csv's `a`, `b`)", help},
                  [] { return json{{"type", "array"}, {"items", {{"type", "string"}}}}; },
                  [key, member](Reader& r, T& t, const ScenarioInput&) { ReadIdList(r, key, t.*member); });
}

const CoreSection<PcapSpec>& Pcap() {
  static const auto section = [] {
    CoreSection<PcapSpec> p("outputs.pcap", "Wireshark captures of chosen links");
    p.Step([](Reader&, PcapSpec& s, const ScenarioInput&) { s.enabled = true; });
    LinkListKey(p, "links", &PcapSpec::links, "(none)",
                "Links to capture: one file `pcap/link-<n>-<a>-<b>.pcap` each, both directions.");
    NodeListKey(p, "nodes", &PcapSpec::nodes, "(none)", "Nodes whose every link is captured (a host: its one link).")
        .TimePs("from_us", &PcapSpec::from_ps, 0, 0, 1e10, TimeUnit::kUs,
                "Capture frames that start on the wire at or after this time.")
        .TimePs("until_us", &PcapSpec::until_ps, 1e10, 0, 1e10, TimeUnit::kUs, "... and before this time.")
        .U64("max_bytes", &PcapSpec::max_bytes, 64ull << 20, 24, 1ull << 34, "bytes",
             "Per file, headers included: frames past it are left out (counted in results.json).")
        .U32("snaplen", &PcapSpec::snaplen, 65535, 64, 262144, "bytes", "Bytes kept of each frame.")
        .Check([](const PcapSpec& s, Reader& r) {
          if (s.links.empty() && s.nodes.empty()) r.Fail("links", "give `links` or `nodes` (what to capture)");
          if (s.until_ps <= s.from_ps) r.Fail("until_us", "must be after from_us");
        });
    return p;
  }();
  return section;
}

/// A list of names, each one of `allowed` (or any, with `allowed` empty).
void ReadNameList(Reader& r, const char* key, std::vector<std::string>& out, const std::vector<std::string>& allowed) {
  const json* v = r.Raw(key);
  if (!v) return;
  if (!v->is_array()) r.Fail(key, "must be an array of strings, got " + v->dump());
  for (size_t i = 0; i < v->size(); ++i) {
    const json& e = (*v)[i];
    const std::string at = fmt::format("{}[{}]", key, i);
    if (!e.is_string()) r.Fail(at, "must be a string, got " + e.dump());
    const std::string name = e.get<std::string>();
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), name) == allowed.end())
      r.Fail(at, fmt::format("\"{}\" is not one of {}", name, fmt::join(allowed, ", ")));
    out.push_back(name);
  }
  r.out()[key] = *v;
}

/// The protocol column's possible values: every registered protocol, and
/// what frames of none are.
std::vector<std::string> TraceProtocolNames() {
  std::vector<std::string> names;
  for (const Protocol& p : Protocols()) names.emplace_back(p.name);
  for (const char* other : {"tcp", "udp", "other"}) names.emplace_back(other);
  return names;
}

const CoreSection<TraceSpec>& Trace() {
  static const auto section = [] {
    CoreSection<TraceSpec> t("outputs.trace", "The structured event trace");
    t.Step([](Reader&, TraceSpec& s, const ScenarioInput&) { s.enabled = true; });
    LinkListKey(t, "links", &TraceSpec::links, "(none)",
                "Links whose devices' events are traced (both directions), with the programs and agents at their "
                "ends. With `nodes` also empty: every link, switch and host.");
    NodeListKey(t, "nodes", &TraceSpec::nodes, "(none)",
                "Nodes traced: every link of each, a switch's program events, a host's agents' timeouts.")
        .Custom("events",
                {"array of strings", "", "every event", "enqueue, dequeue, receive, drop, mark, pause, resume, program_in, "
                 "program_out, program_timer, timeout",
                 "The events kept (trace.csv's `event`)."},
                [] { return json{{"type", "array"}, {"items", {{"type", "string"}, {"enum", TraceEventNames()}}}}; },
                [](Reader& r, TraceSpec& s, const ScenarioInput&) {
                  ReadNameList(r, "events", s.events, TraceEventNames());
                })
        .Custom("protocols",
                {"array of strings", "", "every protocol", "a protocol's name, or tcp, udp, other",
                 "Rows whose `protocol` column is one of these (frames the workload does not key are tcp, udp or "
                 "other; pause, resume and program_timer rows carry no frame and are dropped by this filter)."},
                [] { return json{{"type", "array"}, {"items", {{"type", "string"}, {"enum", TraceProtocolNames()}}}}; },
                [](Reader& r, TraceSpec& s, const ScenarioInput&) {
                  ReadNameList(r, "protocols", s.protocols, TraceProtocolNames());
                })
        .Custom("ids",
                {"array of integers", "", "every id", "the protocol's ids (trace.csv's `id`)",
                 "Only rows of frames (and timeouts) with one of these ids: one block, slot or vector end to end."},
                [] { return json{{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}}}}; },
                [](Reader& r, TraceSpec& s, const ScenarioInput&) {
                  ReadIdList(r, "ids", s.ids, "an id (an integer >= 0)");
                });
    TraceWindowKeys(t, "outputs.trace", "Trace events");
    return t;
  }();
  return section;
}

const CoreSection<congestion::TcpTraceSpec>& TcpTrace() {
  static const auto section = [] {
    using congestion::TcpTraceSpec;
    CoreSection<TcpTraceSpec> t("outputs.tcp_trace", "The background TCP senders' congestion state over time");
    t.Step([](Reader&, TcpTraceSpec& s, const ScenarioInput&) { s.enabled = true; })
        .Custom("flows",
                {"array of integers", "", "every flow", "flows.csv's `flow` numbers",
                 "The background flows whose senders are traced."},
                [] { return json{{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}}}}; },
                [](Reader& r, TcpTraceSpec& s, const ScenarioInput&) {
                  ReadIdList(r, "flows", s.flows, "a flow number (flows.csv's `flow`)");
                })
        .Custom("events",
                {"array of strings", "", "every event", "cwnd, ssthresh, rtt, state, alpha",
                 "The rows kept (tcp_trace.csv's `event`): a change of the congestion window, of the slow-start "
                 "threshold, of the congestion state, an RTT estimate, DCTCP's per-window estimate."},
                [] {
                  return json{{"type", "array"}, {"items", {{"type", "string"}, {"enum", congestion::TcpTraceEventNames()}}}};
                },
                [](Reader& r, TcpTraceSpec& s, const ScenarioInput&) {
                  ReadNameList(r, "events", s.events, congestion::TcpTraceEventNames());
                });
    TraceWindowKeys(t, "outputs.tcp_trace", "Rows");
    return t;
  }();
  return section;
}

const CoreSection<OutputSpec>& Outputs() {
  static const auto section = [] {
    CoreSection<OutputSpec> out("outputs", "What a run writes besides results.json");
    out.Bool("links_csv", &OutputSpec::links_csv, true, "Write `links.csv`.")
        .TimePs("sample_interval_us", &OutputSpec::sample_interval_ps, 0, 0, 1e9, TimeUnit::kUs,
                "If > 0, sample every link direction's queue, byte counter and utilisation over the last interval "
                "into `samples.csv`.");
    LinkListKey(out, "sample_links", &OutputSpec::sample_links, "every link",
                "Links `samples.csv` samples (with `sample_nodes`: both sets).");
    NodeListKey(out, "sample_nodes", &OutputSpec::sample_nodes, "every link",
                "Nodes whose every link `samples.csv` samples.")
        .Check([](const OutputSpec& o, Reader& r) {
          if ((!o.sample_links.empty() || !o.sample_nodes.empty()) && o.sample_interval_ps == 0)
            r.Fail(!o.sample_links.empty() ? "sample_links" : "sample_nodes", "needs sample_interval_us > 0");
        })
        .Bool("gzip", &OutputSpec::gzip, false,
              "Write the CSV tables gzip-compressed, as `<name>.csv.gz` (`samples.csv` can be large).")
        .ObjectIfGiven("pcap", &OutputSpec::pcap, Pcap(),
                       "Wireshark-readable captures (libpcap, nanosecond timestamps) of chosen links, as "
                       "`pcap/*.pcap`; `tools/inasim.lua` decodes the protocols' headers. See "
                       "[outputs.pcap](#outputspcap).")
        .ObjectIfGiven("trace", &OutputSpec::trace, Trace(),
                       "The structured event trace, `trace.csv`: one row per packet event (enqueue, dequeue, receive, "
                       "drop, mark, pause, switch program in/out/timer, host timeout) on chosen links and nodes, each "
                       "frame keyed by its protocol (job, id, kind). See [outputs.trace](#outputstrace).")
        .ObjectIfGiven("tcp_trace", &OutputSpec::tcp_trace, TcpTrace(),
                       "The background TCP senders' congestion window, slow-start threshold, bytes in flight, RTT, "
                       "congestion state and DCTCP alpha over time, `tcp_trace.csv` (ns-3's TcpSocketBase and "
                       "TcpDctcp trace sources). See [outputs.tcp_trace](#outputstcp_trace).");
    return out;
  }();
  return section;
}

}  // namespace

// Background traffic and faults: scenario-sections-traffic.cc.
const CoreSection<BackgroundSpec>& BackgroundSection();
const CoreSection<FaultSpec>& FaultsSection();

namespace {

/// `name` is the default output directory out/<name>: one safe path
/// component, or a run could write (and replace) a directory elsewhere.
void CheckScenarioName(const Scenario& s, Reader& top) {
  const std::string& name = s.name;
  const char* why = "; it names the output directory out/<name>, so it must be one file name";
  if (name.empty()) top.Fail("name", fmt::format("must not be empty{}", why));
  if (name == "." || name == "..") top.Fail("name", fmt::format("must not be \"{}\"{}", name, why));
  if (name.find('/') != std::string::npos) top.Fail("name", fmt::format("must not contain '/'{}", why));
  if (name.find('\0') != std::string::npos) top.Fail("name", fmt::format("must not contain a NUL character{}", why));
  if (name.size() > kMaxNameBytes)
    top.Fail("name", fmt::format("is {} bytes long, at most {} (a file name){}", name.size(), kMaxNameBytes, why));
}

/// Topology-dependent checks (faults, host counts) need the (cheap) graph:
/// built once, after every section it depends on was read.
void BuildTopologyOnce(Reader&, Scenario& s, const ScenarioInput& in) {
  try {
    *in.topology = BuildTopology(s);
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(fmt::format("topology: {}", e.what()));
  }
  const uint32_t nh = in.topology->num_hosts();
  if (nh > kMaxHosts) throw ScenarioError(fmt::format("topology: {} hosts exceed the address plan ({})", nh, kMaxHosts));
}

}  // namespace

const spec::Section<Scenario, ScenarioInput>& ScenarioSection() {
  static const auto section =
      CoreSection<Scenario>("", "INA-Sim scenario")
          .Named("top-level")
          .Str("name", &Scenario::name, "scenario",
               "Name of the run; the default output directory is `out/<name>`.")
          .Allowed("one file name: non-empty, not `.` or `..`, no `/` or NUL, at most 255 bytes")
          .Check(CheckScenarioName)
          .Str("description", &Scenario::description, "", "Free text, echoed in the results.")
          .U64("seed", &Scenario::seed, 1, 1, 1ull << 62, "", "Seeds everything random: ns-3's RNG (link loss, spraying), the tensor data, `random` host placement, "
                                                              "the permutation. `--seed N` overrides it.")
          .Required().Object("topology", &Scenario::topology, Topology(), "See [topology](#topology).")
          .Object("links", &Scenario::links, Links(), "See [links](#links).")
          .Object("switch", &Scenario::sw, Switch(), "See [switch](#switch).")
          .Object("host", &Scenario::host_port, Host(), "See [host](#host).")
          .Object("workload", spec::Self<Scenario>(), WorkloadSection(), "See [workload](#workload).")
          .DocDefault(fmt::format("`{{}}` (a \"{}\" allreduce over every host)", DefaultProtocol()))
          .ObjectIfGiven("background", &Scenario::background, BackgroundSection(),
                         "Background traffic next to the workload: Poisson TCP flows and/or moving UDP congestion. "
                         "See [background](#background).")
          .Object("stop", spec::Self<Scenario>(), Stop(), "See [stop](#stop).")
          .Object("outputs", &Scenario::outputs, Outputs(), "See [outputs](#outputs).")
          .Step(BuildTopologyOnce)
          .Object("faults", &Scenario::faults, FaultsSection(), "See [faults](#faults).");
  return section;
}

json ScenarioJsonSchema() {
  json schema = {{"$schema", "https://json-schema.org/draft/2020-12/schema"}};
  schema.update(ScenarioSection().JsonSchema());
  schema["description"] =
      "An INA-Sim scenario (docs/SCENARIO.md). null means absent (the key's default) to inasim, not to this schema.";
  return schema;
}

std::vector<const spec::Doc*> ScenarioDocs() {
  std::vector<const spec::Doc*> docs;
  spec::CollectDocs(ScenarioSection(), docs);
  return docs;
}

}  // namespace inasim
