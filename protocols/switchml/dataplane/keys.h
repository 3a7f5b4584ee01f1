// The SwitchML keys a scenario's workload.switchml section and an
// `inasim-p4 replay switchml --config` file share, declared once (key, unit,
// range, help, checks): protocols/switchml/host/spec.cc and config.cc both
// call these on their own struct. Defaults are arguments where the two
// differ on purpose (a replay config installs what the upstream controller
// installs; a scenario runs as the paper reports).
#pragma once

#include "common/spec_fields.h"

#include <fmt/format.h>

#include <cstdint>

namespace inasim::p4::switchml::keys {

/// elements_per_packet: 64 (256 B packets) or 256 (1024 B), the two sizes the P4 program aggregates.
template <class S>
S& ElementsPerPacket(S& s, uint32_t S::Struct::*m, uint32_t def) {
  using T = typename S::Struct;
  return s
      .U32("elements_per_packet", m, def, 1, 1u << 20, "elements",
           "`packet_numel`: 64 (256 B of data, one pipeline pass + harvest) or 256 (1024 B, the folded 4-pipe path "
           "with 9 passes).")
      .Allowed("`64`, `256`")
      .SchemaAlso({{"enum", {64, 256}}})
      .Check([m](const T& t, spec::Reader& r) {
        if (t.*m != 64 && t.*m != 256)
          r.Fail("elements_per_packet",
                 fmt::format("must be 64 (256 B packets) or 256 (1024 B packets), the two sizes the P4 program "
                             "aggregates; got {}", t.*m));
      });
}

/// pool_size: slots a worker uses per set (slot index < 8192: 16,384 registers hold both sets).
template <class S>
S& PoolSize(S& s, uint32_t S::Struct::*m, uint32_t def) {
  return s.U32("pool_size", m, def, 1, 8192, "slots",
               "`max_outstanding_packets`: packets in flight per worker, and slots used per set (the paper's "
               "appendix C: 128 at 10 Gb/s, 512 at 100 Gb/s).");
}

/// harvest3: the 1024 B HARVEST3 recirculation port, by name.
// p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:66
template <class S>
S& Harvest3(S& s, uint16_t S::Struct::*m, const char* def) {
  return s.Enum("harvest3", m, def, {{"pipe2", uint16_t{320}}, {"upstream", uint16_t{448}}},
                "Recirculation port of the 1024 B HARVEST3 pass: `upstream` = 448 as the controller installs it "
                "(pipe 3: elements 128..159 of each packet come back with the sums of 192..223, invisible with "
                "all-ones data), `pipe2` = 320 (correct sums, as the paper reports).");
}

/// pass_latency_ns: the switch's pipeline time per pass.
template <class S>
S& PassLatency(S& s, uint64_t S::Struct::*m) {
  return s.TimePs("pass_latency_ns", m, 520, 0, 1e6, spec::TimeUnit::kNs,
                  "Switch pipeline time per pass (the paper measured ~520 ns).");
}

}  // namespace inasim::p4::switchml::keys
