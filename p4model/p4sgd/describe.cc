#include "p4model/p4sgd/describe.h"

#include "p4model/p4sgd/controls.h"
#include "p4model/p4sgd/types.h"

#include <stdexcept>
#include <string>
#include <type_traits>

namespace inasim::p4::p4sgd {
namespace {

using describe::FieldDesc;
using describe::RegisterDesc;
using describe::TableDesc;

template <typename T>
std::vector<FieldDesc> Scalar() {
  return {{"", int(8 * sizeof(T)), 0, std::is_signed<T>::value}};
}

/// payload_t's layout, with the byte offsets the model's parser uses (kOff*) as the check.
describe::HeaderDesc Payload() {
  std::vector<FieldDesc> f = {{"__pad0", 15}, {"slot", 1}, {"index", 16}, {"seq_no", 32}, {"bitmap", 32},
                              {"map_state", 32}, {"counter_state", 32}, {"slot_state", 1}, {"__pad1", 95}};
  for (uint32_t i = 1; i <= kValues; ++i) f.push_back({"value" + std::to_string(i), int(8 * sizeof(uint32_t))});
  describe::HeaderDesc h = describe::Layout("payload_t", f);
  // The model reads slot as bit 0 of byte kOffSlot, slot_state as bit 7 of byte kOffSlotState.
  const struct {
    const char* field;
    size_t bit;
  } model[] = {{"__pad0", kOffPad0 * 8},           {"slot", kOffSlot * 8 + 7},         {"index", kOffIndex * 8},
               {"seq_no", kOffSeqNo * 8},          {"bitmap", kOffBitmap * 8},          {"map_state", kOffMapState * 8},
               {"counter_state", kOffCounterState * 8}, {"slot_state", kOffSlotState * 8}, {"value1", kOffValues * 8}};
  for (const auto& m : model)
    for (const FieldDesc& fd : h.fields)
      if (fd.name == m.field && static_cast<size_t>(fd.offset) != m.bit)
        throw std::logic_error(std::string("p4sgd describe: payload_t.") + m.field + " is at bit " +
                               std::to_string(fd.offset) + " by its widths, the model parses it at bit " +
                               std::to_string(m.bit));
  const FieldDesc& last = h.fields.back();
  if (static_cast<size_t>(last.offset + last.width) != kPayloadBytes * 8)
    throw std::logic_error("p4sgd describe: payload_t is not kPayloadBytes long");
  return h;
}

}  // namespace

describe::ModelDescription Describe() {
  describe::ModelDescription d;
  d.program = "p4sgd";
  d.upstream = "RC4ML/P4FPGA@6dfbdf224f37ab71aef0a9a7455ff6e82d3331f3";
  d.main_file = "p4/p4fpga.p4";
  d.controls = {"Ingress"};
  d.headers.push_back(Payload());

  const Ingress ing;
  using Cell = ValueRow::value_type;
  for (int s = 0; s < 2; ++s)
    for (uint32_t i = 1; i <= kValues; ++i)
      d.registers.push_back({"Ingress", "value_" + std::to_string(s) + std::to_string(i) + "_reg", Scalar<Cell>(),
                             (s == 0 ? ing.value_reg_0 : ing.value_reg_1).size()});
  d.registers.push_back({"Ingress", "counter_reg_0", Scalar<uint32_t>(), ing.counter_reg_0.size()});
  d.registers.push_back({"Ingress", "counter_reg_1", Scalar<uint32_t>(), ing.counter_reg_1.size()});
  d.registers.push_back({"Ingress", "node_map_reg_0", Scalar<uint32_t>(), ing.node_map_reg_0.size()});
  d.registers.push_back({"Ingress", "node_map_reg_1", Scalar<uint32_t>(), ing.node_map_reg_1.size()});
  d.registers.push_back({"Ingress", "seq_reg", Scalar<uint32_t>(), ing.seq_reg.size()});

  TableDesc t{"Ingress", "bitmap_mapping",
              {{"hdr.load.bitmap", "exact", 32}, {"ig_intr_md.ingress_port", "exact", 9}},
              {"get_bitmap", "use_default_bitmap"},
              "use_default_bitmap"};
  for (const auto& e : Ingress::kBitmapMappingEntries)
    t.entries.push_back({{{e.bitmap, 0xffffffffu}, {e.ingress_port, 0x1ffu}}, "get_bitmap", {e.map}});
  d.tables.push_back(t);
  return d;
}

}  // namespace inasim::p4::p4sgd
