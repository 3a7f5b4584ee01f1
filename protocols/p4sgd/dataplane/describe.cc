#include "protocols/p4sgd/dataplane/describe.h"

#include "protocols/p4sgd/dataplane/controls.h"
#include "protocols/p4sgd/dataplane/p4sgd_dataplane.h"
#include "protocols/p4sgd/dataplane/types.h"

#include <array>
#include <cstddef>
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

/// payload_t's layout as the model's ParsePayload reads it: each bit of a zero
/// frame flipped in turn (describe::ProbeLayout). __pad1 is carried in the
/// frame bytes, not parsed: its width is the gap it leaves.
describe::HeaderDesc Payload() {
  std::vector<describe::ProbeField> f = {{"__pad0"}, {"slot"},          {"index"},      {"seq_no"},
                                         {"bitmap"}, {"map_state"},     {"counter_state"}, {"slot_state"},
                                         {"__pad1", false, /*parsed=*/false}};
  for (uint32_t i = 1; i <= kValues; ++i) f.push_back({"value" + std::to_string(i)});
  return describe::ProbeLayout("payload_t", f, kPayloadBytes * 8, [](size_t bit) {
    std::array<uint8_t, kPayloadBytes> b{};
    if (bit != SIZE_MAX) b[bit / 8] ^= static_cast<uint8_t>(0x80 >> (bit % 8));
    const payload_t h = ParsePayload(b.data());
    std::vector<uint64_t> v = {h.pad0, h.slot, h.index, h.seq_no, h.bitmap, h.map_state, h.counter_state, h.slot_state};
    v.insert(v.end(), h.value.begin(), h.value.end());
    return v;
  });
}

}  // namespace

describe::ModelDescription Describe() {
  describe::ModelDescription d;
  d.program = "p4sgd";
  d.upstream = "RC4ML/P4FPGA@6dfbdf224f37ab71aef0a9a7455ff6e82d3331f3";
  d.main_file = "p4/p4fpga.p4";
  d.controls = {"Ingress"};
  // Program constants the model hard-codes (types.h).
  d.constants = {{"NODE_SIZE", kNodeSize},
                 {"INDEX_SIZE", kIndexSize},
                 {"BITMAP_WIDTH", kMaxWorkers},
                 {"VALUE_WIDTH", 8 * sizeof(ValueRow::value_type)}};
  d.constants.push_back(kSeqSup ? describe::ConstantDesc("SEQ_SUP", 0, /*flag=*/true)
                                : describe::ConstantDesc("SEQ_SUP undefined in the model (kSeqSup false)"));
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
