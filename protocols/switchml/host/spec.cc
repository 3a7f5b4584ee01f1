// SwitchML's scenario keys: the workload.switchml section of a scenario -> SwitchMLSpec
// (docs/SCENARIO.md), through the registry (Protocol::parse).
#include "ina/scenario-sections.h"
#include "protocols/switchml/host/spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace inasim::protocols::switchml {

using nlohmann::json;
using spec::Reader;

namespace {

/// workload.switchml: the client library's knobs (dev_root/client_lib/src/configs).
void ParseSwitchML(Reader& w, Scenario& s) {
  Reader m = w.Obj("switchml");
  SwitchMLSpec& ml = s.workload.spec<SwitchMLSpec>();
  ml.elements_per_packet = m.U32("elements_per_packet", 256, 1, 1u << 20);
  if (ml.elements_per_packet != 64 && ml.elements_per_packet != 256)
    m.Fail("elements_per_packet",
           fmt::format("must be 64 (256 B packets) or 256 (1024 B packets), the two sizes the P4 program "
                       "aggregates; got {}", ml.elements_per_packet));
  ml.pool_size = m.U32("pool_size", 512, 1, 8192);  // slot index < 8192: 16,384 registers hold both sets
  ml.timeout_ps = m.TimePs("timeout_us", 10000, 0.001, 1e9, kPsPerUs);
  ml.timeout_threshold = m.U64("timeout_threshold", 100, 1, 1ull << 40);
  ml.timeout_threshold_increment = m.U64("timeout_threshold_increment", 100, 0, 1ull << 40);
  ml.timer_mode = m.Enum("timer_mode", "paper", {"paper", "upstream"}) == "paper" ? SwitchMLTimerMode::kPaper
                                                                              : SwitchMLTimerMode::kUpstream;
  ml.vcl = m.Bool("vcl_rounding", true);
  // "upstream": port 448 as next_step_selector.py installs it (1024 B packets
  // return elements 128..159 with the sums of 192..223); "pipe2": port 320.
  ml.harvest3_port = m.Enum("harvest3", "pipe2", {"pipe2", "upstream"}) == "pipe2" ? 320 : 448;
  ml.worker_udp_port = static_cast<uint16_t>(m.U32("worker_udp_port", 4000, 1, 65535));
  if ((ml.worker_udp_port & 0xfff0) == 0xbee0)
    m.Fail("worker_udp_port", fmt::format("{} is in the switch's SwitchML range 0xbee0-0xbeef: switches would take "
                                          "results for worker packets", ml.worker_udp_port));
  ml.pass_latency_ps = m.TimePs("pass_latency_ns", 520, 0, 1e6, kPsPerNs);
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
  const uint64_t jobs = uint64_t{s.workload.iterations} * (ml.tensors.empty() ? 1 : ml.tensors.size());
  ml.warmup_tensors = m.U32("warmup_tensors", 0, 0, 1'000'000);
  if (ml.warmup_tensors >= jobs)
    m.Fail("warmup_tensors", fmt::format("{} warm-up tensors leave nothing to measure: the workload aggregates {} "
                                         "(iterations x tensors)", ml.warmup_tensors, jobs));
  ml.timeline_bin_ps = m.TimePs("timeline_bin_us", 0, 0, 1e9, kPsPerUs);
  m.Done();
}

}  // namespace

void ParseWorkload(Reader& w, Scenario& s) { ParseSwitchML(w, s); }

}  // namespace inasim::protocols::switchml
