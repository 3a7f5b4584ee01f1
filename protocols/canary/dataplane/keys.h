// The Canary keys a scenario's workload.canary section and an `inasim-p4
// replay canary --config` file share, declared once (key, unit, range, help,
// checks): protocols/canary/host/spec.cc and config.cc both call these on
// their own struct (whose enums differ, so the values are arguments).
#pragma once

#include "common/spec_fields.h"

#include <fmt/format.h>

#include <cstdint>

namespace inasim::p4::canary::keys {

/// elements_per_packet: k, int32 elements per packet; at most a 9216-byte MTU's worth.
template <class S>
S& ElementsPerPacket(S& s, uint32_t S::Struct::*m) {
  return s.U32("elements_per_packet", m, 256, 1, (9216 - 47) / 4, "elements",
               "k, int32 elements per packet (§5.1: 32 on the prototype, 256 in the simulations).");
}

/// timeout_us and timeout_mode: the switch timeout t and how it is detected (§3.1.1, §4.3).
template <class S, class E>
S& Timeout(S& s, uint64_t S::Struct::*timeout, E S::Struct::*mode, E exact, E clock_scan) {
  return s
      .TimePs("timeout_us", timeout, 1, 0.001, 1e6, spec::TimeUnit::kUs,
              "Switch timeout t: how long a descriptor gathers packets before its partial sum goes on (§3.1.1; "
              "§5.2.5 uses 1..3 us).")
      .Enum("timeout_mode", mode, "exact", {{"exact", exact}, {"clock_scan", clock_scan}},
            "`exact`: one timer per descriptor; `clock_scan`: the prototype's packet generator checks "
            "`scan_entries_per_clock` entries per clock packet (§4.3; a descriptor leaves up to one sweep later).")
      .TimePs("clock_period_ns", &S::Struct::clock_period_ps, 10, 0.001, 1e9, spec::TimeUnit::kNs,
              "`clock_scan`: clock packet period.");
}

/// table_size and scan_entries_per_clock: the descriptor table (§5.1: 32K) and its clock sweep.
template <class S>
S& Table(S& s, uint32_t S::Struct::*size, uint32_t S::Struct::*scan) {
  using T = typename S::Struct;
  return s
      .U32("table_size", size, 32768, 1, 1u << 24, "descriptors", "Descriptor entries per switch (§5.1: 32K).")
      .Allowed("a power of two, 1 .. 2^24")
      .Check([size](const T& t, spec::Reader& r) {
        if (t.*size & (t.*size - 1))
          r.Fail("table_size",
                 fmt::format("must be a power of two (the index is the id's low bits), got {}", t.*size));
      })
      .U32("scan_entries_per_clock", scan, 1, 1, 1u << 24, "entries", "`clock_scan`: entries each clock packet checks.")
      .MaxFrom(typename S::template From<uint64_t>([size](const T& t, const auto&) -> uint64_t { return t.*size; }),
               "table_size")
      .AllowedNote("divides it")
      .Check([size, scan](const T& t, spec::Reader& r) {
        if (t.*size % t.*scan)
          r.Fail("scan_entries_per_clock", fmt::format("must divide table_size ({}), got {}", t.*size, t.*scan));
      });
}

/// index_hash: the id to a table entry (§3.2.1).
template <class S, class E>
S& IndexHash(S& s, E S::Struct::*m, E crc32, E direct) {
  return s.Enum("index_hash", m, "crc32", {{"crc32", crc32}, {"direct", direct}},
                "Id to entry: CRC-32 of the id, or the id's low bits (§3.2.1 \"statically mapping ids\": no "
                "collisions while a window of ids fits the table).");
}

/// multicast_shard_ports and pass_latency_ns: the children bitmap's shards (§4.2) and the pipeline.
template <class S>
S& ShardsAndLatency(S& s, uint32_t S::Struct::*shard_ports, uint64_t S::Struct::*latency) {
  return s
      .U32("multicast_shard_ports", shard_ports, 16, 1, 31, "ports",
           "Ports per children-bitmap shard (§4.2; 16 = four shards of a 64-port switch).")
      .TimePs("pass_latency_ns", latency, 520, 0, 1e6, spec::TimeUnit::kNs, "Switch pipeline time per pass.");
}

}  // namespace inasim::p4::canary::keys
