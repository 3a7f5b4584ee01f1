// Progress of a run: simulated time, % done, events, ETA. It is an ordinary
// simulator event that re-arms itself; its interval in simulated time adapts
// so that it fires every 0.1-0.4 wall seconds. Its own events are counted and
// subtracted from the reported total, and it touches no model state, so
// results are identical with and without it.
//
// Two consumers: the stderr line of `inasim run` (redrawn every 0.5 s), and a
// caller's tick callback (Python: progress bars, and Ctrl-C, which a
// simulation running without the GIL would otherwise not see until it ends).
// A callback that returns false stops the simulation: interrupted() is true.
#pragma once

#include "ns3/simulator.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>

namespace inasim {

/// What a tick reports.
struct ProgressSnapshot {
  double sim_time_s = 0;  ///< simulated time now
  double fraction = 0;    ///< of the workload (or background, or time limit) done, 0..1
  uint64_t events = 0;    ///< simulator events executed so far
  double elapsed_s = 0;   ///< wall time since the simulation started
  double eta_s = 0;       ///< wall time left, extrapolated from fraction
};

/// Called on every tick; false stops the run.
using TickCallback = std::function<bool(const ProgressSnapshot&)>;

class ProgressReporter {
 public:
  ProgressReporter(std::function<double()> fraction, uint64_t max_sim_ps, bool print, TickCallback on_tick)
      : fraction_(std::move(fraction)), max_sim_ps_(max_sim_ps), print_(print), on_tick_(std::move(on_tick)) {}

  bool wanted() const { return print_ || on_tick_ != nullptr; }
  void Start() {
    active_ = true;
    start_ = last_tick_ = last_print_ = std::chrono::steady_clock::now();
    ns3::Simulator::Schedule(ns3::PicoSeconds(interval_ps_), &ProgressReporter::Tick, this);
  }
  void Finish() {
    if (active_ && printed_) std::fprintf(stderr, "\r\033[K");
    active_ = false;
  }
  uint64_t events() const { return events_; }
  bool interrupted() const { return interrupted_; }

 private:
  void Tick() {
    ++events_;
    if (!active_) return;
    const auto now = std::chrono::steady_clock::now();
    Adapt(std::chrono::duration<double>(now - last_tick_).count());
    last_tick_ = now;
    const ProgressSnapshot p = Snapshot(now);
    if (print_ && std::chrono::duration<double>(now - last_print_).count() >= 0.5) {
      last_print_ = now;
      Print(p);
    }
    if (on_tick_ && !on_tick_(p)) {
      interrupted_ = true;
      ns3::Simulator::Stop();
      return;
    }
    ns3::Simulator::Schedule(ns3::PicoSeconds(interval_ps_), &ProgressReporter::Tick, this);
  }
  /// Keeps the wall time between ticks within 0.1-0.4 s (Ctrl-C within 1 s).
  void Adapt(double since_s) {
    if (since_s < 0.1 && interval_ps_ < max_sim_ps_) interval_ps_ *= 2;
    if (since_s > 0.4 && interval_ps_ > 1000) interval_ps_ /= 2;
  }
  ProgressSnapshot Snapshot(std::chrono::steady_clock::time_point now) const {
    ProgressSnapshot p;
    p.fraction = fraction_();
    p.elapsed_s = std::chrono::duration<double>(now - start_).count();
    p.eta_s = p.fraction > 1e-9 ? p.elapsed_s * (1.0 - p.fraction) / p.fraction : 0.0;
    p.sim_time_s = static_cast<double>(ns3::Simulator::Now().GetPicoSeconds()) * 1e-12;
    p.events = ns3::Simulator::GetEventCount() - events_;
    return p;
  }
  void Print(const ProgressSnapshot& p) {
    std::fprintf(stderr, "\r\033[K[inasim] sim %.3f ms  %5.1f %%  %.2f M events  elapsed %.0f s  ETA %.0f s",
                 p.sim_time_s * 1e3, 100.0 * p.fraction, static_cast<double>(p.events) / 1e6, p.elapsed_s, p.eta_s);
    std::fflush(stderr);
    printed_ = true;
  }

  std::function<double()> fraction_;
  uint64_t max_sim_ps_;
  bool print_;
  TickCallback on_tick_;
  uint64_t interval_ps_ = 1'000'000;  // 1 us to start
  uint64_t events_ = 0;
  bool active_ = false;
  bool printed_ = false;
  bool interrupted_ = false;
  std::chrono::steady_clock::time_point start_, last_tick_, last_print_;
};

}  // namespace inasim
