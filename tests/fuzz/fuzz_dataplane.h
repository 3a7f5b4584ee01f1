// What every dataplane fuzz target shares: an input is a sequence of frames,
// each [ingress port: 1 byte][time step: 1 byte, x 100 ns][length: 2 bytes,
// big-endian, capped at 2048][bytes], driven into one program so later
// frames meet the register state earlier ones left (slots half full, timers
// pending). Timers the program asks for fire when the input's clock reaches
// them, and every one still pending fires at the end. Outputs are checked
// for what any emitter may rely on (a frame of sane length, a port the
// program could name), then dropped.
#pragma once

#include "p4model/common/dataplane.h"
#include "p4model/common/frame.h"

#include <cstdint>
#include <cstdlib>
#include <queue>
#include <string>
#include <vector>

namespace inasim::fuzz {

class Sink : public p4::Emitter, public p4::TimerService {
 public:
  void Emit(inasim::Span<const uint8_t> f, uint16_t port, p4::Picoseconds) override { Check(f, port); }
  void EmitMulticast(inasim::Span<const uint8_t> f, inasim::Span<const uint16_t> ports, p4::Picoseconds) override {
    for (uint16_t p : ports) Check(f, p);
  }
  void EmitRouted(inasim::Span<const uint8_t> f, p4::Picoseconds) override { Check(f, 0); }
  void ScheduleAt(p4::Picoseconds at, uint64_t cookie) override {
    if (timers_.size() > 1'000'000) std::abort();  // a program that floods timers is a bug
    timers_.push({at, seq_++, cookie});
  }
  /// Fires the timers due at or before `until` (all when `all`); bounded.
  void Fire(p4::Dataplane& dp, p4::Picoseconds until, bool all) {
    size_t fired = 0;
    while (!timers_.empty() && (all || timers_.top().at <= until)) {
      const Timer t = timers_.top();
      timers_.pop();
      if (++fired > 2'000'000) std::abort();  // timers that keep rescheduling themselves
      dp.OnTimer(t.cookie, t.at, *this);
    }
  }

 private:
  struct Timer {
    p4::Picoseconds at;
    uint64_t seq, cookie;
    bool operator>(const Timer& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  static void Check(inasim::Span<const uint8_t> f, uint16_t port) {
    // 64 KiB is far above any frame a program may build (jumbo frames are 9 KiB).
    if (f.size() > 65536 || port > 4096) std::abort();
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < f.size(); i += 64) sink ^= f.data()[i];  // every byte must be readable (ASan)
    (void)sink;
  }
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_;
  uint64_t seq_ = 0;
};

/// `"workers":[...]` of a controller config: worker w on port w, MAC
/// 02:00:00:00:00:0<w+1>, IPv4 10.0.0.<w+1> (n <= 9).
inline std::string WorkersJson(int n) {
  std::string s = R"("workers":[)";
  for (int w = 0; w < n; ++w)
    s += std::string(w ? "," : "") + R"({"id":)" + std::to_string(w) + R"(,"port":)" + std::to_string(w) +
         R"(,"mac":"02:00:00:00:00:0)" + std::to_string(w + 1) + R"(","ip":"10.0.0.)" + std::to_string(w + 1) + "\"}";
  return s + "]";
}

/// Runs the frame sequence in `data` through `dp`; with `dump`, the register
/// dump (`inasim-p4 replay --dump`) after the last frame too (it is slow, so
/// only inputs whose mode byte asks for it, bit 7, pay for it).
/// `prefix` (may be empty) goes in front of every frame: fixed headers, so the
/// fuzzer's bytes land behind them (a program reached over UDP).
inline void Drive(p4::Dataplane& dp, const uint8_t* data, size_t size, bool dump,
                  const std::vector<uint8_t>& prefix = {}) {
  Sink sink;
  dp.AttachTimers(&sink);
  p4::Picoseconds now = 0;
  size_t i = 0;
  while (i + 4 <= size) {
    const uint16_t port = data[i];
    now += p4::Picoseconds(data[i + 1]) * 100'000;
    size_t len = static_cast<size_t>(data[i + 2]) << 8 | data[i + 3];
    i += 4;
    if (len > 2048) len = 2048;
    if (len > size - i) len = size - i;
    // A copy of exactly `len` bytes, so ASan sees any read past the frame.
    std::vector<uint8_t> frame(prefix);
    frame.insert(frame.end(), data + i, data + i + len);
    i += len;
    sink.Fire(dp, now, false);
    const p4::FrameView view = p4::ParseFrame(frame.data(), std::min<size_t>(frame.size(), p4::kParseBytes),
                                              static_cast<uint32_t>(frame.size()));
    if (dp.Claims(view)) dp.Process(port, inasim::Span<const uint8_t>(frame.data(), frame.size()), now, sink);
    (void)dp.LastPasses();
  }
  sink.Fire(dp, now, true);
  if (dump) (void)dp.DumpState();
}

}  // namespace inasim::fuzz
