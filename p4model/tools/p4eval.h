// p4eval: evaluates a parsed RegisterAction body on bit vectors, with P4's
// widths, int<N> vs bit<N> signedness and wraparound, so the checker can run
// the upstream register actions themselves against the C++ models.
#pragma once

#include "p4model/tools/p4reader.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace inasim::p4tools {

/// A P4 value: the bits masked to the width, signed ones as two's complement.
struct P4Val {
  uint64_t v = 0;
  int w = -1;  ///< -1: an untyped integer literal
  bool s = false;
};
/// P4 operators on values, with P4's widths, signedness and wraparound; an
/// untyped literal takes the other operand's type. ApplyBinary covers every
/// binary operator except && and || (they short-circuit: the caller's job) and
/// "max"/"min" (TNA's); an operator outside the subset throws p4src::ReadError.
P4Val ApplyUnary(const std::string& op, P4Val a);
P4Val ApplyBinary(const std::string& op, P4Val a, P4Val b);
P4Val ApplyCast(P4Val a, int width, bool is_signed);
/// The value sign-extended (signed) or as is, for storing into a wider field.
uint64_t Widen(P4Val a);
inline uint64_t MaskOf(int w) { return w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1; }

/// The type of a dotted path (`ig_md.switchml_md.worker_id`) inside a control:
/// its first name is a control parameter or local, the rest are fields.
std::optional<p4src::TypeRef> PathType(const p4src::Program& prog, const p4src::Control& c, const std::string& path);

/// One compiled RegisterAction: apply(inout T value, out R result) { body }.
/// Values are held as uint64_t masked to their width (signed ones as two's complement).
class RegisterActionEval {
 public:
  struct Slot {
    std::string name;
    int width = 0;
    bool is_signed = false;
  };

  /// Throws p4src::ReadError (with the body's file:line) for a name it cannot type
  /// or a construct outside the subset.
  RegisterActionEval(const p4src::Program& prog, const p4src::Control& control, const p4src::RegisterActionDecl& action);

  const std::vector<Slot>& cell() const { return cell_; }      ///< register element fields, in order
  const std::vector<Slot>& inputs() const { return inputs_; }  ///< values read from outside the action
  const Slot& result() const { return result_; }

  /// Runs the body: `cell` in/out (cell().size() values), `inputs` (inputs().size()).
  /// Returns the result parameter (0 when the body never assigns it).
  uint64_t Run(uint64_t* cell, const uint64_t* inputs) const;

 private:
  using Val = P4Val;
  struct Node {
    enum class Op { kLit, kSlot, kUnary, kBinary, kMax, kMin, kCast, kSlice, kTernary } op = Op::kLit;
    std::string name;  ///< operator
    int a = -1, b = -1, c = -1;
    Val lit;
    int slot = -1;
    int width = 0, lo = 0;  ///< kCast target width / kSlice width and low bit
    bool is_signed = false;
  };
  struct Step {
    enum class Kind { kAssign, kIf } kind = Kind::kAssign;
    int slot = -1, expr = -1;
    int slice_lo = 0, slice_width = -1;  ///< assignment to x[hi:lo]
    int cond = -1;
    std::vector<Step> then_steps, else_steps;
  };

  int Compile(const p4src::ExprPtr& e);
  std::vector<Step> CompileBody(const std::vector<p4src::StmtPtr>& body);
  int SlotFor(const std::string& name, const p4src::Loc& loc);
  int NewSlot(const std::string& name, int width, bool is_signed);
  Val Eval(int node, const uint64_t* vals) const;
  void Exec(const std::vector<Step>& steps, uint64_t* vals) const;

  const p4src::Program& prog_;
  const p4src::Control& control_;
  const p4src::RegisterActionDecl& action_;
  std::vector<Slot> cell_, inputs_, locals_;
  Slot result_;
  // Slot numbering: cell fields, result, inputs, locals.
  std::vector<Slot> slots_;
  std::vector<int> input_slot_;  ///< inputs_[i] lives in slots_[input_slot_[i]]
  std::vector<Node> nodes_;
  std::vector<Step> steps_;
  bool scalar_cell_ = false;
};

}  // namespace inasim::p4tools
