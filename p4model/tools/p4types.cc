#include "p4model/tools/p4types.h"

#include "p4model/tools/p4pipe.h"

#include <map>
#include <optional>
#include <sstream>

namespace inasim::p4tools {
namespace {

using p4src::Expr;
using p4src::Stmt;
using p4src::TypeRef;

/// What the check knows of an expression's type.
struct Ty {
  enum class K { kUnknown, kInt, kBits, kBool } k = K::kUnknown;
  int w = 0;  ///< kBits
  bool s = false;  ///< int<N>
  static Ty Bits(int w, bool s = false) { return {K::kBits, w, s}; }
  static Ty Int() { return {K::kInt, 0, false}; }
  static Ty Bool() { return {K::kBool, 0, false}; }
  bool bits() const { return k == K::kBits; }
  std::string str() const {
    if (k == K::kBool) return "bool";
    return (s ? "int<" : "bit<") + std::to_string(w) + ">";
  }
};

class WidthChecker {
 public:
  explicit WidthChecker(const p4src::Program& prog) : prog_(prog), tna_(TnaIntrinsicComposites()) {}

  std::vector<std::string> Run() {
    for (const auto& c : prog_.controls) Control(c);
    for (const auto& p : prog_.parsers) Parser(p);
    return std::move(errors_);
  }

 private:
  using Scope = std::map<std::string, TypeRef>;

  // --- blocks ----------------------------------------------------------------

  void Control(const p4src::Control& c) {
    control_ = &c;
    scopes_.assign(1, {});
    for (const auto& p : c.params) scopes_[0][p.name] = p.type;
    for (const auto& l : c.locals) scopes_[0][l.name] = l.type;
    for (const auto& ra : c.register_actions) RegisterAction(c, ra);
    for (const auto& a : c.actions) {
      if (!a.body_read) continue;
      Scope params;
      for (const auto& p : a.params) params[p.name] = p.type;
      Body(a.body, std::move(params));
    }
    if (c.apply_read) Body(c.apply, {});
    control_ = nullptr;
  }

  void Parser(const p4src::ParserDecl& p) {
    scopes_.assign(1, {});
    for (const auto& x : p.params) scopes_[0][x.name] = x.type;
    for (const auto& l : p.locals) scopes_[0][l.name] = l.type;
    for (const auto& s : p.states) {
      Body(s.body, {});
      for (const auto& e : s.select) TypeOf(*e);
    }
  }

  /// tna.p4: RegisterAction<T, I, U>(Register<T, I> reg): T and I are the register's.
  void RegisterAction(const p4src::Control& c, const p4src::RegisterActionDecl& ra) {
    for (const auto& r : c.registers) {
      if (r.name != ra.register_name) continue;
      Same(Of(ra.element), Of(r.element), ra.loc, "RegisterAction " + ra.name + "'s element type vs its Register's");
      Same(Of(ra.index), Of(r.index), ra.loc, "RegisterAction " + ra.name + "'s index type vs its Register's");
    }
    Scope params;
    params[ra.value_param] = ra.element;
    if (!ra.result_param.empty()) params[ra.result_param] = ra.result;
    Body(ra.body, std::move(params));
  }

  void Body(const std::vector<p4src::StmtPtr>& body, Scope scope) {
    scopes_.push_back(std::move(scope));
    for (const auto& s : body) Statement(*s);
    scopes_.pop_back();
  }

  void Statement(const Stmt& s) {
    switch (s.kind) {
      case Stmt::Kind::kAssign:
        Same(TypeOf(*s.lhs), TypeOf(*s.rhs), s.loc, "assignment");
        break;
      case Stmt::Kind::kDecl:
        if (s.rhs) Same(Of(s.type), TypeOf(*s.rhs), s.loc, "initialiser of " + s.name);
        scopes_.back()[s.name] = s.type;
        break;
      case Stmt::Kind::kIf:
        TypeOf(*s.cond);
        Body(s.then_body, {});
        Body(s.else_body, {});
        break;
      case Stmt::Kind::kBlock: Body(s.then_body, {}); break;
      case Stmt::Kind::kCall: TypeOf(*s.rhs); break;
      case Stmt::Kind::kExit:
      case Stmt::Kind::kReturn: break;
    }
  }

  // --- types -----------------------------------------------------------------

  /// A declared type as the check sees it: a scalar's width, else unknown.
  Ty Of(const TypeRef& t) const {
    if (t.kind == TypeRef::Kind::kBool) return Ty::Bool();
    if (t.kind == TypeRef::Kind::kBit || t.kind == TypeRef::Kind::kInt)
      return Ty::Bits(t.width, t.kind == TypeRef::Kind::kInt);
    if (t.name.empty() || CompositeOf(t)) return {};
    try {
      return Ty::Bits(prog_.WidthOf(t), prog_.IsSigned(t));
    } catch (const p4src::ReadError&) {
      return {};  // a type the reader does not know (an extern's): no check
    }
  }

  const p4src::Composite* CompositeOf(const TypeRef& t) const {
    if (t.kind == TypeRef::Kind::kNamed)
      if (auto it = tna_.find(t.name); it != tna_.end()) return &it->second;
    return prog_.CompositeOf(t);
  }

  /// The type of a dotted name: a local, parameter or field path; a constant
  /// (an untyped int, as the reader keeps it); a serializable enum's member.
  std::optional<TypeRef> NameType(const std::string& path) const {
    std::vector<std::string> parts;
    std::stringstream ss(path);
    for (std::string s; std::getline(ss, s, '.');) parts.push_back(s);
    if (parts.empty()) return std::nullopt;
    std::optional<TypeRef> t;
    for (auto s = scopes_.rbegin(); s != scopes_.rend() && !t; ++s)
      if (auto it = s->find(parts[0]); it != s->end()) t = it->second;
    for (size_t i = 1; t && i < parts.size(); ++i) {
      const p4src::Composite* c = CompositeOf(*t);
      if (!c) return std::nullopt;
      std::optional<TypeRef> next;
      for (const auto& f : c->fields)
        if (f.name == parts[i]) next = f.type;
      t = next;
    }
    return t;
  }

  Ty NameTy(const std::string& name) const {
    if (auto t = NameType(name)) return Of(*t);
    bool scoped = false;
    const std::string first = name.substr(0, name.find('.'));
    for (const auto& s : scopes_) scoped = scoped || s.count(first);
    if (scoped) return {};
    if (prog_.consts.count(name)) return Ty::Int();
    const size_t dot = name.rfind('.');
    if (dot != std::string::npos)
      if (auto en = prog_.enums.find(name.substr(0, dot)); en != prog_.enums.end()) {
        TypeRef t;
        t.kind = TypeRef::Kind::kNamed;
        t.name = en->first;
        return Of(t);
      }
    return {};
  }

  Ty TypeOf(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::kLiteral:
        if (e.is_bool) return Ty::Bool();
        return e.width < 0 ? Ty::Int() : Ty::Bits(e.width, e.is_signed);
      case Expr::Kind::kName: return NameTy(e.name);
      case Expr::Kind::kUnary: {
        const Ty a = TypeOf(*e.args[0]);
        return e.op == "!" ? Ty::Bool() : a;
      }
      case Expr::Kind::kBinary: return Binary(e);
      case Expr::Kind::kCast: TypeOf(*e.args[0]); return Of(e.type);
      case Expr::Kind::kSlice: return Slice(e);
      case Expr::Kind::kTernary: {
        TypeOf(*e.args[0]);
        return Same(TypeOf(*e.args[1]), TypeOf(*e.args[2]), e.loc, "branches of ?:");
      }
      case Expr::Kind::kCall: return Call(e);
      case Expr::Kind::kList:
        for (const auto& a : e.args) TypeOf(*a);
        return {};
    }
    return {};
  }

  Ty Binary(const Expr& e) {
    const Ty a = TypeOf(*e.args[0]), b = TypeOf(*e.args[1]);
    const std::string& op = e.op;
    if (op == "&&" || op == "||") return Ty::Bool();
    if (op == "<<" || op == ">>") return a;
    if (op == "++") return a.bits() && b.bits() ? Ty::Bits(a.w + b.w, a.s) : Ty{};
    const Ty t = Same(a, b, e.loc, "operands of " + op);
    if (op == "==" || op == "!=" || op == "<" || op == ">" || op == "<=" || op == ">=") return Ty::Bool();
    return t;
  }

  Ty Slice(const Expr& e) {
    const Ty a = TypeOf(*e.args[0]);
    if (e.hi < e.lo) {
      Fail(e.loc, "slice [" + std::to_string(e.hi) + ":" + std::to_string(e.lo) + "] has hi < lo");
      return {};
    }
    if (a.bits() && e.hi >= a.w)
      Fail(e.loc, "slice [" + std::to_string(e.hi) + ":" + std::to_string(e.lo) + "] of a " + a.str() +
                      " value (bit " + std::to_string(e.hi) + " does not exist)");
    return Ty::Bits(e.hi - e.lo + 1);
  }

  Ty Call(const Expr& e) {
    const size_t dot = e.op.rfind('.');
    const std::string obj = dot == std::string::npos ? "" : e.op.substr(0, dot);
    const std::string method = dot == std::string::npos ? e.op : e.op.substr(dot + 1);
    std::vector<Ty> args;
    for (const auto& a : e.args) args.push_back(TypeOf(*a));
    if (method == "isValid" && args.empty()) return Ty::Bool();
    if (method == "minSizeInBytes" || method == "minSizeInBits") return Ty::Int();
    if (obj.empty() && (method == "max" || method == "min") && args.size() == 2)
      return Same(args[0], args[1], e.loc, "arguments of " + method);
    if (!control_ || obj.empty()) {
      if (control_ && obj.empty())
        if (const auto* a = control_->FindAction(method)) Arguments(e, args, a->params, "action " + method);
      return {};
    }
    if (method == "execute")
      if (const auto* ra = control_->FindRegisterAction(obj)) {
        if (args.size() == 1) Same(Of(ra->index), args[0], e.loc, "index of " + obj + ".execute");
        return Of(ra->result);
      }
    if (method == "apply")
      if (const auto* inst = control_->FindInstance(obj))
        if (const auto* sub = prog_.FindControl(inst->type)) Arguments(e, args, sub->params, obj + ".apply");
    return {};
  }

  /// Each argument against its parameter: in, out and inout alike take only
  /// an argument of the parameter's type (an untyped int converts to an in).
  void Arguments(const Expr& e, const std::vector<Ty>& args, const std::vector<p4src::Param>& params,
                 const std::string& what) {
    if (args.size() != params.size()) return;  // the reader's runs report a count mismatch
    for (size_t i = 0; i < args.size(); ++i)
      Same(Of(params[i].type), args[i], e.loc, "argument " + params[i].name + " of " + what);
  }

  /// The common type of two that must agree; an untyped int takes the other.
  Ty Same(Ty want, Ty got, const p4src::Loc& loc, const std::string& what) {
    if (want.k == Ty::K::kUnknown || got.k == Ty::K::kUnknown) return want.k == Ty::K::kUnknown ? got : want;
    if (got.k == Ty::K::kInt) return want;
    if (want.k == Ty::K::kInt) return got;
    const bool differ = want.k != got.k || (want.bits() && (want.w != got.w || want.s != got.s));
    if (!differ) return want;
    Fail(loc, what + ": " + got.str() + " where " + want.str() + " is needed (P4_16 8.11.2: no implicit cast between them)");
    return {};  // one violation, not one more per enclosing expression
  }

  void Fail(const p4src::Loc& loc, const std::string& what) { errors_.push_back(loc.str() + ": " + what); }

  const p4src::Program& prog_;
  const std::map<std::string, p4src::Composite>& tna_;
  const p4src::Control* control_ = nullptr;
  std::vector<Scope> scopes_;
  std::vector<std::string> errors_;
};

}  // namespace

std::vector<std::string> WidthViolations(const p4src::Program& prog) { return WidthChecker(prog).Run(); }

void RequireValidWidths(const p4src::Program& prog) {
  const std::vector<std::string> v = WidthViolations(prog);
  if (v.empty()) return;
  std::string msg = "not valid P4: " + v[0];
  for (size_t i = 1; i < v.size() && i < 10; ++i) msg += "\n  also " + v[i];
  if (v.size() > 10) msg += "\n  and " + std::to_string(v.size() - 10) + " more";
  throw p4src::InvalidP4(msg);
}

}  // namespace inasim::p4tools
