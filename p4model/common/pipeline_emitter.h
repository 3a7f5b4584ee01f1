// What one Process() of a model emitted, as the device-port copies the
// whole-pipeline runs of `inasim-p4 check` compare (model_check.h). The
// bindings give each worker a simulator port equal to its device port.
#pragma once

#include "p4model/common/dataplane.h"
#include "p4model/common/model_check.h"

#include <cstdint>
#include <vector>

namespace inasim::p4 {

class PipelineEmitter : public Emitter {
 public:
  PipelineResult result;
  void Emit(inasim::Span<const uint8_t> frame, uint16_t port, Picoseconds) override {
    result.copies.emplace_back(port, std::vector<uint8_t>(frame.begin(), frame.end()));
  }
  void EmitMulticast(inasim::Span<const uint8_t> frame, inasim::Span<const uint16_t> ports, Picoseconds) override {
    for (uint16_t p : ports) result.copies.emplace_back(p, std::vector<uint8_t>(frame.begin(), frame.end()));
  }
  /// Forwarded by the switch's own table: no such path in a P4 program, so
  /// it shows as a difference (port 0xffff).
  void EmitRouted(inasim::Span<const uint8_t> frame, Picoseconds) override {
    result.copies.emplace_back(0xffff, std::vector<uint8_t>(frame.begin(), frame.end()));
  }
};

}  // namespace inasim::p4
