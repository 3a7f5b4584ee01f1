// Static trees' scenario section, workload.static_tree (parsed by spec.cc).
#pragma once

#include "ina/scenario.h"

#include <cstdint>
#include <string>
#include <vector>

namespace inasim {

/// Static reduction trees (scenario `workload.static_tree`; canary-fgcs24 §5.2).
struct StaticTreeSpec {
  uint32_t trees = 1;                          ///< 1: SHARP/SwitchML/ATP; N: PANAMA (blocks round robin)
  bool random_roots = false;                   ///< roots drawn at random (seeded), not spread evenly
  uint32_t elements_per_packet = 256;
  uint32_t window_blocks = 256;
  uint32_t nic_queue_bytes = 8192;             ///< as CanarySpec::nic_queue_bytes
  uint32_t slots_per_tree = 4096;              ///< power of two, >= window_blocks
  uint64_t pass_latency_ps = 520'000;
};

}  // namespace inasim
