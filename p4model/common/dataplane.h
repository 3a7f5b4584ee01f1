// The one seam between the simulator and a switch program.
//
// A dataplane is a pure C++ model of a P4 (or FPGA) program: packet bytes and
// the ingress port go in, zero or more packets come out, each to one egress
// port, to a multicast set, or "routed" (the switch forwards it by its table and
// load-balancing policy). It may ask to be called back at a future time
// (per-descriptor timeouts). It knows nothing of ns-3; the ns-3 switch knows
// nothing of any protocol. Tests drive a dataplane directly with bytes.
#pragma once

#include "p4model/common/frame.h"

#include <cstdint>
#include "p4model/common/span.h"
#include <string>

namespace inasim::p4 {

using Picoseconds = uint64_t;

/// Where a dataplane's output packets go. Implemented by the ns-3 switch and by
/// test harnesses that record what was emitted.
class Emitter {
 public:
  virtual ~Emitter() = default;
  /// One copy out of `port`, after `latency` of pipeline time.
  virtual void Emit(inasim::Span<const uint8_t> frame, uint16_t port, Picoseconds latency) = 0;
  /// One copy out of each port in `ports` (the packet replication engine).
  virtual void EmitMulticast(inasim::Span<const uint8_t> frame, inasim::Span<const uint16_t> ports,
                             Picoseconds latency) = 0;
  /// Forwarded by the switch's own table and policy towards the IPv4 destination.
  virtual void EmitRouted(inasim::Span<const uint8_t> frame, Picoseconds latency) = 0;
};

/// "Call me back at time T": the switch schedules it; the dataplane identifies
/// the timer by an opaque cookie of its own.
class TimerService {
 public:
  virtual ~TimerService() = default;
  virtual void ScheduleAt(Picoseconds at, uint64_t cookie) = 0;
};

class Dataplane {
 public:
  virtual ~Dataplane() = default;
  /// Protocol name, e.g. "switchml".
  virtual std::string Name() const = 0;
  /// True when this program handles the frame; otherwise the switch forwards it
  /// by its table untouched (the P4 program's plain forwarding path).
  virtual bool Claims(const FrameView& frame) const = 0;
  /// Processes one claimed frame that arrived on `ingress_port` at `now`.
  virtual void Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds now,
                       Emitter& out) = 0;
  /// A timer asked for through TimerService fired.
  virtual void OnTimer(uint64_t cookie, Picoseconds now, Emitter& out) {}
  /// Registers and counters as JSON text, for tests and `--dump`.
  virtual std::string DumpState() const { return "{}"; }
  /// Pipeline passes (1 + recirculations) the last Process() took. Its latency
  /// already reaches the switch through Emit's argument; tools and tests read this.
  virtual uint32_t LastPasses() const { return 1; }

  void AttachTimers(TimerService* timers) { timers_ = timers; }

 protected:
  TimerService* timers() const { return timers_; }

 private:
  TimerService* timers_ = nullptr;
};

}  // namespace inasim::p4
