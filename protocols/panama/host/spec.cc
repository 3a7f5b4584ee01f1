// PANAMA's scenario keys: the workload.panama section of a scenario -> PanamaSpec (and workload.ring, the transport of a cluster's ring jobs)
// (docs/SCENARIO.md), through the registry (Protocol::parse).
#include "ina/scenario-sections.h"
#include "common/spec_fields.h"
#include "common/bounded_file.h"
#include "protocols/panama/host/spec.h"
#include "protocols/panama/dataplane/keys.h"
#include "protocols/ring/host/spec.h"

#include <fmt/format.h>

#include <filesystem>

#include <algorithm>
#include <string>

namespace inasim::protocols::panama {

using nlohmann::json;
using spec::Reader;

namespace {

using PanamaSection = spec::Section<PanamaSpec, Scenario>;

/// tree_roots: the root switch of each tree by name; given, it sets the tree count.
void ParseTreeRoots(Reader& p, PanamaSpec& ps, const Scenario&) {
  if (const json* roots = p.Raw("tree_roots")) {
    if (!roots->is_array() || roots->empty() || roots->size() > 256)
      p.Fail("tree_roots", "must be a list of 1 to 256 switch names, e.g. [\"spine0\"]");
    for (const json& r : *roots) {
      if (!r.is_string()) p.Fail("tree_roots", "must be a list of switch names (strings)");
      ps.tree_roots.push_back(r.get<std::string>());
    }
    if (p.Has("trees") && ps.trees != ps.tree_roots.size())
      p.Fail("trees", fmt::format("{} trees but {} tree_roots; give one of them", ps.trees, ps.tree_roots.size()));
    ps.trees = static_cast<uint32_t>(ps.tree_roots.size());
    p.out()["trees"] = ps.trees;
    p.out()["tree_roots"] = *roots;
  }
}

double Us(uint64_t ps) { return static_cast<double>(ps) / kPsPerUs; }

/// One of workload.panama.jobs: its workers and, by default, the workload's size, iterations and times.
const spec::Section<PanamaJobSpec, Scenario>& Job() {
  using JobSection = spec::Section<PanamaJobSpec, Scenario>;
  static const JobSection section =
      JobSection("workload.panama.jobs[i]", "One of several concurrent PANAMA jobs")
          .Custom("hosts",
                  {"see [workload.hosts](#workloadhosts)", "", "**required**",
                   "the forms of `workload.hosts`; disjoint from every other job's", "The job's workers."},
                  [] { return HostSelectionSchema(false); },
                  [](Reader& j, PanamaJobSpec& js, const Scenario&) {
                    if (!j.Has("hosts")) j.Fail("hosts", "is required (each job's workers, disjoint from the other jobs')");
                    ParseHosts(j, js.hosts);
                  })
          .U64("bytes", &PanamaJobSpec::bytes, 4, 4, 1ull << 40, "bytes", "The job's gradient size.")
          .DefaultFrom([](const PanamaJobSpec&, const Scenario& s) { return s.workload.bytes; }, "`workload.bytes`")
          .AllowedNote("multiple of 4")
          .SchemaAlso({{"multipleOf", 4}})
          .Check([](const PanamaJobSpec& js, Reader& j) {
            if (js.bytes % 4) j.Fail("bytes", fmt::format("must be a multiple of 4 (whole fp32 values), got {}", js.bytes));
          })
          .U32("iterations", &PanamaJobSpec::iterations, 1, 1, 1'000'000, "", "The job's allreduces.")
          .DefaultFrom([](const PanamaJobSpec&, const Scenario& s) { return s.workload.iterations; },
                       "`workload.iterations`")
          .TimePs("start_us", &PanamaJobSpec::start_ps, 0, 0, 1e9, spec::TimeUnit::kUs, "The job's start.")
          .DefaultFrom([](const PanamaJobSpec&, const Scenario& s) { return Us(s.workload.start_ps); },
                       "`workload.start_us`")
          .TimePs("compute_gap_us", &PanamaJobSpec::compute_gap_ps, 0, 0, 1e9, spec::TimeUnit::kUs,
                  "The job's pause between allreduces.")
          .DefaultFrom([](const PanamaJobSpec&, const Scenario& s) { return Us(s.workload.compute_gap_ps); },
                       "`workload.compute_gap_us`");
  return section;
}

/// jobs: concurrent jobs, each with its own workers, size, iterations and start.
void ParseJobs(Reader& p, PanamaSpec& ps, const Scenario& s) {
  if (const json* jobs = p.Raw("jobs")) {
    if (!jobs->is_array() || jobs->empty() || jobs->size() > 256)
      p.Fail("jobs", "must be an array of 1 to 256 jobs, each {\"hosts\", \"bytes\", \"iterations\", \"start_us\", "
                     "\"compute_gap_us\"}");
    json resolved_jobs = json::array();
    for (size_t i = 0; i < jobs->size(); ++i) {
      json resolved;
      ps.jobs.push_back(Job().ParseEntry((*jobs)[i], fmt::format("workload.panama.jobs[{}]", i), resolved, s));
      resolved_jobs.push_back(resolved);
    }
    if (uint32_t{ps.jid} + ps.jobs.size() > 0x10000)
      p.Fail("jid", fmt::format("jobs take JIDs jid .. jid + {}, past 65535", ps.jobs.size() - 1));
    p.out()["jobs"] = resolved_jobs;
  }
}

/// cluster.models_file: rows added to (or replacing) the built-in models, relative to the scenario.
std::vector<DnnModel> ModelCatalog(Reader& c, const std::string& base_dir) {
  const json* f = c.Raw("models_file");
  if (!f) return BuiltinDnnModels();
  if (!f->is_string() || f->get<std::string>().empty()) c.Fail("models_file", "must be a file name, got " + f->dump());
  std::filesystem::path file(f->get<std::string>());
  if (file.is_relative() && !base_dir.empty()) file = std::filesystem::path(base_dir) / file;
  try {
    const std::string text = util::ReadBoundedFile(file.string(), util::kMaxJsonFileBytes, "models file");
    c.out()["models_file"] = *f;
    return MergeDnnModels(BuiltinDnnModels(), ParseDnnModels(text, file.string()));
  } catch (const std::invalid_argument& e) {  // FileReadError is one
    c.Fail("models_file", e.what());
  }
}

/// cluster.models: the DNNs jobs draw from (data/models/dnn-models.csv and models_file); all by default.
void ParseModels(Reader& c, PanamaClusterSpec& cs, const Scenario& s) {
  const std::vector<DnnModel> catalog = ModelCatalog(c, s.base_dir);
  cs.models.clear();
  if (const json* m = c.Raw("models")) {
    if (!m->is_array() || m->empty()) c.Fail("models", "must be a non-empty array of model names");
    for (size_t i = 0; i < m->size(); ++i) {
      const json& x = (*m)[i];
      std::string known;
      for (const DnnModel& d : catalog) known += (known.empty() ? "" : ", ") + d.name;
      const DnnModel* found = x.is_string() ? FindDnnModel(catalog, x.get<std::string>()) : nullptr;
      if (!found) c.Fail(fmt::format("models[{}]", i), fmt::format("{} is not one of {}", x.dump(), known));
      cs.models.push_back(*found);
    }
    c.out()["models"] = *m;
  } else {
    cs.models = catalog;
    json names = json::array();
    for (const DnnModel& d : catalog) names.push_back(d.name);
    c.out()["models"] = names;
  }
}

json ModelsSchema() {
  return {{"type", "array"}, {"minItems", 1}, {"items", {{"type", "string"}}},
          {"description", "The DNNs jobs draw from, uniformly, by name (data/models/dnn-models.csv, and "
                          "models_file's)."}};
}

const PanamaSpec& Panama(const Scenario& s) { return s.workload.spec<PanamaSpec>(); }

using ClusterSection = spec::Section<PanamaClusterSpec, Scenario>;

/// How many jobs arrive (and when): a JID and a UDP port each.
ClusterSection& DeclareArrivals(ClusterSection& c) {
  return c
      // A job's group addresses are 239.<jid mod 256>.<tree>: JIDs must not wrap.
      .TimePs("window_us", &PanamaClusterSpec::window_ps, 0, 0, 1e9, spec::TimeUnit::kUs,
              "> 0: jobs arrive only in `[start_us, start_us + window_us)`; `jobs` becomes a maximum (default 256 - "
              "jid).")
      .U32("jobs", &PanamaClusterSpec::jobs, 1, 1, 255, "jobs", "Jobs that arrive.")
      .RequiredIf([](const PanamaClusterSpec& cs, const Scenario&) { return cs.window_ps == 0; },
                  "**required** (with `window_us`: 256 - jid)")
      .DefaultFrom([](const PanamaClusterSpec& cs, const Scenario& s) -> uint32_t {
        return cs.window_ps ? 256 - std::min<uint32_t>(Panama(s).jid, 255) : 0;
      }, "**required** (with `window_us`: 256 - jid)")
      .AllowedNote("jid + jobs <= 256")
      .CheckWithContext([](const PanamaClusterSpec& cs, const Scenario& s, Reader& c) {
        const PanamaSpec& ps = Panama(s);
        if (uint32_t{ps.jid} + cs.jobs > 256)
          c.Fail("jobs", fmt::format("jobs take JIDs jid .. jid + {}; their group addresses 239.<jid>.<tree> need "
                                     "them below 256 (jid is {})", cs.jobs - 1, ps.jid));
        if (uint32_t{ps.udp_port} + cs.jobs > 0x10000)
          c.Fail("jobs", fmt::format("job i uses UDP port udp_port + i, past 65535 (udp_port is {})", ps.udp_port));
      })
      .Check([](const PanamaClusterSpec&, Reader& c) {
        if (c.Has("load") && c.Has("arrival_rate_per_s"))
          c.Fail("load", "give either arrival_rate_per_s or load (the arrival rate follows from it), not both");
      })
      .Num("load", &PanamaClusterSpec::load, 1e-6, 1e-6, 100, "fraction",
           "The offered aggregation load instead of the arrival rate: jobs arrive at lambda = load x hosts x host "
           "rate / (8 x E[workers] x iterations x E[gradient bytes]) (each worker sends its gradient once per "
           "iteration; models drawn uniformly). Results echo the rate as `workload.panama.cluster.arrival_rate_per_s`.")
      .NoDefault("(none)")
      .AllowedNote("not with `arrival_rate_per_s`")
      .ReadIf([](Reader& c, const PanamaClusterSpec&, const Scenario&) { return c.Has("load"); })
      .Num("arrival_rate_per_s", &PanamaClusterSpec::arrival_rate_per_s, 10, 1e-9, 1e12, "jobs/s",
           "Mean arrival rate of the Poisson process (seeded).")
      .ReadIf([](Reader& c, const PanamaClusterSpec&, const Scenario&) { return !c.Has("load"); });
}

/// cluster: jobs arriving over time (§7), placed by the controller at arrival.
const ClusterSection& Cluster() {
  static const ClusterSection section = [] {
    ClusterSection c("workload.panama.cluster", "A shared PANAMA cluster (panama-mlsys21 §7)");
    DeclareArrivals(c)
        .Enum("allreduce", &PanamaClusterSpec::allreduce, "panama",
              {{"panama", PanamaClusterSpec::Allreduce::kPanama}, {"ring", PanamaClusterSpec::Allreduce::kRing}},
              "How the jobs allreduce: PANAMA's accelerators, or Ring-AllReduce (§7's baseline): each job a host "
              "ring over its workers in rank order (same arrivals, models and placement; the ring's transport from "
              "`workload.ring`, read with protocol `\"panama\"` for this; job i uses UDP port `panama.udp_port + "
              "i`; data must not be `\"uniform\"`). SwitchML* is `\"panama\"` with `congestion_control: false`; "
              "Ideal is two runs (`analysis/fig_panama_fig8.py`).")
        .U32("slots_per_host", &PanamaClusterSpec::slots_per_host, 1, 1, 64, "jobs",
             "Jobs one host runs at once (one per GPU; their workers share the host's link). The controller prefers "
             "racks, then hosts, with the most free slots.")
        .U32("min_workers", &PanamaClusterSpec::min_workers, 16, 2, 1u << 20, "hosts",
             "A job's workers are uniform in [min_workers, max_workers].")
        .U32("max_workers", &PanamaClusterSpec::max_workers, 96, 2, 1u << 20, "hosts",
             "... at most the workload's hosts.")
        .Check([](const PanamaClusterSpec& cs, Reader& r) {
          if (cs.max_workers < cs.min_workers)
            r.Fail("max_workers", fmt::format("must be at least min_workers ({}), got {}", cs.min_workers,
                                              cs.max_workers));
        })
        .Custom("models_file",
                {"string", "", "(none)", "a CSV file, relative to the scenario",
                 "More models, or replacements by name, in data/models/dnn-models.csv's form (header "
                 "`name,parameters,batch,gpu,images_per_s,source`; see data/models/README.md). Errors name the "
                 "file, the line and the field."},
                [] { return json{{"type", "string"}}; }, [](Reader&, PanamaClusterSpec&, const Scenario&) {})
        .Custom("models",
                {"array of strings", "", "every model", "vgg16, alexnet, resnet152, resnet50, inceptionv3, or "
                 "models_file's",
                 "The DNNs jobs draw from, uniformly (the paper's weights are not published): their gradient bytes (4 "
                 "x parameters) and compute time per iteration, batch / images_per_s (data/models/dnn-models.csv, "
                 "with sources)."},
                ModelsSchema, ParseModels)
        .U32("iterations", &PanamaClusterSpec::iterations, 10, 1, 1'000'000, "", "Each job's iterations.")
        .Num("scale", &PanamaClusterSpec::scale, 1, 1e-9, 1e3, "",
             "Gradient bytes and compute time both times this (the comm/compute ratio and the load stay the "
             "model's).")
        .TimePs("start_us", &PanamaClusterSpec::start_ps, 0, 0, 1e9, spec::TimeUnit::kUs,
                "The arrival process starts here.")
        .DefaultFrom([](const PanamaClusterSpec&, const Scenario& s) { return Us(s.workload.start_ps); },
                     "`workload.start_us`");
    return c;
  }();
  return section;
}

/// PANAMA's window (Fig. 5) and its initialisation.
PanamaSection& DeclareWindow(PanamaSection& p) {
  return p
      .Bool("congestion_control", &PanamaSpec::congestion_control, true,
            "Fig. 5. `false`: a fixed window, `fixed_pool` packets in flight over the trees (SwitchML*, Fig. 10b).")
      .U32("fixed_pool", &PanamaSpec::fixed_pool, 128, 1, 1u << 20, "packets",
           "Without congestion control (SwitchML*: SwitchML with PANAMA's trees, §7): packets a worker keeps in "
           "flight over all its trees, SwitchML's slot pool (switchml-nsdi21 App. C: 128 at 10 Gb/s, 512 at "
           "100 Gb/s), spread evenly (128 over 4 trees: 32 each). At least `trees`.")
      .Num("quorum", &PanamaSpec::quorum, 1, 1e-3, 1, "fraction",
           "PANAMA-0.88 / 0.94 (§7, partial synchronisation; the paper's, not the FPGA's): each accelerator sums a "
           "vector as soon as the ports whose head is the expected VID carry at least `quorum` of the job's workers "
           "below it (rounded up: 0.88 of 8 is all 8); the others add +0 and their late packets are dropped as "
           "stale; a worker receiving the result of a packet it has not sent yet skips that packet. Results are "
           "checked bit for bit against the adder order replayed over the workers each partial sum holds. Reports "
           "add `accelerators.partial_aggregations`, `workers.skipped_by_quorum`.")
      .Num("initial_cwnd", &PanamaSpec::initial_cwnd, 2, 1, 65535, "packets", "Fig. 5 initialisation.")
      .Num("initial_ssthresh", &PanamaSpec::initial_ssthresh, 64, 1, 1e9, "packets", "Fig. 5 initialisation.")
      .Num("initial_alpha", &PanamaSpec::initial_alpha, 1, 0, 1, "", "Fig. 5 initialisation.")
      .Num("g", &PanamaSpec::g, 1.0 / 16, 1e-6, 1, "",
           "Weight of the newest window's marked fraction (the paper gives none; DCTCP's 1/16).")
      .Enum("ecn_count", &PanamaSpec::reset_ecn_count_per_window, "per_window",
            {{"per_window", true}, {"never_reset", false}},
            "`never_reset` runs Fig. 5 literally: its ecn_count is never reset, so no window grows after the first "
            "mark.")
      .Enum("increase", &PanamaSpec::increase_in_marked_windows, "unmarked_windows",
            {{"unmarked_windows", false}, {"every_window", true}},
            "Fig. 5 grows a window only when it had no mark (the default: DCTCP in ns-3 and Linux does the same, its "
            "window not growing in the CWR window a mark starts, ns-3.37 tcp-socket-base.cc:2108-2118, and §4.2.2 says "
            "the mechanism matches DCTCP's); `\"every_window\"` adds one packet in marked windows too (cwnd x (1 - "
            "alpha/2) + 1), the other reading.")
      .Enum("cut", &PanamaSpec::cut_once_per_flight, "every_marked_window",
            {{"every_marked_window", false}, {"once_per_flight", true}},
            "Fig. 5 cuts at the end of every window of results that carried a mark (the default), so the results of "
            "packets in flight at a cut can cut again a window later. `once_per_flight`: DCTCP's CWR (ns-3.37 "
            "tcp-socket-base.cc:1864-1891): after a cut, until every packet then in flight has its result, the window "
            "neither cuts nor grows (alpha is still updated).")
      .Enum("round_robin", &PanamaSpec::round_robin_in_order, "in_order",
            {{"in_order", true}, {"per_tree", false}},
            "§4.1: packet g goes to tree g mod N and \"p5 is only sent after the preceding packets have been sent to "
            "other trees\": `in_order` sends packets in index order, so a tree whose window is full holds the packets "
            "of every tree after it and the trees advance together. `per_tree`: each tree sends its own packets as "
            "its window allows (a fast tree runs ahead; the iteration still ends with the slowest tree's quarter).")
      .Bool("window_trace", &PanamaSpec::window_trace, false,
            "Write `panama_windows.csv`: one row per result at each job's rank 0 (the windows of a tree are the same "
            "at every worker: they see the same results), with the tree, VID, the window after it (cwnd, ssthresh, "
            "alpha), its ECN mark, the packets still in flight and the packet's round trip (sent to result). For "
            "per-tree throughput, window and RTT traces; one row per result, so large runs write large files.");
}

/// The accelerators and the job's addresses.
PanamaSection& DeclareAccelerator(PanamaSection& p) {
  // Shared with inasim-p4's replay config (protocols/panama/dataplane/keys.h).
  return p4::panama::keys::Accelerator(p, &PanamaSpec::accelerator_buffer_bytes, &PanamaSpec::ieee_float, false, true,
                                       &PanamaSpec::latency_table1, false, true)
      .TimePs("timeout_us", &PanamaSpec::timeout_ps, 10000, 0.001, 1e9, spec::TimeUnit::kUs,
              "A tree with packets in flight and no result this long has lost a packet: counted (`workers.timeouts`); "
              "the run then ends unfinished at `stop.max_sim_time_ms` (no recovery: PFC makes the fabric lossless, "
              "§4.2.2).")
      .U16("udp_port", &PanamaSpec::udp_port, 6000, 1, 65535, "", "The workers' UDP port.")
      .U16("jid", &PanamaSpec::jid, 1, 0, 65535, "", "Job id (JID); with `jobs`, job i has JID jid + i.");
}

/// Jobs (fixed or arriving) and the vector-id check over them.
PanamaSection& DeclareJobs(PanamaSection& p) {
  return p
      .Custom("jobs",
              {"array of objects", "", "(none: one job of `workload.hosts`, `bytes`, `iterations`)",
               "1 .. 256 jobs, see [below](#workloadpanamajobsi)",
               "Concurrent jobs sharing the accelerators (multi-tenancy, §5 (2)): a switch's accelerator holds every "
               "job whose trees cross it, and each active job gets packet_memory / active jobs of it. "
               "`workload.hosts` is not used. Results: the core keys over every job (`jobs`, `per_job` with each "
               "job's `jid`, `bytes`, `iterations_requested` and its own keys under `per_job[i].panama`, "
               "`mean_duration_s` the mean over the jobs); one `collectives.csv` (its `job` column) and one "
               "`panama_accelerators.csv` (every accelerator once: the jobs share them)."},
              [] { return json{{"type", "array"}, {"minItems", 1}, {"maxItems", 256}, {"items", Job().JsonSchema()}}; },
              ParseJobs)
      .Nests({&Job()})
      .Check([](const PanamaSpec& ps, Reader& p) {
        if (p.Has("cluster") && !ps.jobs.empty())
          p.Fail("cluster", "give either jobs (fixed) or cluster (arriving over time), not both");
      })
      .ObjectIfGiven("cluster", &PanamaSpec::cluster, Cluster(),
                     "A shared cluster (§7): jobs arrive as a Poisson process (seeded), each with uniform workers in "
                     "[min_workers, max_workers] and a model drawn uniformly; the controller places each job at its "
                     "arrival among `workload.hosts`: hosts free by its estimate, as few racks as possible; a job "
                     "whose hosts are still busy starts when the jobs before it on them end (no host runs more than "
                     "`slots_per_host` jobs at once; the wait counts in its completion time). Job i uses JID jid + i "
                     "and UDP port udp_port + i. Exclusive with `jobs`. Results add `workload.panama.cluster` (`allreduce`, "
                     "`arrival_rate_per_s`, `load`, `slots_per_host`, `quorum`, `partial_aggregations`, "
                     "`skipped_by_quorum`, `jobs[]` with model, workers, racks, hosts, after, arrival/start/end, "
                     "`jct_s`; `mean_jct_s`, `p50_jct_s`, `p99_jct_s`, `mean_wait_s`) and `panama_cluster.csv`.",
                     false)
      .DocDefault("(none)")
      // VIDs are 32 bits and count every packet of a tree over the whole run.
      .CheckWithContext([](const PanamaSpec& ps, const Scenario& s, Reader& p) {
        if (s.workload.schedule.given && (!ps.jobs.empty() || p.Has("cluster")))
          p.Fail(p.Has("cluster") ? "cluster" : "jobs",
                 "each job has its own size here: workload.schedule runs one job of workload.hosts");
        uint64_t packets = 0;  // over every collective of the run
        for (uint64_t b : s.workload.schedule.given ? s.workload.schedule.bytes : std::vector<uint64_t>{s.workload.bytes})
          packets += (b / 4 + ps.elements_per_packet - 1) / ps.elements_per_packet * s.workload.iterations;
        if (packets / ps.trees >= (1ull << 31))
          p.Fail("trees", fmt::format("{} packets over {} trees overflow the 32-bit vector id", packets, ps.trees));
        if (!ps.congestion_control && ps.fixed_pool < ps.trees)
          p.Fail("fixed_pool", fmt::format("{} packets cannot give each of the {} trees one", ps.fixed_pool, ps.trees));
      });
}

// IPv4 20 + UDP 8 + PANAMA header 14 bytes, then 4k bytes of fp32, within
// the MTU and the accelerator's 1600-byte packet slots (fp_datapath.v:115).
uint32_t MaxK(const Scenario& s) { return (std::min<uint32_t>(s.links.mtu_bytes, 1600 - 14) - 20 - 8 - 14) / 4; }

const PanamaSection& Panama() {
  static const PanamaSection section = [] {
    PanamaSection p("workload.panama", "PANAMA workers and accelerators (panama-mlsys21)");
    p.U32("trees", &PanamaSpec::trees, 4, 1, 256, "",
          "N aggregation trees (§4.1). A switch must have the same children in every tree it is in (one ports "
          "bitmap per job, §5 (2)).")
        .Custom("tree_roots",
                {"array of strings", "", "(none)", "switch names, 1 .. 256",
                 "The root of each tree by name (PANAMA-Agg_i of Fig. 9: `[\"spine2\"]`); sets the tree count "
                 "(giving a different `trees` too is an error). Unknown names are errors."},
                [] { return json{{"type", "array"}, {"minItems", 1}, {"maxItems", 256}, {"items", {{"type", "string"}}}}; },
                ParseTreeRoots)
        .U32("elements_per_packet", &PanamaSpec::elements_per_packet, 256, 1, (1586 - 42) / 4, "values",
             "fp32 values per packet (IPv4 20 + UDP 8 + PANAMA header 14; the FPGA's 1600-byte packet slots).")
        .MaxFrom([](const Scenario& s) -> uint64_t { return MaxK(s); }, "(min(mtu, 1586) - 42) / 4")
        .DefaultFrom([](const PanamaSpec&, const Scenario& s) { return std::min<uint32_t>(256, MaxK(s)); },
                     "`256` (the bound if lower)");
    DeclareWindow(p);
    DeclareAccelerator(p);
    DeclareJobs(p);
    return p;
  }();
  return section;
}

}  // namespace

void ParseWorkload(Reader& w, Scenario& s) {
  Panama().ParseObject(w, "panama", s.workload.spec<PanamaSpec>(), s);
  ring::ParseRingSection(w, s);  // the transport of a cluster's ring jobs (workload.panama.cluster.allreduce = "ring")
}

std::vector<const spec::Doc*> WorkloadSections() { return {&Panama(), &ring::Section()}; }

}  // namespace inasim::protocols::panama
