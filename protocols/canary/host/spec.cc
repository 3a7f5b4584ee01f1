// Canary's scenario keys: the workload.canary section of a scenario -> CanarySpec (and workload.send_noise)
// (docs/SCENARIO.md), through the registry (Protocol::parse).
#include "ina/scenario-sections.h"
#include "protocols/canary/host/spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace inasim::protocols::canary {

using nlohmann::json;
using spec::Reader;

namespace {

// Blocks of k elements a workload reduces in all (every iteration).
uint64_t BlocksOf(const Scenario& s, uint32_t k) {
  return (s.workload.bytes / 4 + k - 1) / k * s.workload.iterations;
}

void ParseCanary(Reader& w, Scenario& s) {
  Reader c = w.Obj("canary");
  CanarySpec& cs = s.workload.spec<CanarySpec>();
  // IPv4 20 + UDP 8 + Canary header 19 bytes, then 4k bytes of data, within the MTU.
  const uint32_t max_k = (s.links.mtu_bytes - 20 - 8 - 19) / 4;
  cs.elements_per_packet = c.U32("elements_per_packet", std::min<uint32_t>(256, max_k), 1, max_k);
  cs.timeout_ps = c.TimePs("timeout_us", 1, 0.001, 1e6, kPsPerUs);
  cs.timeout_mode = c.Enum("timeout_mode", "exact", {"exact", "clock_scan"}) == "exact" ? CanaryTimeoutMode::kExact
                                                                                       : CanaryTimeoutMode::kClockScan;
  cs.clock_period_ps = c.TimePs("clock_period_ns", 10, 0.001, 1e9, kPsPerNs);
  cs.table_size = c.U32("table_size", 32768, 1, 1u << 24);
  if (cs.table_size & (cs.table_size - 1))
    c.Fail("table_size", fmt::format("must be a power of two (the index is the id's low bits), got {}", cs.table_size));
  cs.scan_entries_per_clock = c.U32("scan_entries_per_clock", 1, 1, cs.table_size);
  if (cs.table_size % cs.scan_entries_per_clock)
    c.Fail("scan_entries_per_clock", fmt::format("must divide table_size ({}), got {}", cs.table_size,
                                                 cs.scan_entries_per_clock));
  cs.direct_index = c.Enum("index_hash", "crc32", {"crc32", "direct"}) == "direct";
  cs.partition_per_job = c.Enum("table_partition", "shared", {"shared", "per_job"}) == "per_job";
  if (cs.partition_per_job && s.workload.jobs > cs.table_size)
    c.Fail("table_partition", fmt::format("per_job needs a descriptor per job: {} jobs, table_size {}",
                                          s.workload.jobs, cs.table_size));
  cs.multicast_shard_ports = c.U32("multicast_shard_ports", 16, 1, 31);
  cs.pass_latency_ps = c.TimePs("pass_latency_ns", 520, 0, 1e6, kPsPerNs);
  cs.window_blocks = c.U32("window_blocks", 1024, 1, 1u << 20);
  cs.nic_queue_bytes = c.U32("nic_queue_bytes", 8192, 0, 1u << 30);
  cs.retransmit_timeout_ps = c.TimePs("retransmit_timeout_us", 500, 0.001, 1e9, kPsPerUs);
  cs.max_failures = c.U32("max_failures", 3, 0, 100);
  cs.application_id = c.U32("application_id", 1, 0, 255);
  if (cs.application_id + s.workload.jobs - 1 > 255)
    c.Fail("application_id", fmt::format("job j uses application id {} + j; {} jobs need ids up to {}, beyond the "
                                         "8-bit field (255)", cs.application_id, s.workload.jobs,
                                         cs.application_id + s.workload.jobs - 1));
  // Ids are application id (8 bits) + a 24-bit sequence; every re-issue takes
  // fresh ids, so all attempts of all blocks must fit the sequence.
  const uint64_t ids = BlocksOf(s, cs.elements_per_packet) * (uint64_t{cs.max_failures} + 1);
  if (ids > (1u << 24))
    c.Fail("max_failures", fmt::format("{} blocks x {} attempts need {} ids; the 24-bit sequence of a block id holds "
                                       "16,777,216 (fewer iterations, bytes or max_failures, or more elements_per_packet)",
                                       BlocksOf(s, cs.elements_per_packet), cs.max_failures + 1, ids));
  c.Done();
}

}  // namespace

// canary-fgcs24 §5.2.5: "every time a host sends a packet, it has a given
// probability (noise probability) of delaying the transmission by 1 microsecond".
void ParseSendNoise(Reader& w, Scenario& s) {
  Reader n = w.Obj("send_noise");
  s.workload.spec<SendNoiseSpec>().probability = n.Num("probability", 0, 0, 1);
  s.workload.spec<SendNoiseSpec>().delay_ps = n.TimePs("delay_us", 1, 0, 1e6, kPsPerUs);
  n.Done();
}

void ParseWorkload(Reader& w, Scenario& s) {
  ParseSendNoise(w, s);
  ParseCanary(w, s);
}

}  // namespace inasim::protocols::canary
