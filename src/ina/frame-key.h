// What a protocol says a frame on the wire is, for the event trace
// (`outputs.trace`, event-trace.h): which job, which unit of work (the id a
// user follows end to end: a SwitchML tensor offset, a Canary block, a PANAMA
// vector, a P4SGD sequence number), the packet's kind and one protocol field
// beside it (the SwitchML pool slot, Canary attempt, PANAMA tree, P4SGD slot).
// Each protocol's job set fills it (Workload::KeyFrame): it knows its ports,
// its ids' encoding and its jobs, which a decoder of the bytes alone does not.
#pragma once

#include <cstdint>

namespace inasim {

struct FrameKey {
  const char* kind = "";  ///< a static string: "update", "result", "control", ...
  uint32_t job = 0;
  uint64_t id = 0;
  int64_t aux = -1;  ///< the protocol's one extra field; -1: none
};

}  // namespace inasim
