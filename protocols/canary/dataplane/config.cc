#include "protocols/canary/dataplane/config.h"

#include "p4model/common/address_text.h"

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

mac_addr_t ParseMac(const std::string& s) {
  mac_addr_t m{};
  if (!ParseMacText(s, m)) Fail("bad MAC address '" + s + "'");
  return m;
}

uint32_t ParseIpv4(const std::string& s) {
  uint32_t ip = 0;
  if (!ParseIpv4Text(s, ip)) Fail("bad IPv4 address '" + s + "'");
  return ip;
}

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

const std::set<std::string> kConfigKeys = {
    "switch_address",  "switch_ip",       "switch_mac",   "num_ports",
    "udp_port",        "num_elements",    "table_size",   "index_hash",      "partitions",
    "timeout_ns",      "timeout_mode",    "clock_period_ns", "scan_entries_per_clock",
    "multicast_shard_ports", "multicast_groups_per_pass", "pass_latency_ns"};
const std::set<std::string> kPartitionKeys = {"application_id", "base", "size"};
// Times in ns become picoseconds: at most 1e9 ns (1 s), far from overflowing.
constexpr uint64_t kMaxNs = 1'000'000'000;

std::vector<TablePartition> PartitionsFromJson(const nlohmann::json& parts) {
  if (!parts.is_array()) Fail("partitions must be an array");
  std::vector<TablePartition> out;
  for (size_t i = 0; i < parts.size(); ++i) {
    const nlohmann::json& e = parts[i];
    const std::string path = "partitions[" + std::to_string(i) + "]";
    if (!e.is_object()) Fail("partitions: each entry must be an object");
    util::CheckKnownKeys(e, kPartitionKeys, path);
    if (!e.contains("application_id") || !e.contains("size"))
      Fail("partitions: each entry needs application_id and size");
    out.push_back({util::UnsignedField<uint8_t>(e, "application_id", path, 0),
                   util::UnsignedField<uint32_t>(e, "base", path, 0),
                   util::UnsignedField<uint32_t>(e, "size", path, 0)});
  }
  return out;
}

void ReadConfigKeys(const nlohmann::json& j, CanaryConfig& c) {
  using util::UnsignedField;
  util::CheckKnownKeys(j, kConfigKeys, "");
  c.switch_address = UnsignedField<uint16_t>(j, "switch_address", "", c.switch_address);
  if (j.contains("switch_ip")) c.switch_ip = ParseIpv4(util::StringField(j, "switch_ip", ""));
  if (j.contains("switch_mac")) c.switch_mac = ParseMac(util::StringField(j, "switch_mac", ""));
  c.num_ports = UnsignedField<uint32_t>(j, "num_ports", "", c.num_ports);
  c.udp_port = UnsignedField<uint16_t>(j, "udp_port", "", c.udp_port);
  c.num_elements = UnsignedField<uint32_t>(j, "num_elements", "", c.num_elements);
  c.table_size = UnsignedField<uint32_t>(j, "table_size", "", c.table_size);
  const std::string hash = util::StringField(j, "index_hash", "", "crc32");
  if (hash == "crc32") c.index_hash = IndexHash::kCrc32;
  else if (hash == "direct") c.index_hash = IndexHash::kDirect;
  else Fail("index_hash must be \"crc32\" or \"direct\"");
  if (j.contains("partitions")) c.partitions = PartitionsFromJson(j.at("partitions"));
  c.timeout_ps = UnsignedField<uint64_t>(j, "timeout_ns", "", c.timeout_ps / 1000, 0, kMaxNs) * 1000;
  const std::string mode = util::StringField(j, "timeout_mode", "", "exact");
  if (mode == "exact") c.timeout_mode = TimeoutMode::kExactTimer;
  else if (mode == "clock_scan") c.timeout_mode = TimeoutMode::kClockScan;
  else Fail("timeout_mode must be \"exact\" or \"clock_scan\"");
  c.clock_period_ps = UnsignedField<uint64_t>(j, "clock_period_ns", "", c.clock_period_ps / 1000, 0, kMaxNs) * 1000;
  c.scan_entries_per_clock = UnsignedField<uint32_t>(j, "scan_entries_per_clock", "", c.scan_entries_per_clock);
  c.multicast_shard_ports = UnsignedField<uint32_t>(j, "multicast_shard_ports", "", c.multicast_shard_ports);
  c.multicast_groups_per_pass =
      UnsignedField<uint32_t>(j, "multicast_groups_per_pass", "", c.multicast_groups_per_pass);
  c.pass_latency_ps = UnsignedField<uint64_t>(j, "pass_latency_ns", "", c.pass_latency_ps / 1000, 0, kMaxNs) * 1000;
}

}  // namespace

CanaryConfig CanaryConfig::FromJson(const std::string& text) {
  using nlohmann::json;
  CanaryConfig c;
  json j;
  try {
    j = util::ParseStrictJson(text, "");
  } catch (const json::exception& e) {
    Fail(std::string("bad JSON: ") + e.what());
  } catch (const std::invalid_argument& e) {
    Fail(e.what());
  }
  if (!j.is_object()) Fail("not a JSON object");
  try {
    ReadConfigKeys(j, c);
  } catch (const json::exception& e) {
    Fail(e.what());
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    if (m.rfind("canary config: ", 0) == 0) throw;
    Fail(m);
  }
  c.Validate();
  return c;
}

}  // namespace inasim::p4::canary
