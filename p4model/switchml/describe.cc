#include "p4model/switchml/describe.h"

#include <stdexcept>
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

/// A header whose field widths must add up to the model's byte size for it.
HeaderDesc Header(const char* name, std::vector<FieldDesc> fields, size_t model_bytes) {
  HeaderDesc h = describe::Layout(name, std::move(fields));
  int bits = 0;
  for (const FieldDesc& f : h.fields) bits += f.width;
  if (bits != static_cast<int>(model_bytes * 8))
    throw std::logic_error(std::string("switchml describe: ") + name + " fields add up to " + std::to_string(bits) +
                           " bits, the model parses " + std::to_string(model_bytes) + " bytes");
  return h;
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

describe::ModelDescription Describe() {
  describe::ModelDescription d;
  d.program = "switchml";
  d.upstream = "p4lang/p4app-switchML@b5c74a04fa66faa82acab154a4e21c8f76d913f2";
  d.main_file = "dev_root/p4/switchml.p4";
  d.controls = {"ReconstructWorkerBitmap", "UpdateAndCheckWorkerBitmap", "WorkersCounter", "Exponents", "Processor",
                "NextStepSelector"};

  // --- headers (the model's parser/deparser in switchml_dataplane.cc reads these layouts) ---
  d.headers.push_back(Header("ethernet_h", {{"dst_addr", 48}, {"src_addr", 48}, {"ether_type", 16}}, kEthernetHBytes));
  d.headers.push_back(Header("ipv4_h",
                             {{"version", 4}, {"ihl", 4}, {"diffserv", 8}, {"total_len", 16}, {"identification", 16},
                              {"flags", 3}, {"frag_offset", 13}, {"ttl", 8}, {"protocol", 8}, {"hdr_checksum", 16},
                              {"src_addr", 32}, {"dst_addr", 32}},
                             kIpv4HBytes));
  d.headers.push_back(
      Header("udp_h", {{"src_port", 16}, {"dst_port", 16}, {"length", 16}, {"checksum", 16}}, kUdpHBytes));
  d.headers.push_back(Header("switchml_h",
                             {{"msg_type", 4}, {"unused", 1}, {"size", 3}, {"job_number", 8}, {"tsi", 32},
                              {"pool_index", 16}},
                             kSwitchmlHBytes));
  using E = decltype(exponents_h::e0);
  d.headers.push_back(Header("exponents_h",
                             {{"e0", int(8 * sizeof(E)), 0, std::is_signed<E>::value},
                              {"e1", int(8 * sizeof(E)), 0, std::is_signed<E>::value}},
                             kExponentsHBytes));
  std::vector<FieldDesc> data;
  for (size_t i = 0; i < data_h{}.d.size(); ++i) {
    const std::string n = (i < 10 ? "d0" : "d") + std::to_string(i);
    data.push_back({n, int(8 * sizeof(data_h{}.d[0]))});
  }
  d.headers.push_back(Header("data_h", data, kDataHBytes));

  // --- registers (sizes from the model's Register objects) ---
  d.registers.push_back({"UpdateAndCheckWorkerBitmap", "worker_bitmap", PairElement<worker_bitmap_pair_t>(),
                         UpdateAndCheckWorkerBitmap{}.worker_bitmap.size()});
  d.registers.push_back({"WorkersCounter", "workers_count", PairElement<num_workers_pair_t>(),
                         WorkersCounter{}.workers_count.size()});
  d.registers.push_back({"Exponents", "exponents", PairElement<exponent_pair_t>(), Exponents{}.exponents.size()});
  // One instance's `values` (the model stores the 32 instances as one row per pool index, kRegisterSize rows).
  d.registers.push_back({"Processor", "values", PairElement<value_pair_t>(), kRegisterSize});

  // --- tables ---
  {
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
    d.tables.push_back(t);
  }
  {
    TableDesc t{"UpdateAndCheckWorkerBitmap", "update_and_check_worker_bitmap",
                {{"ig_md.switchml_md.pool_index", "ternary", 15}, kPacketType,
                 {"ig_md.port_metadata.ingress_drop_probability", "ternary", 16}},
                {"update_worker_bitmap_set0_action", "update_worker_bitmap_set1_action", "drop", "simulate_drop",
                 "NoAction"},
                "NoAction"};
    for (const auto& e : UpdateAndCheckWorkerBitmap::kEntries)
      t.entries.push_back({{Key(e.pool_index), Key(e.packet_type), Key(e.ingress_drop_probability)}, ActionName(e.action)});
    d.tables.push_back(t);
  }
  {
    TableDesc t{"WorkersCounter", "count_workers",
                {{"ig_md.switchml_md.num_workers", "ternary", 8}, {"ig_md.switchml_md.map_result", "ternary", 32},
                 kPacketType},
                {"single_worker_count_action", "single_worker_read_action", "count_workers_action",
                 "read_count_workers_action", "NoAction"},
                "NoAction"};
    for (const auto& e : WorkersCounter::kEntries)
      t.entries.push_back({{Key(e.num_workers), Key(e.map_result), Key(e.packet_type)}, ActionName(e.action)});
    d.tables.push_back(t);
  }
  {
    TableDesc t{"Exponents", "exponent_max",
                {{"ig_md.switchml_md.worker_bitmap_before", "ternary", 32},
                 {"ig_md.switchml_md.map_result", "ternary", 32}, kPacketType},
                {"write_read0_action", "max_read0_action", "read0_action", "read1_action", "NoAction"},
                "NoAction"};
    for (const auto& e : Exponents::kEntries)
      t.entries.push_back({{Key(e.worker_bitmap_before), Key(e.map_result), Key(e.packet_type)}, ActionName(e.action)});
    d.tables.push_back(t);
  }
  {
    TableDesc t{"Processor", "sum",
                {{"switchml_md.worker_bitmap_before", "ternary", 32}, {"switchml_md.map_result", "ternary", 32},
                 {"switchml_md.packet_type", "ternary", 4}},
                {"write_read1_action", "sum_read1_action", "read0_action", "read1_action", "NoAction"},
                "NoAction"};
    for (const auto& e : Processor::kEntries)
      t.entries.push_back({{Key(e.worker_bitmap_before), Key(e.map_result), Key(e.packet_type)}, ActionName(e.action)});
    d.tables.push_back(t);
  }
  {
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
    d.tables.push_back(t);
  }
  return d;
}

}  // namespace inasim::p4::switchml
