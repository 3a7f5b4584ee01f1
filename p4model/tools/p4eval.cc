#include "p4model/tools/p4eval.h"

#include <map>
#include <sstream>

namespace inasim::p4tools {
namespace {

int64_t SignExtend(uint64_t v, int w) {
  if (w <= 0 || w >= 64) return static_cast<int64_t>(v);
  const uint64_t m = uint64_t{1} << (w - 1);
  return static_cast<int64_t>(((v & MaskOf(w)) ^ m) - m);
}

// TNA intrinsic metadata fields the programs use (tna.p4 is not available).
const std::map<std::string, p4src::TypeRef>& TnaIntrinsicFields() {
  static const std::map<std::string, p4src::TypeRef> m = {
      {"ingress_intrinsic_metadata_t.ingress_port", {p4src::TypeRef::Kind::kNamed, 0, "PortId_t"}},
  };
  return m;
}

}  // namespace

uint64_t Widen(P4Val a) { return a.s ? static_cast<uint64_t>(SignExtend(a.v, a.w)) : a.v; }

P4Val ApplyCast(P4Val a, int width, bool is_signed) { return {Widen(a) & MaskOf(width), width, is_signed}; }

P4Val ApplyUnary(const std::string& op, P4Val a) {
  const int w = a.w < 0 ? 64 : a.w;
  if (op == "!") return {a.v == 0 ? 1u : 0u, 1, false};
  if (op == "~") return {~a.v & MaskOf(w), a.w, a.s};
  return {(uint64_t{0} - a.v) & MaskOf(w), a.w, a.s};  // unary minus
}

P4Val ApplyBinary(const std::string& op, P4Val a, P4Val b) {
  // An untyped literal takes the other operand's type.
  if (a.w < 0 && b.w >= 0) a = {a.v & MaskOf(b.w), b.w, b.s};
  if (b.w < 0 && a.w >= 0 && op != "<<" && op != ">>") b = {b.v & MaskOf(a.w), a.w, a.s};
  const int w = a.w < 0 ? 64 : a.w;
  const bool s = a.w < 0 ? true : a.s;
  const int64_t sa = SignExtend(a.v, w), sb = SignExtend(b.v, w);
  auto less = [&] { return s ? sa < sb : a.v < b.v; };
  if (op == "max") return less() ? b : a;
  if (op == "min") return less() ? a : b;
  auto typed = [&](uint64_t v) { return P4Val{v & MaskOf(w), a.w, a.s}; };
  if (op == "+") return typed(a.v + b.v);
  if (op == "-") return typed(a.v - b.v);
  if (op == "*") return typed(a.v * b.v);
  if (op == "&") return typed(a.v & b.v);
  if (op == "|") return typed(a.v | b.v);
  if (op == "^") return typed(a.v ^ b.v);
  if (op == "/") return typed(b.v == 0 ? 0 : a.v / b.v);
  if (op == "%") return typed(b.v == 0 ? 0 : a.v % b.v);
  if (op == "<<") return typed(b.v >= 64 ? 0 : a.v << b.v);
  if (op == ">>") {
    if (s) return typed(static_cast<uint64_t>(sa >> (b.v >= 63 ? 63 : b.v)));
    return typed(b.v >= 64 ? 0 : (a.v & MaskOf(w)) >> b.v);
  }
  if (op == "==") return {a.v == b.v ? 1u : 0u, 1, false};
  if (op == "!=") return {a.v != b.v ? 1u : 0u, 1, false};
  if (op == "<") return {less() ? 1u : 0u, 1, false};
  if (op == ">") return {(s ? sa > sb : a.v > b.v) ? 1u : 0u, 1, false};
  if (op == "<=") return {(s ? sa <= sb : a.v <= b.v) ? 1u : 0u, 1, false};
  if (op == ">=") return {(s ? sa >= sb : a.v >= b.v) ? 1u : 0u, 1, false};
  if (op == "|+|" || op == "|-|") {
    // Saturating: clamp to the type's range instead of wrapping.
    if (s) {
      const int64_t hi = static_cast<int64_t>(MaskOf(w - 1)), lo = -hi - 1;
      int64_t r = op == "|+|" ? sa + sb : sa - sb;  // w <= 32 in the subset: no int64 overflow
      r = r > hi ? hi : r < lo ? lo : r;
      return typed(static_cast<uint64_t>(r));
    }
    if (op == "|+|") {
      const uint64_t r = a.v + b.v;
      return typed((r > MaskOf(w) || r < a.v) ? MaskOf(w) : r);
    }
    return typed(a.v < b.v ? 0 : a.v - b.v);
  }
  if (op == "++") return {(a.v << b.w) | b.v, a.w + b.w, false};
  throw p4src::ReadError("operator " + op + " is outside the subset");
}

std::optional<p4src::TypeRef> PathType(const p4src::Program& prog, const p4src::Control& c, const std::string& path) {
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string s; std::getline(ss, s, '.');) parts.push_back(s);
  if (parts.empty()) return std::nullopt;
  std::optional<p4src::TypeRef> t;
  for (const auto& p : c.params)
    if (p.name == parts[0]) t = p.type;
  for (const auto& l : c.locals)
    if (l.name == parts[0]) t = l.type;
  for (size_t i = 1; t && i < parts.size(); ++i) {
    const p4src::Composite* comp = prog.CompositeOf(*t);
    if (!comp) {
      auto tna = TnaIntrinsicFields().find(t->name + "." + parts[i]);
      if (tna == TnaIntrinsicFields().end()) return std::nullopt;
      t = tna->second;
      continue;
    }
    std::optional<p4src::TypeRef> next;
    for (const auto& f : comp->fields)
      if (f.name == parts[i]) next = f.type;
    t = next;
  }
  return t;
}

RegisterActionEval::RegisterActionEval(const p4src::Program& prog, const p4src::Control& control,
                                       const p4src::RegisterActionDecl& action)
    : prog_(prog), control_(control), action_(action) {
  if (const p4src::Composite* comp = prog.CompositeOf(action.element)) {
    for (const auto& f : comp->fields) cell_.push_back({f.name, prog.WidthOf(f.type), prog.IsSigned(f.type)});
  } else {
    scalar_cell_ = true;
    cell_.push_back({"", prog.WidthOf(action.element), prog.IsSigned(action.element)});
  }
  for (const Slot& s : cell_) slots_.push_back({action.value_param + (s.name.empty() ? "" : "." + s.name), s.width, s.is_signed});
  result_ = {action.result_param, prog.WidthOf(action.result), prog.IsSigned(action.result)};
  slots_.push_back(result_);
  steps_ = CompileBody(action.body);
}

int RegisterActionEval::NewSlot(const std::string& name, int width, bool is_signed) {
  slots_.push_back({name, width, is_signed});
  return static_cast<int>(slots_.size()) - 1;
}

int RegisterActionEval::SlotFor(const std::string& name, const p4src::Loc& loc) {
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].name == name) return static_cast<int>(i);
  if (name == action_.value_param && !scalar_cell_)
    throw p4src::ReadError(loc.str() + ": RegisterAction " + action_.name + ": whole-struct use of " + name + " is outside the subset");
  const auto type = PathType(prog_, control_, name);
  if (!type) throw p4src::ReadError(loc.str() + ": RegisterAction " + action_.name + ": cannot resolve '" + name + "'");
  const int s = NewSlot(name, prog_.WidthOf(*type), prog_.IsSigned(*type));
  inputs_.push_back(slots_[s]);
  input_slot_.push_back(s);
  return s;
}

int RegisterActionEval::Compile(const p4src::ExprPtr& e) {
  Node n;
  const std::string where = e->loc.str() + ": RegisterAction " + action_.name;
  switch (e->kind) {
    case p4src::Expr::Kind::kLiteral:
      n.op = Node::Op::kLit;
      n.lit = {e->value, e->width, e->is_signed};
      break;
    case p4src::Expr::Kind::kName: {
      // A constant or an enum member, else a variable (cell, result, local, input).
      auto c = prog_.consts.find(e->name);
      const size_t dot = e->name.rfind('.');
      auto en = dot == std::string::npos ? prog_.enums.end() : prog_.enums.find(e->name.substr(0, dot));
      if (c != prog_.consts.end()) {
        n.op = Node::Op::kLit;
        n.lit = {c->second, -1, false};
      } else if (en != prog_.enums.end()) {
        n.op = Node::Op::kLit;
        bool found = false;
        for (const auto& m : en->second.members)
          if (m.first == e->name.substr(dot + 1)) {
            n.lit = {m.second, en->second.underlying.width, false};
            found = true;
          }
        if (!found) throw p4src::ReadError(where + ": no member " + e->name);
      } else {
        n.op = Node::Op::kSlot;
        n.slot = SlotFor(e->name, e->loc);
      }
      break;
    }
    case p4src::Expr::Kind::kUnary:
      n.op = Node::Op::kUnary;
      n.name = e->op;
      n.a = Compile(e->args[0]);
      break;
    case p4src::Expr::Kind::kBinary:
      n.op = Node::Op::kBinary;
      n.name = e->op;
      n.a = Compile(e->args[0]);
      n.b = Compile(e->args[1]);
      break;
    case p4src::Expr::Kind::kCall:
      if ((e->op == "max" || e->op == "min") && e->args.size() == 2) {
        n.op = e->op == "max" ? Node::Op::kMax : Node::Op::kMin;
        n.a = Compile(e->args[0]);
        n.b = Compile(e->args[1]);
      } else {
        throw p4src::ReadError(where + ": call of " + e->op + " is outside the subset");
      }
      break;
    case p4src::Expr::Kind::kCast:
      n.op = Node::Op::kCast;
      n.width = e->type.kind == p4src::TypeRef::Kind::kNamed ? prog_.WidthOf(e->type) : e->type.width;
      n.is_signed = prog_.IsSigned(e->type);
      n.a = Compile(e->args[0]);
      break;
    case p4src::Expr::Kind::kSlice:
      n.op = Node::Op::kSlice;
      n.width = e->hi - e->lo + 1;
      n.lo = e->lo;
      if (n.width <= 0) throw p4src::ReadError(where + ": empty slice");
      n.a = Compile(e->args[0]);
      break;
    case p4src::Expr::Kind::kList:
      throw p4src::ReadError(where + ": a list expression is outside the subset");
    case p4src::Expr::Kind::kTernary:
      n.op = Node::Op::kTernary;
      n.a = Compile(e->args[0]);
      n.b = Compile(e->args[1]);
      n.c = Compile(e->args[2]);
      break;
  }
  nodes_.push_back(n);
  return static_cast<int>(nodes_.size()) - 1;
}

std::vector<RegisterActionEval::Step> RegisterActionEval::CompileBody(const std::vector<p4src::StmtPtr>& body) {
  std::vector<Step> out;
  for (const p4src::StmtPtr& s : body) {
    Step st;
    switch (s->kind) {
      case p4src::Stmt::Kind::kBlock: {
        std::vector<Step> inner = CompileBody(s->then_body);
        out.insert(out.end(), inner.begin(), inner.end());
        continue;
      }
      case p4src::Stmt::Kind::kCall:
      case p4src::Stmt::Kind::kExit:
      case p4src::Stmt::Kind::kReturn:
        throw p4src::ReadError(s->loc.str() + ": RegisterAction " + action_.name +
                               ": calls, exit and return are outside the subset");
      case p4src::Stmt::Kind::kIf:
        st.kind = Step::Kind::kIf;
        st.cond = Compile(s->cond);
        st.then_steps = CompileBody(s->then_body);
        st.else_steps = CompileBody(s->else_body);
        break;
      case p4src::Stmt::Kind::kDecl: {
        const int w = s->type.kind == p4src::TypeRef::Kind::kNamed ? prog_.WidthOf(s->type) : s->type.width;
        st.slot = NewSlot(s->name, w, prog_.IsSigned(s->type));
        if (s->rhs) {
          st.expr = Compile(s->rhs);
        } else {
          p4src::Expr zero;
          zero.value = 0;
          st.expr = Compile(std::make_shared<const p4src::Expr>(zero));
        }
        break;
      }
      case p4src::Stmt::Kind::kAssign: {
        const p4src::Expr* target = s->lhs.get();
        if (target->kind == p4src::Expr::Kind::kSlice) {
          st.slice_lo = target->lo;
          st.slice_width = target->hi - target->lo + 1;
          target = target->args[0].get();
        }
        if (target->kind != p4src::Expr::Kind::kName)
          throw p4src::ReadError(s->loc.str() + ": RegisterAction " + action_.name + ": assignment target outside the subset");
        st.slot = SlotFor(target->name, s->loc);
        st.expr = Compile(s->rhs);
        break;
      }
    }
    out.push_back(std::move(st));
  }
  return out;
}

RegisterActionEval::Val RegisterActionEval::Eval(int node, const uint64_t* vals) const {
  const Node& n = nodes_[node];
  switch (n.op) {
    case Node::Op::kLit: return n.lit;
    case Node::Op::kSlot: {
      const Slot& s = slots_[n.slot];
      return {vals[n.slot], s.width, s.is_signed};
    }
    case Node::Op::kCast: return ApplyCast(Eval(n.a, vals), n.width, n.is_signed);
    case Node::Op::kSlice: {
      const Val a = Eval(n.a, vals);
      return {(a.v >> n.lo) & MaskOf(n.width), n.width, false};
    }
    case Node::Op::kTernary: return Eval(n.a, vals).v != 0 ? Eval(n.b, vals) : Eval(n.c, vals);
    case Node::Op::kUnary: return ApplyUnary(n.name, Eval(n.a, vals));
    case Node::Op::kBinary:
    case Node::Op::kMax:
    case Node::Op::kMin: break;
  }
  const Val a = Eval(n.a, vals);
  // && and || short-circuit.
  if (n.op == Node::Op::kBinary && (n.name == "&&" || n.name == "||")) {
    if (n.name == "&&" && a.v == 0) return {0, 1, false};
    if (n.name == "||" && a.v != 0) return {1, 1, false};
    return {Eval(n.b, vals).v != 0 ? 1u : 0u, 1, false};
  }
  const Val b = Eval(n.b, vals);
  if (n.op == Node::Op::kMax) return ApplyBinary("max", a, b);
  if (n.op == Node::Op::kMin) return ApplyBinary("min", a, b);
  try {
    return ApplyBinary(n.name, a, b);
  } catch (const p4src::ReadError& e) {
    throw p4src::ReadError("RegisterAction " + action_.name + ": " + e.what());
  }
}

void RegisterActionEval::Exec(const std::vector<Step>& steps, uint64_t* vals) const {
  for (const Step& st : steps) {
    if (st.kind == Step::Kind::kIf) {
      Exec(Eval(st.cond, vals).v != 0 ? st.then_steps : st.else_steps, vals);
      continue;
    }
    const Slot& slot = slots_[st.slot];
    const uint64_t wide = Widen(Eval(st.expr, vals));
    if (st.slice_width < 0) {
      vals[st.slot] = wide & MaskOf(slot.width);
    } else {
      const uint64_t m = MaskOf(st.slice_width) << st.slice_lo;
      vals[st.slot] = ((vals[st.slot] & ~m) | ((wide << st.slice_lo) & m)) & MaskOf(slot.width);
    }
  }
}

uint64_t RegisterActionEval::Run(uint64_t* cell, const uint64_t* inputs) const {
  uint64_t vals[64] = {};
  if (slots_.size() > 64) throw p4src::ReadError("RegisterAction " + action_.name + ": too many variables");
  for (size_t i = 0; i < cell_.size(); ++i) vals[i] = cell[i] & MaskOf(cell_[i].width);
  for (size_t i = 0; i < input_slot_.size(); ++i) vals[input_slot_[i]] = inputs[i] & MaskOf(inputs_[i].width);
  Exec(steps_, vals);
  for (size_t i = 0; i < cell_.size(); ++i) cell[i] = vals[i];
  return vals[cell_.size()];
}

}  // namespace inasim::p4tools
