// The Canary switch model as the simulator hosts it: the p4model unchanged,
// plus the peak of descriptors in use, which the memory model of
// canary-fgcs24 §3.2.2 is compared with (allocations minus frees after every
// packet and timer; the model frees only on the broadcast).
#pragma once

#include "p4model/canary/canary_dataplane.h"

#include <algorithm>
#include <cstdint>

namespace inasim {

class CanarySwitchProgram : public p4::canary::CanaryDataplane {
 public:
  using CanaryDataplane::CanaryDataplane;
  void Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, p4::Picoseconds now,
               p4::Emitter& out) override {
    CanaryDataplane::Process(ingress_port, frame, now, out);
    Track();
  }
  void OnTimer(uint64_t cookie, p4::Picoseconds now, p4::Emitter& out) override {
    CanaryDataplane::OnTimer(cookie, now, out);
    Track();
  }
  uint64_t in_use() const { return stats().allocated - stats().broadcasts; }
  uint64_t peak_in_use() const { return peak_; }

 private:
  void Track() { peak_ = std::max(peak_, in_use()); }
  uint64_t peak_ = 0;
};

}  // namespace inasim
