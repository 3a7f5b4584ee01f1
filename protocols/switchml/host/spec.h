// SwitchML's scenario section, workload.switchml (parsed by spec.cc).
#pragma once

#include "ina/scenario.h"

#include <cstdint>
#include <string>
#include <vector>

namespace inasim {

/// SwitchML workers (scenario `workload.switchml`); defaults are the client
/// library's (p4app-switchML@b5c74a04 dev_root/client_lib/src/configs).
enum class SwitchMLTimerMode : uint8_t {
  kPaper,     ///< Algorithm 4: one timer per outstanding packet, from its first send
  kUpstream,  ///< dpdk_worker_thread.cc as written (first batch: timer slot and packet id off by one)
};
/// The worker's host side (issue 28): the client library's DPDK backend as
/// it runs (lcores, bursts, the tx buffer and its drain, a cost per packet),
/// or the ideal host of the model before it (no cost, no batching, one thread).
/// Or its RDMA backend: RDMA UC writes over RoCEv2, one queue pair per message
/// in flight (docs/research/switchml-rdma.md).
enum class SwitchMLBackend : uint8_t { kDpdk, kIdeal, kRdma };
/// When the DPDK worker's retransmission timers fire: on the loop's empty
/// polls, at most once per timeout (the library), or each at its deadline.
enum class SwitchMLTimerCheck : uint8_t { kEmptyPoll, kDeadline };
/// Where the aggregation runs: the switches (SwitchML), or the paper's
/// parameter-server baseline on dedicated hosts or on the workers.
enum class SwitchMLPs : uint8_t { kNone, kDedicated, kColocated };
struct SwitchMLSpec {
  uint32_t elements_per_packet = 256;            ///< general.cfg packet_numel: 64 or 256
  uint32_t pool_size = 512;                      ///< max_outstanding_packets of the one worker thread
  uint64_t timeout_ps = 10'000'000'000ULL;       ///< general.cfg timeout = 10 ms
  uint64_t timeout_threshold = 100;              ///< timeouts before the timeout doubles
  uint64_t timeout_threshold_increment = 100;
  SwitchMLTimerMode timer_mode = SwitchMLTimerMode::kPaper;
  bool vcl = true;                               ///< quantize as the VCL (vector) build does
  uint16_t harvest3_port = 320;                  ///< 1024 B HARVEST3 recirculation port (448 = upstream as written)
  uint16_t worker_udp_port = 4000;               ///< dpdk.cfg worker_port
  uint64_t pass_latency_ps = 520'000;            ///< per pipeline pass (paper: ~520 ns)
  std::vector<uint64_t> tensors;                 ///< bytes of each tensor of an iteration (empty: workload.bytes)
  uint32_t warmup_tensors = 0;                   ///< left out of the summary means
  uint64_t timeline_bin_ps = 0;                  ///< worker 0's packets sent per bin (0 = off)
  SwitchMLBackend backend = SwitchMLBackend::kDpdk;
  uint32_t worker_threads = 0;                   ///< lcores per worker; 0: 1 up to 10 Gb/s, else 8 (paper :711, :424)
  uint32_t burst_rx = 32, burst_tx = 32;         ///< paper :711 "batched in groups of 32" (dpdk.cfg: 64)
  uint64_t tx_drain_ps = 10'000'000;             ///< dpdk.cfg bulk_drain_tx_us = 10
  double core_gbps = 11.25;                      ///< wire Gb/s one lcore processes (see spec.cc)
  SwitchMLTimerCheck timer_check = SwitchMLTimerCheck::kDeadline;  ///< the paper's 1 ms; empty_poll: the library's loop
  uint32_t rdma_message_packets = 16;            ///< "generally 16 packets per message" (:432; rdma.cfg: 4)
  uint64_t rdma_verbs_op_ps = 100'000;           ///< CPU per verbs call: perftest's "post_send ~ 10 Mpps"
  uint64_t rdma_nic_tx_ps = 1'399'000;           ///< two PCIe reads: the WQE (546 ns) and 1 KiB of data (853 ns)
  uint64_t rdma_nic_rx_ps = 387'000;             ///< half a PCIe write-then-read (773 ns)
  SwitchMLPs ps = SwitchMLPs::kNone;
  uint32_t ps_cores = 8;                         ///< "each using 8 cores" (switchml-nsdi21.txt:458)
};

}  // namespace inasim
