// PANAMA's scenario keys: the workload.panama section of a scenario -> PanamaSpec (and workload.ring, the transport of a cluster's ring jobs)
// (docs/SCENARIO.md), through the registry (Protocol::parse).
#include "ina/scenario-sections.h"
#include "protocols/panama/host/dnn-models.h"
#include "protocols/panama/host/spec.h"
#include "protocols/ring/host/spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace inasim::protocols::panama {

using nlohmann::json;
using spec::Reader;

namespace {

/// tree_roots: the root switch of each tree by name; given, it sets the tree count.
void ParseTreeRoots(Reader& p, PanamaSpec& ps) {
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

/// jobs: concurrent jobs, each with its own workers, size, iterations and start.
void ParseJobs(Reader& p, Scenario& s) {
  PanamaSpec& ps = s.workload.spec<PanamaSpec>();
  if (const json* jobs = p.Raw("jobs")) {
    if (!jobs->is_array() || jobs->empty() || jobs->size() > 256)
      p.Fail("jobs", "must be an array of 1 to 256 jobs, each {\"hosts\", \"bytes\", \"iterations\", \"start_us\", "
                     "\"compute_gap_us\"}");
    json resolved_jobs = json::array();
    for (size_t i = 0; i < jobs->size(); ++i) {
      json resolved;
      Reader j(&(*jobs)[i], fmt::format("workload.panama.jobs[{}]", i), &resolved);
      PanamaJobSpec js;
      if (!j.Has("hosts")) j.Fail("hosts", "is required (each job's workers, disjoint from the other jobs')");
      ParseHosts(j, js.hosts);
      js.bytes = j.U64("bytes", s.workload.bytes, 4, 1ull << 40);
      if (js.bytes % 4) j.Fail("bytes", fmt::format("must be a multiple of 4 (whole fp32 values), got {}", js.bytes));
      js.iterations = j.U32("iterations", s.workload.iterations, 1, 1'000'000);
      js.start_ps = j.TimePs("start_us", static_cast<double>(s.workload.start_ps) / kPsPerUs, 0, 1e9, kPsPerUs);
      js.compute_gap_ps =
          j.TimePs("compute_gap_us", static_cast<double>(s.workload.compute_gap_ps) / kPsPerUs, 0, 1e9, kPsPerUs);
      j.Done();
      ps.jobs.push_back(js);
      resolved_jobs.push_back(resolved);
    }
    if (uint32_t{ps.jid} + ps.jobs.size() > 0x10000)
      p.Fail("jid", fmt::format("jobs take JIDs jid .. jid + {}, past 65535", ps.jobs.size() - 1));
    p.out()["jobs"] = resolved_jobs;
  }
}

/// cluster.models: the DNNs jobs draw from (protocols/panama/host/dnn-models.h); all by default.
void ParseModels(Reader& c, PanamaClusterSpec& cs) {
  cs.models.clear();
  if (const json* m = c.Raw("models")) {
    if (!m->is_array() || m->empty()) c.Fail("models", "must be a non-empty array of model names");
    for (size_t i = 0; i < m->size(); ++i) {
      const json& x = (*m)[i];
      std::string known;
      for (const DnnModel& d : kDnnModels) known += (known.empty() ? "" : ", ") + std::string(d.name);
      if (!x.is_string() || !FindDnnModel(x.get<std::string>()))
        c.Fail(fmt::format("models[{}]", i), fmt::format("{} is not one of {}", x.dump(), known));
      cs.models.push_back(x.get<std::string>());
    }
    c.out()["models"] = *m;
  } else {
    for (const DnnModel& d : kDnnModels) cs.models.emplace_back(d.name);
    c.out()["models"] = cs.models;
  }
}

/// cluster: jobs arriving over time (§7), placed by the controller at arrival.
void ParseCluster(Reader& p, Scenario& s) {
  PanamaSpec& ps = s.workload.spec<PanamaSpec>();
  if (p.Has("cluster")) {
    if (!ps.jobs.empty()) p.Fail("cluster", "give either jobs (fixed) or cluster (arriving over time), not both");
    Reader c = p.Obj("cluster");
    PanamaClusterSpec& cs = ps.cluster;
    // A job's group addresses are 239.<jid mod 256>.<tree>: JIDs must not wrap.
    cs.window_ps = c.TimePs("window_us", 0, 0, 1e9, kPsPerUs);
    cs.jobs = c.U32("jobs", cs.window_ps ? 256 - std::min<uint32_t>(ps.jid, 255) : 0, 1, 255, cs.window_ps == 0);
    if (uint32_t{ps.jid} + cs.jobs > 256)
      c.Fail("jobs", fmt::format("jobs take JIDs jid .. jid + {}; their group addresses 239.<jid>.<tree> need them "
                                 "below 256 (jid is {})", cs.jobs - 1, ps.jid));
    if (uint32_t{ps.udp_port} + cs.jobs > 0x10000)
      c.Fail("jobs", fmt::format("job i uses UDP port udp_port + i, past 65535 (udp_port is {})", ps.udp_port));
    if (c.Has("load")) {
      if (c.Has("arrival_rate_per_s"))
        c.Fail("load", "give either arrival_rate_per_s or load (the arrival rate follows from it), not both");
      cs.load = c.Num("load", 0, 1e-6, 100);
    } else {
      cs.arrival_rate_per_s = c.Num("arrival_rate_per_s", 10, 1e-9, 1e12);
    }
    cs.allreduce = c.Enum("allreduce", "panama", {"panama", "ring"}) == "ring" ? PanamaClusterSpec::Allreduce::kRing
                                                                             : PanamaClusterSpec::Allreduce::kPanama;
    cs.slots_per_host = c.U32("slots_per_host", 1, 1, 64);
    cs.min_workers = c.U32("min_workers", 16, 2, 1u << 20);
    cs.max_workers = c.U32("max_workers", 96, 2, 1u << 20);
    if (cs.max_workers < cs.min_workers)
      c.Fail("max_workers", fmt::format("must be at least min_workers ({}), got {}", cs.min_workers, cs.max_workers));
    ParseModels(c, cs);
    cs.iterations = c.U32("iterations", 10, 1, 1'000'000);
    cs.scale = c.Num("scale", 1, 1e-9, 1e3);
    cs.start_ps = c.TimePs("start_us", static_cast<double>(s.workload.start_ps) / kPsPerUs, 0, 1e9, kPsPerUs);
    c.Done();
  }
}

void ParsePanama(Reader& w, Scenario& s) {
  Reader p = w.Obj("panama");
  PanamaSpec& ps = s.workload.spec<PanamaSpec>();
  // IPv4 20 + UDP 8 + PANAMA header 14 bytes, then 4k bytes of fp32, within
  // the MTU and the accelerator's 1600-byte packet slots (fp_datapath.v:115).
  const uint32_t max_k = (std::min<uint32_t>(s.links.mtu_bytes, 1600 - 14) - 20 - 8 - 14) / 4;
  ps.trees = p.U32("trees", 4, 1, 256);
  ParseTreeRoots(p, ps);
  ps.elements_per_packet = p.U32("elements_per_packet", std::min<uint32_t>(256, max_k), 1, max_k);
  ps.congestion_control = p.Bool("congestion_control", true);
  ps.fixed_window = p.U32("fixed_window", 64, 1, 65535);
  ps.quorum = p.Num("quorum", 1, 1e-3, 1);
  ps.initial_cwnd = p.Num("initial_cwnd", 2, 1, 65535);
  ps.initial_ssthresh = p.Num("initial_ssthresh", 64, 1, 1e9);
  ps.initial_alpha = p.Num("initial_alpha", 1, 0, 1);
  ps.g = p.Num("g", 1.0 / 16, 1e-6, 1);
  ps.reset_ecn_count_per_window = p.Enum("ecn_count", "per_window", {"per_window", "never_reset"}) == "per_window";
  ps.increase_in_marked_windows = p.Enum("increase", "unmarked_windows", {"unmarked_windows", "every_window"}) ==
                                  "every_window";
  ps.accelerator_buffer_bytes = p.U64("accelerator_buffer_bytes", 64ull << 20, 1, 1ull << 40);
  ps.ieee_float = p.Enum("float_mode", "fpga", {"fpga", "ieee"}) == "ieee";
  ps.latency_table1 = p.Enum("latency", "equation", {"equation", "table1"}) == "table1";
  ps.timeout_ps = p.TimePs("timeout_us", 10000, 0.001, 1e9, kPsPerUs);
  ps.udp_port = static_cast<uint16_t>(p.U32("udp_port", 6000, 1, 65535));
  ps.jid = static_cast<uint16_t>(p.U32("jid", 1, 0, 65535));
  ParseJobs(p, s);
  ParseCluster(p, s);
  // VIDs are 32 bits and count every packet of a tree over the whole run.
  const uint64_t packets = (s.workload.bytes / 4 + ps.elements_per_packet - 1) / ps.elements_per_packet *
                           s.workload.iterations;
  if (packets / ps.trees >= (1ull << 31))
    p.Fail("trees", fmt::format("{} packets over {} trees overflow the 32-bit vector id", packets, ps.trees));
  p.Done();
}

}  // namespace

void ParseWorkload(Reader& w, Scenario& s) {
  ParsePanama(w, s);
  ring::ParseRingSection(w, s);  // the transport of a cluster's ring jobs (workload.panama.cluster.allreduce = "ring")
}

}  // namespace inasim::protocols::panama
