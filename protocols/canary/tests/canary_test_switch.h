// The Canary tests' harness: a switch model with a faked TimerService whose
// timers fire in time order before each packet, as the ns-3 switch and
// inasim-p4 replay fire them. Shared by dataplane_canary.cc and
// dataplane_canary_paper.cc.
#pragma once

#include "protocols/canary/dataplane/canary_dataplane.h"
#include "tests/common/recording_emitter.h"
#include "tests/common/test_bytes.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

namespace inasim::testing::canary {

/// The switch's timers, kept so a test can see what was scheduled and fire
/// them in time order (ties: scheduling order).
class TimerQueue : public inasim::p4::TimerService {
 public:
  struct Timer {
    Picoseconds at;
    uint64_t cookie;
  };
  void ScheduleAt(Picoseconds at, uint64_t cookie) override {
    pending.push_back({at, cookie});
    scheduled.push_back({at, cookie});
  }
  std::vector<Timer> pending, scheduled;
};

/// A switch model plus its timers: Send() fires the timers due first.
struct Switch {
  explicit Switch(inasim::p4::canary::CanaryConfig c) : dp(std::move(c)) { dp.AttachTimers(&timers); }
  /// From the control plane's JSON (README "API").
  explicit Switch(const std::string& json) : Switch(inasim::p4::canary::CanaryConfig::FromJson(json)) {}
  void RunTimers(Picoseconds until) {
    for (;;) {
      auto it = std::min_element(timers.pending.begin(), timers.pending.end(),
                                 [](const auto& a, const auto& b) { return a.at < b.at; });
      if (it == timers.pending.end() || it->at > until) return;
      const TimerQueue::Timer t = *it;
      timers.pending.erase(it);
      fired.push_back(t);
      dp.OnTimer(t.cookie, t.at, rec);
    }
  }
  void Send(uint16_t port, const Bytes& b, Picoseconds now) {
    RunTimers(now);
    dp.Process(port, inasim::Span<const uint8_t>(b.data(), b.size()), now, rec);
  }
  const Bytes& Last() const { return rec.out.back().bytes; }
  inasim::p4::canary::CanaryDataplane dp;
  TimerQueue timers;
  RecordingEmitter rec;
  std::vector<TimerQueue::Timer> fired;
};

/// A Canary header (§4.1, 19 bytes) then its int32 elements, appended to `b`.
inline void PutCanary(Bytes& b, const inasim::p4::canary::canary_h& h, const std::vector<int32_t>& data) {
  Put32(b, h.destination);
  Put32(b, h.id);
  Put16(b, h.counter);
  Put16(b, h.hosts);
  Put32(b, h.children);
  Put16(b, h.switch_address);
  b.push_back(uint8_t((h.bypass ? 0x80 : 0) | (h.multicast ? 0x40 : 0) | (h.padding & 0x3f)));
  for (int32_t v : data) Put32(b, uint32_t(v));
}

/// What a host (or a restoring leader) sends: Ethernet to 02:00:00:00:ff:<to>
/// from 02:00:<host's IPv4>, IPv4 (id 0xabcd, DF, TTL 63) from 10.0.0.(host+1)
/// to `ip_dst`, UDP 40000+host -> 45501, then the Canary header and elements.
inline Bytes HostFrame(uint8_t to, int host, uint32_t ip_dst, const inasim::p4::canary::canary_h& h,
                       const std::vector<int32_t>& data) {
  Bytes b = {0x02, 0x00, 0x00, 0x00, 0xff, to};
  for (uint8_t x : {uint8_t(0x02), uint8_t(0x00), uint8_t(0x0a), uint8_t(0x00), uint8_t(0x00), uint8_t(host + 1)})
    b.push_back(x);
  Put16(b, 0x0800);
  PutIpv4Udp(b, {0x0a000000u + uint32_t(host) + 1, ip_dst, uint16_t(40000 + host), 0xB1BD, 0xabcd, 0x1234, /*DF*/ 0x4000, 63},
             19 + 4 * data.size());
  PutCanary(b, h, data);
  return b;
}

/// The aggregate a switch originates (timeout or completion): Ethernet to
/// 02:00:<leader> from the switch; IPv4 id 0, flags 0, TTL 64, switch ->
/// leader; UDP 45501 both ways, checksum 0; Canary: the leader, the block, its
/// counter and hosts, children / switch address / flags 0; the accumulator.
inline Bytes AggregateFrame(const std::array<uint8_t, 6>& switch_mac, uint32_t switch_ip, uint32_t leader, uint32_t id,
                            uint16_t counter, uint16_t hosts, const std::vector<uint32_t>& data) {
  Bytes b;
  Put16(b, 0x0200);
  Put32(b, leader);
  for (uint8_t x : switch_mac) b.push_back(x);
  Put16(b, 0x0800);
  PutIpv4Udp(b, {switch_ip, leader, 0xB1BD, 0xB1BD}, 19 + 4 * data.size());
  inasim::p4::canary::canary_h h{};
  h.destination = leader;
  h.id = id;
  h.counter = counter;
  h.hosts = hosts;
  PutCanary(b, h, std::vector<int32_t>(data.begin(), data.end()));
  return b;
}

}  // namespace inasim::testing::canary
