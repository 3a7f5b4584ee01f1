// The P4SGD keys a scenario's workload.p4sgd section and an `inasim-p4
// replay p4sgd --config` file share, declared once: protocols/p4sgd/host/
// spec.cc and config.cc both call these on their own struct.
#pragma once

#include "common/spec_fields.h"

#include <fmt/format.h>

#include <cstdint>

namespace inasim::p4::p4sgd::keys {

/// slots: the switch's register cells (§4.2), a power of two.
template <class S>
S& Slots(S& s, uint32_t S::Struct::*m) {
  using T = typename S::Struct;
  return s.U32("slots", m, 65536, 1, 65536, "", "Switch register cells (§4.2); op i uses slot i mod slots.")
      .Allowed("power of two, 1 .. 65536")
      .Check([m](const T& t, spec::Reader& r) {
        if (t.*m & (t.*m - 1))
          r.Fail("slots", fmt::format("must be a power of two (the switch indexes its registers by the low bits), "
                                      "got {}", t.*m));
      });
}

/// udp_port: the port the switch claims (and the workers use).
template <class S>
S& UdpPort(S& s, uint16_t S::Struct::*m) {
  return s.U16("udp_port", m, 20050, 1, 65535, "", "Claimed by the switch; the workers' port.");
}

/// pass_latency_ns: the switch's pipeline pass.
template <class S>
S& PassLatency(S& s, uint64_t S::Struct::*m) {
  return s.TimePs("pass_latency_ns", m, 520, 0, 1e6, spec::TimeUnit::kNs, "Switch pipeline pass.");
}

}  // namespace inasim::p4::p4sgd::keys
