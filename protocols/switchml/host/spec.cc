// SwitchML's scenario keys: the workload.switchml section of a scenario -> SwitchMLSpec
// (docs/SCENARIO.md), through the registry (Protocol::parse).
#include "ina/scenario-sections.h"
#include "common/spec_fields.h"
#include "protocols/switchml/host/spec.h"

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
  return m
      .U32("elements_per_packet", &SwitchMLSpec::elements_per_packet, 256, 1, 1u << 20, "elements",
           "`packet_numel`: 64 (256 B of data, one pipeline pass + harvest) or 256 (1024 B, the folded 4-pipe path "
           "with 9 passes).")
      .Allowed("`64`, `256`")
      .SchemaAlso({{"enum", {64, 256}}})
      .Check([](const SwitchMLSpec& ml, Reader& r) {
        if (ml.elements_per_packet != 64 && ml.elements_per_packet != 256)
          r.Fail("elements_per_packet",
                 fmt::format("must be 64 (256 B packets) or 256 (1024 B packets), the two sizes the P4 program "
                             "aggregates; got {}", ml.elements_per_packet));
      })
      // slot index < 8192: 16,384 registers hold both sets
      .U32("pool_size", &SwitchMLSpec::pool_size, 512, 1, 8192, "slots",
           "`max_outstanding_packets`: packets in flight per worker, and slots used per set (the paper's appendix "
           "C: 128 at 10 Gb/s, 512 at 100 Gb/s).")
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
            "`false`: `std::round` everywhere.")
      // "upstream": port 448 as next_step_selector.py installs it (1024 B packets
      // return elements 128..159 with the sums of 192..223); "pipe2": port 320.
      .Enum("harvest3", &SwitchMLSpec::harvest3_port, "pipe2", {{"pipe2", uint16_t{320}}, {"upstream", uint16_t{448}}},
            "Recirculation port of the 1024 B HARVEST3 pass: `upstream` = 448 as the controller installs it (pipe "
            "3: elements 128..159 of each packet come back with the sums of 192..223, invisible with all-ones "
            "data), `pipe2` = 320 (correct sums, as the paper reports).");
}

const SwitchMLSection& SwitchML() {
  static const SwitchMLSection section = [] {
    SwitchMLSection m("workload.switchml", "SwitchML workers (p4app-switchML client library)");
    DeclareTransport(m)
        .U16("worker_udp_port", &SwitchMLSpec::worker_udp_port, 4000, 1, 65535, "",
             "The workers' UDP port (`dpdk.cfg worker_port`); the switch's is 0xbee0.")
        .AllowedNote("not 0xbee0-0xbeef")
        .SchemaAlso({{"not", {{"minimum", 0xbee0}, {"maximum", 0xbeef}}}})
        .Check([](const SwitchMLSpec& ml, Reader& r) {
          if ((ml.worker_udp_port & 0xfff0) == 0xbee0)
            r.Fail("worker_udp_port", fmt::format("{} is in the switch's SwitchML range 0xbee0-0xbeef: switches "
                                                  "would take results for worker packets", ml.worker_udp_port));
        })
        .TimePs("pass_latency_ns", &SwitchMLSpec::pass_latency_ps, 520, 0, 1e6, spec::TimeUnit::kNs,
                "Switch pipeline time per pass (the paper measured ~520 ns).")
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
