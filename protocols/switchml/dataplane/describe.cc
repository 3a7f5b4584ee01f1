#include "protocols/switchml/dataplane/describe.h"

#include "p4model/common/frame.h"
#include "protocols/switchml/dataplane/switchml_dataplane.h"

#include <cstddef>
#include <functional>
#include <string>
#include <type_traits>

namespace inasim::p4::switchml {
namespace {

using describe::EntryDesc;
using describe::FieldDesc;
using describe::HeaderDesc;
using describe::KeyDesc;
using describe::KeyValue;
using describe::RegisterDesc;
using describe::TableDesc;

// --- header layouts, read off the model's ingress parser ---------------------

// Where each header starts in the probe frame (Ethernet, IPv4, UDP, SwitchML,
// exponents, d0), and the frame: IPv4/UDP to port 0xbee0 with 256 data bytes,
// every other field zero, the smallest frame IngressParser takes as SwitchML.
constexpr size_t kEthAt = 0, kIpAt = kEthAt + kEthernetHBytes, kUdpAt = kIpAt + kIpv4HBytes,
                 kSmlAt = kUdpAt + kUdpHBytes, kExpAt = kSmlAt + kSwitchmlHBytes, kDataAt = kExpAt + kExponentsHBytes;
std::vector<uint8_t> ProbeFrame() {
  std::vector<uint8_t> f(kDataAt + 2 * kDataHBytes, 0);
  f[kEthAt + 12] = 0x08;  // ether_type IPv4
  f[kIpAt] = 0x45;        // version 4, ihl 5
  f[kIpAt + 9] = 17;      // UDP
  f[kUdpAt + 2] = 0xbe;   // dst_port 0xbee0
  f[kUdpAt + 3] = 0xe0;
  return f;
}

uint64_t Mac(const mac_addr_t& m) {
  uint64_t v = 0;
  for (uint8_t x : m) v = v << 8 | x;
  return v;
}

/// Probes header `name` at byte `at` of the probe frame; `values` picks its fields out of the parsed stack.
HeaderDesc Probe(const char* name, size_t at, size_t bytes, const std::vector<describe::ProbeField>& fields,
                 const std::function<std::vector<uint64_t>(const header_t&)>& values) {
  const std::vector<uint8_t> base = ProbeFrame();
  return describe::ProbeLayout(name, fields, bytes * 8, [&](size_t bit) {
    std::vector<uint8_t> f = base;
    if (bit != SIZE_MAX) f[at + bit / 8] ^= static_cast<uint8_t>(0x80 >> (bit % 8));
    header_t hdr;
    ParseSwitchmlHeaders(f.data(), f.size(), hdr);
    return values(hdr);
  });
}

/// The fields of a pair register element, from the C++ type the model stores.
template <typename Pair>
std::vector<FieldDesc> PairElement() {
  using First = decltype(Pair::first);
  using Second = decltype(Pair::second);
  return {{"first", int(8 * sizeof(First)), 0, std::is_signed<First>::value},
          {"second", int(8 * sizeof(Second)), 0, std::is_signed<Second>::value}};
}

KeyValue Key(const Ternary& t) { return KeyValue{t.value & t.mask, t.mask}; }

const KeyDesc kPacketType{"ig_md.switchml_md.packet_type", "ternary", 4};

}  // namespace

const char* ActionName(UpdateAndCheckWorkerBitmap::Action a) {
  using A = UpdateAndCheckWorkerBitmap::Action;
  switch (a) {
    case A::update_worker_bitmap_set0_action: return "update_worker_bitmap_set0_action";
    case A::update_worker_bitmap_set1_action: return "update_worker_bitmap_set1_action";
    case A::drop: return "drop";
    case A::simulate_drop: return "simulate_drop";
    case A::NoAction: return "NoAction";
  }
  return "?";
}
const char* ActionName(WorkersCounter::Action a) {
  using A = WorkersCounter::Action;
  switch (a) {
    case A::single_worker_count_action: return "single_worker_count_action";
    case A::single_worker_read_action: return "single_worker_read_action";
    case A::count_workers_action: return "count_workers_action";
    case A::read_count_workers_action: return "read_count_workers_action";
    case A::NoAction: return "NoAction";
  }
  return "?";
}
const char* ActionName(Exponents::Action a) {
  using A = Exponents::Action;
  switch (a) {
    case A::write_read0_action: return "write_read0_action";
    case A::max_read0_action: return "max_read0_action";
    case A::read0_action: return "read0_action";
    case A::read1_action: return "read1_action";
    case A::NoAction: return "NoAction";
  }
  return "?";
}
const char* ActionName(Processor::Action a) {
  using A = Processor::Action;
  switch (a) {
    case A::write_read1_action: return "write_read1_action";
    case A::sum_read1_action: return "sum_read1_action";
    case A::read0_action: return "read0_action";
    case A::read1_action: return "read1_action";
    case A::NoAction: return "NoAction";
  }
  return "?";
}
const char* ActionName(NextStepSelector::Action a) {
  using A = NextStepSelector::Action;
  switch (a) {
    case A::recirculate_for_CONSUME1: return "recirculate_for_CONSUME1";
    case A::recirculate_for_CONSUME2_same_port_next_pipe: return "recirculate_for_CONSUME2_same_port_next_pipe";
    case A::recirculate_for_CONSUME3_same_port_next_pipe: return "recirculate_for_CONSUME3_same_port_next_pipe";
    case A::recirculate_for_HARVEST1: return "recirculate_for_HARVEST1";
    case A::recirculate_for_HARVEST2: return "recirculate_for_HARVEST2";
    case A::recirculate_for_HARVEST3: return "recirculate_for_HARVEST3";
    case A::recirculate_for_HARVEST4: return "recirculate_for_HARVEST4";
    case A::recirculate_for_HARVEST5: return "recirculate_for_HARVEST5";
    case A::recirculate_for_HARVEST6: return "recirculate_for_HARVEST6";
    case A::recirculate_for_HARVEST7: return "recirculate_for_HARVEST7";
    case A::finish_consume: return "finish_consume";
    case A::broadcast: return "broadcast";
    case A::retransmit: return "retransmit";
    case A::drop: return "drop";
  }
  return "?";
}

namespace {

/// The program constants and enums the model hard-codes (types.h, common/frame.h).
void DescribeConstants(describe::ModelDescription& d) {
  d.constants = {{"register_size", kRegisterSize},
                 {"num_slots", kNumSlots},
                 {"max_num_workers", kMaxNumWorkers},
                 {"null_level1_exclusion_id", kNullLevel1ExclusionId},
                 {"UDP_PORT_SWITCHML_BASE", kUdpPortSwitchmlBase},
                 {"UDP_PORT_SWITCHML_MASK", kUdpPortSwitchmlMask},
                 {"ETHERTYPE_IPV4", kEtherTypeIpv4}};
  // packet_type_t is 4 bits: the tables match it with mask 0xf (Type()).
  describe::EnumDesc t{"packet_type_t", 4};
  for (uint32_t v = 0; v < 16; ++v) t.members.emplace_back(PacketTypeName(static_cast<PacketType>(v)), v);
  d.enums.push_back(t);
  // packet_size_t is 3 bits (switchml_h.size, NextStepSelector's mask 0x7).
  d.enums.push_back({"packet_size_t", 3,
                     {{"IBV_MTU_128", static_cast<uint64_t>(PacketSize::IBV_MTU_128)},
                      {"IBV_MTU_256", static_cast<uint64_t>(PacketSize::IBV_MTU_256)},
                      {"IBV_MTU_512", static_cast<uint64_t>(PacketSize::IBV_MTU_512)},
                      {"IBV_MTU_1024", static_cast<uint64_t>(PacketSize::IBV_MTU_1024)}}});
  d.enums.push_back({"worker_type_t", 2,
                     {{"FORWARD_ONLY", static_cast<uint64_t>(WorkerType::FORWARD_ONLY)},
                      {"SWITCHML_UDP", static_cast<uint64_t>(WorkerType::SWITCHML_UDP)},
                      {"ROCEv2", static_cast<uint64_t>(WorkerType::ROCEv2)}}});
}

/// The headers' widths and offsets as the model's IngressParser reads them.
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/parsers.p4:23
void DescribeHeaders(describe::ModelDescription& d) {
  d.headers.push_back(Probe("ethernet_h", kEthAt, kEthernetHBytes, {{"dst_addr"}, {"src_addr"}, {"ether_type"}},
                            [](const header_t& h) -> std::vector<uint64_t> {
                              return {Mac(h.ethernet.dst_addr), Mac(h.ethernet.src_addr), h.ethernet.ether_type};
                            }));
  d.headers.push_back(Probe("ipv4_h", kIpAt, kIpv4HBytes,
                            {{"version"}, {"ihl"}, {"diffserv"}, {"total_len"}, {"identification"}, {"flags"},
                             {"frag_offset"}, {"ttl"}, {"protocol"}, {"hdr_checksum"}, {"src_addr"}, {"dst_addr"}},
                            [](const header_t& h) -> std::vector<uint64_t> {
                              const ipv4_h& v = h.ipv4;
                              return {v.version, v.ihl,      v.diffserv, v.total_len,    v.identification, v.flags,
                                      v.frag_offset, v.ttl, v.protocol, v.hdr_checksum, v.src_addr,       v.dst_addr};
                            }));
  d.headers.push_back(Probe("udp_h", kUdpAt, kUdpHBytes, {{"src_port"}, {"dst_port"}, {"length"}, {"checksum"}},
                            [](const header_t& h) -> std::vector<uint64_t> {
                              return {h.udp.src_port, h.udp.dst_port, h.udp.length, h.udp.checksum};
                            }));
  d.headers.push_back(Probe("switchml_h", kSmlAt, kSwitchmlHBytes,
                            {{"msg_type"}, {"unused"}, {"size"}, {"job_number"}, {"tsi"}, {"pool_index"}},
                            [](const header_t& h) -> std::vector<uint64_t> {
                              const switchml_h& s = h.switchml;
                              return {s.msg_type, s.unused, s.size, s.job_number, s.tsi, s.pool_index};
                            }));
  using E = decltype(exponents_h::e0);
  d.headers.push_back(Probe("exponents_h", kExpAt, kExponentsHBytes,
                            {{"e0", std::is_signed<E>::value}, {"e1", std::is_signed<E>::value}},
                            [](const header_t& h) -> std::vector<uint64_t> {
                              return {static_cast<uint8_t>(h.exponents.e0), static_cast<uint8_t>(h.exponents.e1)};
                            }));
  std::vector<describe::ProbeField> data;
  for (size_t i = 0; i < data_h{}.d.size(); ++i) data.push_back({(i < 10 ? "d0" : "d") + std::to_string(i)});
  d.headers.push_back(Probe("data_h", kDataAt, kDataHBytes, data, [](const header_t& h) {
    return std::vector<uint64_t>(h.d0.d.begin(), h.d0.d.end());
  }));
}

/// The registers, sizes from the model's Register objects (one per control that holds one).
void DescribeRegisters(describe::ModelDescription& d) {
  d.registers.push_back({"UpdateAndCheckWorkerBitmap", "worker_bitmap", PairElement<worker_bitmap_pair_t>(),
                         UpdateAndCheckWorkerBitmap{}.worker_bitmap.size()});
  d.registers.push_back({"WorkersCounter", "workers_count", PairElement<num_workers_pair_t>(),
                         WorkersCounter{}.workers_count.size()});
  d.registers.push_back({"Exponents", "exponents", PairElement<exponent_pair_t>(), Exponents{}.exponents.size()});
  // One instance's `values` (the model stores the 32 instances as one row per pool index, kRegisterSize rows).
  d.registers.push_back({"Processor", "values", PairElement<value_pair_t>(), kRegisterSize});
}

/// ReconstructWorkerBitmap's table reconstruct_worker_bitmap.
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/bitmap_checker.p4:20
TableDesc ReconstructWorkerBitmapTable() {
  // The model computes 1 << (worker_id & 0x1f); its entries are what that gives for each masked key.
  TableDesc t{"ReconstructWorkerBitmap", "reconstruct_worker_bitmap",
              {{"ig_md.switchml_md.worker_id", "ternary", 16}},
              {"reconstruct_worker_bitmap_from_worker_id"}};
  for (uint32_t id = 0; id < kMaxNumWorkers; ++id) {
    ingress_metadata_t md;
    md.switchml_md.worker_id = static_cast<uint16_t>(id);
    ReconstructWorkerBitmap::apply(md);
    t.entries.push_back({{{id, kMaxNumWorkers - 1}}, "reconstruct_worker_bitmap_from_worker_id", {md.worker_bitmap}});
  }
  return t;
}

/// UpdateAndCheckWorkerBitmap's table update_and_check_worker_bitmap.
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/bitmap_checker.p4:75
TableDesc UpdateAndCheckWorkerBitmapTable() {
  TableDesc t{"UpdateAndCheckWorkerBitmap", "update_and_check_worker_bitmap",
              {{"ig_md.switchml_md.pool_index", "ternary", 15}, kPacketType,
               {"ig_md.port_metadata.ingress_drop_probability", "ternary", 16}},
              {"update_worker_bitmap_set0_action", "update_worker_bitmap_set1_action", "drop", "simulate_drop",
               "NoAction"},
              "NoAction"};
  for (const auto& e : UpdateAndCheckWorkerBitmap::kEntries)
    t.entries.push_back({{Key(e.pool_index), Key(e.packet_type), Key(e.ingress_drop_probability)}, ActionName(e.action)});
  return t;
}

/// WorkersCounter's table count_workers.
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/workers_counter.p4:20
TableDesc WorkersCounterTable() {
  TableDesc t{"WorkersCounter", "count_workers",
              {{"ig_md.switchml_md.num_workers", "ternary", 8}, {"ig_md.switchml_md.map_result", "ternary", 32},
               kPacketType},
              {"single_worker_count_action", "single_worker_read_action", "count_workers_action",
               "read_count_workers_action", "NoAction"},
              "NoAction"};
  for (const auto& e : WorkersCounter::kEntries)
    t.entries.push_back({{Key(e.num_workers), Key(e.map_result), Key(e.packet_type)}, ActionName(e.action)});
  return t;
}

/// Exponents' table exponent_max.
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/exponents.p4:25
TableDesc ExponentsTable() {
  TableDesc t{"Exponents", "exponent_max",
              {{"ig_md.switchml_md.worker_bitmap_before", "ternary", 32},
               {"ig_md.switchml_md.map_result", "ternary", 32}, kPacketType},
              {"write_read0_action", "max_read0_action", "read0_action", "read1_action", "NoAction"},
              "NoAction"};
  for (const auto& e : Exponents::kEntries)
    t.entries.push_back({{Key(e.worker_bitmap_before), Key(e.map_result), Key(e.packet_type)}, ActionName(e.action)});
  return t;
}

/// Processor's table sum.
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/processor.p4:25
TableDesc ProcessorTable() {
  TableDesc t{"Processor", "sum",
              {{"switchml_md.worker_bitmap_before", "ternary", 32}, {"switchml_md.map_result", "ternary", 32},
               {"switchml_md.packet_type", "ternary", 4}},
              {"write_read1_action", "sum_read1_action", "read0_action", "read1_action", "NoAction"},
              "NoAction"};
  for (const auto& e : Processor::kEntries)
    t.entries.push_back({{Key(e.worker_bitmap_before), Key(e.map_result), Key(e.packet_type)}, ActionName(e.action)});
  return t;
}

/// NextStepSelector's table next_step, and where its controller entries are read.
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:24
TableDesc NextStepSelectorTable(std::vector<describe::ControllerEntriesDesc>& controller) {
  // Controller-installed (dev_root/controller/next_step_selector.py), folded pipe: all 1024 B entries.
  TableDesc t{"NextStepSelector", "next_step",
              {{"ig_md.switchml_md.packet_size", "ternary", 3}, {"ig_md.switchml_md.worker_id", "ternary", 16},
               kPacketType, {"ig_md.switchml_md.first_last_flag", "ternary", 8},
               {"ig_md.switchml_md.map_result", "ternary", 32}},
              {"recirculate_for_CONSUME1", "recirculate_for_CONSUME2_same_port_next_pipe",
               "recirculate_for_CONSUME3_same_port_next_pipe", "recirculate_for_HARVEST1", "recirculate_for_HARVEST2",
               "recirculate_for_HARVEST3", "recirculate_for_HARVEST4", "recirculate_for_HARVEST5",
               "recirculate_for_HARVEST6", "recirculate_for_HARVEST7", "finish_consume", "broadcast", "retransmit",
               "drop"},
              "drop"};
  t.controller_entries = true;
  // add_entry's encodings: None -> (0, 0); sizes mask 0x7, worker id 0xffff,
  // types 0xf, flag 0xff, bitmap result 0xffffffff.
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:237
  controller.push_back({"NextStepSelector.next_step", "dev_root/controller/next_step_selector.py",
                        {"dev_root/controller/common.py"}, "add_default_entries", {0x7, 0xffff, 0xf, 0xff, 0xffffffff}});
  const NextStepSelector nss(/*folded_pipe=*/true);
  for (const auto& e : nss.entries()) {
    EntryDesc ed{{Key(e.packet_size), Key(e.worker_id), Key(e.packet_type), Key(e.first_last_flag), Key(e.map_result)},
                 ActionName(e.action)};
    // Only the recirculate_for_CONSUME1 / HARVEST<n> actions take the port argument.
    const std::string a = ed.action;
    if (a == "recirculate_for_CONSUME1" || a.rfind("recirculate_for_HARVEST", 0) == 0) ed.args = {e.recirc_port};
    ed.priority = e.priority;
    t.entries.push_back(ed);
  }
  return t;
}

}  // namespace

describe::ModelDescription Describe() {
  describe::ModelDescription d;
  d.program = "switchml";
  d.upstream = "p4lang/p4app-switchML@b5c74a04fa66faa82acab154a4e21c8f76d913f2";
  d.main_file = "dev_root/p4/switchml.p4";
  d.controls = {"ReconstructWorkerBitmap", "UpdateAndCheckWorkerBitmap", "WorkersCounter", "Exponents", "Processor",
                "NextStepSelector"};

  DescribeConstants(d);
  DescribeHeaders(d);
  DescribeRegisters(d);
  // The tables, control by control in switchml.p4's order.
  d.tables = {ReconstructWorkerBitmapTable(), UpdateAndCheckWorkerBitmapTable(), WorkersCounterTable(),
              ExponentsTable(), ProcessorTable(), NextStepSelectorTable(d.controller_entries)};
  return d;
}

}  // namespace inasim::p4::switchml
