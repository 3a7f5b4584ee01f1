// The SwitchML model's side of `inasim-p4 check`'s differential runs
// (p4model/common/model_check.h): which function of controls.h mirrors which
// upstream RegisterAction, and which lookup which table, with the action's
// outside reads as the function's parameters.
#include "p4model/common/model_check.h"
#include "protocols/switchml/dataplane/controls.h"
#include "protocols/switchml/dataplane/describe.h"
#include "protocols/switchml/dataplane/next_step_selector.h"

#include <memory>
#include <optional>
#include <string>

namespace inasim::p4::switchml {

std::optional<RegisterActionBinding> BindRegisterAction(const std::string& name) {
  using UB = UpdateAndCheckWorkerBitmap;
  using WC = WorkersCounter;
  using EX = Exponents;
  using PR = Processor;
  auto bitmap_pair = [](auto fn) {
    return [fn](uint64_t* c, const uint64_t* in) -> uint64_t {
      worker_bitmap_pair_t p{static_cast<uint32_t>(c[0]), static_cast<uint32_t>(c[1])};
      const uint32_t r = fn(p, static_cast<uint32_t>(in[0]));
      c[0] = p.first;
      c[1] = p.second;
      return r;
    };
  };
  auto count_pair = [](auto fn) {
    return [fn](uint64_t* c, const uint64_t* in) -> uint64_t {
      num_workers_pair_t p{static_cast<uint8_t>(c[0]), static_cast<uint8_t>(c[1])};
      const uint8_t r = fn(p, in);
      c[0] = p.first;
      c[1] = p.second;
      return r;
    };
  };
  auto exp_pair = [](auto fn) {
    return [fn](uint64_t* c, const uint64_t* in) -> uint64_t {
      exponent_pair_t p{static_cast<int8_t>(static_cast<uint8_t>(c[0])), static_cast<int8_t>(static_cast<uint8_t>(c[1]))};
      const int8_t r = fn(p, in);
      c[0] = static_cast<uint8_t>(p.first);
      c[1] = static_cast<uint8_t>(p.second);
      return static_cast<uint8_t>(r);
    };
  };
  auto value_pair = [](auto fn) {
    return [fn](uint64_t* c, const uint64_t* in) -> uint64_t {
      uint32_t first = static_cast<uint32_t>(c[0]), second = static_cast<uint32_t>(c[1]);
      const uint32_t r = fn(PR::value_pair_ref{first, second}, in);
      c[0] = first;
      c[1] = second;
      return r;
    };
  };
  auto i8 = [](uint64_t v) { return static_cast<int8_t>(static_cast<uint8_t>(v)); };
  auto u32 = [](uint64_t v) { return static_cast<uint32_t>(v); };
  static const std::string kBitmap = "ig_md.worker_bitmap";
  if (name == "UpdateAndCheckWorkerBitmap.worker_bitmap_update_set0")
    return RegisterActionBinding{{kBitmap}, bitmap_pair(UB::worker_bitmap_update_set0)};
  if (name == "UpdateAndCheckWorkerBitmap.worker_bitmap_update_set1")
    return RegisterActionBinding{{kBitmap}, bitmap_pair(UB::worker_bitmap_update_set1)};
  if (name == "WorkersCounter.workers_count_action")
    return RegisterActionBinding{{"ig_md.switchml_md.num_workers"}, count_pair([](num_workers_pair_t& p, const uint64_t* in) {
                                   return WC::workers_count_action(p, static_cast<uint8_t>(in[0]));
                                 })};
  if (name == "WorkersCounter.read_workers_count_action")
    return RegisterActionBinding{{}, count_pair([](num_workers_pair_t& p, const uint64_t*) { return WC::read_workers_count_action(p); })};
  if (name == "Exponents.write_read0_register_action")
    return RegisterActionBinding{{"exponent0", "exponent1"}, exp_pair([i8](exponent_pair_t& p, const uint64_t* in) {
                                   return EX::write_read0_register_action(p, i8(in[0]), i8(in[1]));
                                 })};
  if (name == "Exponents.max_read0_register_action")
    return RegisterActionBinding{{"exponent0", "exponent1"}, exp_pair([i8](exponent_pair_t& p, const uint64_t* in) {
                                   return EX::max_read0_register_action(p, i8(in[0]), i8(in[1]));
                                 })};
  if (name == "Exponents.read0_register_action")
    return RegisterActionBinding{{}, exp_pair([](exponent_pair_t& p, const uint64_t*) { return EX::read0_register_action(p); })};
  if (name == "Exponents.read1_register_action")
    return RegisterActionBinding{{}, exp_pair([](exponent_pair_t& p, const uint64_t*) { return EX::read1_register_action(p); })};
  if (name == "Processor.write_read1_register_action")
    return RegisterActionBinding{{"value0", "value1"}, value_pair([u32](PR::value_pair_ref v, const uint64_t* in) {
                                   return PR::write_read1_register_action(v, u32(in[0]), u32(in[1]));
                                 })};
  if (name == "Processor.sum_read1_register_action")
    return RegisterActionBinding{{"value0", "value1"}, value_pair([u32](PR::value_pair_ref v, const uint64_t* in) {
                                   return PR::sum_read1_register_action(v, u32(in[0]), u32(in[1]));
                                 })};
  if (name == "Processor.read0_register_action")
    return RegisterActionBinding{{}, value_pair([](PR::value_pair_ref v, const uint64_t*) { return PR::read0_register_action(v); })};
  if (name == "Processor.read1_register_action")
    return RegisterActionBinding{{}, value_pair([](PR::value_pair_ref v, const uint64_t*) { return PR::read1_register_action(v); })};
  return std::nullopt;
}

std::optional<TableBinding> BindTable(const std::string& name) {
  auto md_of = [](uint64_t packet_type) {
    ingress_metadata_t ig;
    ig.switchml_md.packet_type = static_cast<PacketType>(packet_type);
    return ig;
  };
  if (name == "ReconstructWorkerBitmap.reconstruct_worker_bitmap")
    return TableBinding([](const uint64_t* k) {
      ingress_metadata_t ig;
      ig.switchml_md.worker_id = static_cast<uint16_t>(k[0]);
      ReconstructWorkerBitmap::apply(ig);
      return TableResult{"reconstruct_worker_bitmap_from_worker_id", {ig.worker_bitmap}};
    });
  if (name == "UpdateAndCheckWorkerBitmap.update_and_check_worker_bitmap")
    return TableBinding([md_of](const uint64_t* k) {
      ingress_metadata_t ig = md_of(k[1]);
      ig.switchml_md.pool_index = static_cast<uint16_t>(k[0]);
      ig.port_metadata.ingress_drop_probability = static_cast<uint16_t>(k[2]);
      return TableResult{ActionName(UpdateAndCheckWorkerBitmap::Lookup(ig)), {}};
    });
  if (name == "WorkersCounter.count_workers")
    return TableBinding([md_of](const uint64_t* k) {
      ingress_metadata_t ig = md_of(k[2]);
      ig.switchml_md.num_workers = static_cast<uint8_t>(k[0]);
      ig.switchml_md.map_result = static_cast<uint32_t>(k[1]);
      return TableResult{ActionName(WorkersCounter::Lookup(ig.switchml_md)), {}};
    });
  if (name == "Exponents.exponent_max" || name == "Processor.sum")
    return TableBinding([md_of, name](const uint64_t* k) {
      ingress_metadata_t ig = md_of(k[2]);
      ig.switchml_md.worker_bitmap_before = static_cast<uint32_t>(k[0]);
      ig.switchml_md.map_result = static_cast<uint32_t>(k[1]);
      return TableResult{name == "Processor.sum" ? ActionName(Processor::Lookup(ig.switchml_md))
                                                 : ActionName(Exponents::Lookup(ig.switchml_md)),
                         {}};
    });
  if (name == "NextStepSelector.next_step") {
    auto nss = std::make_shared<NextStepSelector>(/*folded_pipe=*/true);
    return TableBinding([nss](const uint64_t* k) {
      switchml_md_h md;
      md.packet_size = static_cast<PacketSize>(k[0]);
      md.worker_id = static_cast<uint16_t>(k[1]);
      md.packet_type = static_cast<PacketType>(k[2]);
      md.first_last_flag = static_cast<uint8_t>(k[3]);
      md.map_result = static_cast<uint32_t>(k[4]);
      const NextStepSelector::Entry* e = nss->Lookup(md);
      if (!e) return TableResult{"drop", {}};  // const default_action = drop()
      const std::string a = ActionName(e->action);
      if (a == "recirculate_for_CONSUME1" || a.rfind("recirculate_for_HARVEST", 0) == 0)
        return TableResult{a, {e->recirc_port}};
      return TableResult{a, {}};
    });
  }
  return std::nullopt;
}

// Whole-pipeline runs: not yet. SwitchML's parsers (pkt.lookahead, value
// sets), its recirculation passes and its egress controls are outside the
// pipeline evaluator's subset (p4model/tools/p4pipe.h); its paths are covered
// by the conformance tests (protocols/switchml/tests).
std::optional<PipelineBinding> BindPipeline() { return std::nullopt; }

}  // namespace inasim::p4::switchml
