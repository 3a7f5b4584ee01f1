#include "p4model/tools/p4check.h"

#include "p4model/common/model_check.h"
#include "p4model/tools/p4eval.h"

#include "common/bounded_file.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace inasim::p4tools {
namespace {

using nlohmann::json;
using Status = CheckRow::Status;

uint64_t Mask(int width) { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

int WidthOrMinus1(const p4src::Program& prog, const p4src::TypeRef& t) {
  try {
    return prog.WidthOf(t);
  } catch (const p4src::ReadError&) {
    return -1;
  }
}

json ElementFields(const p4src::Program& prog, const p4src::TypeRef& t) {
  json out = json::array();
  if (const p4src::Composite* comp = prog.CompositeOf(t)) {
    for (const auto& f : comp->fields)
      out.push_back({{"name", f.name}, {"width", WidthOrMinus1(prog, f.type)}, {"signed", prog.IsSigned(f.type)}});
  } else {
    out.push_back({{"name", ""}, {"width", WidthOrMinus1(prog, t)}, {"signed", prog.IsSigned(t)}});
  }
  return out;
}

std::string ReadFile(const std::string& path) {
  try {
    return util::ReadBoundedFile(path, util::kMaxSourceFileBytes, "source file");
  } catch (const util::FileReadError& e) {
    throw p4src::ReadError(e.what());
  }
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) out.push_back(l);
  return out;
}

/// `class Name(IntEnum):` blocks of a Python file: Name.MEMBER -> value.
void ReadIntEnums(const std::string& text, std::map<std::string, uint64_t>& out) {
  const std::regex cls(R"(^class\s+(\w+)\s*\(\s*IntEnum\s*\)\s*:)");
  const std::regex member(R"(^\s+(\w+)\s*=\s*(0x[0-9a-fA-F]+|\d+)\s*(#.*)?$)");
  std::string current;
  for (const std::string& l : Lines(text)) {
    std::smatch m;
    if (std::regex_search(l, m, cls)) {
      current = m[1];
    } else if (!current.empty() && std::regex_match(l, m, member)) {
      out[current + "." + m[1].str()] = std::stoull(m[2].str(), nullptr, 0);
    } else if (!l.empty() && !std::isspace(static_cast<unsigned char>(l[0]))) {
      current.clear();
    }
  }
}

/// Splits `a, b, (c, d)` at top-level commas.
std::vector<std::string> SplitTopLevel(const std::string& s) {
  std::vector<std::string> out(1);
  int depth = 0;
  for (char c : s) {
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      out.emplace_back();
      continue;
    }
    out.back() += c;
  }
  for (auto& x : out) {
    const size_t a = x.find_first_not_of(" \t"), b = x.find_last_not_of(" \t");
    x = a == std::string::npos ? "" : x.substr(a, b - a + 1);
  }
  return out;
}

/// A small evaluator for the Python expressions of the entry tuples: ints,
/// enum members, `port[k]`, the loop variable, + - * << and parentheses.
class PyExpr {
 public:
  PyExpr(const std::string& s, const std::map<std::string, uint64_t>& names, std::string where)
      : s_(s), names_(names), where_(std::move(where)) {}
  std::optional<uint64_t> Eval() {
    Skip();
    if (s_.compare(i_, 4, "None") == 0 && s_.size() == i_ + 4) return std::nullopt;
    const uint64_t v = Shift();
    Skip();
    if (i_ != s_.size()) Fail("unexpected '" + s_.substr(i_) + "'");
    return v;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const { throw p4src::ReadError(where_ + ": " + what + " in '" + s_ + "'"); }
  void Skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  uint64_t Shift() {
    uint64_t v = Sum();
    for (Skip(); s_.compare(i_, 2, "<<") == 0; Skip()) {
      i_ += 2;
      v <<= Sum();
    }
    return v;
  }
  uint64_t Sum() {
    uint64_t v = Product();
    for (Skip(); i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-'); Skip()) {
      const char op = s_[i_++];
      const uint64_t r = Product();
      v = op == '+' ? v + r : v - r;
    }
    return v;
  }
  uint64_t Product() {
    uint64_t v = Atom();
    for (Skip(); i_ < s_.size() && s_[i_] == '*'; Skip()) {
      ++i_;
      v *= Atom();
    }
    return v;
  }
  uint64_t Atom() {
    Skip();
    if (i_ >= s_.size()) Fail("missing operand");
    if (s_[i_] == '(') {
      ++i_;
      const uint64_t v = Shift();
      Skip();
      if (i_ >= s_.size() || s_[i_] != ')') Fail("missing ')'");
      ++i_;
      return v;
    }
    size_t j = i_;
    while (j < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[j])) || s_[j] == '_' || s_[j] == '.')) ++j;
    std::string tok = s_.substr(i_, j - i_);
    i_ = j;
    if (tok.empty()) Fail("unexpected '" + s_.substr(i_) + "'");
    if (std::isdigit(static_cast<unsigned char>(tok[0]))) return std::stoull(tok, nullptr, 0);
    if (i_ < s_.size() && s_[i_] == '[') {  // port[k]
      ++i_;
      const uint64_t k = Shift();
      Skip();
      if (i_ >= s_.size() || s_[i_] != ']') Fail("missing ']'");
      ++i_;
      tok += "[" + std::to_string(k) + "]";
    }
    auto it = names_.find(tok);
    if (it == names_.end()) Fail("unknown name '" + tok + "'");
    return it->second;
  }
  std::string s_;
  const std::map<std::string, uint64_t>& names_;
  std::string where_;
  size_t i_ = 0;
};

json EntryJson(const p4src::ConstEntry& e, const std::vector<int>& key_widths) {
  json keys = json::array();
  for (size_t k = 0; k < e.keys.size(); ++k) {
    const uint64_t m = e.keys[k].dont_care ? 0 : (e.keys[k].mask & Mask(key_widths[k]));
    keys.push_back(json::array({e.keys[k].value & m, m}));
  }
  return {{"keys", keys}, {"action", e.action}, {"args", e.args}, {"loc", e.loc.str()}};
}

std::string Str(const json& j) { return j.dump(); }

}  // namespace

int CheckReport::Count(Status s) const {
  int n = 0;
  for (const auto& r : rows) n += r.status == s;
  return n;
}

void CheckReport::Print(std::ostream& out, bool verbose) const {
  // Every row with --verbose; otherwise the mismatches and what is not modeled.
  for (const auto& r : rows) {
    if (!verbose && r.status == Status::kMatch) continue;
    const char* s = r.status == Status::kMatch ? "match" : r.status == Status::kMismatch ? "MISMATCH" : "not modeled";
    out << "  " << s << std::string(12 - std::string(s).size(), ' ') << r.kind << " " << r.item;
    if (!r.detail.empty()) out << ": " << r.detail;
    out << "\n";
  }
  // Then the table of matches and mismatches per kind of check.
  std::vector<std::string> kinds;
  std::map<std::string, std::array<int, 3>> counts;
  for (const auto& r : rows) {
    if (!counts.count(r.kind)) kinds.push_back(r.kind);
    ++counts[r.kind][static_cast<int>(r.status)];
  }
  char line[128];
  std::snprintf(line, sizeof line, "  %-14s %8s %10s %12s\n", "check", "match", "mismatch", "not modeled");
  out << line;
  for (const auto& k : kinds) {
    const auto& c = counts[k];
    std::snprintf(line, sizeof line, "  %-14s %8d %10d %12d\n", k.c_str(), c[0], c[1], c[2]);
    out << line;
  }
}

const p4::ModelCheckedProgram& ModelChecked(const std::string& program) {
  for (const p4::ModelCheckedProgram& p : p4::ModelCheckedPrograms())
    if (program == p.name) return p;
  throw std::invalid_argument("unknown program \"" + program + "\" (expected " + ModelCheckedNames(" or ") + ")");
}

describe::ModelDescription ModelFor(const std::string& program) { return ModelChecked(program).describe(); }

std::string ModelCheckedNames(const std::string& separator) {
  std::string names;
  for (const p4::ModelCheckedProgram& p : p4::ModelCheckedPrograms())
    names += (names.empty() ? "" : separator) + std::string(p.name);
  return names;
}

json ReadControllerEntries(const std::string& src_root, const describe::ControllerEntriesDesc& desc) {
  const std::string& py_path = desc.file;
  const std::string text = ReadFile(src_root + "/" + py_path);
  std::map<std::string, uint64_t> names;
  for (const std::string& f : desc.enum_files) ReadIntEnums(ReadFile(src_root + "/" + f), names);
  ReadIntEnums(text, names);
  const std::vector<std::string> lines = Lines(text);
  // The function: from its `def` to the next method.
  size_t begin = 0;
  while (begin < lines.size() && lines[begin].find("def " + desc.function) == std::string::npos) ++begin;
  if (begin == lines.size()) throw p4src::ReadError(py_path + ": no " + desc.function);
  size_t end = begin + 1;
  while (end < lines.size() && lines[end].find("    def ") != 0) ++end;
  const std::regex dict(R"(^\s*(\w+)\s*=\s*\{(.*)\}\s*$)");
  const std::regex loop(R"(for\s+(\w+)\s+in\s+range\((\d+)\))");
  const size_t nkeys = desc.key_masks.size();
  json entries = json::array();
  for (size_t i = begin; i < end; ++i) {
    const std::string where = py_path + ":" + std::to_string(i + 1);
    std::smatch m;
    if (std::regex_match(lines[i], m, dict)) {  // `port = {1: 452, ...}`: port[1] is 452
      for (const std::string& kv : SplitTopLevel(m[2].str())) {
        const size_t colon = kv.find(':');
        if (colon == std::string::npos) throw p4src::ReadError(where + ": bad " + m[1].str() + " entry '" + kv + "'");
        names[m[1].str() + "[" + std::to_string(std::stoull(kv.substr(0, colon))) + "]"] =
            std::stoull(kv.substr(colon + 1));
      }
      continue;
    }
    const size_t open = lines[i].find_first_not_of(" \t");
    if (open == std::string::npos || lines[i][open] != '(') continue;
    // The tuple: from this '(' to its matching ')'.
    int depth = 0;
    size_t close = open;
    for (; close < lines[i].size(); ++close) {
      if (lines[i][close] == '(') ++depth;
      if (lines[i][close] == ')' && --depth == 0) break;
    }
    if (close >= lines[i].size()) throw p4src::ReadError(where + ": tuple does not close on its line");
    std::vector<std::string> fields = SplitTopLevel(lines[i].substr(open + 1, close - open - 1));
    if (fields.size() < nkeys + 2)
      throw p4src::ReadError(where + ": expected an entry tuple of " + std::to_string(nkeys) +
                             " keys, a priority, an action and its arguments");
    // A list comprehension: `for i in range(N)` on the next line.
    std::string var;
    uint64_t count = 1;
    if (i + 1 < end && std::regex_search(lines[i + 1], m, loop)) {
      var = m[1];
      count = std::stoull(m[2]);
    }
    for (uint64_t k = 0; k < count; ++k) {
      if (!var.empty()) names[var] = k;
      json keys = json::array();
      for (size_t f = 0; f < nkeys; ++f) {
        const auto v = PyExpr(fields[f], names, where).Eval();
        keys.push_back(v ? json::array({*v & desc.key_masks[f], desc.key_masks[f]}) : json::array({0, 0}));
      }
      const auto prio = PyExpr(fields[nkeys], names, where).Eval();
      std::string action = fields[nkeys + 1];
      if (action.size() < 2 || action.front() != '\'' || action.back() != '\'')
        throw p4src::ReadError(where + ": action is not a string literal");
      action = action.substr(1, action.size() - 2);
      json args = json::array();
      for (size_t f = nkeys + 2; f < fields.size(); ++f)
        if (const auto arg = PyExpr(fields[f], names, where).Eval()) args.push_back(*arg);
      entries.push_back({{"keys", keys}, {"priority", prio ? *prio : 0}, {"action", action}, {"args", args},
                         {"loc", where}});
    }
    if (!var.empty()) names.erase(var);
  }
  // The table orders entries by priority (lower first); equal priorities keep list order.
  std::stable_sort(entries.begin(), entries.end(),
                   [](const json& a, const json& b) { return a["priority"].get<int>() < b["priority"].get<int>(); });
  return entries;
}

json ExtractManifest(const describe::ModelDescription& model, const p4src::Program& prog, const std::string& src_root) {
  json m;
  m["program"] = model.program;
  m["upstream"] = model.upstream;
  m["main"] = model.main_file;
  m["generated_by"] = "inasim-p4 manifest " + model.program + " --p4-src DIR";
  json consts = json::object();
  for (const auto& [name, v] : prog.consts) consts[name] = v;
  m["constants"] = consts;
  // Numeric #defines and flags only: a macro whose body is an expression over
  // headers (SwitchML's POOL_INDEX, UDP_LENGTH) is code, not a declaration.
  json defines = json::object();
  static const std::regex numeric(R"(^(0[xX][0-9a-fA-F]+|[0-9]+)?$)");
  for (const auto& [name, body] : prog.defines)
    if (std::regex_match(body, numeric)) defines[name] = body;
  m["defines"] = defines;
  json enums = json::object();
  for (const auto& [name, e] : prog.enums) {
    json members = json::object();
    for (const auto& [mn, mv] : e.members) members[mn] = mv;
    enums[name] = {{"width", e.underlying.kind == p4src::TypeRef::Kind::kNamed ? -1 : e.underlying.width},
                   {"members", members},
                   {"loc", e.loc.str()}};
  }
  m["enums"] = enums;
  json headers = json::object();
  for (const auto& [name, c] : prog.composites) {
    json fields = json::array();
    int offset = 0;
    for (const auto& f : c.fields) {
      const int w = WidthOrMinus1(prog, f.type);
      json jf = {{"name", f.name}, {"type", f.type.str()}, {"width", w}, {"signed", prog.IsSigned(f.type)}};
      jf["offset"] = offset >= 0 ? json(offset) : json(nullptr);
      offset = (offset >= 0 && w >= 0) ? offset + w : -1;
      fields.push_back(jf);
    }
    headers[name] = {{"kind", c.is_header ? "header" : "struct"}, {"loc", c.loc.str()}, {"fields", fields}};
  }
  m["headers"] = headers;
  json regs = json::object(), ras = json::object(), tables = json::object(), actions = json::object();
  for (const auto& c : prog.controls) {
    for (const auto& a : c.actions) {  // signatures only: the bodies are not data
      json params = json::array();
      for (const auto& p : a.params)
        params.push_back({{"direction", p.direction}, {"type", p.type.str()}, {"width", WidthOrMinus1(prog, p.type)}, {"name", p.name}});
      actions[c.name + "." + a.name] = {{"params", params}, {"loc", a.loc.str()}};
    }
    for (const auto& r : c.registers)
      regs[c.name + "." + r.name] = {{"element", r.element.str()},         {"element_fields", ElementFields(prog, r.element)},
                                     {"index", r.index.str()},             {"index_width", WidthOrMinus1(prog, r.index)},
                                     {"size", r.size},                     {"loc", r.loc.str()}};
    for (const auto& a : c.register_actions)
      ras[c.name + "." + a.name] = {{"register", a.register_name},
                                    {"result", a.result.str()},
                                    {"result_width", WidthOrMinus1(prog, a.result)},
                                    {"loc", a.loc.str()}};
    for (const auto& t : c.tables) {
      json keys = json::array();
      std::vector<int> widths;
      for (const auto& [field, match] : t.keys) {
        const auto type = PathType(prog, c, field);
        const int w = type ? WidthOrMinus1(prog, *type) : -1;
        widths.push_back(w < 0 ? 64 : w);
        keys.push_back({{"field", field}, {"match", match}, {"width", w}});
      }
      json jt = {{"keys", keys},
                 {"actions", t.actions},
                 {"default_action", t.default_action},
                 {"default_args", t.default_args},
                 {"loc", t.loc.str()}};
      if (t.has_const_entries) {
        json es = json::array();
        for (const auto& e : t.entries) es.push_back(EntryJson(e, widths));
        jt["const_entries"] = es;
      }
      tables[c.name + "." + t.name] = jt;
    }
  }
  m["registers"] = regs;
  m["register_actions"] = ras;
  m["actions"] = actions;
  m["tables"] = tables;
  json controller = json::object();
  for (const describe::ControllerEntriesDesc& c : model.controller_entries)
    controller[c.table] = {{"file", c.file}, {"entries", ReadControllerEntries(src_root, c)}};
  m["controller_entries"] = controller;
  return m;
}

namespace {

void CompareConstants(const describe::ModelDescription& model, const json& manifest, CheckReport& r) {
  for (const auto& c : model.constants) {
    const json consts = manifest.value("constants", json::object());
    const json defines = manifest.value("defines", json::object());
    std::string diff;
    if (consts.contains(c.name) && !c.define_flag) {
      if (consts[c.name] != c.value) diff = "model " + std::to_string(c.value) + ", upstream const " + consts[c.name].dump();
    } else if (defines.contains(c.name)) {
      const std::string body = defines[c.name].get<std::string>();
      if (c.define_flag) {
        if (!body.empty()) diff = "upstream defines it as '" + body + "', the model treats it as a flag";
      } else {
        uint64_t v = 0;
        try {
          v = std::stoull(body, nullptr, 0);
        } catch (const std::exception&) {
          diff = "upstream #define body '" + body + "' is not a number";
        }
        if (diff.empty() && v != c.value) diff = "model " + std::to_string(c.value) + ", upstream #define " + body;
      }
    } else {
      diff = "no such const or #define upstream";
    }
    r.Add("constant", c.name + " = " + (c.define_flag ? std::string("(defined)") : std::to_string(c.value)),
          diff.empty() ? Status::kMatch : Status::kMismatch, diff);
  }
}

void CompareEnums(const describe::ModelDescription& model, const json& manifest, CheckReport& r) {
  const json enums = manifest.value("enums", json::object());
  for (const auto& e : model.enums) {
    if (!enums.contains(e.name)) {
      r.Add("enum", e.name, Status::kMismatch, "not in the upstream program");
      continue;
    }
    const json& u = enums[e.name];
    std::string diff;
    if (u.at("width") != e.width) diff += "width " + std::to_string(e.width) + " vs upstream " + u.at("width").dump() + "; ";
    json mine = json::object();
    for (const auto& [n, v] : e.members) mine[n] = v;
    if (mine != u.at("members")) diff += "members " + mine.dump() + " vs upstream " + u.at("members").dump() + "; ";
    r.Add("enum", e.name + " (" + std::to_string(e.members.size()) + " members)", diff.empty() ? Status::kMatch : Status::kMismatch,
          diff.empty() ? u.at("loc").get<std::string>() : diff);
  }
}

void CompareHeaders(const describe::ModelDescription& model, const json& manifest, CheckReport& r) {
  for (const auto& h : model.headers) {
    const std::string item = h.name;
    if (!manifest.at("headers").contains(h.name)) {
      r.Add("header", item, Status::kMismatch, "not in the upstream program");
      continue;
    }
    const json& up = manifest.at("headers").at(h.name).at("fields");
    std::string diff;
    if (up.size() != h.fields.size())
      diff += "model has " + std::to_string(h.fields.size()) + " fields, upstream " + std::to_string(up.size()) + "; ";
    for (size_t i = 0; i < std::min(up.size(), h.fields.size()); ++i) {
      const auto& f = h.fields[i];
      const json& u = up.at(i);
      const std::string at = h.name + "." + f.name;
      if (u.at("name") != f.name) diff += "field " + std::to_string(i) + " is " + f.name + " in the model, " + u.at("name").get<std::string>() + " upstream; ";
      if (u.at("width") != f.width) diff += at + " width " + std::to_string(f.width) + " vs upstream " + Str(u.at("width")) + "; ";
      if (u.at("offset") != f.offset) diff += at + " offset " + std::to_string(f.offset) + " vs upstream " + Str(u.at("offset")) + "; ";
      if (u.at("signed") != f.is_signed) diff += at + (f.is_signed ? " signed" : " unsigned") + " in the model, not upstream; ";
    }
    r.Add("header", item + " (" + std::to_string(h.fields.size()) + " fields)", diff.empty() ? Status::kMatch : Status::kMismatch,
          diff.empty() ? manifest.at("headers").at(h.name).at("loc").get<std::string>() : diff);
  }
}

bool Modeled(const describe::ModelDescription& model, const std::string& qualified) {
  const std::string control = qualified.substr(0, qualified.find('.'));
  for (const auto& c : model.controls)
    if (c == control) return true;
  return false;
}

/// The manifest's `section` ("registers", "tables") element `item` of the
/// model, noted in `seen`; nullptr, reported, when upstream has none.
const json* UpstreamOf(const json& manifest, const char* section, const char* kind, const std::string& item,
                       std::set<std::string>& seen, CheckReport& r) {
  seen.insert(item);
  if (manifest.at(section).contains(item)) return &manifest.at(section).at(item);
  r.Add(kind, item, Status::kMismatch, "not in the upstream program");
  return nullptr;
}

/// The manifest's `section` elements the model has none of (not `seen`): a
/// mismatch in a control the model covers, not modeled elsewhere.
void ReportUnseen(const describe::ModelDescription& model, const json& manifest, const char* section,
                  const std::string& kind, const std::set<std::string>& seen, CheckReport& r) {
  for (const auto& [name, u] : manifest.at(section).items()) {
    if (seen.count(name)) continue;
    if (Modeled(model, name))
      r.Add(kind, name, Status::kMismatch, "upstream " + kind + " missing from the model (" + u.at("loc").get<std::string>() + ")");
    else
      r.Add(kind, name, Status::kNotModeled, u.at("loc").get<std::string>());
  }
}

void CompareRegisters(const describe::ModelDescription& model, const json& manifest, CheckReport& r) {
  std::set<std::string> seen;
  for (const auto& reg : model.registers) {
    const std::string item = reg.control + "." + reg.name;
    const json* upstream = UpstreamOf(manifest, "registers", "register", item, seen, r);
    if (!upstream) continue;
    const json& u = *upstream;
    std::string diff;
    if (u.at("size") != reg.size) diff += "size " + std::to_string(reg.size) + " vs upstream " + Str(u.at("size")) + "; ";
    const json& uf = u.at("element_fields");
    if (uf.size() != reg.element.size()) diff += "element has " + std::to_string(reg.element.size()) + " fields, upstream " + std::to_string(uf.size()) + "; ";
    for (size_t i = 0; i < std::min(uf.size(), reg.element.size()); ++i) {
      const auto& f = reg.element[i];
      if (uf.at(i).at("name") != f.name) diff += "element field " + f.name + " vs upstream " + Str(uf.at(i).at("name")) + "; ";
      if (uf.at(i).at("width") != f.width) diff += "element " + f.name + " width " + std::to_string(f.width) + " vs upstream " + Str(uf.at(i).at("width")) + "; ";
      if (uf.at(i).at("signed") != f.is_signed) diff += "element " + f.name + (f.is_signed ? " signed" : " unsigned") + " in the model, not upstream; ";
    }
    r.Add("register", item + " <" + u.at("element").get<std::string>() + ">(" + Str(u.at("size")) + ")",
          diff.empty() ? Status::kMatch : Status::kMismatch, diff.empty() ? u.at("loc").get<std::string>() : diff);
  }
  ReportUnseen(model, manifest, "registers", "register", seen, r);
}

std::string KeyText(const json& k) {
  std::ostringstream o;
  o << std::hex << "0x" << k.at(0).get<uint64_t>() << "&&&0x" << k.at(1).get<uint64_t>();
  return o.str();
}

/// The model entry's arguments against the upstream action's parameters (count, and each fits its width).
std::string CheckArgs(const describe::TableDesc& t, const describe::EntryDesc& e, const json& manifest) {
  const json actions = manifest.value("actions", json::object());
  const std::string name = t.control + "." + e.action;
  if (!actions.contains(name)) return e.action == "NoAction" ? "" : "no action " + name + " upstream; ";
  const json& params = actions.at(name).at("params");
  if (params.size() != e.args.size())
    return e.action + " takes " + std::to_string(params.size()) + " arguments upstream, the model gives " +
           std::to_string(e.args.size()) + "; ";
  std::string diff;
  for (size_t i = 0; i < e.args.size(); ++i) {
    const int w = params.at(i).at("width").get<int>();
    if (w >= 0 && w < 64 && (e.args[i] >> w) != 0)
      diff += "argument " + params.at(i).at("name").get<std::string>() + " = " + std::to_string(e.args[i]) +
              " does not fit its " + std::to_string(w) + " bits; ";
  }
  return diff;
}

void CompareEntries(const std::string& item, const describe::TableDesc& t, const json& up_entries, const json& up_keys,
                    const json& manifest, CheckReport& r) {
  if (up_entries.size() != t.entries.size())
    r.Add("entries", item, Status::kMismatch,
          "model has " + std::to_string(t.entries.size()) + " entries, upstream " + std::to_string(up_entries.size()));
  for (size_t i = 0; i < std::min(up_entries.size(), t.entries.size()); ++i) {
    const auto& e = t.entries[i];
    const json& u = up_entries.at(i);
    std::string diff;
    for (size_t k = 0; k < std::min(e.keys.size(), u.at("keys").size()); ++k) {
      const int w = up_keys.at(k).at("width").get<int>();
      const uint64_t mask = e.keys[k].mask & Mask(w < 0 ? 64 : w);
      const json mine = json::array({e.keys[k].value & mask, mask});
      if (mine != u.at("keys").at(k))
        diff += "key " + up_keys.at(k).at("field").get<std::string>() + " " + KeyText(mine) + " vs upstream " + KeyText(u.at("keys").at(k)) + "; ";
    }
    if (e.keys.size() != u.at("keys").size()) diff += "key count differs; ";
    if (u.at("action") != e.action) diff += "action " + e.action + " vs upstream " + u.at("action").get<std::string>() + "; ";
    if (u.at("args") != json(e.args)) diff += "args " + json(e.args).dump() + " vs upstream " + u.at("args").dump() + "; ";
    diff += CheckArgs(t, e, manifest);
    if (u.contains("priority") && u.at("priority") != e.priority)
      diff += "priority " + std::to_string(e.priority) + " vs upstream " + u.at("priority").dump() + "; ";
    r.Add("entry", item + "[" + std::to_string(i) + "] " + e.action, diff.empty() ? Status::kMatch : Status::kMismatch,
          diff.empty() ? u.at("loc").get<std::string>() : diff + "(" + u.at("loc").get<std::string>() + ")");
  }
}

void CompareTables(const describe::ModelDescription& model, const json& manifest, CheckReport& r) {
  std::set<std::string> seen;
  for (const auto& t : model.tables) {
    const std::string item = t.control + "." + t.name;
    const json* upstream = UpstreamOf(manifest, "tables", "table", item, seen, r);
    if (!upstream) continue;
    const json& u = *upstream;
    std::string diff;
    if (u.at("keys").size() != t.keys.size()) diff += "model has " + std::to_string(t.keys.size()) + " keys, upstream " + std::to_string(u.at("keys").size()) + "; ";
    for (size_t k = 0; k < std::min(u.at("keys").size(), t.keys.size()); ++k) {
      const json& uk = u.at("keys").at(k);
      if (uk.at("field") != t.keys[k].field) diff += "key " + std::to_string(k) + " " + t.keys[k].field + " vs upstream " + Str(uk.at("field")) + "; ";
      if (uk.at("match") != t.keys[k].match) diff += "key " + t.keys[k].field + " match " + t.keys[k].match + " vs upstream " + Str(uk.at("match")) + "; ";
      if (uk.at("width") != t.keys[k].width) diff += "key " + t.keys[k].field + " width " + std::to_string(t.keys[k].width) + " vs upstream " + Str(uk.at("width")) + "; ";
    }
    std::set<std::string> ma(t.actions.begin(), t.actions.end()), ua;
    for (const auto& a : u.at("actions")) ua.insert(a.get<std::string>());
    if (ma != ua) diff += "actions " + json(t.actions).dump() + " vs upstream " + u.at("actions").dump() + "; ";
    if (u.at("default_action") != t.default_action) diff += "default action " + t.default_action + " vs upstream " + Str(u.at("default_action")) + "; ";
    if (u.at("default_args") != json(t.default_args)) diff += "default args differ; ";
    const bool keys_ok = diff.empty();
    r.Add("table", item + " (" + std::to_string(t.keys.size()) + " keys, " + std::to_string(t.actions.size()) + " actions)",
          keys_ok ? Status::kMatch : Status::kMismatch, keys_ok ? u.at("loc").get<std::string>() : diff);
    if (!keys_ok) continue;
    if (t.controller_entries) {
      if (!manifest.at("controller_entries").contains(item)) {
        r.Add("entries", item, Status::kMismatch, "no controller entries in the manifest");
        continue;
      }
      if (u.contains("const_entries")) r.Add("entries", item, Status::kMismatch, "upstream has const entries; the model treats them as controller-installed");
      CompareEntries(item, t, manifest.at("controller_entries").at(item).at("entries"), u.at("keys"), manifest, r);
    } else {
      if (!u.contains("const_entries")) {
        r.Add("entries", item, Status::kMismatch, "upstream table has no const entries");
        continue;
      }
      CompareEntries(item, t, u.at("const_entries"), u.at("keys"), manifest, r);
    }
  }
  ReportUnseen(model, manifest, "tables", "table", seen, r);
}

}  // namespace

void CompareModel(const describe::ModelDescription& model, const json& manifest, CheckReport& report) {
  for (const char* section : {"headers", "registers", "tables", "controller_entries"})
    if (!manifest.contains(section) || !manifest.at(section).is_object())
      throw std::invalid_argument(std::string("manifest has no \"") + section + "\" object");
  if (manifest.value("upstream", "") != model.upstream)
    report.Add("manifest", "upstream", Status::kMismatch,
               "model cites " + model.upstream + ", manifest is of " + manifest.value("upstream", "?"));
  CompareConstants(model, manifest, report);
  CompareEnums(model, manifest, report);
  CompareHeaders(model, manifest, report);
  CompareRegisters(model, manifest, report);
  CompareTables(model, manifest, report);
}

void CompareDrift(const json& committed, const json& fresh, CheckReport& report) {
  int differing = 0;
  for (const auto& [section, items] : fresh.items()) {
    if (!items.is_object()) {
      if (committed.value(section, json()) != items) {
        report.Add("drift", section, Status::kMismatch, "committed " + committed.value(section, json()).dump() + ", now " + items.dump());
        ++differing;
      }
      continue;
    }
    const json old = committed.value(section, json::object());
    for (const auto& [name, v] : items.items()) {
      if (!old.contains(name)) {
        report.Add("drift", section + "." + name, Status::kMismatch, "new upstream, not in the committed manifest");
        ++differing;
      } else if (old.at(name) != v) {
        report.Add("drift", section + "." + name, Status::kMismatch, "changed upstream since the committed manifest");
        ++differing;
      }
    }
    for (const auto& [name, v] : old.items())
      if (!items.contains(name)) {
        report.Add("drift", section + "." + name, Status::kMismatch, "in the committed manifest, gone upstream");
        ++differing;
      }
  }
  if (differing == 0) report.Add("drift", "upstream-manifest.json", Status::kMatch, "fresh extraction equals the committed manifest");
}

}  // namespace inasim::p4tools
