// The static-tree keys a scenario's workload.static_tree section and an
// `inasim-p4 replay static_tree --config` file share, declared once:
// protocols/static_tree/host/spec.cc and program.cc both call these.
#pragma once

#include "common/spec_fields.h"

#include <fmt/format.h>

#include <cstdint>

namespace inasim::p4::statictree::keys {

/// elements_per_packet: k, int32 elements per packet (the Canary header layout: 47 bytes of headers).
template <class S>
S& ElementsPerPacket(S& s, uint32_t S::Struct::*m) {
  return s.U32("elements_per_packet", m, 256, 1, (9216 - 47) / 4, "elements", "k.");
}

/// slots_per_tree: aggregation slots per tree per switch, a power of two.
template <class S>
S& SlotsPerTree(S& s, uint32_t S::Struct::*m) {
  using T = typename S::Struct;
  return s
      .U32("slots_per_tree", m, 4096, 1, 1u << 20, "slots", "Aggregation slots per tree per switch (slot = id mod slots).")
      .Check([m](const T& t, spec::Reader& r) {
        if (t.*m & (t.*m - 1)) r.Fail("slots_per_tree", fmt::format("must be a power of two, got {}", t.*m));
      });
}

/// pass_latency_ns: the switch's pipeline time per pass.
template <class S>
S& PassLatency(S& s, uint64_t S::Struct::*m) {
  return s.TimePs("pass_latency_ns", m, 520, 0, 1e6, spec::TimeUnit::kNs, "Switch pipeline time per pass.");
}

}  // namespace inasim::p4::statictree::keys
