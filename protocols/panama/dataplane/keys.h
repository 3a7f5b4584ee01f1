// The PANAMA keys a scenario's workload.panama section and an `inasim-p4
// replay panama --config` file share, declared once: protocols/panama/host/
// spec.cc and config.cc both call these on their own struct (whose enums
// differ, so the values are arguments).
#pragma once

#include "common/spec_fields.h"

#include <cstdint>

namespace inasim::p4::panama::keys {

/// accelerator_buffer_bytes, float_mode, latency: the accelerator's memory,
/// adder and latency model.
template <class S, class AccFloat, class F, class AccLatency, class L>
S& Accelerator(S& s, uint64_t S::Struct::*buffer, AccFloat float_mode, F fpga, F ieee, AccLatency latency,
               L equation, L table1) {
  return s
      .U64("accelerator_buffer_bytes", buffer, 64ull << 20, 1, 1ull << 40, "bytes",
           "Memory of each accelerator, split over its ports in 1600-byte slots; wnd_cap = min over the tree of "
           "slots per port / active jobs.")
      .DocDefault("`67108864` (64 MB, §7)")
      .Enum("float_mode", float_mode, "fpga", {{"fpga", fpga}, {"ieee", ieee}},
            "The Xilinx adder (subnormals flushed) or IEEE-754 (see `protocols/panama/dataplane/README.md`).")
      .Enum("latency", latency, "equation", {{"equation", equation}, {"table1", table1}},
            "Accelerator latency: eq. (3) + fitted constants, or Table 1 interpolated.");
}

}  // namespace inasim::p4::panama::keys
