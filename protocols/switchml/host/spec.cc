// SwitchML's scenario keys: the workload.switchml section of a scenario -> SwitchMLSpec
// (docs/SCENARIO.md), through the registry (Protocol::parse).
#include "ina/scenario-sections.h"
#include "common/spec_fields.h"
#include "protocols/switchml/host/spec.h"
#include "protocols/switchml/dataplane/keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace inasim::protocols::switchml {

using nlohmann::json;
using spec::Reader;

namespace {

using SwitchMLSection = spec::Section<SwitchMLSpec, Scenario>;

/// tensors: the byte sizes of one iteration's tensors (absent: workload.bytes).
void ParseTensors(Reader& m, SwitchMLSpec& ml, const Scenario& s) {
  ml.tensors.clear();
  if (const json* t = m.Raw("tensors")) {
    if (!t->is_array() || t->empty()) m.Fail("tensors", "must be a non-empty array of tensor sizes in bytes");
    for (size_t i = 0; i < t->size(); ++i) {
      const json& b = (*t)[i];
      if (!b.is_number_integer() || b.get<int64_t>() <= 0 || b.get<uint64_t>() % 4 || b.get<uint64_t>() > (1ull << 40))
        m.Fail(fmt::format("tensors[{}]", i),
               fmt::format("must be a positive multiple of 4 bytes (whole 32-bit elements), at most 2^40; got {}",
                           b.dump()));
      ml.tensors.push_back(b.get<uint64_t>());
    }
    m.out()["tensors"] = *t;
  } else {
    m.out()["tensors"] = json::array({s.workload.bytes});
  }
}

json TensorsSchema() {
  return {{"type", "array"},
          {"minItems", 1},
          {"items", {{"type", "integer"}, {"minimum", 4}, {"maximum", 1ull << 40}, {"multipleOf", 4}}},
          {"description", "The tensors of one iteration, streamed back to back (one job each). (unit: bytes)"}};
}

void CheckWarmup(const SwitchMLSpec& ml, const Scenario& s, Reader& m) {
  const uint64_t jobs = uint64_t{s.workload.iterations} * (ml.tensors.empty() ? 1 : ml.tensors.size());
  if (ml.warmup_tensors >= jobs)
    m.Fail("warmup_tensors", fmt::format("{} warm-up tensors leave nothing to measure: the workload aggregates {} "
                                         "(iterations x tensors)", ml.warmup_tensors, jobs));
}

SwitchMLSection& DeclareTransport(SwitchMLSection& m) {
  // Shared with inasim-p4's replay config (protocols/switchml/dataplane/keys.h).
  p4::switchml::keys::ElementsPerPacket(m, &SwitchMLSpec::elements_per_packet, 256);
  p4::switchml::keys::PoolSize(m, &SwitchMLSpec::pool_size, 512);
  return m
      .TimePs("timeout_us", &SwitchMLSpec::timeout_ps, 10000, 0.001, 1e9, spec::TimeUnit::kUs,
              "Retransmission timeout (`timeout = 10` ms; the paper's loss experiments used 1 ms).")
      .U64("timeout_threshold", &SwitchMLSpec::timeout_threshold, 100, 1, 1ull << 40, "timeouts",
           "After this many timeouts the timeout doubles (the library's backoff).")
      .U64("timeout_threshold_increment", &SwitchMLSpec::timeout_threshold_increment, 100, 0, 1ull << 40, "timeouts",
           "... and the threshold grows by this much.")
      .Enum("timer_mode", &SwitchMLSpec::timer_mode, "paper",
            {{"paper", SwitchMLTimerMode::kPaper}, {"upstream", SwitchMLTimerMode::kUpstream}},
            "`paper`: one timer per outstanding packet (Algorithm 4). `upstream`: `dpdk_worker_thread.cc` as "
            "written, whose first-batch timers are filed one slot off with the next packet's id (a lost "
            "first-batch packet then completes with another packet's sums; see `src/ina/README.md`).")
      .Bool("vcl_rounding", &SwitchMLSpec::vcl, true,
            "Quantize as the library's default VCL build (round half to even in 16-element vector chunks); "
            "`false`: `std::round` everywhere.");
}

const SwitchMLSection& SwitchML() {
  static const SwitchMLSection section = [] {
    SwitchMLSection m("workload.switchml", "SwitchML workers (p4app-switchML client library)");
    DeclareTransport(m);
    p4::switchml::keys::Harvest3(m, &SwitchMLSpec::harvest3_port, "pipe2");
    m.U16("worker_udp_port", &SwitchMLSpec::worker_udp_port, 4000, 1, 65535, "",
             "The workers' UDP port (`dpdk.cfg worker_port`); the switch's is 0xbee0.")
        .AllowedNote("not 0xbee0-0xbeef")
        .SchemaAlso({{"not", {{"minimum", 0xbee0}, {"maximum", 0xbeef}}}})
        .Check([](const SwitchMLSpec& ml, Reader& r) {
          if ((ml.worker_udp_port & 0xfff0) == 0xbee0)
            r.Fail("worker_udp_port", fmt::format("{} is in the switch's SwitchML range 0xbee0-0xbeef: switches "
                                                  "would take results for worker packets", ml.worker_udp_port));
        });
    p4::switchml::keys::PassLatency(m, &SwitchMLSpec::pass_latency_ps)
        .Custom("tensors",
                {"array of integers", "bytes", "`[workload.bytes]`", "each a positive multiple of 4, at most 2^40",
                 "The tensors of one iteration, streamed back to back (one job each)."},
                TensorsSchema, ParseTensors)
        .U32("warmup_tensors", &SwitchMLSpec::warmup_tensors, 0, 0, 1'000'000, "tensors",
             "Left out of the summary means (the paper: 10 warm-ups).")
        .Allowed("0 .. 1000000, fewer than iterations x tensors")
        .CheckWithContext(CheckWarmup)
        .TimePs("timeline_bin_us", &SwitchMLSpec::timeline_bin_ps, 0, 0, 1e9, spec::TimeUnit::kUs,
                "If > 0, `switchml_timeline.csv`: packets worker 0 sent per bin (Fig. 7).");
    return m;
  }();
  return section;
}

}  // namespace

/// workload.switchml: the client library's knobs (dev_root/client_lib/src/configs).
void ParseWorkload(Reader& w, Scenario& s) {
  SwitchML().ParseObject(w, "switchml", s.workload.spec<SwitchMLSpec>(), s);
}

std::vector<const spec::Doc*> WorkloadSections() { return {&SwitchML()}; }

}  // namespace inasim::protocols::switchml
