// One DPDK lcore of a SwitchML worker, as the client library's I/O loop runs
// it (p4lang/p4app-switchML@b5c74a04:dev_root/client_lib/src/backends/dpdk/
// dpdk_worker_thread.cc:274-389; docs/research/switchml-dpdk-threads.md §3):
//
//   loop: n = rx_burst(queue, burst_rx)
//         n == 0 (an empty poll): if now - prev > drain: flush the tx buffer,
//                                 prev = now (:282-288)
//         else for each packet: process it (its cost on this core), which may
//              put the next packet into the tx buffer; a full buffer
//              (burst_tx packets) goes out at once and sets prev to the time
//              of the last empty poll (:368-372, the stale cur_tsc)
//
// Exact at packet granularity: a packet's effects happen when the core has
// spent its cost on it, packets wait in the RX ring while the core is busy,
// and the drain grid runs on while the core spins idle (its points are
// computed, not simulated). The first batch and retransmissions bypass the
// buffer (rte_eth_tx_burst, :261, dpdk_worker_thread_utils.inc:246).
//
// Timers (SetTimerManager): the loop runs rte_timer_manage only on an empty
// poll, and only once more than the timer period (timer_cycles_) has passed
// since the last run (:292-296): a timer fires at the first such run at or
// after its deadline, while the core spins idle on the grid last + k (T + 1),
// after a burst at the burst's end.
// `ideal`: no cost and no buffer: every packet is handled on arrival and
// every send leaves at once (the model before issue 28).
#pragma once

#include "ina/host-endpoint.h"
#include "p4model/common/frame.h"

#include "ns3/event-id.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

namespace inasim {

struct DpdkLcoreConfig {
  bool ideal = false;
  uint32_t burst_rx = 32;       ///< packets per rte_eth_rx_burst
  uint32_t burst_tx = 32;       ///< the tx buffer's size: it flushes itself when full
  uint64_t drain_ps = 10'000'000;  ///< bulk_drain_tx_us
  double core_bps = 11.25e9;    ///< wire bits per second one core processes
  uint32_t wire_overhead_bytes = 24;  ///< FCS, preamble, gap: what a packet's cost counts beyond its frame
  uint32_t rx_ring = 1024;      ///< RX descriptors; a packet arriving to a full ring is lost
  /// Bits a datagram of `payload_bytes` (its UDP payload) costs a core: its
  /// Ethernet/IPv4/UDP frame plus the wire overhead; divided by core_bps it is
  /// the time the core spends on it.
  double PacketBits(uint32_t payload_bytes) const {
    return (payload_bytes + p4::kEthernetBytes + p4::kIpv4MinBytes + p4::kUdpBytes + wire_overhead_bytes) * 8.0;
  }
};

/// Counters of one lcore (summed over a host's lcores in the report).
struct DpdkLcoreCounters {
  uint64_t bursts = 0;
  uint64_t packets = 0;
  uint64_t busy_ps = 0;
  uint64_t drain_flushes = 0;  ///< flushes by the drain timer that sent something
  uint64_t full_flushes = 0;   ///< flushes of a full buffer
  uint64_t ring_drops = 0;
  uint64_t max_ring = 0;
  /// Sums another lcore's counters in (max_ring: the larger).
  DpdkLcoreCounters& operator+=(const DpdkLcoreCounters& c) {
    bursts += c.bursts;
    packets += c.packets;
    busy_ps += c.busy_ps;
    drain_flushes += c.drain_flushes;
    full_flushes += c.full_flushes;
    ring_drops += c.ring_drops;
    max_ring = max_ring > c.max_ring ? max_ring : c.max_ring;
    return *this;
  }
};

class DpdkLcore {
 public:
  using Process = std::function<void(const uint8_t* payload, uint32_t len)>;

  void Configure(const DpdkLcoreConfig& config, HostEndpoint* endpoint, Process process);
  /// The NIC put a datagram for this lcore's queue in its RX ring.
  void OnRx(const uint8_t* payload, uint32_t len);
  /// rte_eth_tx_buffer: queued, out when the buffer is full or drained.
  void Buffer(uint32_t dst_ip, uint16_t dst_port, const uint8_t* payload, uint32_t len);
  /// rte_eth_tx_burst: straight to the NIC.
  void SendNow(uint32_t dst_ip, uint16_t dst_port, const uint8_t* payload, uint32_t len);
  const DpdkLcoreCounters& counters() const { return counters_; }
  void Cancel();

  /// rte_timer_manage's work: the owner fires its timers due by `now`.
  using TimerManager = std::function<void(uint64_t now_ps)>;
  void SetTimerManager(TimerManager manage) { manage_timers_ = std::move(manage); }
  /// timer_cycles_: the least time between two runs of the manager.
  void SetTimerPeriod(uint64_t period_ps) { timer_period_ps_ = period_ps; }
  /// The owner's earliest timer deadline (UINT64_MAX: none): the manager
  /// runs at the first empty poll that may run it at or after it.
  void WantTimers(uint64_t deadline_ps);

 private:
  struct Datagram {
    uint32_t dst_ip = 0;
    uint16_t dst_port = 0;
    std::vector<uint8_t> bytes;
  };
  uint64_t CostPs(uint32_t payload_len) const;
  void StartBurst();
  void ProcessNext();
  void EmptyPoll(uint64_t now);
  void AdvanceIdleGrid(uint64_t now);
  void Flush();
  void OnWake();
  void ManageTimers(uint64_t now);
  void ScheduleTimerWake(uint64_t now);
  void OnTimerWake();
  std::vector<uint8_t> TakeBuffer();

  DpdkLcoreConfig config_;
  HostEndpoint* endpoint_ = nullptr;
  Process process_;
  std::deque<std::vector<uint8_t>> ring_;
  std::vector<Datagram> tx_;
  size_t tx_count_ = 0;
  std::vector<std::vector<uint8_t>> spare_;  ///< buffers to reuse (no allocation per packet once warm)
  std::vector<uint8_t> current_;
  bool busy_ = false;
  uint32_t burst_left_ = 0;
  uint64_t prev_ps_ = 0;        ///< prev_tsc: the last drain check that passed
  uint64_t last_empty_ps_ = 0;  ///< cur_tsc: the last empty poll
  uint64_t wake_ps_ = UINT64_MAX;
  ns3::EventId next_, wake_;
  DpdkLcoreCounters counters_;
  // The timer manager (timer_prev_tsc, timer_cycles_ and the armed timers' earliest deadline).
  TimerManager manage_timers_;
  uint64_t timer_prev_ps_ = 0;
  uint64_t timer_period_ps_ = 0;
  uint64_t timer_due_ps_ = UINT64_MAX;
  uint64_t timer_wake_ps_ = UINT64_MAX;
  ns3::EventId timer_wake_;
};

}  // namespace inasim
