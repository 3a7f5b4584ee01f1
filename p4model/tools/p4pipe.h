// p4pipe: runs an upstream TNA ingress pipeline, as p4reader reads it (parser
// states, the control's apply block, actions, const-entry tables, register
// actions through p4eval, the deparser's emits), on one frame at a time, so
// `inasim-p4 check` can compare whole-pipeline paths of a model with the P4
// program itself (p4diff.cc). One PipelineEval is one pipe's state: TNA's
// `Switch(pipe)` loads the pipeline into every pipe, and the caller keeps one
// per pipe.
//
// The subset: header/struct types of bit<N> fields (header fields up to 128
// bits, 64 in expressions), assignments, if/else, exit/return, action calls
// with arguments, `t.apply()` of const-entry tables (exact and ternary keys,
// first match in source order), `r.execute(i)`, `h.isValid()`,
// `h.setValid()/setInvalid()`, `pkt.extract(h)`, `pkt.advance(n)`,
// `pkt.emit(h)` (a struct emits its headers in order), `select` with masks,
// and a Checksum's `update({...})` (the IPv4 header sum); then the traffic
// manager (unicast, multicast groups) and egress per copy. Anything else
// throws p4src::ReadError naming the line.
#pragma once

#include "p4model/tools/p4eval.h"
#include "p4model/tools/p4reader.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace inasim::p4tools {

/// One packet through ingress, the traffic manager and egress: what ingress
/// told the traffic manager (a unicast port, a multicast group, both, or
/// nothing), and each copy that egress sends out.
struct PipelineOutcome {
  bool unicast = false;
  uint16_t port = 0;   ///< ucast_egress_port (9 bits)
  uint16_t group = 0;  ///< mcast_grp_a; 0: none
  bool dropped = true;  ///< by ingress (parser error, drop_ctl, no egress)
  std::string why;
  std::vector<uint8_t> frame;  ///< as the ingress deparser emitted it
  struct Copy {
    uint16_t port = 0;
    bool dropped = false;  ///< by egress (parser error, drop_ctl)
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

class PipelineEval {
 public:
  /// `groups`: the multicast groups' ports (the packet replication engine's
  /// configuration). Throws p4src::ReadError when a block is missing or was
  /// not read (outside the subset).
  PipelineEval(const p4src::Program& prog, const PipelineBlocks& blocks,
               std::map<uint16_t, std::vector<uint16_t>> groups);
  ~PipelineEval();

  /// One frame in from device port `ingress_port`; registers keep their values.
  PipelineOutcome Run(const std::vector<uint8_t>& frame, uint16_t ingress_port);

  /// A register cell the last Run() wrote or read through a register action,
  /// with its value after the run ("Ingress.counter_reg_0", index, fields).
  struct Cell {
    std::string reg;
    uint32_t index = 0;
    std::vector<uint64_t> values;
  };
  std::vector<Cell> TouchedCells() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace inasim::p4tools
