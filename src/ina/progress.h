// Progress on stderr for long runs: simulated time, % done, events, ETA.
// It is an ordinary simulator event that re-arms itself; its interval in
// simulated time adapts so that it fires about twice per wall second. Its own
// events are counted and subtracted from the reported total, and it touches no
// model state, so results are identical with and without it.
#pragma once

#include "ns3/simulator.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>

namespace inasim {

class ProgressReporter {
 public:
  ProgressReporter(std::function<double()> fraction, uint64_t max_sim_ps)
      : fraction_(std::move(fraction)), max_sim_ps_(max_sim_ps) {}

  void Start() {
    active_ = true;
    start_ = last_ = std::chrono::steady_clock::now();
    ns3::Simulator::Schedule(ns3::PicoSeconds(interval_ps_), &ProgressReporter::Tick, this);
  }
  void Finish() {
    if (active_ && printed_) std::fprintf(stderr, "\r\033[K");
    active_ = false;
  }
  uint64_t events() const { return events_; }

 private:
  void Tick() {
    ++events_;
    if (!active_) return;
    const auto now = std::chrono::steady_clock::now();
    const double since = std::chrono::duration<double>(now - last_).count();
    if (since < 0.25 && interval_ps_ < max_sim_ps_) interval_ps_ *= 2;
    if (since > 1.0 && interval_ps_ > 1000) interval_ps_ /= 2;
    if (since >= 0.5) {
      last_ = now;
      const double f = fraction_();
      const double elapsed = std::chrono::duration<double>(now - start_).count();
      const double eta = f > 1e-9 ? elapsed * (1.0 - f) / f : 0.0;
      const double sim_ms = static_cast<double>(ns3::Simulator::Now().GetPicoSeconds()) * 1e-9;
      std::fprintf(stderr, "\r\033[K[inasim] sim %.3f ms  %5.1f %%  %.2f M events  elapsed %.0f s  ETA %.0f s",
                   sim_ms, 100.0 * f, static_cast<double>(ns3::Simulator::GetEventCount()) / 1e6, elapsed, eta);
      std::fflush(stderr);
      printed_ = true;
    }
    ns3::Simulator::Schedule(ns3::PicoSeconds(interval_ps_), &ProgressReporter::Tick, this);
  }

  std::function<double()> fraction_;
  uint64_t max_sim_ps_;
  uint64_t interval_ps_ = 1'000'000;  // 1 us to start
  uint64_t events_ = 0;
  bool active_ = false;
  bool printed_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace inasim
