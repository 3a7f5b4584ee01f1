// Canary's scenario keys: the workload.canary section of a scenario -> CanarySpec (and workload.send_noise)
// (docs/SCENARIO.md), through the registry (Protocol::parse).
#include "ina/collective-layout.h"
#include "ina/scenario-sections.h"
#include "common/spec_fields.h"
#include "protocols/canary/host/spec.h"
#include "protocols/canary/dataplane/keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace inasim::protocols::canary {

using nlohmann::json;
using spec::Reader;

namespace {

// Blocks of k elements a workload reduces in all (every collective of every iteration).
uint64_t BlocksOf(const Scenario& s, uint32_t k) {
  return CollectiveLayout(CollectiveElements(s.workload.schedule, s.workload.bytes), k, s.workload.iterations)
      .total_units();
}

// IPv4 20 + UDP 8 + Canary header 19 bytes, then 4k bytes of data, within the MTU.
uint32_t MaxK(const Scenario& s) { return (s.links.mtu_bytes - 20 - 8 - 19) / 4; }

using CanarySection = spec::Section<CanarySpec, Scenario>;

/// Job j uses application id application_id + j: all must fit 8 bits.
void CheckApplicationIds(const CanarySpec& cs, const Scenario& s, Reader& c) {
  if (cs.application_id + s.workload.jobs - 1 > 255)
    c.Fail("application_id", fmt::format("job j uses application id {} + j; {} jobs need ids up to {}, beyond the "
                                         "8-bit field (255)", cs.application_id, s.workload.jobs,
                                         cs.application_id + s.workload.jobs - 1));
}

// Ids are application id (8 bits) + a 24-bit sequence; every re-issue takes
// fresh ids, so all attempts of all blocks must fit the sequence.
void CheckIdSpace(const CanarySpec& cs, const Scenario& s, Reader& c) {
  const uint64_t ids = BlocksOf(s, cs.elements_per_packet) * (uint64_t{cs.max_failures} + 1);
  if (ids > (1u << 24))
    c.Fail("max_failures", fmt::format("{} blocks x {} attempts need {} ids; the 24-bit sequence of a block id holds "
                                       "16,777,216 (fewer iterations, bytes or max_failures, or more elements_per_packet)",
                                       BlocksOf(s, cs.elements_per_packet), cs.max_failures + 1, ids));
}

CanarySection& DeclareTable(CanarySection& c) {
  p4::canary::keys::Table(c, &CanarySpec::table_size, &CanarySpec::scan_entries_per_clock);
  p4::canary::keys::IndexHash(c, &CanarySpec::direct_index, false, true);
  return c
      .Enum("table_partition", &CanarySpec::partition_per_job, "shared", {{"shared", false}, {"per_job", true}},
            "With `workload.jobs` > 1: `shared`, every job's ids hash into the whole table (collisions between jobs "
            "possible); `per_job`, job j's application id gets descriptors j·s .. j·s+s−1 on every switch, s = "
            "`table_size` / `jobs` rounded down to a power of two, and its index is the share's base plus the hash's "
            "(or id's) low log2(s) bits (§5.2.4: \"statically partition the switch resources across the tenants ... "
            "we adopt a similar approach also in CANARY\"; the switch's `tenant_partition` table, "
            "`protocols/canary/dataplane/README.md`). With `index_hash` `\"direct\"` and `window_blocks` <= s no two "
            "blocks ever collide. Results echo `table_partition` and `table_share` (s). The Fig. 10 scenarios use "
            "`per_job` + `direct`.")
      .AllowedNote("`per_job` needs `jobs` <= `table_size`")
      .CheckWithContext([](const CanarySpec& cs, const Scenario& s, Reader& r) {
        if (cs.partition_per_job && s.workload.jobs > cs.table_size)
          r.Fail("table_partition", fmt::format("per_job needs a descriptor per job: {} jobs, table_size {}",
                                                s.workload.jobs, cs.table_size));
      });
}

// The keys shared with inasim-p4's replay config are declared in
// protocols/canary/dataplane/keys.h; the host's own follow them.
const CanarySection& Canary() {
  static const CanarySection section = [] {
    CanarySection c("workload.canary", "Canary switches and hosts (canary-fgcs24)");
    p4::canary::keys::ElementsPerPacket(c, &CanarySpec::elements_per_packet)
        .MaxFrom([](const Scenario& s) -> uint64_t { return MaxK(s); }, "(mtu - 47) / 4")
        .DefaultFrom([](const CanarySpec&, const Scenario& s) { return std::min<uint32_t>(256, MaxK(s)); },
                     "`256` (the bound if lower)");
    p4::canary::keys::Timeout(c, &CanarySpec::timeout_ps, &CanarySpec::timeout_mode, CanaryTimeoutMode::kExact,
                              CanaryTimeoutMode::kClockScan);
    DeclareTable(c);
    p4::canary::keys::ShardsAndLatency(c, &CanarySpec::multicast_shard_ports, &CanarySpec::pass_latency_ps)
        .U32("window_blocks", &CanarySpec::window_blocks, 1024, 1, 1u << 20, "blocks",
             "Blocks a host has outstanding (issued, final sum not yet held). Must cover the bandwidth-delay product "
             "of a block's round trip, timeouts included (§3.2.2 \"the bandwidth-delay product bounds the number of "
             "in-flight blocks\"): with 256 a 100 Gb/s host waits for results and hosts drift apart by more than the "
             "timeout, which turns aggregates into stragglers.")
        .U32("nic_queue_bytes", &CanarySpec::nic_queue_bytes, 8192, 0, 1u << 30, "bytes",
             "The most bytes of a host's reduce packets its NIC queue holds; further issued blocks wait in the host "
             "(results: `hosts.nic_held_blocks`). The leader's broadcast and restoration packets are never held, so "
             "they queue behind at most this much instead of the host's whole window (the leader's turnaround r ~ 1 "
             "us of §3.2.2). `0`: no limit, every issued block goes straight into the NIC FIFO.")
        .TimePs("retransmit_timeout_us", &CanarySpec::retransmit_timeout_ps, 500, 0.001, 1e9, spec::TimeUnit::kUs,
                "Per-block host timer (§3.3): on expiry a retransmission request goes to the leader, and again every "
                "period.")
        .Num("retransmit_timeout_rtts", &CanarySpec::retransmit_timeout_rtts, 0, 0, 1e6, "round trips",
             "If above 0, the per-block timer in round trips instead of `retransmit_timeout_us`: this many times the "
             "longest idle round trip of a block between a host and a leader (a reduce packet out and a result "
             "back, one pipeline pass per switch, no aggregation wait; results: `leader_rtt_s`). §6 "
             "\"Retransmission delays\" assumes 2, and bounds a lost packet's re-issue by 3 round trips.")
        .U32("max_failures", &CanarySpec::max_failures, 3, 0, 100, "",
             "Failure broadcasts (re-issues under a new id) before a block falls back to host-based reduction "
             "(§3.3). All attempts of all blocks must fit the 24-bit id sequence: blocks x iterations x "
             "(max_failures + 1) <= 2^24.")
        .U32("application_id", &CanarySpec::application_id, 1, 0, 255, "", "High 8 bits of every block id (§3.4).")
        .CheckWithContext(CheckApplicationIds)
        .CheckWithContext(CheckIdSpace);
    return c;
  }();
  return section;
}

}  // namespace

// canary-fgcs24 §5.2.5: "every time a host sends a packet, it has a given
// probability (noise probability) of delaying the transmission by 1 microsecond".
const spec::Section<SendNoiseSpec>& SendNoiseSection() {
  static const auto section =
      spec::Section<SendNoiseSpec>("workload.send_noise", "Host noise on the reduce path (canary-fgcs24 §5.2.5)")
          .Num("probability", &SendNoiseSpec::probability, 0, 0, 1, "probability",
               "Chance that a reduce packet is held back.")
          .TimePs("delay_us", &SendNoiseSpec::delay_ps, 1, 0, 1e6, spec::TimeUnit::kUs, "How long it is held back.");
  return section;
}

void ParseSendNoise(Reader& w, Scenario& s) {
  SendNoiseSection().ParseObject(w, "send_noise", s.workload.spec<SendNoiseSpec>());
}

void ParseWorkload(Reader& w, Scenario& s) {
  ParseSendNoise(w, s);
  Canary().ParseObject(w, "canary", s.workload.spec<CanarySpec>(), s);
}

std::vector<const spec::Doc*> WorkloadSections() { return {&Canary(), &SendNoiseSection()}; }

}  // namespace inasim::protocols::canary
