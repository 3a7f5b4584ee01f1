#include "p4model/tools/p4pipe.h"

#include <algorithm>
#include <random>
#include <regex>
#include <unordered_map>
#include <sstream>

namespace inasim::p4tools {
namespace {

using p4src::ReadError;
using u128 = unsigned __int128;

struct Var {
  uint64_t v = 0;
  int w = 0;
  bool s = false;
  bool written = false;
};

struct Header {
  const p4src::Composite* type = nullptr;
  bool valid = false;
  std::vector<u128> f;
  std::vector<int> w;
  std::vector<bool> s;
  int bits = 0;
  /// Zero bits after the fields up to a whole byte: a header that is not
  /// (only an `@flexible` bridged header may be) is laid out as the compiler
  /// pads it, the fields in declared order.
  int pad = 0;
};

/// A parser error (the frame is shorter than an extract, or no select case matched).
struct ParserError {};

enum class Flow { kNext, kExit, kReturn };

u128 Mask128(int w) { return w >= 128 ? ~u128{0} : (u128{1} << w) - 1; }

p4src::Composite Builtin(const std::string& name, bool is_header, const std::vector<std::pair<const char*, int>>& fields) {
  p4src::Composite c;
  c.name = name;
  c.is_header = is_header;
  for (const auto& [n, w] : fields) {
    p4src::Field f;
    f.name = n;
    f.type.kind = p4src::TypeRef::Kind::kBit;
    f.type.width = w;
    c.fields.push_back(f);
  }
  return c;
}

std::map<std::string, p4src::Composite> MakeTnaComposites() {
  std::map<std::string, p4src::Composite> m;
  m["ingress_intrinsic_metadata_t"] =
      Builtin("ingress_intrinsic_metadata_t", true,
              {{"resubmit_flag", 1}, {"_pad1", 1}, {"packet_version", 2}, {"_pad2", 3}, {"ingress_port", 9},
               {"ingress_mac_tstamp", 48}});
  m["ingress_intrinsic_metadata_from_parser_t"] =
      Builtin("ingress_intrinsic_metadata_from_parser_t", false, {{"global_tstamp", 48}, {"global_ver", 32}, {"parser_err", 16}});
  m["ingress_intrinsic_metadata_for_deparser_t"] =
      Builtin("ingress_intrinsic_metadata_for_deparser_t", false,
              {{"drop_ctl", 3}, {"digest_type", 3}, {"resubmit_type", 3}, {"mirror_type", 3}});
  m["ingress_intrinsic_metadata_for_tm_t"] =
      Builtin("ingress_intrinsic_metadata_for_tm_t", false,
              {{"ucast_egress_port", 9}, {"bypass_egress", 1}, {"deflect_on_drop", 1}, {"ingress_cos", 3}, {"qid", 5},
               {"icos_for_copy_to_cpu", 3}, {"copy_to_cpu", 1}, {"packet_color", 2}, {"disable_ucast_cutthru", 1},
               {"enable_mcast_cutthru", 1}, {"mcast_grp_a", 16}, {"mcast_grp_b", 16}, {"level1_mcast_hash", 13},
               {"level2_mcast_hash", 13}, {"level1_exclusion_id", 16}, {"level2_exclusion_id", 9}, {"rid", 16}});
  // Egress: as tofino1_arch.p4 declares them; the evaluator sets egress_port only.
  m["egress_intrinsic_metadata_t"] = Builtin(
      "egress_intrinsic_metadata_t", true,
      {{"_pad0", 7}, {"egress_port", 9}, {"_pad1", 5}, {"enq_qdepth", 19}, {"_pad2", 6}, {"enq_congest_stat", 2},
       {"_pad3", 14}, {"enq_tstamp", 18}, {"_pad4", 5}, {"deq_qdepth", 19}, {"_pad5", 6}, {"deq_congest_stat", 2},
       {"app_pool_congest_stat", 8}, {"_pad6", 14}, {"deq_timedelta", 18}, {"egress_rid", 16}, {"_pad7", 7},
       {"egress_rid_first", 1}, {"_pad8", 3}, {"egress_qid", 5}, {"_pad9", 5}, {"egress_cos", 3}, {"_pad10", 7},
       {"deflection_flag", 1}, {"pkt_length", 16}});
  m["egress_intrinsic_metadata_from_parser_t"] =
      Builtin("egress_intrinsic_metadata_from_parser_t", false, {{"global_tstamp", 48}, {"global_ver", 32}, {"parser_err", 16}});
  m["egress_intrinsic_metadata_for_deparser_t"] =
      Builtin("egress_intrinsic_metadata_for_deparser_t", false,
              {{"drop_ctl", 3}, {"mirror_type", 3}, {"coalesce_flush", 1}, {"coalesce_length", 7}});
  m["egress_intrinsic_metadata_for_output_port_t"] =
      Builtin("egress_intrinsic_metadata_for_output_port_t", false,
              {{"capture_tstamp_on_tx", 1}, {"update_delay_on_tx", 1}, {"force_tx_error", 1}, {"drop_ctl", 3}});
  return m;
}

/// tofino1_specs.p4 `const bit<32> PORT_METADATA_SIZE = 32w64`: the port
/// metadata the parser skips after the intrinsic metadata.
constexpr int kPortMetadataBits = 64;

}  // namespace

const std::map<std::string, p4src::Composite>& TnaIntrinsicComposites() {
  static const std::map<std::string, p4src::Composite> m = MakeTnaComposites();
  return m;
}

std::string PipelineOutcome::Describe() const {
  std::ostringstream o;
  if (passes > 1) o << passes << " passes, ";
  if (dropped) return o.str() + "drop (" + why + ")";
  if (unicast) o << "port " << port;
  if (multicast) o << (unicast ? " + " : "") << "group " << group;
  o << ":";
  for (const Copy& c : copies) o << " [" << c.port << (c.dropped ? " dropped by egress" : "") << "]";
  if (copies.empty()) o << " no copies";
  return o.str();
}

/// What one gress did: its parser accepted, and the deparsed frame (headers,
/// then the unparsed rest).
struct GressResult {
  bool parsed = false;
  std::vector<uint8_t> frame;
};

/// One ingress pass on the port's pipe, with what it told the traffic manager.
struct IngressPass {
  GressResult gress;
  bool unicast = false, multicast = false, bypass = false, drop = false;
  uint16_t port = 0, group = 0, l1_xid = 0;
};

/// One gress: parser, control, deparser.
struct Gress {
  const p4src::ParserDecl* parser = nullptr;
  const p4src::Control* control = nullptr;
  const p4src::Control* deparser = nullptr;
};

struct PipelineEval::Impl {
  const p4src::Program& prog;
  Gress ingress, egress;
  bool has_egress = false;
  SwitchConfig config;
  struct Touch {
    uint32_t pipe;
    std::string reg;  // instance path + register (or Counter)
    uint32_t index;
    bool counter;     // a Counter's packet count, not a register cell
  };
  std::vector<Touch> touched;  // register cells and counter indices this run used
  uint32_t pipe = 0;           // the pipe the running gress is in
  std::string path;            // the running control instance ("Ingress.value00")
  bool exiting = false;        // `exit` ran: the rest of the control is skipped
  const p4src::ParserDecl* parser_block = nullptr;  // the parser running, for its externs
  std::map<std::string, std::vector<std::pair<u128, int>>> checksum_fields;  // a parser Checksum's add()s
  std::map<std::string, std::map<uint64_t, uint64_t>> counters;  // "pipe|path.counter" -> index -> packets
  std::mt19937_64 random{1};  // Random.get()'s draws
  std::optional<uint64_t> current_entry;  // the table entry whose action runs (a DirectRegister's cell)
  const std::map<std::string, p4src::Composite>& tna = TnaIntrinsicComposites();
  std::map<std::string, Header> headers;                    // canonical path -> header instance
  std::map<std::string, const p4src::Composite*> structs;  // canonical path -> struct type
  std::map<std::string, Var> vars;                         // canonical path -> scalar
  std::map<std::string, std::string> alias;                // this block's names -> canonical roots
  std::vector<std::map<std::string, Var>> scopes;          // action parameters, declared locals
  const p4src::Control* block = nullptr;                   // the control whose apply runs
  std::string packet_in, packet_out;
  std::map<std::string, std::unique_ptr<RegisterActionEval>> actions;
  std::map<std::string, std::vector<p4src::ExprPtr>> input_exprs;  // per register action
  // "pipe|path.register" -> index -> fields: only the cells a run touches
  // exist (zero until then), so a fresh switch per run allocates nothing big.
  std::map<std::string, std::unordered_map<uint64_t, std::vector<uint64_t>>> cells;
  std::vector<uint8_t> in;
  size_t cursor = 0;  // bits into `in`
  std::vector<uint8_t> out;
  int out_bits = 0;

  explicit Impl(const p4src::Program& p) : prog(p) {}

  /// Runs one gress on `prefix` + `frame`; the control's results stay in vars
  /// for the caller to read (the traffic manager's fields, drop_ctl).
  GressResult RunGress(const Gress& g, std::vector<uint8_t> prefix, const std::vector<uint8_t>& frame);
  IngressPass RunIngressPass(const std::vector<uint8_t>& frame, uint16_t port);
  const Var* FindVar(const std::string& canonical) const;

  const p4src::Composite* CompositeOf(const p4src::TypeRef& t) const {
    if (t.kind == p4src::TypeRef::Kind::kNamed) {
      auto it = tna.find(t.name);
      if (it != tna.end()) return &it->second;
    }
    return prog.CompositeOf(t);
  }

  void Flatten(const std::string& path, const p4src::TypeRef& t) {
    const p4src::Composite* c = CompositeOf(t);
    if (!c) {
      Var v;
      v.w = prog.WidthOf(t);
      v.s = prog.IsSigned(t);
      vars[path] = v;
      return;
    }
    if (!c->is_header) {
      structs[path] = c;
      for (const auto& f : c->fields) Flatten(path + "." + f.name, f.type);
      return;
    }
    Header h;
    h.type = c;
    for (const auto& f : c->fields) {
      const int w = f.type.kind == p4src::TypeRef::Kind::kBit || f.type.kind == p4src::TypeRef::Kind::kInt
                        ? f.type.width
                        : prog.WidthOf(f.type);
      h.w.push_back(w);
      h.s.push_back(f.type.kind == p4src::TypeRef::Kind::kInt);
      h.f.push_back(0);
      h.bits += w;
    }
    h.pad = (8 - h.bits % 8) % 8;
    headers[path] = h;
  }

  /// Binds a block's parameters: one storage per type (the parser's `out hdr`
  /// is the control's `inout hdr` and the deparser's `in hdr`).
  void Bind(const std::vector<p4src::Param>& params, const std::vector<p4src::Field>& locals, const std::string& block_name) {
    alias.clear();
    for (const auto& p : params) {
      if (p.type.kind == p4src::TypeRef::Kind::kNamed && p.type.name == "packet_in") {
        packet_in = p.name;
        continue;
      }
      if (p.type.kind == p4src::TypeRef::Kind::kNamed && p.type.name == "packet_out") {
        packet_out = p.name;
        continue;
      }
      const std::string root = "@" + p.type.str();
      if (!headers.count(root) && !structs.count(root) && !vars.count(root)) Flatten(root, p.type);
      alias[p.name] = root;
    }
    for (const auto& l : locals) {
      const std::string root = "%" + block_name + "." + l.name;
      if (!vars.count(root) && !headers.count(root) && !structs.count(root)) Flatten(root, l.type);
      alias[l.name] = root;
    }
  }

  void ResetPacket() {
    for (auto& [_, v] : vars) v.v = 0, v.written = false;
    for (auto& [_, h] : headers) {
      h.valid = false;
      std::fill(h.f.begin(), h.f.end(), u128{0});
    }
    scopes.clear();
    checksum_fields.clear();
    exiting = false;
  }

  // --- names ---------------------------------------------------------------

  struct Ref {
    Var* var = nullptr;
    Header* h = nullptr;
    int field = -1;
  };

  std::string Canonical(const std::string& path) const {
    const size_t dot = path.find('.');
    const std::string first = path.substr(0, dot);
    auto a = alias.find(first);
    if (a == alias.end()) return "";
    return a->second + (dot == std::string::npos ? "" : path.substr(dot));
  }

  Ref Lookup(const std::string& path, const p4src::Loc& loc) {
    for (auto s = scopes.rbegin(); s != scopes.rend(); ++s) {
      auto it = s->find(path);
      if (it != s->end()) return {&it->second, nullptr, -1};
    }
    const std::string c = Canonical(path);
    if (!c.empty()) {
      if (auto v = vars.find(c); v != vars.end()) return {&v->second, nullptr, -1};
      const size_t dot = c.rfind('.');
      if (dot != std::string::npos) {
        if (auto h = headers.find(c.substr(0, dot)); h != headers.end()) {
          const std::string field = c.substr(dot + 1);
          for (size_t i = 0; i < h->second.type->fields.size(); ++i)
            if (h->second.type->fields[i].name == field) return {nullptr, &h->second, static_cast<int>(i)};
        }
      }
    }
    throw ReadError(loc.str() + ": cannot resolve '" + path + "'");
  }

  Header& HeaderAt(const std::string& path, const p4src::Loc& loc) {
    auto h = headers.find(Canonical(path));
    if (h == headers.end()) throw ReadError(loc.str() + ": '" + path + "' is not a header");
    return h->second;
  }

  P4Val Read(const Ref& r, const p4src::Loc& loc) const {
    if (r.var) return {r.var->v, r.var->w, r.var->s};
    const int w = r.h->w[r.field];
    if (w > 64) throw ReadError(loc.str() + ": a field of " + std::to_string(w) + " bits in an expression");
    return {static_cast<uint64_t>(r.h->f[r.field]), w, static_cast<bool>(r.h->s[r.field])};
  }

  void Write(const Ref& r, P4Val val, int slice_lo, int slice_w) {
    const int w = r.var ? r.var->w : r.h->w[r.field];
    const u128 wide = Widen(val);
    u128 cur = r.var ? r.var->v : r.h->f[r.field];
    if (slice_w < 0) {
      cur = wide & Mask128(w);
    } else {
      const u128 m = Mask128(slice_w) << slice_lo;
      cur = ((cur & ~m) | ((wide << slice_lo) & m)) & Mask128(w);
    }
    if (r.var) {
      r.var->v = static_cast<uint64_t>(cur);
      r.var->written = true;
    } else {
      r.h->f[r.field] = cur;
    }
  }

  std::optional<P4Val> Constant(const std::string& name) const {
    if (auto c = prog.consts.find(name); c != prog.consts.end()) return P4Val{c->second, -1, false};
    const size_t dot = name.rfind('.');
    if (dot != std::string::npos)
      if (auto en = prog.enums.find(name.substr(0, dot)); en != prog.enums.end())
        for (const auto& m : en->second.members)
          if (m.first == name.substr(dot + 1)) return P4Val{m.second, en->second.underlying.width, false};
    if (name == "PORT_METADATA_SIZE") return P4Val{kPortMetadataBits, 32, false};
    return std::nullopt;
  }

  // --- expressions -----------------------------------------------------------

  P4Val Eval(const p4src::ExprPtr& e) {
    using K = p4src::Expr::Kind;
    switch (e->kind) {
      case K::kLiteral: return {e->value, e->width, e->is_signed};
      case K::kName: {
        if (auto hit = TableApplyResult(e->name, e->loc)) return *hit;
        bool scoped = false;
        for (const auto& s : scopes) scoped = scoped || s.count(e->name);
        if (!scoped && Canonical(e->name).empty())
          if (auto c = Constant(e->name)) return *c;
        return Read(Lookup(e->name, e->loc), e->loc);
      }
      case K::kUnary: return ApplyUnary(e->op, Eval(e->args[0]));
      case K::kBinary: {
        const P4Val a = Eval(e->args[0]);
        if (e->op == "&&") return {a.v != 0 && Eval(e->args[1]).v != 0 ? 1u : 0u, 1, false};
        if (e->op == "||") return {a.v != 0 || Eval(e->args[1]).v != 0 ? 1u : 0u, 1, false};
        try {
          return ApplyBinary(e->op, a, Eval(e->args[1]));
        } catch (const ReadError& err) {
          throw ReadError(e->loc.str() + ": " + err.what());
        }
      }
      case K::kCast: {
        const int w = e->type.kind == p4src::TypeRef::Kind::kNamed ? prog.WidthOf(e->type) : e->type.width;
        return ApplyCast(Eval(e->args[0]), w, prog.IsSigned(e->type));
      }
      case K::kSlice: {
        const P4Val a = Eval(e->args[0]);
        const int w = e->hi - e->lo + 1;
        return {(a.v >> e->lo) & MaskOf(w), w, false};
      }
      case K::kTernary: return Eval(e->args[0]).v != 0 ? Eval(e->args[1]) : Eval(e->args[2]);
      case K::kCall: return Call(*e, true);
      case K::kList: break;
    }
    throw ReadError(e->loc.str() + ": a list outside a checksum's update");
  }

  /// `t.apply().hit` / `.miss` (the reader keeps it as one name): applies
  /// table t of the running control and gives whether an entry matched.
  std::optional<P4Val> TableApplyResult(const std::string& name, const p4src::Loc& loc) {
    static const std::string kApply = ".apply().";
    const size_t at = name.find(kApply);
    if (at == std::string::npos || !block) return std::nullopt;
    const std::string field = name.substr(at + kApply.size());
    const p4src::TableDecl* t = block->FindTable(name.substr(0, at));
    if (!t || (field != "hit" && field != "miss")) return std::nullopt;
    const bool hit = ApplyTable(*t, loc);
    return P4Val{(field == "hit") == hit ? 1u : 0u, 1, false};
  }

  /// Splits "a.b.method" into ("a.b", "method").
  static std::pair<std::string, std::string> Method(const std::string& op) {
    const size_t dot = op.rfind('.');
    if (dot == std::string::npos) return {"", op};
    return {op.substr(0, dot), op.substr(dot + 1)};
  }

  P4Val Call(const p4src::Expr& e, bool want_value) {
    const auto [obj, method] = Method(e.op);
    if (!obj.empty() && method == "execute" && block && block->FindRegisterAction(obj)) return Execute(obj, e);
    if (!obj.empty() && method == "isValid") return {HeaderAt(obj, e.loc).valid ? 1u : 0u, 1, false};
    if (!obj.empty() && (method == "minSizeInBytes" || method == "minSizeInBits") && e.args.empty()) {
      const int bits = HeaderAt(obj, e.loc).bits;  // fixed-size headers: the size
      return {static_cast<uint64_t>(method == "minSizeInBits" ? bits : bits / 8), 32, false};
    }
    if (!obj.empty() && method == "update" && e.args.size() == 1 && e.args[0]->kind == p4src::Expr::Kind::kList)
      return Checksum(*e.args[0]);
    if (obj.empty() && (method == "max" || method == "min") && e.args.size() == 2)
      return ApplyBinary(method, Eval(e.args[0]), Eval(e.args[1]));
    if (const p4src::Instance* inst = FindExtern(obj)) return CallExtern(*inst, method, e);
    if (want_value) throw ReadError(e.loc.str() + ": call of " + e.op + " in an expression is outside the subset");
    if (!obj.empty() && method == "apply" && block && block->FindInstance(obj)) {
      ApplyInstance(*block->FindInstance(obj), e);
    } else if (!obj.empty() && method == "apply" && block && block->FindTable(obj)) {
      ApplyTable(*block->FindTable(obj), e.loc);
    } else if (obj == packet_in && !obj.empty() && method == "extract" && e.args.size() == 1) {
      Extract(e.args[0]->name, e.loc);
    } else if (obj == packet_in && !obj.empty() && method == "advance" && e.args.size() == 1) {
      cursor += Eval(e.args[0]).v;
    } else if (obj == packet_out && !obj.empty() && method == "emit" && e.args.size() == 1) {
      Emit(Canonical(e.args[0]->name), e.loc);
    } else if (!obj.empty() && (method == "setValid" || method == "setInvalid")) {
      HeaderAt(obj, e.loc).valid = method == "setValid";
    } else if (obj.empty() && block && block->FindAction(method)) {
      std::vector<P4Val> args;
      for (const auto& a : e.args) args.push_back(Eval(a));
      RunAction(*block->FindAction(method), args, e.loc);
    } else if (obj.empty() && method == "NoAction") {
    } else {
      throw ReadError(e.loc.str() + ": call of " + e.op + " is outside the subset");
    }
    return {};
  }

  /// An extern instance of the running control or parser (Counter,
  /// DirectCounter, Random, Checksum), or nullptr.
  const p4src::Instance* FindExtern(const std::string& name) const {
    if (name.empty()) return nullptr;
    const p4src::Instance* inst = nullptr;
    if (block) inst = block->FindInstance(name);
    if (!block && parser_block)
      for (const auto& x : parser_block->instances)
        if (x.name == name) inst = &x;
    if (!inst || prog.FindControl(inst->type)) return nullptr;
    return inst;
  }

  P4Val CallExtern(const p4src::Instance& inst, const std::string& method, const p4src::Expr& e) {
    const std::string key = std::to_string(pipe) + "|" + path + "." + inst.name;
    if (inst.type == "Counter" && method == "count" && e.args.size() == 1) {
      uint64_t index = Eval(e.args[0]).v;
      // Counter<T, I>(size, type): like a register, addressed with the
      // index's low bits.
      if (inst.args.empty()) throw ReadError(inst.loc.str() + ": Counter " + inst.name + " without a size");
      const uint64_t size = Eval(inst.args[0]).v;
      index = size != 0 && (size & (size - 1)) == 0 ? index & (size - 1) : index % std::max<uint64_t>(size, 1);
      ++counters[key][index];
      touched.push_back({pipe, path + "." + inst.name, static_cast<uint32_t>(index), true});
      return {};
    }
    if (inst.type == "DirectCounter" && method == "count" && e.args.empty()) {
      // The packets of the table entry whose action runs (kDefaultActionEntry:
      // the default action's); bytes are not counted.
      const uint64_t index = current_entry.value_or(p4::kDefaultActionEntry);
      ++counters[key][index];
      touched.push_back({pipe, path + "." + inst.name, static_cast<uint32_t>(index), true});
      return {};
    }
    if (inst.type == "Random" && method == "get" && e.args.empty()) {
      // Tofino's generator is not public: a fixed-seed draw of Random<T>'s
      // width. Bindings compare only where no draw can change the outcome
      // (SwitchML: a drop probability of 0 or 0xffff, saturating).
      if (inst.type_args.size() != 1) throw ReadError(inst.loc.str() + ": Random " + inst.name + " without its type");
      const p4src::TypeRef& t = inst.type_args[0];
      const int w = t.kind == p4src::TypeRef::Kind::kNamed ? prog.WidthOf(t) : t.width;
      return {random() & MaskOf(w), w, false};
    }
    if (inst.type == "Checksum" && method == "add" && e.args.size() == 1) {
      const Header& h = HeaderAt(e.args[0]->name, e.loc);
      for (size_t i = 0; i < h.f.size(); ++i) checksum_fields[inst.name].push_back({h.f[i], h.w[i]});
      return {};
    }
    if (inst.type == "Checksum" && method == "verify" && e.args.empty()) {
      // True when the added fields' ones' complement sum is not all ones.
      const P4Val sum = OnesComplement(checksum_fields[inst.name]);
      return {sum.v != 0 ? 1u : 0u, 1, false};
    }
    throw ReadError(e.loc.str() + ": " + inst.type + "." + method + " is outside the subset");
  }

  /// `inst.apply(args)` of a control instance: the sub-control runs with its
  /// own registers, tables and locals (instance path "caller.inst"). Header
  /// and struct arguments are passed by reference (P4's copy-in/copy-out gives
  /// the same result for them: no argument is passed twice); scalars are
  /// copied in and, for out/inout, copied back after the apply, so
  /// `value00.apply(hdr.d0.d00, ..., hdr.d0.d00, ...)` reads the old value
  /// and writes the new one. An `out` scalar is copied in too: one the
  /// control does not write keeps its value (the model's reading of what P4
  /// leaves unspecified, protocols/switchml/dataplane/README.md).
  void ApplyInstance(const p4src::Instance& inst, const p4src::Expr& e) {
    const p4src::Control* sub = prog.FindControl(inst.type);
    if (!sub || !sub->apply_read) throw ReadError(inst.loc.str() + ": control " + inst.type + "'s apply is missing or outside the subset");
    if (sub->params.size() != e.args.size())
      throw ReadError(e.loc.str() + ": " + inst.name + ".apply takes " + std::to_string(sub->params.size()) + " arguments");
    const std::string sub_path = path + "." + inst.name;
    std::map<std::string, std::string> sub_alias;
    std::vector<std::pair<std::string, p4src::ExprPtr>> copy_back;  // sub-control storage, caller lvalue
    for (size_t i = 0; i < sub->params.size(); ++i) {
      const p4src::Param& p = sub->params[i];
      const p4src::ExprPtr& a = e.args[i];
      if (CompositeOf(p.type)) {
        if (a->kind != p4src::Expr::Kind::kName || Canonical(a->name).empty())
          throw ReadError(e.loc.str() + ": argument " + std::to_string(i) + " of " + inst.name + ".apply is not a header or struct");
        sub_alias[p.name] = Canonical(a->name);
        continue;
      }
      const std::string root = "%" + sub_path + "." + p.name;
      if (!vars.count(root)) Flatten(root, p.type);
      Var& v = vars[root];
      v.v = Widen(Eval(a)) & MaskOf(v.w);
      v.written = false;
      sub_alias[p.name] = root;
      if (p.direction == "out" || p.direction == "inout") copy_back.emplace_back(root, a);
    }
    for (const auto& l : sub->locals) {
      const std::string root = "%" + sub_path + "." + l.name;
      if (!vars.count(root) && !headers.count(root) && !structs.count(root)) Flatten(root, l.type);
      sub_alias[l.name] = root;
    }
    const p4src::Control* saved_block = block;
    std::string saved_path = std::move(path);
    std::map<std::string, std::string> saved_alias = std::move(alias);
    std::vector<std::map<std::string, Var>> saved_scopes = std::move(scopes);
    block = sub;
    path = sub_path;
    alias = std::move(sub_alias);
    scopes.clear();
    Exec(sub->apply);
    block = saved_block;
    path = std::move(saved_path);
    alias = std::move(saved_alias);
    scopes = std::move(saved_scopes);
    for (const auto& [root, lvalue] : copy_back) {
      const Var& v = vars.at(root);
      AssignTo(*lvalue, {v.v, v.w, v.s}, e.loc);
    }
  }

  /// Writes `v` to an lvalue expression: a name or a slice of one.
  void AssignTo(const p4src::Expr& lhs, P4Val v, const p4src::Loc& loc) {
    const p4src::Expr* target = &lhs;
    int lo = 0, w = -1;
    if (target->kind == p4src::Expr::Kind::kSlice) {
      lo = target->lo;
      w = target->hi - target->lo + 1;
      target = target->args[0].get();
    }
    if (target->kind != p4src::Expr::Kind::kName) throw ReadError(loc.str() + ": assignment to something not a name");
    Write(Lookup(target->name, loc), v, lo, w);
  }

  P4Val Execute(const std::string& name, const p4src::Expr& e) {
    const p4src::RegisterActionDecl* a = block->FindRegisterAction(name);
    auto& ev = actions[path + "." + name];
    if (!ev) ev = std::make_unique<RegisterActionEval>(prog, *block, *a);
    const size_t fields = ev->cell().size();
    const std::string reg_path = path + "." + a->register_name;
    uint64_t index = 0;
    if (a->direct) {
      // A DirectRegister has one cell per entry of its table: the entry
      // whose action is running.
      if (!e.args.empty()) throw ReadError(e.loc.str() + ": a direct register action's execute takes no index");
      if (!current_entry) throw ReadError(e.loc.str() + ": " + name + " runs outside a table entry's action");
      index = *current_entry;
    } else {
      const p4src::RegisterDecl* reg = nullptr;
      for (const auto& r : block->registers)
        if (r.name == a->register_name) reg = &r;
      if (!reg) throw ReadError(a->loc.str() + ": no register " + a->register_name);
      if (e.args.size() != 1) throw ReadError(e.loc.str() + ": execute takes one index");
      index = Eval(e.args[0]).v;
      // Tofino addresses a register with the index's low bits.
      index = (reg->size & (reg->size - 1)) == 0 ? index & (reg->size - 1) : index % reg->size;
    }
    std::vector<uint64_t>& cell = cells[std::to_string(pipe) + "|" + reg_path][index];
    if (cell.empty()) cell.assign(fields, 0);
    // The action's outside reads, as name expressions built once per action.
    std::vector<p4src::ExprPtr>& reads = input_exprs[path + "." + name];
    if (reads.size() != ev->inputs().size()) {
      reads.clear();
      for (const auto& in_slot : ev->inputs()) {
        p4src::Expr name_expr;
        name_expr.kind = p4src::Expr::Kind::kName;
        name_expr.name = in_slot.name;
        name_expr.loc = a->loc;
        reads.push_back(std::make_shared<const p4src::Expr>(name_expr));
      }
    }
    std::vector<uint64_t> inputs;
    for (const auto& read : reads) inputs.push_back(Eval(read).v);
    const uint64_t r = ev->Run(cell.data(), inputs.data());
    touched.push_back({pipe, reg_path, static_cast<uint32_t>(index), false});  // direct: the entry's index
    return {r, ev->result().width, ev->result().is_signed};
  }

  /// Tofino's Checksum: the 16-bit ones' complement of the ones' complement sum
  /// of the listed fields, concatenated (RFC 1071).
  P4Val Checksum(const p4src::Expr& list) {
    std::vector<std::pair<u128, int>> parts;
    for (const auto& a : list.args) {
      const Ref r = Lookup(a->name, a->loc);
      parts.push_back({r.var ? u128{r.var->v} : r.h->f[r.field], r.var ? r.var->w : r.h->w[r.field]});
    }
    return OnesComplement(parts);
  }

  /// The 16-bit ones' complement of the ones' complement sum of the fields
  /// concatenated, in 16-bit words (RFC 1071).
  static P4Val OnesComplement(const std::vector<std::pair<u128, int>>& parts) {
    uint64_t sum = 0;
    u128 acc = 0;
    int acc_bits = 0;
    for (const auto& [v, w] : parts) {
      for (int b = w - 1; b >= 0; --b) {
        acc = acc << 1 | ((v >> b) & 1);
        if (++acc_bits == 16) {
          sum += static_cast<uint64_t>(acc);
          acc = 0;
          acc_bits = 0;
        }
      }
    }
    if (acc_bits > 0) sum += static_cast<uint64_t>(acc << (16 - acc_bits));
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return {~sum & 0xffff, 16, false};
  }

  // --- statements ------------------------------------------------------------

  Flow Exec(const std::vector<p4src::StmtPtr>& body) {
    for (const auto& s : body) {
      const Flow f = Exec(*s);
      if (exiting) return Flow::kExit;
      if (f != Flow::kNext) return f;
    }
    return Flow::kNext;
  }

  Flow Exec(const p4src::Stmt& s) {
    using K = p4src::Stmt::Kind;
    switch (s.kind) {
      case K::kBlock: return Exec(s.then_body);
      case K::kIf: return Exec(Eval(s.cond).v != 0 ? s.then_body : s.else_body);
      case K::kExit: exiting = true; return Flow::kExit;
      case K::kReturn: return Flow::kReturn;
      case K::kCall: Call(*s.rhs, false); return Flow::kNext;
      case K::kDecl: {
        if (scopes.empty()) scopes.emplace_back();
        Var v;
        v.w = s.type.kind == p4src::TypeRef::Kind::kNamed ? prog.WidthOf(s.type) : s.type.width;
        v.s = prog.IsSigned(s.type);
        if (s.rhs) v.v = Widen(Eval(s.rhs)) & MaskOf(v.w);
        scopes.back()[s.name] = v;
        return Flow::kNext;
      }
      case K::kAssign: {
        if (s.rhs->kind == p4src::Expr::Kind::kCall && s.rhs->op == "port_metadata_unpack") {
          PortMetadataUnpack(*s.lhs, s.loc);
          return Flow::kNext;
        }
        AssignTo(*s.lhs, Eval(s.rhs), s.loc);
        return Flow::kNext;
      }
    }
    return Flow::kNext;
  }

  /// TNA's `port_metadata_unpack<T>(pkt)`: T's fields from the port metadata
  /// (PORT_METADATA_SIZE bits after the intrinsic metadata), which it skips.
  void PortMetadataUnpack(const p4src::Expr& lhs, const p4src::Loc& loc) {
    if (lhs.kind != p4src::Expr::Kind::kName) throw ReadError(loc.str() + ": port_metadata_unpack into something not a name");
    const std::string root = Canonical(lhs.name);
    auto st = structs.find(root);
    if (st == structs.end()) throw ReadError(loc.str() + ": port_metadata_unpack into something not a struct");
    const size_t start = cursor;
    if (start + kPortMetadataBits > in.size() * 8) throw ParserError{};
    for (const auto& f : st->second->fields) {
      Var& v = vars.at(root + "." + f.name);
      v.v = static_cast<uint64_t>(ReadBits(v.w));
    }
    cursor = start + kPortMetadataBits;
  }

  Flow RunAction(const p4src::ActionDecl& a, const std::vector<P4Val>& args, const p4src::Loc& loc) {
    if (!a.body_read) throw ReadError(a.loc.str() + ": action " + a.name + "'s body is outside the subset");
    if (args.size() != a.params.size())
      throw ReadError(loc.str() + ": action " + a.name + " takes " + std::to_string(a.params.size()) + " arguments");
    std::map<std::string, Var> scope;
    for (size_t i = 0; i < args.size(); ++i) {
      Var v;
      v.w = prog.WidthOf(a.params[i].type);
      v.s = prog.IsSigned(a.params[i].type);
      v.v = Widen(args[i]) & MaskOf(v.w);
      scope[a.params[i].name] = v;
    }
    scopes.push_back(std::move(scope));
    const Flow f = Exec(a.body);
    scopes.pop_back();
    return f == Flow::kExit ? Flow::kExit : Flow::kNext;
  }

  P4Val KeyValue(const std::string& path, const p4src::Loc& loc) {
    static const std::string kIsValid = ".isValid()";
    if (path.size() > kIsValid.size() && path.compare(path.size() - kIsValid.size(), kIsValid.size(), kIsValid) == 0)
      return {HeaderAt(path.substr(0, path.size() - kIsValid.size()), loc).valid ? 1u : 0u, 1, false};
    static const std::regex slice(R"((.*)\[(\d+):(\d+)\])");
    std::smatch m;
    if (std::regex_match(path, m, slice)) {
      const P4Val v = Read(Lookup(m[1], loc), loc);
      const int hi = std::stoi(m[2]), lo = std::stoi(m[3]);
      return {(v.v >> lo) & MaskOf(hi - lo + 1), hi - lo + 1, false};
    }
    return Read(Lookup(path, loc), loc);
  }

  /// Runs the table's matching entry's action, else its default; true when
  /// an entry matched (`hit`).
  bool ApplyTable(const p4src::TableDecl& t, const p4src::Loc& loc) {
    std::vector<P4Val> keys;
    for (const auto& [path, kind] : t.keys) {
      if (kind != "exact" && kind != "ternary")
        throw ReadError(t.loc.str() + ": table " + t.name + ": match kind " + kind + " is outside the subset");
      keys.push_back(KeyValue(path, loc));
    }
    if (auto c = config.tables.find(path + "." + t.name); c != config.tables.end())
      return ApplyControllerTable(t, c->second, keys);
    for (const auto& e : t.entries) {
      bool hit = true;
      for (size_t k = 0; k < keys.size() && hit; ++k) {
        const auto& km = e.keys[k];
        if (km.dont_care) continue;
        const uint64_t m = (km.has_mask ? km.mask : ~uint64_t{0}) & MaskOf(keys[k].w);
        hit = (keys[k].v & m) == (km.value & m);
      }
      if (!hit) continue;
      RunEntry(t, static_cast<uint64_t>(&e - t.entries.data()), e.action, e.args, e.loc);
      return true;
    }
    if (!t.default_action.empty()) RunTableAction(t, t.default_action, t.default_args, t.loc);
    return false;
  }

  /// Entry `index`'s action: a DirectRegister or DirectCounter it uses is
  /// that entry's.
  void RunEntry(const p4src::TableDecl& t, uint64_t index, const std::string& action, const std::vector<uint64_t>& args,
                const p4src::Loc& loc) {
    current_entry = index;
    RunTableAction(t, action, args, loc);
    current_entry.reset();
  }

  /// A table the controller fills: its entries (first match; the model gives
  /// them in priority order), else its default action as the controller set
  /// it, else the program's.
  bool ApplyControllerTable(const p4src::TableDecl& t, const p4::ControllerTable& c, const std::vector<P4Val>& keys) {
    for (const auto& e : c.entries) {
      if (e.keys.size() != keys.size())
        throw ReadError(t.loc.str() + ": a controller entry of " + path + "." + t.name + " has " + std::to_string(e.keys.size()) +
                        " keys, the table " + std::to_string(keys.size()));
      bool hit = true;
      for (size_t k = 0; k < keys.size() && hit; ++k) {
        const uint64_t m = e.keys[k].second & MaskOf(keys[k].w);
        hit = (keys[k].v & m) == (e.keys[k].first & m);
      }
      if (!hit) continue;
      RunEntry(t, static_cast<uint64_t>(&e - c.entries.data()), e.action, e.args, t.loc);
      return true;
    }
    if (c.default_action) {
      RunTableAction(t, c.default_action->action, c.default_action->args, t.loc);
      return false;
    }
    if (!t.default_action.empty()) RunTableAction(t, t.default_action, t.default_args, t.loc);
    return false;
  }

  void RunTableAction(const p4src::TableDecl& t, const std::string& name, const std::vector<uint64_t>& args,
                      const p4src::Loc& loc) {
    if (name == "NoAction") return;
    const p4src::ActionDecl* a = block->FindAction(name);
    if (!a) throw ReadError(loc.str() + ": table " + t.name + ": no action " + name);
    std::vector<P4Val> vals;
    for (uint64_t v : args) vals.push_back({v, -1, false});
    RunAction(*a, vals, loc);
  }

  // --- packet ------------------------------------------------------------------

  u128 ReadBits(int w) {
    u128 v = 0;
    for (int i = 0; i < w; ++i, ++cursor) v = v << 1 | ((in[cursor >> 3] >> (7 - (cursor & 7))) & 1);
    return v;
  }

  void Extract(const std::string& path, const p4src::Loc& loc) {
    Header& h = HeaderAt(path, loc);
    if (cursor + static_cast<size_t>(h.bits) > in.size() * 8) throw ParserError{};  // padding checked below
    for (size_t i = 0; i < h.f.size(); ++i) h.f[i] = ReadBits(h.w[i]);
    if (cursor + static_cast<size_t>(h.pad) > in.size() * 8) throw ParserError{};
    cursor += static_cast<size_t>(h.pad);
    h.valid = true;
  }

  void WriteBits(u128 v, int w) {
    for (int b = w - 1; b >= 0; --b, ++out_bits) {
      if ((out_bits & 7) == 0) out.push_back(0);
      out.back() |= static_cast<uint8_t>(((v >> b) & 1) << (7 - (out_bits & 7)));
    }
  }

  void Emit(const std::string& canonical, const p4src::Loc& loc) {
    if (auto h = headers.find(canonical); h != headers.end()) {
      if (!h->second.valid) return;
      for (size_t i = 0; i < h->second.f.size(); ++i) WriteBits(h->second.f[i], h->second.w[i]);
      WriteBits(0, h->second.pad);
      return;
    }
    auto s = structs.find(canonical);
    if (s == structs.end()) throw ReadError(loc.str() + ": emit of something not a header or struct");
    for (const auto& f : s->second->fields) Emit(canonical + "." + f.name, loc);
  }

  bool RunParser(const p4src::ParserDecl* parser) {
    block = nullptr;
    parser_block = parser;
    Bind(parser->params, parser->locals, parser->name);
    std::string state = "start";
    for (int steps = 0; steps < 1024; ++steps) {
      if (state == "accept") return true;
      if (state == "reject") return false;
      const p4src::ParserState* st = parser->FindState(state);
      if (!st) throw ReadError(parser->loc.str() + ": parser " + parser->name + " has no state " + state);
      Exec(st->body);
      if (st->select.empty()) {
        state = st->next;
        continue;
      }
      std::vector<P4Val> vals;
      for (const auto& e : st->select) vals.push_back(Eval(e));
      state = "reject";  // no case matches: error.NoMatch
      for (const auto& c : st->cases) {
        // `default` (one don't-care key) matches a tuple select too.
        const bool is_default = c.keys.size() == 1 && c.keys[0].dont_care;
        if (is_default) {
          state = c.next;
          break;
        }
        bool hit = c.keys.size() == vals.size();
        for (size_t k = 0; k < vals.size() && hit; ++k) {
          if (c.keys[k].dont_care) continue;
          const uint64_t m = (c.keys[k].has_mask ? c.keys[k].mask : ~uint64_t{0}) & MaskOf(vals[k].w);
          hit = (vals[k].v & m) == (c.keys[k].value & m);
        }
        if (hit) {
          state = c.next;
          break;
        }
      }
    }
    throw ReadError(parser->loc.str() + ": parser " + parser->name + " loops");
  }
};

namespace {

Gress FindGress(const p4src::Program& prog, const std::string& parser, const std::string& control,
                const std::string& deparser) {
  Gress g{prog.FindParser(parser), prog.FindControl(control), prog.FindControl(deparser)};
  if (!g.parser || !g.parser->read) throw ReadError("parser " + parser + " is missing or outside the subset");
  if (!g.control || !g.control->apply_read) throw ReadError("control " + control + "'s apply is missing or outside the subset");
  if (!g.deparser || !g.deparser->apply_read)
    throw ReadError("deparser " + deparser + "'s apply is missing or outside the subset");
  return g;
}

}  // namespace

PipelineEval::PipelineEval(const p4src::Program& prog, const PipelineBlocks& blocks, SwitchConfig config)
    : impl_(std::make_unique<Impl>(prog)) {
  impl_->ingress = FindGress(prog, blocks.parser, blocks.control, blocks.deparser);
  impl_->has_egress = !blocks.egress_parser.empty();
  if (impl_->has_egress)
    impl_->egress = FindGress(prog, blocks.egress_parser, blocks.egress_control, blocks.egress_deparser);
  impl_->config = std::move(config);
}

PipelineEval::~PipelineEval() = default;

GressResult PipelineEval::Impl::RunGress(const Gress& g, std::vector<uint8_t> prefix, const std::vector<uint8_t>& frame) {
  Impl& m = *this;
  GressResult r;
  m.ResetPacket();
  const size_t prefix_bytes = prefix.size();
  m.in = std::move(prefix);
  m.in.insert(m.in.end(), frame.begin(), frame.end());
  m.cursor = 0;
  m.path = g.parser->name;
  try {
    if (!m.RunParser(g.parser)) return r;
  } catch (const ParserError&) {
    return r;
  }
  m.parser_block = nullptr;
  r.parsed = true;
  m.block = g.control;
  m.path = g.control->name;
  m.Bind(g.control->params, g.control->locals, g.control->name);
  m.Exec(g.control->apply);
  m.exiting = false;
  m.block = g.deparser;
  m.path = g.deparser->name;
  m.scopes.clear();
  m.Bind(g.deparser->params, g.deparser->locals, g.deparser->name);
  m.out.clear();
  m.out_bits = 0;
  m.Exec(g.deparser->apply);
  if (m.out_bits % 8 != 0 || m.cursor % 8 != 0) throw ReadError("a deparsed or parsed header is not whole bytes");
  const size_t rest = std::max(m.cursor / 8, prefix_bytes);
  r.frame = m.out;
  r.frame.insert(r.frame.end(), m.in.begin() + static_cast<long>(rest), m.in.end());
  return r;
}

const Var* PipelineEval::Impl::FindVar(const std::string& canonical) const {
  auto it = vars.find(canonical);
  return it == vars.end() ? nullptr : &it->second;
}

namespace {

constexpr uint32_t kPipes = 4;
constexpr uint32_t kMaxPasses = 16;  // a loop of recirculations is cut here (dropped, "recirculation limit")

uint32_t PipeOf(uint16_t port) { return (port >> 7) & (kPipes - 1); }

/// What the ingress parser sees before the frame: the intrinsic metadata (64
/// bits: resubmit_flag, _pad1, packet_version, _pad2, ingress_port at bits
/// 7..15, ingress_mac_tstamp 0), then the port metadata (PORT_METADATA_SIZE:
/// what the controller set for the port, else zeros).
std::vector<uint8_t> IngressPrefix(uint16_t port, const std::map<uint16_t, std::vector<uint8_t>>& port_metadata) {
  std::vector<uint8_t> prefix(8 + kPortMetadataBits / 8, 0);
  prefix[0] = static_cast<uint8_t>((port >> 8) & 1);
  prefix[1] = static_cast<uint8_t>(port);
  if (auto it = port_metadata.find(port); it != port_metadata.end())
    for (size_t i = 0; i < it->second.size() && i < kPortMetadataBits / 8; ++i) prefix[8 + i] = it->second[i];
  return prefix;
}

/// What the egress parser sees first: egress_intrinsic_metadata_t (27 bytes,
/// TnaIntrinsicComposites' layout) with egress_port (bits 7..15) and egress_rid (bits
/// 152..167); the rest 0.
std::vector<uint8_t> EgressPrefix(uint16_t port, uint16_t rid) {
  std::vector<uint8_t> prefix(27, 0);
  prefix[0] = static_cast<uint8_t>((port >> 8) & 1);
  prefix[1] = static_cast<uint8_t>(port);
  prefix[19] = static_cast<uint8_t>(rid >> 8);
  prefix[20] = static_cast<uint8_t>(rid);
  return prefix;
}

}  // namespace

IngressPass PipelineEval::Impl::RunIngressPass(const std::vector<uint8_t>& frame, uint16_t port) {
  Impl& m = *this;
  IngressPass p;
  m.pipe = PipeOf(port);
  p.gress = m.RunGress(m.ingress, IngressPrefix(port, m.config.port_metadata), frame);
  if (!p.gress.parsed) return p;
  const Var* tm = m.FindVar("@ingress_intrinsic_metadata_for_tm_t.ucast_egress_port");
  const Var* grp = m.FindVar("@ingress_intrinsic_metadata_for_tm_t.mcast_grp_a");
  const Var* xid = m.FindVar("@ingress_intrinsic_metadata_for_tm_t.level1_exclusion_id");
  const Var* bypass = m.FindVar("@ingress_intrinsic_metadata_for_tm_t.bypass_egress");
  const Var* drop = m.FindVar("@ingress_intrinsic_metadata_for_deparser_t.drop_ctl");
  p.unicast = tm && tm->written;
  p.port = p.unicast ? static_cast<uint16_t>(tm->v) : 0;
  // A written mcast_grp_a is a multicast, group 0 too (SwitchML's session
  // group is 0: switchml.py:538-541); one never written is none.
  p.multicast = grp && grp->written;
  p.group = grp ? static_cast<uint16_t>(grp->v) : 0;
  p.l1_xid = xid ? static_cast<uint16_t>(xid->v) : 0;
  p.bypass = bypass && bypass->v != 0;
  p.drop = drop && (drop->v & 1) != 0;
  return p;
}

PipelineOutcome PipelineEval::Run(const std::vector<uint8_t>& frame, uint16_t ingress_port) {
  Impl& m = *impl_;
  m.touched.clear();
  PipelineOutcome o;
  std::vector<uint8_t> pass_frame = frame;
  uint16_t port = ingress_port;
  IngressPass p;
  for (;;) {
    ++o.passes;
    p = m.RunIngressPass(pass_frame, port);
    if (!p.gress.parsed) {
      o.why = "parser error";
      return o;
    }
    o.unicast = p.unicast;
    o.multicast = p.multicast;
    o.port = p.port;
    o.group = p.group;
    o.frame = p.gress.frame;
    if (p.drop) {
      o.why = "drop_ctl";
      return o;
    }
    const bool loops = p.unicast && p.bypass && m.config.recirculation_ports.count(p.port) != 0;
    if (!loops) break;
    if (o.passes == kMaxPasses) {
      o.why = "recirculation limit";
      return o;
    }
    pass_frame = p.gress.frame;
    port = p.port;
  }
  if (!o.unicast && !o.multicast) {
    o.why = "no egress";
    return o;
  }
  o.dropped = false;
  std::vector<p4::MulticastNode> nodes;
  if (o.unicast) nodes.emplace_back(o.port);
  if (o.multicast)
    if (auto g = m.config.groups.find(o.group); g != m.config.groups.end())
      for (const auto& n : g->second)
        if (!n.l1_xid || *n.l1_xid != p.l1_xid) nodes.push_back(n);
  const std::vector<uint8_t> deparsed = o.frame;
  for (const auto& n : nodes) {
    PipelineOutcome::Copy c;
    c.port = n.port;
    c.frame = deparsed;
    c.bypassed = p.bypass || !m.has_egress;
    if (!c.bypassed) {
      m.pipe = PipeOf(n.port);
      const GressResult eg = m.RunGress(m.egress, EgressPrefix(n.port, n.rid), deparsed);
      const Var* eg_drop = m.FindVar("@egress_intrinsic_metadata_for_deparser_t.drop_ctl");
      c.dropped = !eg.parsed || (eg_drop && (eg_drop->v & 1) != 0);
      c.frame = eg.frame;
    }
    o.copies.push_back(std::move(c));
  }
  return o;
}

std::vector<PipelineEval::Cell> PipelineEval::TouchedCells() const {
  std::vector<Cell> out;
  for (const auto& t : impl_->touched) {
    if (t.counter) {
      out.push_back({t.reg, t.pipe, t.index, {impl_->counters.at(std::to_string(t.pipe) + "|" + t.reg).at(t.index)}});
      continue;
    }
    out.push_back({t.reg, t.pipe, t.index, impl_->cells.at(std::to_string(t.pipe) + "|" + t.reg).at(t.index)});
  }
  return out;
}

std::map<std::string, uint64_t> PipelineEval::CounterTotals() const {
  std::map<std::string, uint64_t> out;
  for (const auto& [key, by_index] : impl_->counters) {
    uint64_t& total = out[key.substr(key.find('|') + 1)];  // "pipe|path" -> path
    for (const auto& [index, packets] : by_index) total += packets;
  }
  return out;
}

}  // namespace inasim::p4tools
