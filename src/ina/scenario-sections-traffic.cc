// The scenario core's background traffic and faults sections, each key
// declared once (spec::Section); see scenario-sections.cc.
#include "ina/scenario-sections.h"

#include "ina/protocol-checks.h"
#include "ina/workload.h"
#include "topology/topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>

namespace inasim {

using nlohmann::json;
using spec::Reader;
using spec::TimeUnit;

template <class T>
using CoreSection = spec::Section<T, ScenarioInput>;

namespace {

// --- background.flows --------------------------------------------------------------

const spec::Section<congestion::FlowSpec>& FlowEntry() {
  using congestion::FlowSpec;
  static const auto section =
      spec::Section<FlowSpec>("background.flows.list[i]", "One explicit background flow")
          .Required().U32("src", &FlowSpec::src, 0, 0, UINT32_MAX, "", "Source host id.")
          .Required().U32("dst", &FlowSpec::dst, 0, 0, UINT32_MAX, "", "Destination host id (not the source).")
          .Check([](const FlowSpec& fs, Reader& e) {
            if (fs.src == fs.dst) e.Fail("dst", fmt::format("is the source ({}): a flow needs two hosts", fs.src));
          })
          .Required().U64("bytes", &FlowSpec::bytes, 0, 1, 1ull << 40, "bytes", "Flow size.")
          .TimePs("start_us", &FlowSpec::start_ps, 0, 0, 1e9, TimeUnit::kUs, "When the flow starts.");
  return section;
}

/// background.flows.list: explicit flows; the Poisson keys do not apply.
void ParseFlowList(Reader& f, BackgroundFlowsSpec& bf, const ScenarioInput&) {
  const json* list = f.Raw("list");
  if (!list) return;
  if (!list->is_array() || list->empty())
    f.Fail("list", "must be a non-empty array of {\"src\", \"dst\", \"bytes\", \"start_us\"}");
  json resolved_list = json::array();
  for (size_t i = 0; i < list->size(); ++i) {
    json resolved;
    bf.list.push_back(FlowEntry().ParseEntry((*list)[i], fmt::format("background.flows.list[{}]", i), resolved));
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

/// The flow-size distribution: a built-in, or a CDF file relative to the scenario.
void LoadFlowSizes(Reader& f, BackgroundFlowsSpec& bf, const ScenarioInput& in) {
  if (!bf.list.empty()) return;
  try {
    const auto names = congestion::BuiltinFlowSizeNames();
    if (std::find(names.begin(), names.end(), bf.size_distribution) != names.end()) {
      bf.sizes = std::make_shared<congestion::FlowSizeCdf>(congestion::FlowSizeCdf::Builtin(bf.size_distribution));
    } else {
      std::filesystem::path file(bf.size_distribution);
      if (file.is_relative() && !in.base_dir.empty()) file = std::filesystem::path(in.base_dir) / file;
      bf.sizes = std::make_shared<congestion::FlowSizeCdf>(congestion::FlowSizeCdf::Load(file.string()));
    }
  } catch (const std::invalid_argument& e) {
    f.Fail("size_distribution", fmt::format("{} (built-in: web_search, data_mining; or a CDF file)", e.what()));
  }
}

bool Poisson(Reader&, const BackgroundFlowsSpec& bf, const ScenarioInput&) { return bf.list.empty(); }

/// background.flows as Poisson arrivals of a flow-size distribution (read when there is no list).
CoreSection<BackgroundFlowsSpec>& DeclarePoisson(CoreSection<BackgroundFlowsSpec>& f) {
  return f
      .Custom("hosts", HostSelectionKeyDoc("Sources and destinations."), [] { return HostSelectionSchema(true); },
              [](Reader& r, BackgroundFlowsSpec& bf, const ScenarioInput&) {
                if (bf.list.empty()) ParseHosts(r, bf.hosts, true);
              })
      .Str("size_distribution", &BackgroundFlowsSpec::size_distribution, "web_search",
           "Flow sizes. The built-ins are the DCTCP web-search (mean 1.67 MB, max 29.2 MB) and VL2 data-mining "
           "(mean 7.47 MB, max 973 MB) distributions, shipped in `src/congestion/flow-sizes/` with their "
           "provenance. A file name is relative to the scenario file; its format is in "
           "`src/congestion/README.md`.")
      .ReadIf(Poisson)
      .Allowed("`\"web_search\"`, `\"data_mining\"`, or a CDF file")
      .Step(LoadFlowSizes)
      .Num("size_scale", &BackgroundFlowsSpec::size_scale, 1, 1e-6, 1e3, "",
           "Every drawn flow size times this (a scaled scenario shrinks flows as it shrinks gradients and time); "
           "the 40 MB short/long split in the results scales with it (`long_flow_bytes`).")
      .ReadIf(Poisson)
      .Step([](Reader&, BackgroundFlowsSpec& bf, const ScenarioInput&) {
        if (bf.list.empty() && bf.size_scale != 1)
          bf.sizes = std::make_shared<congestion::FlowSizeCdf>(bf.sizes->Scaled(bf.size_scale));
      })
      .Num("load", &BackgroundFlowsSpec::load, 0.4, 1e-6, 1.0, "fraction",
           "Offered load per host, as a fraction of the host link rate.")
      .ReadIf(Poisson)
      .Enum("only", &BackgroundFlowsSpec::only, "all",
            {{"all", std::string("all")}, {"short", std::string("short")}, {"long", std::string("long")}},
            "Of the drawn flows keep only those under (`\"short\"`) or from (`\"long\"`) the 40 MB x `size_scale` "
            "split; the draws are those of `\"all\"`, so the two classes add up to it. Poisson arrivals only.")
      .ReadIf(Poisson)
      .TimePs("start_us", &BackgroundFlowsSpec::start_ps, 0, 0, 1e9, TimeUnit::kUs, "First possible arrival.")
      .ReadIf(Poisson)
      .Required("when flow arrivals stop, in us")
      .TimePs("stop_us", &BackgroundFlowsSpec::stop_ps, 0, 0, 1e9, TimeUnit::kUs, "No arrival at or after this time.")
      .ReadIf(Poisson)
      .Allowed("after `start_us`, .. 1e9")
      .Check([](const BackgroundFlowsSpec& bf, Reader& f) {
        if (bf.list.empty() && bf.stop_ps <= bf.start_ps) f.Fail("stop_us", "must be after start_us");
      })
      .Step(nullptr, [](json& fragment) {  // a list, or Poisson arrivals until stop_us
        json poisson = json::array();
        for (const char* key : {"hosts", "size_distribution", "size_scale", "load", "only", "start_us", "stop_us"})
          poisson.push_back({{"required", json::array({key})}});
        fragment["allOf"].push_back({{"if", {{"required", json::array({"list"})}}},
                                     {"then", {{"not", {{"anyOf", poisson}}}}},
                                     {"else", {{"required", json::array({"stop_us"})}}}});
      });
}

// IP 20 + TCP 20 + timestamps 12 bytes of headers within the MTU.
uint64_t MaxMss(const ScenarioInput& in) { return in.scenario->links.mtu_bytes - 52; }

const CoreSection<congestion::TcpConfig>& Tcp() {
  using congestion::TcpConfig;
  static const auto section =
      CoreSection<TcpConfig>("background.flows.tcp", "ns-3 TCP of the background flows")
          .Enum("variant", &TcpConfig::variant, "dctcp",
                {{"dctcp", std::string("dctcp")}, {"cubic", std::string("cubic")}, {"newreno", std::string("newreno")}},
                "ns-3 congestion control (`ns3::TcpDctcp`, ...), set per node on the hosts involved. DCTCP always "
                "uses ECN (ECT(0) on data, the switches' CE marks echoed).")
          .Bool("ecn", &TcpConfig::ecn, true, "ECN for `cubic` and `newreno` (RFC 3168 reaction).")
          .U32("initial_cwnd_segments", &TcpConfig::initial_cwnd_segments, 10, 1, 65'535, "segments",
               "Initial congestion window.")
          .U32("segment_bytes", &TcpConfig::segment_bytes, 1448, 64, 9216 - 52, "bytes",
               "MSS (IP 20 + TCP 20 + timestamp option 12 leave this much of the MTU).")
          .MaxFrom([](const ScenarioInput& in) { return MaxMss(in); }, "`mtu_bytes - 52`")
          .DefaultFrom([](const TcpConfig&, const ScenarioInput& in) { return MaxMss(in); }, "`mtu_bytes - 52` (1448)")
          .TimePs("min_rto_us", &TcpConfig::min_rto_ps, 1000, 1, 1e7, TimeUnit::kUs, "Minimum retransmission timeout; also the SYN retry timeout. The RTO clock granularity is 1 ns "
                                                                                     "(ns-3's 1 ms default would swamp datacenter RTTs).")
          .U32("buffer_bytes", &TcpConfig::buffer_bytes, 4u << 20, 64, 1u << 30, "bytes",
               "Socket send and receive buffers (the receive window).")
          .MinFrom([](const TcpConfig& t, const ScenarioInput&) -> uint64_t { return t.segment_bytes; }, "MSS")
          .DocDefault("`4194304` (4 MiB)")
          .U32("del_ack_count", &TcpConfig::del_ack_count, 2, 1, 64, "segments", "ACK every this many segments.")
          .TimePs("del_ack_timeout_us", &TcpConfig::del_ack_timeout_ps, 10, 0.001, 1e6, TimeUnit::kUs, "Delayed-ACK timer.")
          .TimePs("max_segment_lifetime_us", &TcpConfig::max_segment_lifetime_ps, 500, 0.001, 1.2e8, TimeUnit::kUs,
                  "MSL: a socket that closed first stays 2 MSL in TIME_WAIT before its endpoint is freed. RFC 793's "
                  "2 minutes (ns-3's default) is the Internet's; in ns-3 a host scans all its endpoints for every "
                  "packet (Ipv4EndPointDemux::Lookup walks a list), so with it each finished flow slowed every later "
                  "packet of its host (56 % of a 128-host Fig. 8 run's time). TIME_WAIT starts after the FIN exchange, "
                  "when all data is acknowledged; a duplicate segment arriving after it is answered with a RST. "
                  "500 us (1 ms of TIME_WAIT) is hundreds of datacenter RTTs.")
          .U16("port", &TcpConfig::port, 5001, 1, 65'535, "", "Listening port on every destination.")
          .U32("small_queue_bytes", &TcpConfig::small_queue_bytes, TcpConfig{}.small_queue_bytes, 0, 1u << 30, "bytes",
               "TCP Small Queues, as Linux's `net.ipv4.tcp_limit_output_bytes` (1 MiB since Linux 5.3): a sender "
               "stops handing segments to its host NIC while this many bytes of its own wait in the NIC's queue (the "
               "segment that crosses the limit still goes), resumes as they leave, and grows its window only on ACKs "
               "after the window, not this limit, held it back (Linux `tcp_is_cwnd_limited`). The rest of the "
               "backlog waits in the socket, so a lone flow's window does not sit unmarked in a 16 MiB NIC queue "
               "with a multi-millisecond RTT. `0`: ns-3's own TCP (no such rule).")
          .DocDefault("`1048576` (1 MiB)");
  return section;
}

const CoreSection<BackgroundFlowsSpec>& Flows() {
  static const auto section = [] {
    CoreSection<BackgroundFlowsSpec> f("background.flows", "Background TCP flows");
    f.Step([](Reader&, BackgroundFlowsSpec& bf, const ScenarioInput&) { bf.enabled = true; })
        .Custom("list",
                {"array of objects", "", "(none)", "see [below](#backgroundflowslisti)",
                 "Explicit flows instead of Poisson arrivals (e.g. one long flow). With `list`, `hosts`, "
                 "`size_distribution`, `load`, `start_us` and `stop_us` are errors; `tcp` and `wait_for_completion` "
                 "apply. The report then has `size_distribution` `\"list\"` and null loads."},
                [] { return json{{"type", "array"}, {"minItems", 1}, {"items", FlowEntry().JsonSchema()}}; },
                ParseFlowList)
        .Nests({&FlowEntry()});
    DeclarePoisson(f)
        .Bool("wait_for_completion", &BackgroundFlowsSpec::wait_for_completion, true,
              "The run ends only when every flow has completed.")
        .Object("tcp", &BackgroundFlowsSpec::tcp, Tcp(), "See [background.flows.tcp](#backgroundflowstcp).");
    return f;
  }();
  return section;
}

// --- background.congestion ------------------------------------------------------------

uint64_t MaxPayload(const ScenarioInput& in) { return in.scenario->links.mtu_bytes - 28; }

/// Its senders must not hit a port the workload's hosts receive on.
void CheckCongestionPort(const CongestionSpec& c, const ScenarioInput& in, Reader& g) {
  const Scenario& s = *in.scenario;
  std::vector<std::pair<const char*, uint16_t>> ports;
  const Protocol* p = nullptr;
  if (s.workload.type == WorkloadType::kAllreduce) p = FindProtocol(s.workload.protocol);
  for (const Protocol& q : Protocols())
    if (s.workload.type == WorkloadType::kPermutation && q.workload_type == "permutation") p = &q;
  if (p) p->checks->add_udp_ports(s, ports);
  for (const auto& [key, port] : ports)
    if (c.udp_port == port) g.Fail("udp_port", fmt::format("collides with {} ({})", key, port));
}

const CoreSection<CongestionSpec>& Congestion() {
  static const auto section =
      CoreSection<CongestionSpec>("background.congestion", "Moving UDP congestion")
          .Step([](Reader&, CongestionSpec& c, const ScenarioInput&) { c.enabled = true; })
          .Custom("hosts", HostSelectionKeyDoc("Senders and receivers."), [] { return HostSelectionSchema(true); },
                  [](Reader& r, CongestionSpec& c, const ScenarioInput&) { ParseHosts(r, c.hosts, true); })
          .U64("message_bytes", &CongestionSpec::message_bytes, 1 << 20, 1, 1ull << 40, "bytes",
               "Payload per message (per peer).")
          .DocDefault("`1048576` (1 MiB)")
          .U32("payload_bytes", &CongestionSpec::payload_bytes, 1472, 1, 9216 - 28, "bytes", "UDP payload per datagram.")
          .MaxFrom([](const ScenarioInput& in) { return MaxPayload(in); }, "`mtu_bytes - 28`")
          .DefaultFrom([](const CongestionSpec&, const ScenarioInput& in) { return MaxPayload(in); },
                       "`mtu_bytes - 28` (1472)")
          .Num("rate_gbps", &CongestionSpec::rate_gbps, 0, 0, 10'000, "Gb/s",
               "Sending rate counting IP, UDP, Ethernet and wire overhead; `0` = the host link rate.")
          .TimePs("start_us", &CongestionSpec::start_ps, 0, 0, 1e9, TimeUnit::kUs,
                  "Start (each host starts within one packet time after it).")
          .TimePs("stop_us", &CongestionSpec::stop_ps, 0, 0, 1e9, TimeUnit::kUs,
                  "No datagram is sent at or after this time; `0` = until the workload (and the background flows) "
                  "finish.")
          .Allowed("0, or after `start_us`, .. 1e9")
          .Check([](const CongestionSpec& c, Reader& g) {
            if (c.stop_ps != 0 && c.stop_ps <= c.start_ps)
              g.Fail("stop_us", "must be after start_us (or 0: until the workload ends)");
          })
          .U16("udp_port", &CongestionSpec::udp_port, 7, 1, 65'535, "", "Receiving UDP port.")
          .AllowedNote("not the workload's port")
          .U32("socket_buffer_bytes", &CongestionSpec::socket_buffer_bytes, CongestionSpec{}.socket_buffer_bytes, 0,
               1u << 30, "bytes", "SO_SNDBUF of each sender, a blocking UDP socket: it waits while this many frame bytes of its own are "
                                  "queued in its NIC (PFC-paused or behind other traffic) and resumes at line rate once half of them "
                                  "have left (Linux `sock_writeable()`). The wire sees the same frames (the NIC never runs dry); the "
                                  "stack and memory no longer carry megabytes a paused sender could not send. `0`: no limit but the NIC "
                                  "queue's (`host.nic_buffer_bytes`).")
          .DocDefault("`212992` (Linux's `net.core.wmem_default`)")
          .Enum("peers", &CongestionSpec::permutation, "uniform", {{"uniform", false}, {"permutation", true}},
                "How senders pick each message's peer. `uniform`: a random other host per message, drawn "
                "independently, so a receiver may have several senders at once (incast). `permutation`: message round "
                "r of every host follows one seeded random cycle through all the congestion hosts, so each host sends "
                "one message and receives one per round. Rounds stay aligned while senders run at the same rate. "
                "Results echo `peers`.")
          .CheckWithContext(CheckCongestionPort);
  return section;
}

// --- faults ---------------------------------------------------------------------------

/// Neither "link" nor "between": which link is it?
void CheckLinkNamed(Reader& lr, LinkFault&, const ScenarioInput&) {
  if (!lr.Has("link") && !lr.Has("between")) lr.Fail("", "give \"link\" (index) or \"between\" ([node, node])");
}

/// "link" alone: an index into the topology's links.
void ParseLinkIndex(Reader& lr, LinkFault& lf, const ScenarioInput& in) {
  if (!(lr.Has("link") && !lr.Has("between"))) return;
  const topo::Topology& t = *in.topology;
  lr.Raw("between");  // present as null: absent, like everywhere else
  lf.link = lr.U32("link", 0, 0, UINT32_MAX);
  if (lf.link >= t.links().size())
    lr.Fail("link", fmt::format("no link {}: the topology has {} links (0..{})", lf.link, t.links().size(),
                                t.links().size() - 1));
}

/// The vertex of the node called `name` ("h3", "leaf0", "spine1"), if any.
std::optional<uint32_t> VertexNamed(const topo::Topology& t, const std::string& name) {
  for (uint32_t v = 0; v < t.num_vertices(); ++v)
    if (t.node(v).name == name) return v;
  return std::nullopt;
}

/// "between": two node names sharing a link (and "link", if given too, agreeing).
void ParseLinkBetween(Reader& lr, LinkFault& lf, const ScenarioInput& in) {
  if (!lr.Has("between")) return;
  const topo::Topology& t = *in.topology;
  const json* b = lr.Raw("between");
  if (!b->is_array() || b->size() != 2 || !(*b)[0].is_string() || !(*b)[1].is_string())
    lr.Fail("between", "must be two node names, e.g. [\"leaf0\", \"spine1\"]");
  auto find = [&](const std::string& name) -> uint32_t {
    if (const auto v = VertexNamed(t, name)) return *v;
    lr.Fail("between", fmt::format("no node named \"{}\"", name));
  };
  const uint32_t a = find((*b)[0]), c = find((*b)[1]);
  bool found = false;
  for (const auto& p : t.ports(a))
    if (p.peer == c) {
      lf.link = p.link;
      found = true;
      break;
    }
  if (!found)
    lr.Fail("between", fmt::format("\"{}\" and \"{}\" are not linked", (*b)[0].get<std::string>(),
                                   (*b)[1].get<std::string>()));
  // Both given (as results.json echoes them): they must agree.
  const json* given = lr.Raw("link");
  if (given && !(given->is_number_unsigned() && given->get<uint64_t>() == lf.link))
    lr.Fail("link", fmt::format("disagrees with \"between\", which is link {}", lf.link));
  lr.out()["between"] = *b;
  lr.out()["link"] = lf.link;
}

const CoreSection<LinkFault>& LinkFaultEntry() {
  static const auto section =
      CoreSection<LinkFault>("faults.links[i]", "One link's faults")
          .Step(CheckLinkNamed)
          .Custom("link", {"integer", "", "", "0 .. number of links - 1", "Link index (see [topology](#topology))."},
                  [] { return json{{"type", "integer"}, {"minimum", 0}, {"description", "Link index."}}; },
                  ParseLinkIndex)
          .Custom("between",
                  {"array of 2 strings", "", "", "two node names that share a link, in either order",
                   "The link between two nodes, e.g. `[\"leaf0\", \"spine1\"]`. Resolved to its index, which the echoed "
                   "scenario records as `link` next to `between`."},
                  [] {
                    return json{{"type", "array"}, {"minItems", 2}, {"maxItems", 2}, {"items", {{"type", "string"}}},
                                {"description", "The link between two nodes, e.g. [\"leaf0\", \"spine1\"]."}};
                  },
                  ParseLinkBetween)
          .Num("loss_rate", &LinkFault::loss_rate, -1, -1, 1, "probability", "Loss probability of this link (both directions), replacing `faults.loss_rate` for it; negative = "
                                                                             "unchanged.")
          .TimePs("down_at_us", [](LinkFault& lf) -> uint64_t& { return lf.down_at_ps.emplace(); }, 0, 0, 1e10,
                  TimeUnit::kUs, "The link fails (both directions) at this time. Until `faults.reconverge_us` later, switches only "
                                 "avoid it locally (another equal-cost port where one exists), so traffic whose only path crosses it "
                                 "(e.g. from `spine1` down to `leaf0`'s hosts) is dropped; then every switch's tables are recomputed "
                                 "without the link.")
          .NoDefault("absent")
          .ReadIf([](Reader& lr, const LinkFault&, const ScenarioInput&) {
            if (lr.Has("down_at_us")) return true;
            lr.Raw("down_at_us");  // absent or null: the link stays up
            return false;
          });
  return section;
}

/// "switch": a switch's name, e.g. "spine1".
void ParseSwitchName(Reader& sr, SwitchFault& sf, const ScenarioInput& in) {
  const topo::Topology& t = *in.topology;
  const json* name = sr.Raw("switch");
  if (!name) sr.Fail("switch", "required: the failing switch's name, e.g. \"spine1\"");
  if (!name->is_string()) sr.Fail("switch", "must be a switch's name, e.g. \"spine1\"");
  const std::string n = name->get<std::string>();
  const auto v = VertexNamed(t, n);
  if (!v) sr.Fail("switch", fmt::format("no switch named \"{}\"", n));
  if (t.is_host(*v)) sr.Fail("switch", fmt::format("\"{}\" is a host, not a switch (a slow host is faults.hosts)", n));
  sf.vertex = *v;
  sr.out()["switch"] = n;
}

const CoreSection<SwitchFault>& SwitchFaultEntry() {
  static const auto section =
      CoreSection<SwitchFault>("faults.switches[i]", "One failing switch")
          .Custom("switch", {"string", "", "**required**", "a switch's name", "The switch, e.g. `\"spine1\"`."},
                  [] { return json{{"type", "string"}, {"description", "The failing switch's name."}}; },
                  ParseSwitchName)
          .Required("when the switch fails, in us")
          .TimePs("down_at_us", &SwitchFault::down_at_ps, 0, 0, 1e10, TimeUnit::kUs,
                  "The switch fails at this time: every link of it goes down at once, so whatever it holds "
                  "(queued frames, a dataplane's soft state) is lost. Switches avoid its links locally until "
                  "`faults.reconverge_us` later, when every switch's tables are recomputed without them.");
  return section;
}

const CoreSection<HostFault>& HostFaultEntry() {
  static const auto section =
      CoreSection<HostFault>("faults.hosts[i]", "One slow host")
          .Required().U32("host", &HostFault::host, 0, 0, UINT32_MAX, "", "The host id.")
          .CheckWithContext([](const HostFault& hf, const ScenarioInput& in, Reader& hr) {
            const uint32_t nh = in.topology->num_hosts();
            if (hf.host >= nh)
              hr.Fail("host", fmt::format("no host {}: the topology has {} hosts (0..{})", hf.host, nh, nh - 1));
          })
          .Required("how much later the host's frames arrive, in us")
          .TimePs("delay_us", &HostFault::delay_ps, 0, 0, 1e9, TimeUnit::kUs,
                  "How much later than its link alone would deliver them every frame the host sends arrives.")
          .TimePs("at_us", &HostFault::at_ps, 0, 0, 1e10, TimeUnit::kUs, "From when on.");
  return section;
}

/// A list of fault entries, each read with `entry` at path "faults.<key>[i]".
template <class E>
void ParseFaultList(Reader& f, std::vector<E>& out, const char* key, const char* what, const CoreSection<E>& entry,
                    const ScenarioInput& in) {
  const json* list = f.Raw(key);
  f.out()[key] = json::array();
  if (!list) return;
  if (!list->is_array()) f.Fail(key, fmt::format("must be an array of {}", what));
  for (size_t i = 0; i < list->size(); ++i) {
    json resolved;
    out.push_back(entry.ParseEntry((*list)[i], fmt::format("faults.{}[{}]", key, i), resolved, in));
    f.out()[key].push_back(resolved);
  }
}

}  // namespace

const CoreSection<BackgroundSpec>& BackgroundSection() {
  static const auto section =
      CoreSection<BackgroundSpec>("background", "Background traffic next to the workload")
          .ObjectIfGiven("flows", &BackgroundSpec::flows, Flows(),
                         "Poisson TCP flows, see [background.flows](#backgroundflows).")
          .ObjectIfGiven("congestion", &BackgroundSpec::congestion, Congestion(),
                         "Moving UDP congestion, see [background.congestion](#backgroundcongestion).");
  return section;
}

const CoreSection<FaultSpec>& FaultsSection() {
  static const auto section =
      CoreSection<FaultSpec>("faults", "Loss, link and switch failures, slow hosts")
          .Num("loss_rate", &FaultSpec::loss_rate, 0, 0, 1, "probability",
               "Every link, both directions: probability that a frame is lost.")
          .TimePs("reconverge_us", &FaultSpec::reconverge_ps, 1000, 0, 1e10, TimeUnit::kUs, "How long after a link goes down (`down_at_us`) every switch gets routing tables recomputed without "
                                                                                            "it (the control plane reconverging).")
          .Custom("links", {"array of objects", "", "`[]`", "see [below](#faultslinksi)", "Per-link faults."},
                  [] { return json{{"type", "array"}, {"items", LinkFaultEntry().JsonSchema()}}; },
                  [](Reader& f, FaultSpec& fs, const ScenarioInput& in) {
                    ParseFaultList(f, fs.links, "links",
                                   "{\"link\" or \"between\", \"loss_rate\", \"down_at_us\"}", LinkFaultEntry(), in);
                  })
          .Nests({&LinkFaultEntry()})
          .Custom("switches", {"array of objects", "", "`[]`", "see [below](#faultsswitchesi)",
                               "Failing switches (all their links down at once)."},
                  [] { return json{{"type", "array"}, {"items", SwitchFaultEntry().JsonSchema()}}; },
                  [](Reader& f, FaultSpec& fs, const ScenarioInput& in) {
                    ParseFaultList(f, fs.switches, "switches", "{\"switch\", \"down_at_us\"}", SwitchFaultEntry(),
                                   in);
                  })
          .Nests({&SwitchFaultEntry()})
          .Custom("hosts", {"array of objects", "", "`[]`", "see [below](#faultshostsi)",
                            "Slow hosts (stragglers): from `at_us` on, every frame the host sends arrives `delay_us` "
                            "later than its link alone would deliver it (a slow host stack or NIC; frames keep their "
                            "order)."},
                  [] { return json{{"type", "array"}, {"items", HostFaultEntry().JsonSchema()}}; },
                  [](Reader& f, FaultSpec& fs, const ScenarioInput& in) {
                    ParseFaultList(f, fs.hosts, "hosts", "{\"host\", \"delay_us\", \"at_us\"}", HostFaultEntry(), in);
                  })
          .Nests({&HostFaultEntry()});
  return section;
}

}  // namespace inasim
