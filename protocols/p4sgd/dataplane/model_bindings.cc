// The P4SGD model's side of `inasim-p4 check`'s differential runs
// (p4model/common/model_check.h): which static register action of
// controls.h mirrors which upstream RegisterAction of p4fpga.p4's Ingress,
// the bitmap_mapping lookup, and the whole public-p4 dataplane for the
// pipeline runs (IngressParser -> Ingress -> IngressDeparser).
#include "p4model/common/model_check.h"
#include "p4model/common/pipeline_emitter.h"
#include "protocols/p4sgd/dataplane/controls.h"
#include "protocols/p4sgd/dataplane/describe.h"
#include "protocols/p4sgd/dataplane/p4sgd_dataplane.h"

#include <memory>

#include <optional>
#include <regex>
#include <string>

namespace inasim::p4::p4sgd {

std::optional<RegisterActionBinding> BindRegisterAction(const std::string& name) {
  using IG = Ingress;
  auto scalar = [](auto fn) {
    return [fn](uint64_t* c, const uint64_t* in) -> uint64_t {
      uint32_t d = static_cast<uint32_t>(c[0]);
      const uint64_t r = fn(d, in);
      c[0] = d;
      return r;
    };
  };
  std::smatch m;
  static const std::regex value_reg(R"(Ingress\.value_([01])([1-8])_(add|clr))");
  if (std::regex_match(name, m, value_reg)) {
    if (m[3] == "add")
      return RegisterActionBinding{{"hdr.load.value" + m[2].str()}, scalar([](uint32_t& d, const uint64_t* in) {
                                     return IG::value_add(d, static_cast<uint32_t>(in[0]));
                                   })};
    return RegisterActionBinding{{}, scalar([](uint32_t& d, const uint64_t*) { return IG::value_clr(d); })};
  }
  if (name == "Ingress.count_0" || name == "Ingress.count_1")
    return RegisterActionBinding{{}, scalar([](uint32_t& d, const uint64_t*) { return IG::count(d); })};
  if (name == "Ingress.get_counter_0" || name == "Ingress.get_counter_1")
    return RegisterActionBinding{{}, scalar([](uint32_t& d, const uint64_t*) { return IG::get_counter(d); })};
  if (name == "Ingress.node_map_merge_0" || name == "Ingress.node_map_merge_1")
    return RegisterActionBinding{{"bitmap"}, scalar([](uint32_t& d, const uint64_t* in) {
                                   return IG::node_map_merge(d, static_cast<uint32_t>(in[0]));
                                 })};
  if (name == "Ingress.node_map_clear_0" || name == "Ingress.node_map_clear_1")
    return RegisterActionBinding{{"bitmap"}, scalar([](uint32_t& d, const uint64_t* in) {
                                   return IG::node_map_clear(d, static_cast<uint32_t>(in[0]));
                                 })};
  if (name == "Ingress.seq_check")
    return RegisterActionBinding{{"hdr.load.seq_no"}, scalar([](uint32_t& d, const uint64_t* in) -> uint64_t {
                                   return IG::seq_check(d, static_cast<uint32_t>(in[0])) ? 1 : 0;
                                 })};
  return std::nullopt;
}

std::optional<TableBinding> BindTable(const std::string& name) {
  if (name == "Ingress.bitmap_mapping")
    return TableBinding([](const uint64_t* k) {
      const auto* e = Ingress::bitmap_mapping_lookup(static_cast<uint32_t>(k[0]), static_cast<uint16_t>(k[1]));
      if (!e) return TableResult{"use_default_bitmap", {}};
      return TableResult{"get_bitmap", {e->map}};
    });
  return std::nullopt;
}

/// The model's copy of an upstream Ingress register cell (p4fpga.p4:287-456).
std::optional<std::vector<uint64_t>> ModelCell(const P4SGDDataplane& dp, const std::string& reg, uint32_t pipe,
                                               uint32_t index) {
  static const std::regex value(R"(Ingress\.value_([01])([1-8])_reg)");
  std::smatch m;
  if (std::regex_match(reg, m, value))
    return std::vector<uint64_t>{static_cast<uint32_t>(dp.Values(std::stoul(m[1]), index, pipe)[std::stoul(m[2]) - 1])};
  if (reg == "Ingress.counter_reg_0" || reg == "Ingress.counter_reg_1")
    return std::vector<uint64_t>{dp.Counter(reg.back() - '0', index, pipe)};
  if (reg == "Ingress.node_map_reg_0" || reg == "Ingress.node_map_reg_1")
    return std::vector<uint64_t>{dp.NodeMap(reg.back() - '0', index, pipe)};
  if (reg == "Ingress.seq_reg") return std::vector<uint64_t>{dp.SeqCell(pipe, index)};
  return std::nullopt;
}

std::optional<PipelineBinding> BindPipeline() {
  PipelineBinding b = PipelineBinding::Tna();
  b.groups = {{kMulticastGroup, {0}}};  // the model's multicast_ports below
  auto make = [](uint32_t node_size, bool seq_sup) {
    return [node_size, seq_sup] {
      P4SGDConfig c;
      c.mode = Mode::kPublicP4;
      c.node_size = node_size;
      c.seq_sup = seq_sup;
      c.multicast_ports = {0};
      for (uint16_t p = 0; p < 512; ++p) c.dev_ports.push_back(p);
      auto dp = std::make_shared<P4SGDDataplane>(c);
      PipelineModel m;
      m.run = [dp](const std::vector<uint8_t>& frame, uint16_t dev_port) {
        PipelineEmitter out;
        const FrameView v = ParseFrame(frame.data(), frame.size(), static_cast<uint32_t>(frame.size()));
        if (!dp->Claims(v)) {
          out.EmitRouted(inasim::Span<const uint8_t>(frame.data(), frame.size()), 0);  // the switch's table: not the P4's
          return out.result;
        }
        dp->Process(dev_port, inasim::Span<const uint8_t>(frame.data(), frame.size()), 0, out);
        return out.result;
      };
      m.cell = [dp](const std::string& reg, uint32_t pipe, uint32_t index) { return ModelCell(*dp, reg, pipe, index); };
      return m;
    };
  };
  // As committed; then NODE_SIZE 3 (p4fpga.p4:19), which reaches the
  // send(192) path NODE_SIZE 1 leaves dead, and without SEQ_SUP (:4).
  b.variants = {{"as is", {}, make(kNodeSize, kSeqSup), {}, std::nullopt, {}, std::nullopt},
                {"NODE_SIZE 3", {{"NODE_SIZE", "3"}}, make(3, kSeqSup), {}, std::nullopt, {}, std::nullopt},
                {"no SEQ_SUP", {{"SEQ_SUP", std::nullopt}}, make(kNodeSize, false), {}, std::nullopt, {}, std::nullopt}};
  // Table ports of pipes 0 and 1, ports outside the table, the CPU port 192,
  // and ports of pipes 2 and 3 that share seq_reg cells with pipe 0's.
  b.ports = {0, 4, 8, 60, 128, 132, 188, 1, 5, 64, 192, 256, 260, 384};
  b.frame_bytes = kPayloadBytes;
  // Frames meet in a few cells: slot byte, index, seq_no and bitmap from small
  // sets (p4fpga.p4:103-125 offsets, README "Encapsulation").
  b.fields = {{kOffSlot, 1, {0, 1, 0x80, 0x81}},
              {kOffIndex, 2, {0, 1, 2, 0xffff}},
              {kOffSeqNo, 4, {0, 0, 1, 2, 3, 0xffffffff}},
              {kOffBitmap, 4, {0, 0, 1, 2, 4, 3, 0x10000, 0x80000000}}};
  return b;
}

}  // namespace inasim::p4::p4sgd
