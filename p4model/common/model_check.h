// The programs `inasim-p4 check` compares with the upstream P4 source they
// mirror (p4model/tools/README.md), generated at configure time from the
// protocols whose protocol.json says "model_check": true (by
// cmake/InasimProtocols.cmake, next to the dataplane registry). Each such
// protocol's dataplane folder gives its description (describe.cc) and the
// bindings below (model_bindings.cc): which of its C++ functions mirrors which
// upstream register action and table. Pure C++, no ns-3.
#pragma once

#include "p4model/common/model_description.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace inasim::p4 {

/// The model side of a register action: `cell` in/out (one uint64_t per
/// element field, masked), `in` in the order of `inputs` (the names of the
/// action's outside reads, as the upstream body spells them); returns the result.
struct RegisterActionBinding {
  std::vector<std::string> inputs;
  std::function<uint64_t(uint64_t* cell, const uint64_t* in)> run;
};

/// The model side of a table: its action's name and arguments for key values
/// given in the table's key order.
using TableResult = std::pair<std::string, std::vector<uint64_t>>;
using TableBinding = std::function<TableResult(const uint64_t* keys)>;

/// One packet out of a whole pipeline: the copies that leave the switch,
/// (device port, frame) in the order the packet replication engine makes
/// them; none when the packet is dropped. Port 0xffff: forwarded by the
/// switch's own table, a path no P4 program has.
struct PipelineResult {
  std::vector<std::pair<uint16_t, std::vector<uint8_t>>> copies;
};

/// The index a DirectRegister or DirectCounter cell of a table's default
/// action has in the pipeline runs (entries are numbered from 0).
inline constexpr uint32_t kDefaultActionEntry = 0xffffffff;
/// A fresh model for whole-pipeline runs: `run` feeds one frame arriving on a
/// device port (state persists between calls); `cell` reads the model's copy
/// of upstream register "Control.register" in `pipe` at `index` (one value per
/// element field), nullopt when the model keeps no such register.
struct PipelineModel {
  std::function<PipelineResult(const std::vector<uint8_t>& frame, uint16_t dev_port)> run;
  std::function<std::optional<std::vector<uint64_t>>(const std::string& reg, uint32_t pipe, uint32_t index)> cell;
  /// Optional: every Counter / DirectCounter the model keeps, by upstream
  /// instance path, with its packets summed over pipes and indexes (entries).
  /// Compared after each run with upstream's totals, so that a count the
  /// model makes where upstream makes none is seen too (`cell` is asked only
  /// about the cells upstream touched).
  std::function<std::map<std::string, uint64_t>()> counter_totals;
};

/// One node of a multicast group in the packet replication engine: the copy's
/// device port, its replication id (egress_rid), and its level-1 exclusion id
/// (a copy is pruned when the packet's level1_exclusion_id equals it).
struct MulticastNode {
  uint16_t port = 0;
  uint16_t rid = 0;
  std::optional<uint16_t> l1_xid;
  MulticastNode(uint16_t p, uint16_t r = 0, std::optional<uint16_t> x = std::nullopt) : port(p), rid(r), l1_xid(x) {}
};

/// One entry a controller installs in a table (the model's own copy of it):
/// per key a value and a mask (all ones for exact), in priority order.
struct ControllerEntry {
  std::vector<std::pair<uint64_t, uint64_t>> keys;
  std::string action;
  std::vector<uint64_t> args;
};
/// A controller-filled table: its entries and, if the controller sets one,
/// its default action (`action` and `args`; keys unused).
struct ControllerTable {
  std::vector<ControllerEntry> entries;
  std::optional<ControllerEntry> default_action;
};

/// A frame field the pipeline runs' driver draws from a small set: its byte
/// offset and width, the values, fields set together (`link`), how often.
struct PipelineField {
  size_t offset;
  int bytes;
  std::vector<uint64_t> values;
  /// Fields with the same link (>= 0) are set together, to the values at
  /// one index (a worker's MAC and IP address), or not at all.
  int link = -1;
  /// How often the field is set (else its bytes stay random).
  double probability = 0.75;
};

/// The model side of whole-pipeline differential runs: the upstream blocks it
/// mirrors, a fresh model (every register zero) per run, and the device ports
/// and frame shape the driver uses.
struct PipelineBinding {
  std::string parser, control, deparser;  ///< upstream names, e.g. "IngressParser", "Ingress", "IngressDeparser"
  std::string egress_parser, egress_control, egress_deparser;  ///< empty: no egress
  /// A binding of the usual TNA block names: IngressParser, Ingress,
  /// IngressDeparser, EgressParser, Egress, EgressDeparser.
  static PipelineBinding Tna() {
    PipelineBinding b;
    b.parser = "IngressParser";
    b.control = "Ingress";
    b.deparser = "IngressDeparser";
    b.egress_parser = "EgressParser";
    b.egress_control = "Egress";
    b.egress_deparser = "EgressDeparser";
    return b;
  }
  /// The packet replication engine's groups (id -> nodes), as the model is configured.
  std::map<uint16_t, std::vector<MulticastNode>> groups;
  /// Device ports whose frames come back into ingress (recirculation and
  /// loopback ports): a packet sent there with bypass_egress set is another
  /// ingress pass in that port's pipe.
  std::vector<uint16_t> recirculation_ports;
  /// The program as is, then as if recompiled (a #define given another body,
  /// or none: nullopt), each with the model configured to match, so that
  /// paths a default constant leaves unreachable are compared too.
  struct Variant {
    std::string name;
    std::map<std::string, std::optional<std::string>> defines;
    std::function<PipelineModel()> make;
    /// Controller-filled tables as the model is configured, by instance path
    /// ("Ingress.udp_receiver.receive_udp"; a table of the top control:
    /// "Ingress.t").
    std::map<std::string, ControllerTable> tables;
    /// The typical frame of this variant, if not the binding's frame_bytes.
    std::optional<size_t> frame_bytes;
    /// The port metadata (PORT_METADATA_SIZE bits, 8 bytes) the controller
    /// set per ingress port; a port not listed has zeros.
    std::map<uint16_t, std::vector<uint8_t>> port_metadata;
    /// This variant's frame fields, if not the binding's (`fields` below).
    std::optional<std::vector<PipelineField>> fields;
  };
  std::vector<Variant> variants;
  std::vector<uint16_t> ports;     ///< device ports frames arrive on (any pipe)
  size_t frame_bytes = 64;         ///< the typical frame; the driver also sends shorter and longer ones
  /// Byte offsets and widths the driver draws from small sets so that packets
  /// meet in the same register cells (e.g. an index), and fields it sets to
  /// edge values; the rest of each frame is random.
  using Field = PipelineField;
  std::vector<Field> fields;
};

struct ModelCheckedProgram {
  std::string_view name;  ///< inasim-p4 check PROGRAM (the protocol's name)
  describe::ModelDescription (*describe)();
  /// The model function of upstream register action "Control.action"; nullopt: none.
  std::optional<RegisterActionBinding> (*bind_register_action)(const std::string& name);
  /// The model lookup of upstream table "Control.table"; nullopt: none.
  std::optional<TableBinding> (*bind_table)(const std::string& name);
  /// Whole-pipeline runs; nullopt: the model has none (the pipeline is outside
  /// the evaluator's subset).
  std::optional<PipelineBinding> (*bind_pipeline)();
  /// protocols/<name>/dataplane/upstream-manifest.json as it was at build time.
  std::string_view manifest;
};

/// Every model-checked program, in protocol-folder order (generated).
const std::vector<ModelCheckedProgram>& ModelCheckedPrograms();

}  // namespace inasim::p4
