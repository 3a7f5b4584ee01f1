// The P4SGD model's side of `inasim-p4 check`'s differential runs
// (p4model/common/model_check.h): which static register action of
// controls.h mirrors which upstream RegisterAction of p4fpga.p4's Ingress,
// and the bitmap_mapping lookup.
#include "p4model/common/model_check.h"
#include "protocols/p4sgd/dataplane/controls.h"
#include "protocols/p4sgd/dataplane/describe.h"

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

}  // namespace inasim::p4::p4sgd
