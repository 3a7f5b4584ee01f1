// What every dataplane test drives a program with: an Emitter that keeps each
// frame the program emits (bytes, port or ports, latency), in order, for the
// test to compare byte for byte. Header-only, no ns-3.
#pragma once

#include "p4model/common/dataplane.h"

#include <cstdint>
#include <vector>

namespace inasim::testing {

/// One frame a program emitted.
struct Emitted {
  enum Kind { kUnicast, kMulticast, kRouted } kind;
  std::vector<uint8_t> bytes;
  uint16_t port = 0;               ///< kUnicast (and each copy when multicasts are split per port)
  std::vector<uint16_t> ports;     ///< kMulticast, unless split
  p4::Picoseconds latency = 0;
};

class RecordingEmitter : public p4::Emitter {
 public:
  /// kPerPort: a multicast is recorded as one kMulticast entry per port
  /// (`port` set, `ports` empty), in the order of its ports.
  enum Multicast { kAsOne, kPerPort };
  explicit RecordingEmitter(Multicast multicast = kAsOne) : multicast_(multicast) {}

  void Emit(inasim::Span<const uint8_t> f, uint16_t port, p4::Picoseconds latency) override {
    out.push_back({Emitted::kUnicast, {f.begin(), f.end()}, port, {}, latency});
  }
  void EmitMulticast(inasim::Span<const uint8_t> f, inasim::Span<const uint16_t> ports,
                     p4::Picoseconds latency) override {
    if (multicast_ == kPerPort) {
      for (uint16_t p : ports) out.push_back({Emitted::kMulticast, {f.begin(), f.end()}, p, {}, latency});
      return;
    }
    out.push_back({Emitted::kMulticast, {f.begin(), f.end()}, 0, {ports.begin(), ports.end()}, latency});
  }
  void EmitRouted(inasim::Span<const uint8_t> f, p4::Picoseconds latency) override {
    out.push_back({Emitted::kRouted, {f.begin(), f.end()}, 0, {}, latency});
  }

  std::vector<Emitted> out;

 private:
  Multicast multicast_;
};

}  // namespace inasim::testing
