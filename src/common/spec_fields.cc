// spec::SectionBase: what a Section is whatever its struct (the keys' docs,
// the schema, the docs rows, the declaration checks, running the steps),
// compiled once; spec_fields.h has the typed declarations.
#include "common/spec_fields.h"

namespace inasim::spec {

void CollectDocs(const Doc& root, std::vector<const Doc*>& out) {
  for (const Doc* d : out)
    if (d->name() == root.name()) return;
  out.push_back(&root);
  for (const Doc* c : root.Children()) CollectDocs(*c, out);
}

namespace detail {

std::string DocNumber(uint64_t v) {
  if (v == std::numeric_limits<uint64_t>::max()) return "2^64-1";
  if (v >= (1ull << 20) && (v & (v - 1)) == 0) {
    int n = 0;
    while ((1ull << n) != v) ++n;
    return fmt::format("2^{}", n);
  }
  if (v >= 10'000'000) {  // 1e8 rather than 100000000
    int e = 0;
    uint64_t p = 1;
    while (p < v && e < 19) p *= 10, ++e;
    if (p == v) return fmt::format("1e{}", e);
  }
  return fmt::format("{}", v);
}

std::string DocNumber(double v) {
  if ((v >= 1e5 && v < 1e300) || (v > 0 && v < 1e-3)) {  // 1e9, 1e-6 (not 1e-06)
    const int e = static_cast<int>(std::lround(std::log10(v)));
    if (std::pow(10.0, e) == v) return fmt::format("1e{}", e);
  }
  return fmt::format("{}", v);
}

std::string Cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

nlohmann::json IfThen(const std::string& key, const nlohmann::json& values, bool match_absent, nlohmann::json then) {
  nlohmann::json cond = {{"properties", {{key, values.size() == 1 ? nlohmann::json{{"const", values[0]}}
                                                                  : nlohmann::json{{"enum", values}}}}}};
  if (!match_absent) cond["required"] = nlohmann::json::array({key});
  return {{"if", std::move(cond)}, {"then", std::move(then)}};
}

}  // namespace detail

// --- SectionBase: construction and the Doc interface ---------------------------------

SectionBase::SectionBase(std::string path, std::string title)
    : path_(std::move(path)), name_(path_), title_(std::move(title)) {}
SectionBase::SectionBase(const SectionBase&) = default;
SectionBase::SectionBase(SectionBase&&) noexcept = default;
SectionBase& SectionBase::operator=(const SectionBase&) = default;
SectionBase& SectionBase::operator=(SectionBase&&) noexcept = default;
SectionBase::~SectionBase() = default;

const std::string& SectionBase::path() const { return path_; }
const std::string& SectionBase::name() const { return name_; }
const std::string& SectionBase::title() const { return title_; }

void SectionBase::Run(Reader& r, void* out, const void* ctx) const {
  for (const Key& k : keys_)
    if (k.parse) k.parse(k, r, out, ctx);
}

nlohmann::json SectionBase::JsonSchema() const {
  nlohmann::json s = {{"title", title_}, {"type", "object"}};
  s.update(SchemaFragment());
  s[open_ ? "unevaluatedProperties" : "additionalProperties"] = false;
  return s;
}

nlohmann::json SectionBase::SchemaFragment() const {
  nlohmann::json props = nlohmann::json::object(), required = nlohmann::json::array();
  nlohmann::json fragment = nlohmann::json::object();
  for (const Key& f : keys_) {
    if (f.extend) f.extend(fragment);
    if (f.key.empty() || f.row_only) continue;
    props[f.key] = PropertySchema(f);
    if (f.required && !f.conditional) required.push_back(f.key);
  }
  fragment["properties"] = std::move(props);
  if (!required.empty()) fragment["required"] = std::move(required);
  return fragment;
}

std::string SectionBase::MarkdownRows() const {
  std::string rows;
  for (const Key& f : keys_) {
    if (f.key.empty()) continue;
    rows += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", KeyPath(f.key),
                        detail::Cell(f.doc_type.empty() ? f.type : f.doc_type), detail::Cell(f.unit),
                        detail::Cell(DocDefault(f)), detail::Cell(f.allowed), detail::Cell(f.help));
  }
  // An empty unit or allowed cell is "| |" in the docs, not "|  |".
  for (size_t at; (at = rows.find("|  |")) != std::string::npos;) rows.replace(at, 4, "| |");
  return rows;
}

std::vector<const Doc*> SectionBase::Children() const {
  std::vector<const Doc*> out;
  for (const Key& f : keys_) {
    out.insert(out.end(), f.children.begin(), f.children.end());
    if (f.lazy_children)
      for (const Doc* d : f.lazy_children()) out.push_back(d);
  }
  return out;
}

std::vector<std::string> SectionBase::Keys() const {
  std::vector<std::string> keys;
  for (const Key& f : keys_)
    if (!f.key.empty() && !f.row_only) keys.push_back(f.key);
  return keys;
}

// --- Declarations ---------------------------------------------------------------------

void SectionBase::Bug(const char* key, const std::string& what) const {
  throw std::logic_error(fmt::format("spec::Section {}: {}: {}", path_, key, what));
}

SectionBase::Key& SectionBase::Add(const char* key, const char* type, const char* unit, const char* help) {
  for (const Key& f : keys_)
    if (f.key == key) Bug(key, "declared twice");
  Key f;
  f.key = key;
  f.type = type;
  f.required = std::exchange(next_required_, false);
  f.required_why = std::exchange(next_required_why_, "");
  f.unit = unit ? unit : "";
  f.help = help ? help : "";
  keys_.push_back(std::move(f));
  return keys_.back();
}

SectionBase::Key& SectionBase::AddStep() {
  keys_.emplace_back();
  return keys_.back();
}

// The field declared last (checks after it do not count: a shared
// declaration may end with its check, and the caller still adds a note).
SectionBase::Key& SectionBase::Last() {
  for (auto it = keys_.rbegin(); it != keys_.rend(); ++it)
    if (!it->key.empty()) return *it;
  throw std::logic_error("spec::Section " + path_ + ": a modifier needs a field before it");
}

SectionBase::Key& SectionBase::Integer(const char* what) {
  Key& f = Last();
  if (f.type != "integer") Bug(f.key.c_str(), std::string(what) + " is for integer fields");
  return f;
}

const SectionBase::Key& SectionBase::FindKey(const char* key) const {
  for (const Key& f : keys_)
    if (f.key == key) return f;
  Bug(key, "a variant's key must be declared before it");
}

// The declared default and range as the schema and the docs' "allowed" cell show them.
template <class V>
void SectionBase::SetRange(Key& f, V def, V lo, V hi, bool fits) {
  if (!fits) Bug(f.key.c_str(), fmt::format("bad bounds: default {}, range {} .. {}", def, lo, hi));
  if (!f.required) f.def = def;
  f.lo = lo;
  f.hi = hi;
  f.allowed = fmt::format("{} .. {}", detail::DocNumber(lo), detail::DocNumber(hi));
}

void SectionBase::SetNumeric(Key& f, double def, double lo, double hi) {
  SetRange(f, def, lo, hi, lo <= hi && (f.required || (def >= lo && def <= hi)));  // false for NaN too
  f.def_num = def;
  f.lo_num = lo;
  f.hi_num = hi;
}

SectionBase::Key& SectionBase::DeclareUnsigned(const char* key, uint64_t def, uint64_t lo, uint64_t hi,
                                               uint64_t type_max, const char* unit, const char* help) {
  Key& f = Add(key, "integer", unit, help);
  SetRange(f, def, lo, hi, hi <= type_max && lo <= hi && (f.required || (def >= lo && def <= hi)));
  f.def_u64 = def;
  f.lo_u64 = lo;
  f.hi_u64 = hi;
  return f;
}

SectionBase::Key& SectionBase::DeclareNumber(const char* key, double def, double lo, double hi, const char* unit,
                                             const char* help) {
  Key& f = Add(key, "number", unit, help);
  SetNumeric(f, def, lo, hi);
  return f;
}

SectionBase::Key& SectionBase::DeclareTime(const char* key, double def, double lo, double hi, TimeUnit unit,
                                           const char* help) {
  const std::string suffix = std::string("_") + UnitName(unit), k = key;
  if (k.size() <= suffix.size() || k.compare(k.size() - suffix.size(), suffix.size(), suffix) != 0)
    Bug(key, "a time key must end with " + suffix);
  Key& f = DeclareNumber(key, def, lo, hi, UnitName(unit), help);
  f.ps_per_unit = PsPer(unit);
  return f;
}

SectionBase::Key& SectionBase::DeclareBool(const char* key, bool def, const char* help) {
  Key& f = Add(key, "boolean", "", help);
  if (f.required) Bug(key, "Reader has no required boolean");
  f.def = def;
  f.def_bool = def;
  return f;
}

SectionBase::Key& SectionBase::DeclareString(const char* key, const char* def, const char* help) {
  Key& f = Add(key, "string", "", help);
  if (f.required) Bug(key, "Reader has no required string (use an Enum)");
  f.def = def;
  f.allowed = "any";
  f.def_str = def;
  return f;
}

SectionBase::Key& SectionBase::DeclareEnum(const char* key, const std::string& def, std::vector<std::string> names,
                                           const char* help) {
  Key& f = Add(key, "string", "", help);
  f.option_names = std::move(names);
  const bool known = std::find(f.option_names.begin(), f.option_names.end(), def) != f.option_names.end();
  if (!f.required && !known) Bug(key, fmt::format("default \"{}\" is not one of the options", def));
  if (!f.required) f.def = def;
  for (size_t i = 0; i < f.option_names.size(); ++i)
    f.allowed += (i ? ", " : "") + fmt::format("`\"{}\"`", f.option_names[i]);
  f.def_str = def;
  return f;
}

SectionBase::Key& SectionBase::DeclareObject(const char* key, const Doc& sub, const char* help, bool if_given,
                                             bool known_when_absent) {
  const bool required = next_required_;
  Key& f = Add(key, "object", "", help);
  f.def_doc = required ? "**required**" : if_given ? "absent" : "`{}`";
  f.children = {&sub};
  f.schema = [sub = &sub, h = f.help] {
    nlohmann::json s = sub->JsonSchema();
    if (!h.empty()) s["description"] = h;
    return s;
  };
  f.if_given = if_given;
  f.known_when_absent = known_when_absent;
  return f;
}

void SectionBase::DeclareWhen(const char* key, std::vector<std::string> values, const SectionBase& sub) {
  Key& f = AddStep();
  f.children = {&sub};
  const std::string k = key;
  f.parse = [k, values, sub = &sub](const Key&, Reader& r, void* out, const void* ctx) {
    const nlohmann::json& v = r.out()[k];
    for (const std::string& value : values)
      if (v == value) return sub->Run(r, out, ctx);
  };
  const nlohmann::json def = FindKey(key).def;
  f.extend = [k, values, def, sub = &sub](nlohmann::json& fragment) {
    const bool absent_matches = def.is_string() && std::find(values.begin(), values.end(), def) != values.end();
    fragment["allOf"].push_back(detail::IfThen(k, values, absent_matches, sub->SchemaFragment()));
  };
  open_ = true;
}

SectionBase::Key& SectionBase::DeclareCustom(const char* key, KeyDoc doc, std::function<nlohmann::json()> schema) {
  Key& f = Add(key, doc.type.c_str(), doc.unit.c_str(), doc.help.c_str());
  f.def_doc = doc.def;
  f.def_doc_verbatim = true;  // even when empty: no default to show
  f.allowed = doc.allowed;
  f.schema = std::move(schema);
  return f;
}

void SectionBase::DeclareDocRow(const char* key, KeyDoc doc) {
  Key& f = Add(key, doc.type.c_str(), doc.unit.c_str(), doc.help.c_str());
  f.def_doc = doc.def;
  f.def_doc_verbatim = true;
  f.allowed = doc.allowed;
  f.row_only = true;  // no parse: another step reads it
}

void SectionBase::DeclareNests(std::vector<const Doc*> children) {
  for (const Doc* d : children) Last().children.push_back(d);
}

SectionBase::Key& SectionBase::DeclareStep(std::function<void(nlohmann::json&)> extend,
                                           std::function<std::vector<const Doc*>()> children) {
  Key& f = AddStep();
  if (extend) {
    f.extend = std::move(extend);
    open_ = true;
  }
  f.lazy_children = std::move(children);
  return f;
}

SectionBase::Key& SectionBase::DeclareCheck() { return AddStep(); }

// --- Modifiers of the key declared last --------------------------------------------------

void SectionBase::SetName(std::string name) { name_ = std::move(name); }

void SectionBase::SetRequired(const char* why) {
  next_required_ = true;
  next_required_why_ = why ? why : "";
}

void SectionBase::SetMaxFrom(Computed<uint64_t> hi, std::string doc) {
  Key& f = Integer("MaxFrom");
  f.max_from = std::move(hi);
  f.allowed = fmt::format("{} .. {}", f.min_doc.empty() ? detail::DocNumber(f.lo.get<uint64_t>()) : f.min_doc, doc);
  f.max_doc = std::move(doc);
}

void SectionBase::SetMinFrom(Computed<uint64_t> lo, std::string doc) {
  Key& f = Integer("MinFrom");
  f.min_from = std::move(lo);
  f.allowed = fmt::format("{} .. {}", doc, f.max_doc.empty() ? detail::DocNumber(f.hi.get<uint64_t>()) : f.max_doc);
  f.min_doc = std::move(doc);
}

void SectionBase::SetDefaultFrom(Computed<uint64_t> integer, Computed<double> number, std::string doc) {
  Key& f = Last();
  if (f.type == "integer") {
    f.def_from_u64 = std::move(integer);
  } else if (f.type == "number") {
    f.def_from_num = std::move(number);
  } else {
    Bug(f.key.c_str(), "DefaultFrom is for integers, numbers and times");
  }
  f.def = nullptr;
  f.def_doc = std::move(doc);
}

void SectionBase::SetNoDefault(std::string doc) {
  Last().def = nullptr;
  Last().def_doc = std::move(doc);
}

void SectionBase::SetRequiredIf(Computed<bool> when, std::string doc) {
  Key& f = Integer("RequiredIf");
  f.required_if = std::move(when);
  f.def_doc = std::move(doc);
}

void SectionBase::SetAllowedNote(const std::string& note) {
  Last().allowed += (Last().allowed.empty() ? "" : ", ") + note;
}

void SectionBase::SetAllowed(std::string text) { Last().allowed = std::move(text); }

void SectionBase::SetDocDefault(std::string text) { Last().def_doc = std::move(text); }

void SectionBase::SetReadIf(std::function<bool(Reader&, const void*, const void*)> when) {
  Key& f = Last();
  f.conditional = true;  // its "required" is the reader's business, not the schema's
  f.parse = [when = std::move(when), parse = std::move(f.parse)](const Key& f, Reader& r, void* out, const void* ctx) {
    if (when(r, out, ctx) && parse) parse(f, r, out, ctx);
  };
}

void SectionBase::SetSchemaAlso(nlohmann::json extra) { Last().schema_also.update(extra); }

void SectionBase::SetDocType(std::string text) { Last().doc_type = std::move(text); }

// --- Parsing ------------------------------------------------------------------------

void SectionBase::Key::CheckRequired(Reader& r) const {
  if (required && !r.Has(key)) r.Fail(key, required_why.empty() ? "is required" : "is required (" + required_why + ")");
}

uint64_t SectionBase::ReadUnsigned(const Key& f, Reader& r, const void* out, const void* ctx) {
  const uint64_t top = f.max_from ? std::min(f.hi_u64, f.max_from(out, ctx)) : f.hi_u64;
  const uint64_t bottom = f.min_from ? std::max(f.lo_u64, f.min_from(out, ctx)) : f.lo_u64;
  const bool required = f.required || (f.required_if && f.required_if(out, ctx));
  if (required && !f.required_why.empty()) f.CheckRequired(r);
  return r.U64(f.key, f.def_from_u64 ? f.def_from_u64(out, ctx) : f.def_u64, bottom, top, required);
}

double SectionBase::ReadNumber(const Key& f, Reader& r, const void* out, const void* ctx) {
  f.CheckRequired(r);
  return r.Num(f.key, f.def_from_num ? f.def_from_num(out, ctx) : f.def_num, f.lo_num, f.hi_num);
}

uint64_t SectionBase::ReadTime(const Key& f, Reader& r, const void* out, const void* ctx) {
  f.CheckRequired(r);
  return r.TimePs(f.key, f.def_from_num ? f.def_from_num(out, ctx) : f.def_num, f.lo_num, f.hi_num, f.ps_per_unit);
}

bool SectionBase::ReadBool(const Key& f, Reader& r) { return r.Bool(f.key, f.def_bool); }

std::string SectionBase::ReadString(const Key& f, Reader& r) { return r.Str(f.key, f.def_str); }

size_t SectionBase::ReadEnum(const Key& f, Reader& r) {
  // Pointers into this very Key's names (keys move while a Section is declared).
  std::vector<const char*> options;
  for (const std::string& o : f.option_names) options.push_back(o.c_str());
  const std::string s = r.Enum(f.key, f.def_str, options, f.required);  // only returns one of the options
  size_t found = options.size();
  for (size_t i = 0; i < options.size(); ++i)
    if (s == options[i]) found = i;
  return found;
}

void SectionBase::ReadObject(const Key& f, Reader& r, const SectionBase& sub, void* member, const void* sub_ctx) {
  if (f.if_given && !r.Has(f.key)) {
    if (f.known_when_absent) r.Raw(f.key);  // absent (or null): not echoed
    return;
  }
  Reader o = r.Obj(f.key);
  if (f.required && !r.Has(f.key)) r.Fail(f.key, "is required");
  sub.Run(o, member, sub_ctx);
  o.Done();
}

// --- Schema and docs of one key ----------------------------------------------------------

nlohmann::json SectionBase::PropertySchema(const Key& f) const {
  nlohmann::json p = f.schema ? f.schema() : ScalarSchema(f);
  p.update(f.schema_also);
  return p;
}

nlohmann::json SectionBase::ScalarSchema(const Key& f) const {
  nlohmann::json p = {{"type", f.type}};
  if (!f.def.is_null()) p["default"] = f.def;
  if (!f.lo.is_null()) p["minimum"] = f.lo;
  if (!f.hi.is_null()) p["maximum"] = f.hi;
  if (!f.option_names.empty()) p["enum"] = f.option_names;
  std::string d = f.help;
  if (!f.unit.empty()) d += fmt::format(" (unit: {})", f.unit);
  if (!f.min_doc.empty()) d += fmt::format(" At least {}.", f.min_doc);
  if (!f.max_doc.empty()) d += fmt::format(" At most {}.", f.max_doc);
  if (f.def.is_null() && !f.def_doc.empty() && !f.required) d += fmt::format(" Default: {}.", f.def_doc);
  p["description"] = d;
  return p;
}

std::string SectionBase::DocDefault(const Key& f) const {
  if (!f.def_doc.empty() || f.def_doc_verbatim) return f.def_doc;
  if (f.required) return "**required**";
  if (f.def.is_number_float()) return "`" + detail::DocNumber(f.def.get<double>()) + "`";
  return "`" + f.def.dump() + "`";  // integers as they are, strings quoted, booleans
}

std::string SectionBase::KeyPath(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

}  // namespace inasim::spec
