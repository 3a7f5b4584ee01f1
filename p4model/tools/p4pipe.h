// p4pipe: runs an upstream TNA ingress pipeline, as p4reader reads it (parser
// states, the control's apply block, actions, const-entry tables, register
// actions through p4eval, the deparser's emits), on one frame at a time, so
// `inasim-p4 check` can compare whole-pipeline paths of a model with the P4
// program itself (p4diff.cc). One PipelineEval is one pipe's state: TNA's
// `Switch(pipe)` loads the pipeline into every pipe: one PipelineEval is the
// whole switch, its registers kept per pipe, each pass run in the pipe of its
// ingress port and each copy's egress in the pipe of its egress port.
//
// The subset: header/struct types of bit<N> fields (header fields up to 128
// bits, 64 in expressions), assignments, if/else, exit/return, action calls
// with arguments, `t.apply()` of const-entry tables (exact and ternary keys,
// first match in source order), `r.execute(i)`, `h.isValid()`,
// `h.setValid()/setInvalid()`, `pkt.extract(h)`, `pkt.advance(n)`,
// `pkt.emit(h)` (a struct emits its headers in order), `select` with masks,
// control instances (`Processor() value00; ... value00.apply(...)`, each with
// its own registers), Counter/DirectCounter `count`, a Checksum's `add`,
// `verify` and `update({...})` (the IPv4 header sum), Random `get` (drawn
// from a fixed seed: compare only where the draw cannot matter), TNA's
// `port_metadata_unpack`, tables the controller fills (SwitchConfig::tables);
// then the traffic manager (unicast, multicast groups with replication ids
// and level-1 exclusion, bypass_egress, recirculation as another ingress
// pass) and egress per copy. Anything else throws p4src::ReadError naming
// the line.
#pragma once

#include "p4model/common/model_check.h"
#include "p4model/tools/p4eval.h"
#include "p4model/tools/p4reader.h"

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace inasim::p4tools {

/// One packet through ingress, the traffic manager and egress: what ingress
/// told the traffic manager (a unicast port, a multicast group, both, or
/// nothing), and each copy that egress sends out.
struct PipelineOutcome {
  uint32_t passes = 0;  ///< ingress passes (1 + recirculations); the fields below are the last pass's
  bool unicast = false;
  uint16_t port = 0;   ///< ucast_egress_port (9 bits)
  bool multicast = false;  ///< mcast_grp_a was written (any value, 0 too)
  uint16_t group = 0;      ///< mcast_grp_a
  bool dropped = true;  ///< by ingress (parser error, drop_ctl, no egress)
  std::string why;
  std::vector<uint8_t> frame;  ///< as the ingress deparser emitted it
  struct Copy {
    uint16_t port = 0;
    bool dropped = false;  ///< by egress (parser error, drop_ctl)
    bool bypassed = false;  ///< bypass_egress: the ingress deparser's frame
    std::vector<uint8_t> frame;
  };
  std::vector<Copy> copies;  ///< unicast first, then the group's ports in order
  std::string Describe() const;
};

/// The upstream blocks: ingress parser, control, deparser; egress parser,
/// control, deparser (egress names empty: no egress).
struct PipelineBlocks {
  std::string parser, control, deparser;
  std::string egress_parser, egress_control, egress_deparser;
};

/// What the control plane configured: the packet replication engine's groups,
/// the ports that loop back into ingress, the tables it filled.
struct SwitchConfig {
  std::map<uint16_t, std::vector<p4::MulticastNode>> groups;
  std::set<uint16_t> recirculation_ports;
  std::map<std::string, p4::ControllerTable> tables;  ///< by instance path, "Ingress.udp_receiver.receive_udp"
  std::map<uint16_t, std::vector<uint8_t>> port_metadata;  ///< per ingress port, 8 bytes; others zero
};

/// TNA's intrinsic metadata (tofino1_arch.p4; tna.p4 is not read): the header
/// the parser extracts first, and the structs ingress and egress read and write.
const std::map<std::string, p4src::Composite>& TnaIntrinsicComposites();

class PipelineEval {
 public:
  /// Throws p4src::ReadError when a block is missing or was not read
  /// (outside the subset).
  PipelineEval(const p4src::Program& prog, const PipelineBlocks& blocks, SwitchConfig config);
  PipelineEval(const p4src::Program& prog, const PipelineBlocks& blocks,
               std::map<uint16_t, std::vector<p4::MulticastNode>> groups)
      : PipelineEval(prog, blocks, SwitchConfig{std::move(groups), {}, {}, {}}) {}
  ~PipelineEval();

  /// One frame in from device port `ingress_port`; registers keep their values.
  PipelineOutcome Run(const std::vector<uint8_t>& frame, uint16_t ingress_port);

  /// A register cell the last Run() wrote or read through a register action
  /// (or a Counter index it counted, or a DirectCounter's table entry,
  /// 0xffffffff for the default action: one value, the packets),
  /// with its value after the run ("Ingress.counter_reg_0" or, in a control
  /// instance, "Ingress.value00.values"; its pipe, index, fields).
  struct Cell {
    std::string reg;
    uint32_t pipe = 0;
    uint32_t index = 0;
    std::vector<uint64_t> values;
  };
  std::vector<Cell> TouchedCells() const;
  /// Every Counter / DirectCounter counted so far, by instance path, its
  /// packets summed over pipes and indexes.
  std::map<std::string, uint64_t> CounterTotals() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace inasim::p4tools
