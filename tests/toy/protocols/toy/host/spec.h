// The toy protocol's scenario section, workload.toy (parsed by spec.cc).
#pragma once

#include "ina/scenario.h"

#include <cstdint>

namespace inasim {

struct ToySpec {
  uint32_t elements_per_packet = 64;  ///< int32 elements per packet (k)
  uint32_t window_packets = 16;       ///< packets a worker has in flight = switch slots
  uint16_t udp_port = 47000;          ///< the workers' and the switch's UDP port
  uint64_t pass_latency_ps = 500'000; ///< switch pipeline time per packet
};

}  // namespace inasim
