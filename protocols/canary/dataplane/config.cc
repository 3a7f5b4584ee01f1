#include "protocols/canary/dataplane/config.h"

#include "p4model/common/address_text.h"
#include "p4model/common/config_reader.h"
#include "protocols/canary/dataplane/keys.h"

#include "common/json_text.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <set>
#include <stdexcept>

namespace inasim::p4::canary {

namespace {
[[noreturn]] void Fail(const std::string& m) { throw std::invalid_argument("canary config: " + m); }

uint32_t BitsFor(uint32_t n) {  // bits needed to hold 0..n-1
  uint32_t b = 0;
  while ((uint64_t{1} << b) < n) ++b;
  return b;
}

// `p` against a table of `table_size` descriptors and the shares in parts[0 .. earlier).
void CheckPartition(const TablePartition& p, uint32_t table_size, const std::vector<TablePartition>& parts,
                    size_t earlier) {
  const std::string who = "partitions: application " + std::to_string(p.application_id);
  if (p.size == 0 || (p.size & (p.size - 1)) != 0)
    Fail(who + ": size must be a power of two, got " + std::to_string(p.size));
  if (uint64_t{p.base} + p.size > table_size)
    Fail(who + ": descriptors " + std::to_string(p.base) + ".." + std::to_string(uint64_t{p.base} + p.size - 1) +
         " are outside the table (" + std::to_string(table_size) + ")");
  for (size_t i = 0; i < earlier; ++i) {
    const TablePartition& q = parts[i];
    if (q.application_id == p.application_id) Fail(who + ": has a share already");
    if (p.base < uint64_t{q.base} + q.size && q.base < uint64_t{p.base} + p.size)
      Fail(who + ": overlaps application " + std::to_string(q.application_id) + "'s share");
  }
}

}  // namespace

void CanaryConfig::Validate() const {
  if (num_ports == 0 || num_ports > kMaxPorts) Fail("num_ports must be in 1..64");
  if (num_elements == 0 || num_elements > 16384) Fail("num_elements must be in 1..16384");
  if (table_size == 0 || (table_size & (table_size - 1)) != 0) Fail("table_size must be a power of two");
  if (timeout_ps == 0) Fail("timeout must be > 0");
  if (timeout_mode == TimeoutMode::kClockScan) {
    if (clock_period_ps == 0) Fail("clock_period must be > 0");
    if (scan_entries_per_clock == 0 || table_size % scan_entries_per_clock != 0)
      Fail("scan_entries_per_clock must divide table_size");
  }
  if (multicast_shard_ports == 0 || multicast_shard_ports > 32) Fail("multicast_shard_ports must be in 1..32");
  const uint32_t shards = (num_ports + multicast_shard_ports - 1) / multicast_shard_ports;
  // A restoration packet names one shard group in the 32-bit children field.
  if (multicast_shard_ports + BitsFor(shards) > 32)
    Fail("multicast_shard_ports plus the shard index bits must fit 32 bits");
  if (multicast_groups_per_pass == 0) Fail("multicast_groups_per_pass must be > 0");
  for (size_t i = 0; i < partitions.size(); ++i) CheckPartition(partitions[i], table_size, partitions, i);
}

void CanaryConfig::ValidatePartition(const TablePartition& p) const {
  CheckPartition(p, table_size, partitions, partitions.size());
}


namespace {

using nlohmann::json;
using ConfigKeys = spec::Section<CanaryConfig>;

const std::set<std::string> kPartitionKeys = {"application_id", "base", "size"};

std::vector<TablePartition> PartitionsFromJson(const json& parts) {
  if (!parts.is_array()) Fail("partitions must be an array");
  std::vector<TablePartition> out;
  for (size_t i = 0; i < parts.size(); ++i) {
    const json& e = parts[i];
    const std::string path = "partitions[" + std::to_string(i) + "]";
    if (!e.is_object()) Fail(path + ": must be an object");
    util::CheckKnownKeys(e, kPartitionKeys, path);
    if (!e.contains("application_id") || !e.contains("size"))
      Fail("partitions: each entry needs application_id and size");
    out.push_back({util::UnsignedField<uint8_t>(e, "application_id", path, 0),
                   util::UnsignedField<uint32_t>(e, "base", path, 0),
                   util::UnsignedField<uint32_t>(e, "size", path, 0)});
  }
  return out;
}

json PartitionsSchema() {
  return {{"type", "array"},
          {"items", {{"type", "object"},
                     {"required", {"application_id", "size"}},
                     {"additionalProperties", false},
                     {"properties", {{"application_id", {{"type", "integer"}, {"minimum", 0}, {"maximum", 255}}},
                                     {"base", {{"type", "integer"}, {"minimum", 0}}},
                                     {"size", {{"type", "integer"}, {"minimum", 1}}}}}}}};
}

/// The switch's own address and ports (what the control plane installs on it).
ConfigKeys& DeclareSwitch(ConfigKeys& k) {
  k.U16("switch_address", &CanaryConfig::switch_address, 0, 0, 65535, "",
        "This switch's address in collided and restoration packets (§3.2.1, §4.1).");
  Ipv4Key(k, "switch_ip", &CanaryConfig::switch_ip, false, "Source address of the aggregates it originates.");
  MacKey(k, "switch_mac", &CanaryConfig::switch_mac, false, "Source MAC of the aggregates it originates.");
  return k.U32("num_ports", &CanaryConfig::num_ports, 64, 1, kMaxPorts, "ports", "Switch ports 0 .. num_ports - 1.")
      .U16("udp_port", &CanaryConfig::udp_port, kCanaryUdpPort, 0, 65535, "", "UDP port that marks a Canary packet.");
}

const ConfigKeys& Keys() {
  static const ConfigKeys section = [] {
    ConfigKeys k("", "inasim-p4 replay canary --config");
    DeclareSwitch(k);
    // The keys a scenario's workload.canary has too: protocols/canary/dataplane/keys.h.
    keys::ElementsPerPacket(k, &CanaryConfig::num_elements);
    keys::Table(k, &CanaryConfig::table_size, &CanaryConfig::scan_entries_per_clock);
    keys::IndexHash(k, &CanaryConfig::index_hash, IndexHash::kCrc32, IndexHash::kDirect);
    HandKey<CanaryConfig>(k, "partitions",
                          {"array of objects", "", "`[]`", "`{\"application_id\", \"base\", \"size\"}` each",
                           "Static per-tenant shares of the table (§5.2.4): sizes powers of two, no overlaps."},
                          PartitionsSchema(),
                          [](const json& v, CanaryConfig& c) { c.partitions = PartitionsFromJson(v); });
    keys::Timeout(k, &CanaryConfig::timeout_ps, &CanaryConfig::timeout_mode, TimeoutMode::kExactTimer,
                  TimeoutMode::kClockScan);
    keys::ShardsAndLatency(k, &CanaryConfig::multicast_shard_ports, &CanaryConfig::pass_latency_ps)
        .U32("multicast_groups_per_pass", &CanaryConfig::multicast_groups_per_pass, 2, 1, 1u << 20, "groups",
             "Multicast groups one pipeline pass replicates to (Tofino: 2); more shards recirculate.");
    return k;
  }();
  return section;
}

}  // namespace

CanaryConfig CanaryConfig::FromJson(const std::string& text) {
  return ReadConfig(text, "canary", Keys(), &CanaryConfig::Validate);
}

}  // namespace inasim::p4::canary
