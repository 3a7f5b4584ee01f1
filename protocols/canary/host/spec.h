// Canary's scenario section, workload.canary, and workload.send_noise, which
// static trees read too (parsed by spec.cc).
#pragma once

#include "common/spec_fields.h"
#include "ina/scenario.h"

#include <cstdint>
#include <vector>

namespace inasim {

/// Canary hosts and switches (scenario `workload.canary`; canary-fgcs24 §3-§5).
enum class CanaryTimeoutMode : uint8_t { kExact, kClockScan };
struct CanarySpec {
  uint32_t elements_per_packet = 256;          ///< k (§5.1: 256 in the simulations)
  uint64_t timeout_ps = 1'000'000;             ///< switch timeout t (§5.2.5: 1..3 us)
  CanaryTimeoutMode timeout_mode = CanaryTimeoutMode::kExact;  ///< §4.3
  uint64_t clock_period_ps = 10'000;           ///< clock_scan: packet-generator period
  uint32_t scan_entries_per_clock = 1;         ///< clock_scan: entries checked per clock packet
  uint32_t table_size = 32768;                 ///< descriptors per switch (§5.1: 32K)
  bool direct_index = false;                   ///< id -> entry without hashing (§3.2.1)
  /// table_partition "per_job": each job's application id gets its own
  /// 1/jobs of the table (a power of two), as §5.2.4 runs concurrent jobs.
  bool partition_per_job = false;
  uint32_t multicast_shard_ports = 16;         ///< §4.2
  uint64_t pass_latency_ps = 520'000;          ///< per switch pipeline pass
  uint32_t window_blocks = 1024;               ///< outstanding blocks per host (above the BDP with timeouts)
  uint32_t nic_queue_bytes = 8192;             ///< host's reduce packets queued in its NIC at most (0: no limit)
  uint64_t retransmit_timeout_ps = 500'000'000;  ///< host per-block timer (§3.3)
  double retransmit_timeout_rtts = 0;          ///< > 0: the timer in host-leader round trips (§6), not the above
  uint32_t max_failures = 3;                   ///< re-issues before host-based reduction (§3.3)
  uint32_t application_id = 1;                 ///< high 8 bits of every block id (§3.4)
  /// Tests only (not a scenario key): leaders in this rank order instead of
  /// the default (racks interleaved).
  std::vector<uint32_t> leader_order;
};

/// Host noise on the reduce path (scenario `workload.send_noise`; canary-fgcs24
/// §5.2.5, Fig. 11): each reduce packet a host sends waits `delay_ps` before it
/// reaches the socket with probability `probability`, drawn from the host's
/// own seeded stream. canary and static_tree only.
struct SendNoiseSpec {
  double probability = 0;
  uint64_t delay_ps = 1'000'000;
};

namespace protocols::canary {

/// workload.send_noise (canary-fgcs24 §5.2.5, Fig. 11): read by canary and static_tree.
void ParseSendNoise(spec::Reader& w, Scenario& s);
/// Its declaration (one docs table, one schema entry, whoever reads it).
const spec::Section<SendNoiseSpec>& SendNoiseSection();

}  // namespace protocols::canary

}  // namespace inasim
