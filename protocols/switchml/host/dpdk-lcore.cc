#include "protocols/switchml/host/dpdk-lcore.h"

#include "p4model/common/frame.h"

#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>

namespace inasim {

namespace {
uint64_t NowPs() { return static_cast<uint64_t>(ns3::Simulator::Now().GetPicoSeconds()); }
}  // namespace

void DpdkLcore::Configure(const DpdkLcoreConfig& config, HostEndpoint* endpoint, Process process) {
  config_ = config;
  endpoint_ = endpoint;
  process_ = std::move(process);
  tx_.resize(config_.burst_tx);
}

uint64_t DpdkLcore::CostPs(uint32_t payload_len) const {
  return static_cast<uint64_t>(std::llround(config_.PacketBits(payload_len) * 1e12 / config_.core_bps));
}

std::vector<uint8_t> DpdkLcore::TakeBuffer() {
  if (spare_.empty()) return {};
  std::vector<uint8_t> b = std::move(spare_.back());
  spare_.pop_back();
  return b;
}

void DpdkLcore::OnRx(const uint8_t* payload, uint32_t len) {
  if (config_.ideal) {
    process_(payload, len);
    return;
  }
  if (ring_.size() >= config_.rx_ring) {
    ++counters_.ring_drops;  // imissed: the NIC found no free descriptor
    return;
  }
  std::vector<uint8_t> b = TakeBuffer();
  b.assign(payload, payload + len);
  ring_.push_back(std::move(b));
  counters_.max_ring = std::max<uint64_t>(counters_.max_ring, ring_.size());
  if (busy_) return;
  // The spinning core polls it at once: its empty polls until now only ran
  // the drain grid on.
  AdvanceIdleGrid(NowPs());
  StartBurst();
}

void DpdkLcore::StartBurst() {
  busy_ = true;
  burst_left_ = static_cast<uint32_t>(std::min<size_t>(config_.burst_rx, ring_.size()));
  ++counters_.bursts;
  const uint64_t cost = CostPs(static_cast<uint32_t>(ring_.front().size()));
  counters_.busy_ps += cost;
  next_ = ns3::Simulator::Schedule(ns3::PicoSeconds(cost), &DpdkLcore::ProcessNext, this);
}

// The core has spent the packet's cost: its effects happen now.
void DpdkLcore::ProcessNext() {
  current_ = std::move(ring_.front());
  ring_.pop_front();
  --burst_left_;
  ++counters_.packets;
  process_(current_.data(), static_cast<uint32_t>(current_.size()));
  spare_.push_back(std::move(current_));
  const uint64_t now = NowPs();
  if (burst_left_ > 0) {
    const uint64_t cost = CostPs(static_cast<uint32_t>(ring_.front().size()));
    counters_.busy_ps += cost;
    next_ = ns3::Simulator::Schedule(ns3::PicoSeconds(cost), &DpdkLcore::ProcessNext, this);
    return;
  }
  // The next rx_burst: packets that came meanwhile, or an empty poll.
  if (!ring_.empty()) {
    StartBurst();
  } else {
    EmptyPoll(now);
  }
}

// dpdk_worker_thread.cc:282-288: on an empty poll, drain if more than
// drain_ps passed since the last drain (prev_tsc is set even when the buffer
// was empty), then spin.
void DpdkLcore::EmptyPoll(uint64_t now) {
  busy_ = false;
  last_empty_ps_ = now;
  if (now - prev_ps_ > config_.drain_ps) {
    counters_.drain_flushes += tx_count_ > 0;
    Flush();
    prev_ps_ = now;
  }
  ManageTimers(now);
  if (tx_count_ > 0) {
    // The first empty poll after prev + drain flushes it, unless packets come first.
    const uint64_t at = prev_ps_ + config_.drain_ps + 1;
    if (wake_ps_ != at) {
      wake_.Cancel();
      wake_ps_ = at;
      wake_ = ns3::Simulator::Schedule(ns3::PicoSeconds(at - now), &DpdkLcore::OnWake, this);
    }
  }
}

// dpdk_worker_thread.cc:292-296: on an empty poll, rte_timer_manage() once
// more than timer_cycles_ passed since its last run.
void DpdkLcore::ManageTimers(uint64_t now) {
  if (!manage_timers_) return;
  if (now - timer_prev_ps_ > timer_period_ps_) {
    timer_prev_ps_ = now;
    if (timer_due_ps_ <= now) {
      timer_due_ps_ = UINT64_MAX;
      manage_timers_(now);  // re-arms through WantTimers
    }
  }
  ScheduleTimerWake(now);
}

void DpdkLcore::WantTimers(uint64_t deadline_ps) {
  timer_due_ps_ = deadline_ps;
  if (!busy_) ScheduleTimerWake(NowPs());
}

// Idle, the core runs the manager on the grid timer_prev + k (T + 1): wake at
// the first grid point at or after the earliest deadline. Busy, the burst's
// end polls (and may run it).
void DpdkLcore::ScheduleTimerWake(uint64_t now) {
  if (busy_ || timer_due_ps_ == UINT64_MAX) return;
  const uint64_t step = timer_period_ps_ + 1;
  const uint64_t from = std::max(timer_due_ps_, now);
  const uint64_t k = from <= timer_prev_ps_ + step ? 1 : (from - timer_prev_ps_ + step - 1) / step;
  const uint64_t at = timer_prev_ps_ + k * step;
  if (timer_wake_ps_ == at && timer_wake_.IsRunning()) return;
  timer_wake_.Cancel();
  timer_wake_ps_ = at;
  timer_wake_ = ns3::Simulator::Schedule(ns3::PicoSeconds(at - now), &DpdkLcore::OnTimerWake, this);
}

void DpdkLcore::OnTimerWake() {
  timer_wake_ps_ = UINT64_MAX;
  if (busy_) return;  // the burst's end polls again
  EmptyPoll(NowPs());
}

void DpdkLcore::OnWake() {
  wake_ps_ = UINT64_MAX;
  if (busy_) return;  // the burst's end polls again
  EmptyPoll(NowPs());
}

// While idle the core polls without pause: each poll after prev + drain is a
// drain point (prev moves there), whether the buffer holds anything or not.
void DpdkLcore::AdvanceIdleGrid(uint64_t now) {
  if (manage_timers_) {
    // The manager ran on its grid meanwhile (its wakes fired every timer due).
    const uint64_t tstep = timer_period_ps_ + 1;
    if (now >= timer_prev_ps_ + tstep) timer_prev_ps_ += (now - timer_prev_ps_) / tstep * tstep;
    if (timer_due_ps_ <= timer_prev_ps_) {  // its grid point is now: its wake has not run yet
      timer_due_ps_ = UINT64_MAX;
      manage_timers_(now);
    }
  }
  const uint64_t step = config_.drain_ps + 1;
  if (now < prev_ps_ + step) {
    last_empty_ps_ = now;
    return;
  }
  if (tx_count_ > 0) {  // due at prev + step, which is now (a wake at the same instant)
    ++counters_.drain_flushes;
    Flush();
  }
  prev_ps_ += (now - prev_ps_) / step * step;
  last_empty_ps_ = now;
}

void DpdkLcore::Buffer(uint32_t dst_ip, uint16_t dst_port, const uint8_t* payload, uint32_t len) {
  if (config_.ideal) {
    endpoint_->SendTo(dst_ip, dst_port, payload, len);
    return;
  }
  Datagram& d = tx_[tx_count_++];
  d.dst_ip = dst_ip;
  d.dst_port = dst_port;
  d.bytes.assign(payload, payload + len);
  if (tx_count_ < config_.burst_tx) return;
  // rte_eth_tx_buffer flushed a full buffer; the loop then sets prev_tsc to
  // cur_tsc, the time of the last empty poll (:369-372).
  ++counters_.full_flushes;
  Flush();
  prev_ps_ = last_empty_ps_;
}

void DpdkLcore::Flush() {
  for (size_t i = 0; i < tx_count_; ++i)
    endpoint_->SendTo(tx_[i].dst_ip, tx_[i].dst_port, tx_[i].bytes.data(), static_cast<uint32_t>(tx_[i].bytes.size()));
  tx_count_ = 0;
}

void DpdkLcore::SendNow(uint32_t dst_ip, uint16_t dst_port, const uint8_t* payload, uint32_t len) {
  endpoint_->SendTo(dst_ip, dst_port, payload, len);
}

void DpdkLcore::Cancel() {
  next_.Cancel();
  wake_.Cancel();
  wake_ps_ = UINT64_MAX;
  timer_wake_.Cancel();
  timer_wake_ps_ = UINT64_MAX;
}

}  // namespace inasim
