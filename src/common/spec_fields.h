// spec::Section: declare each scenario key once (key, C++ member, type,
// default, range, unit, help) and get from that one declaration
//   * parsing, through spec::Reader, so error texts, unknown-key suggestions
//     and the resolved echo are exactly the hand-written parser's;
//   * a JSON Schema (draft 2020-12) of the section, for editor completion;
//   * the table of docs/SCENARIO.md for the section.
// Header-only, no ns-3. A Section is built once (a function-local static) and
// then only read: parsing walks a vector of steps in declaration order (keys,
// checks, nested objects, variants), writing through accessors.
//
//   static const spec::Section<RingSpec, Scenario> ring =
//       spec::Section<RingSpec, Scenario>("workload.ring", "Ring transport")
//           .U32("window_packets", &RingSpec::window_packets, 64, 1, 1 << 20, "packets", "Unacked packets per stream.")
//           .TimePs("rto_us", &RingSpec::rto_ps, 200, 0.001, 1e9, spec::TimeUnit::kUs, "Retransmission timeout.");
//   spec::Reader r = w.Obj("ring");
//   ring.Parse(r, s.workload.spec<RingSpec>(), s);
//   r.Done();
//
// A key that no field kind fits (a list of host ids or an object, a map of
// rates) is a Custom step: its docs row and schema are declared next to the
// code that reads it, so it still has both.
#pragma once

#include "common/spec_reader.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace inasim::spec {

/// The unit a time key is written in; the key's name ends with it (_ns, _us,
/// _ms) and the member holds picoseconds.
enum class TimeUnit { kNs, kUs, kMs };

inline constexpr double PsPer(TimeUnit u) { return u == TimeUnit::kNs ? 1e3 : u == TimeUnit::kUs ? 1e6 : 1e9; }
inline constexpr const char* UnitName(TimeUnit u) { return u == TimeUnit::kNs ? "ns" : u == TimeUnit::kUs ? "us" : "ms"; }

/// Context of a Section whose bounds and checks need nothing outside the section.
struct NoContext {};

/// `[](Outer& o) -> Inner& { return o.*outer.*inner; }`: a field of a member
/// struct (switch.buffer_bytes is SwitchSpec::port.buffer_bytes).
template <class T, class A, class B>
auto In(A T::*outer, B A::*inner) {
  return [outer, inner](T& t) -> B& { return (t.*outer).*inner; };
}
/// The section's own struct, for an Object or When that reads into it.
template <class T>
auto Self() {
  return [](T& t) -> T& { return t; };
}

/// The docs row of a Custom key (the cells as written; `def` with its
/// backticks, e.g. "`[]`" or "(none)").
struct KeyDoc {
  std::string type, unit, def, allowed, help;
};

/// The columns of every key table in docs/SCENARIO.md.
inline constexpr const char* kTableHeader =
    "| key | type | unit | default | allowed | meaning |\n"
    "|-----|------|------|---------|---------|---------|\n";

/// What docs and schema need of a Section, whatever its struct and context.
class Doc {
 public:
  virtual ~Doc() = default;
  /// The JSON path its keys are under ("workload.ring"; "" at the top level).
  virtual const std::string& path() const = 0;
  /// Its docs region: the path, or path:variant for the keys of one variant.
  virtual const std::string& name() const = 0;
  virtual const std::string& title() const = 0;
  /// {"type": "object", "properties", ...} closed to other keys.
  virtual nlohmann::json JsonSchema() const = 0;
  /// The same open (for a variant merged into its parent's schema).
  virtual nlohmann::json SchemaFragment() const = 0;
  /// One docs row per documented key.
  virtual std::string MarkdownRows() const = 0;
  std::string MarkdownTable() const { return kTableHeader + MarkdownRows(); }
  /// The sections it nests (objects, variants, list elements), in order.
  virtual std::vector<const Doc*> Children() const = 0;
};

/// `root` and every section below it, depth first, each name once.
inline void CollectDocs(const Doc& root, std::vector<const Doc*>& out) {
  for (const Doc* d : out)
    if (d->name() == root.name()) return;
  out.push_back(&root);
  for (const Doc* c : root.Children()) CollectDocs(*c, out);
}

namespace detail {

// Bounds as the docs write them: 2^40 rather than 1099511627776 (a power of
// two from 2^20 up is always a buffer, size or table cap), 1e9 rather than
// 1000000000.
inline std::string DocNumber(uint64_t v) {
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
inline std::string DocNumber(double v) {
  if ((v >= 1e5 && v < 1e300) || (v > 0 && v < 1e-3)) {  // 1e9, 1e-6 (not 1e-06)
    const int e = static_cast<int>(std::lround(std::log10(v)));
    if (std::pow(10.0, e) == v) return fmt::format("1e{}", e);
  }
  return fmt::format("{}", v);
}

// A Markdown table cell must not contain a bare '|'.
inline std::string Cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

// Merges a variant's open fragment into `then` of an if/then clause.
inline nlohmann::json IfThen(const std::string& key, const nlohmann::json& values, bool match_absent,
                             nlohmann::json then) {
  nlohmann::json cond = {{"properties", {{key, values.size() == 1 ? nlohmann::json{{"const", values[0]}}
                                                                  : nlohmann::json{{"enum", values}}}}}};
  if (!match_absent) cond["required"] = nlohmann::json::array({key});
  return {{"if", std::move(cond)}, {"then", std::move(then)}};
}

}  // namespace detail

/// One JSON object of a scenario (e.g. "workload.ring") bound to a struct T.
/// Ctx is what bounds and checks may look at besides T (the scenario parsed so
/// far, say, for a bound that depends on links.mtu_bytes); NoContext if none.
template <class T, class Ctx = NoContext>
class Section : public Doc {
 public:
  using Struct = T;  ///< for declarations shared by sections of different structs
  template <class M>
  using Ref = std::function<M&(T&)>;
  /// A bound or default computed from what was read so far.
  template <class V>
  using From = std::function<V(const T&, const Ctx&)>;

  Section(std::string path, std::string title) : path_(std::move(path)), name_(path_), title_(std::move(title)) {}
  /// Names the docs region (default: the path), e.g. "topology:fat_tree".
  Section& Named(std::string name) {
    name_ = std::move(name);
    return *this;
  }

  // --- Field declarations (each one key; chain them) -------------------------

  Section& U8(const char* key, Ref<uint8_t> m, uint8_t def, uint8_t lo, uint8_t hi, const char* unit,
              const char* help) {
    return Unsigned(key, std::move(m), def, lo, hi, unit, help);
  }
  Section& U16(const char* key, Ref<uint16_t> m, uint16_t def, uint16_t lo, uint16_t hi, const char* unit,
               const char* help) {
    return Unsigned(key, std::move(m), def, lo, hi, unit, help);
  }
  Section& U32(const char* key, Ref<uint32_t> m, uint32_t def, uint32_t lo, uint32_t hi, const char* unit,
               const char* help) {
    return Unsigned(key, std::move(m), def, lo, hi, unit, help);
  }
  Section& U64(const char* key, Ref<uint64_t> m, uint64_t def, uint64_t lo, uint64_t hi, const char* unit,
               const char* help) {
    return Unsigned(key, std::move(m), def, lo, hi, unit, help);
  }
  Section& Num(const char* key, Ref<double> m, double def, double lo, double hi, const char* unit, const char* help) {
    Field& f = Add(key, "number", unit, help);
    SetNumeric(f, def, lo, hi);
    f.parse = [m = std::move(m), def, lo, hi](const Field& f, Reader& r, T& out, const Ctx& ctx) {
      f.CheckRequired(r);
      m(out) = r.Num(f.key, f.def_num ? f.def_num(out, ctx) : def, lo, hi);
    };
    return *this;
  }
  /// A time written in `unit` (the key must end with _ns, _us or _ms to match)
  /// and stored in picoseconds, rounded to the nearest (Reader::TimePs).
  Section& TimePs(const char* key, Ref<uint64_t> m, double def, double lo, double hi, TimeUnit unit,
                  const char* help) {
    const std::string suffix = std::string("_") + UnitName(unit), k = key;
    if (k.size() <= suffix.size() || k.compare(k.size() - suffix.size(), suffix.size(), suffix) != 0)
      Bug(key, "a time key must end with " + suffix);
    Field& f = Add(key, "number", UnitName(unit), help);
    SetNumeric(f, def, lo, hi);
    const double ps = PsPer(unit);
    f.parse = [m = std::move(m), def, lo, hi, ps](const Field& f, Reader& r, T& out, const Ctx& ctx) {
      f.CheckRequired(r);
      m(out) = r.TimePs(f.key, f.def_num ? f.def_num(out, ctx) : def, lo, hi, ps);
    };
    return *this;
  }
  Section& Bool(const char* key, Ref<bool> m, bool def, const char* help) {
    Field& f = Add(key, "boolean", "", help);
    if (f.required) Bug(key, "Reader has no required boolean");
    f.def = def;
    f.parse = [m = std::move(m), def](const Field& f, Reader& r, T& out, const Ctx&) { m(out) = r.Bool(f.key, def); };
    return *this;
  }
  Section& Str(const char* key, Ref<std::string> m, const char* def, const char* help) {
    Field& f = Add(key, "string", "", help);
    if (f.required) Bug(key, "Reader has no required string (use an Enum)");
    f.def = def;
    f.allowed = "any";
    const std::string d = def;
    f.parse = [m = std::move(m), d](const Field& f, Reader& r, T& out, const Ctx&) { m(out) = r.Str(f.key, d); };
    return *this;
  }
  /// A string key stored as the value paired with it, of any type (an enum,
  /// a bool, a port number): `{{"crc32", false}, {"direct", true}}`.
  template <class Acc, class E = std::remove_reference_t<std::invoke_result_t<Acc&, T&>>>
  Section& Enum(const char* key, Acc m, const char* def, std::vector<std::pair<const char*, E>> options,
                const char* help) {
    std::vector<std::string> names;
    std::vector<E> values;
    for (const auto& [name, value] : options) {
      names.emplace_back(name);
      values.push_back(value);
    }
    return EnumOf<E>(key, Ref<E>(std::move(m)), def, std::move(names), std::move(values), help);
  }
  /// The same with options known only when the Section is built (the registry's protocols).
  template <class E>
  Section& EnumOf(const char* key, Ref<E> m, const std::string& def, std::vector<std::string> names,
                  std::vector<E> values, const char* help) {
    Field& f = Add(key, "string", "", help);
    f.option_names = std::move(names);
    const bool known = std::find(f.option_names.begin(), f.option_names.end(), def) != f.option_names.end();
    if (!f.required && !known) Bug(key, fmt::format("default \"{}\" is not one of the options", def));
    if (!f.required) f.def = def;
    for (size_t i = 0; i < f.option_names.size(); ++i)
      f.allowed += (i ? ", " : "") + fmt::format("`\"{}\"`", f.option_names[i]);
    f.parse = [m = std::move(m), def, values = std::move(values)](const Field& f, Reader& r, T& out, const Ctx&) {
      // Pointers into this very Field's names (fields move while a Section is declared).
      std::vector<const char*> options;
      for (const std::string& o : f.option_names) options.push_back(o.c_str());
      const std::string s = r.Enum(f.key, def, options, f.required);  // only returns one of the options
      for (size_t i = 0; i < options.size(); ++i)
        if (s == options[i]) m(out) = values[i];
    };
    return *this;
  }

  /// Makes the field declared NEXT required (Reader's "is required"):
  /// `.Required().U32("hosts", ...)`. A prefix, so that the declaration already
  /// knows that its default is unused and need not lie in the range. `why`
  /// follows the message in parentheses: "is required (when flow arrivals stop, in us)".
  Section& Required(const char* why = nullptr) {
    next_required_ = true;
    next_required_why_ = why ? why : "";
    return *this;
  }

  // --- Modifiers of the field declared last ---------------------------------

  /// An integer field's upper bound that depends on the context (the MTU, the
  /// host count...) or on fields read before it. Checked by the Reader itself
  /// while the field is read, rather than by a Check afterwards, so that the
  /// error text and which error comes first stay those of the hand-written
  /// parser. The declared `hi` stays the schema's maximum (the widest
  /// bound); `doc` is the docs'.
  Section& MaxFrom(std::function<uint64_t(const Ctx&)> hi, std::string doc) {
    return MaxFrom(From<uint64_t>([hi = std::move(hi)](const T&, const Ctx& c) { return hi(c); }), std::move(doc));
  }
  Section& MaxFrom(From<uint64_t> hi, std::string doc) {
    Field& f = Integer("MaxFrom");
    f.max_from = std::move(hi);
    f.allowed = fmt::format("{} .. {}", f.min_doc.empty() ? detail::DocNumber(f.lo.template get<uint64_t>()) : f.min_doc, doc);
    f.max_doc = std::move(doc);
    return *this;
  }
  /// The same for the lower bound (the declared `lo` is the schema's).
  Section& MinFrom(From<uint64_t> lo, std::string doc) {
    Field& f = Integer("MinFrom");
    f.min_from = std::move(lo);
    f.allowed = fmt::format("{} .. {}", doc, f.max_doc.empty() ? detail::DocNumber(f.hi.template get<uint64_t>()) : f.max_doc);
    f.min_doc = std::move(doc);
    return *this;
  }
  /// A default that depends on the context or the fields before it (the
  /// declared one is unused); `doc` is the docs' default cell, as written.
  /// `def(t, ctx)` in the key's unit (an integer for integers).
  template <class F>
  Section& DefaultFrom(F def, std::string doc) {
    Field& f = Last();
    if (f.type == "integer") {
      f.def_u64 = [def](const T& t, const Ctx& c) { return static_cast<uint64_t>(def(t, c)); };
    } else if (f.type == "number") {
      f.def_num = [def](const T& t, const Ctx& c) { return static_cast<double>(def(t, c)); };
    } else {
      Bug(f.key.c_str(), "DefaultFrom is for integers, numbers and times");
    }
    f.def = nullptr;
    f.def_doc = std::move(doc);
    return *this;
  }
  /// A field that has no default (read only when given, ReadIf): the declared
  /// one is unused; `doc` is the docs' default cell ("(none)").
  Section& NoDefault(std::string doc) {
    Last().def = nullptr;
    Last().def_doc = std::move(doc);
    return *this;
  }
  /// An integer field required only when `when` says so (else its default).
  Section& RequiredIf(From<bool> when, std::string doc) {
    Field& f = Integer("RequiredIf");
    f.required_if = std::move(when);
    f.def_doc = std::move(doc);
    return *this;
  }
  /// A further rule, for the docs' "allowed" column (", multiple of 4").
  Section& AllowedNote(const std::string& note) {
    Last().allowed += (Last().allowed.empty() ? "" : ", ") + note;
    return *this;
  }
  /// Replaces the docs' "allowed" cell.
  Section& Allowed(std::string text) {
    Last().allowed = std::move(text);
    return *this;
  }
  /// Replaces the docs' "default" cell, as written ("`1048576` (1 MiB)").
  Section& DocDefault(std::string text) {
    Last().def_doc = std::move(text);
    return *this;
  }
  /// Reads the field only when `when` says so (another key is absent, say);
  /// otherwise it is neither read nor echoed.
  Section& ReadIf(std::function<bool(Reader&, const T&, const Ctx&)> when) {
    Field& f = Last();
    f.conditional = true;  // its "required" is the reader's business, not the schema's
    f.parse = [when = std::move(when), parse = std::move(f.parse)](const Field& f, Reader& r, T& out, const Ctx& ctx) {
      if (when(r, out, ctx)) parse(f, r, out, ctx);
    };
    return *this;
  }
  /// More of the schema's property than type and bounds say
  /// (`{{"enum", {64, 256}}}`, `{{"multipleOf", 4}}`), merged into it.
  Section& SchemaAlso(nlohmann::json extra) {
    Last().schema_also.update(extra);
    return *this;
  }
  /// Replaces the docs' "type" cell ("bool" reads as the schema's "boolean").
  Section& DocType(std::string text) {
    Last().doc_type = std::move(text);
    return *this;
  }

  // --- Structure ----------------------------------------------------------------

  /// A nested object read with its own Section: `{}` when absent (echoed with
  /// its defaults), "is required" after a Required() prefix. Its context is
  /// this one's (Ctx), none (NoContext), or this section's struct itself (T).
  template <class U, class C2, class Acc>
  Section& Object(const char* key, Acc m, const Section<U, C2>& sub, const char* help) {
    return ObjectStep(key, Ref<U>(std::move(m)), sub, help, false);
  }
  /// The same, read only when given: absent (or null), it is not echoed,
  /// and known for "did you mean" only if `known_when_absent`.
  template <class U, class C2, class Acc>
  Section& ObjectIfGiven(const char* key, Acc m, const Section<U, C2>& sub, const char* help,
                         bool known_when_absent = true) {
    ObjectStep(key, Ref<U>(std::move(m)), sub, help, true);
    Last().known_when_absent = known_when_absent;
    return *this;
  }
  /// A variant: when `key` (read before, an Enum of this section) resolved to
  /// one of `values`, the keys of `sub` are read from this same object; its
  /// own docs table (name path:variant), and an if/then in the schema.
  Section& When(const char* key, std::vector<std::string> values, const Section<T, Ctx>& sub) {
    Field& f = AddStep();
    f.children = {&sub};
    const std::string k = key;
    f.parse = [k, values, sub = &sub](const Field&, Reader& r, T& out, const Ctx& ctx) {
      const nlohmann::json& v = r.out()[k];
      for (const std::string& value : values)
        if (v == value) return sub->ParseInto(r, out, ctx);
    };
    const nlohmann::json def = FindField(key).def;
    f.extend = [k, values, def, sub = &sub](nlohmann::json& fragment) {
      const bool absent_matches = def.is_string() && std::find(values.begin(), values.end(), def) != values.end();
      fragment["allOf"].push_back(detail::IfThen(k, values, absent_matches, sub->SchemaFragment()));
    };
    open_ = true;
    return *this;
  }
  /// A key read by hand (`parse` must read it through the Reader: Raw marks
  /// it known, and echo what it resolved), declared for the docs row and the
  /// schema's property.
  Section& Custom(const char* key, KeyDoc doc, std::function<nlohmann::json()> schema,
                  std::function<void(Reader&, T&, const Ctx&)> parse) {
    Field& f = Add(key, doc.type.c_str(), doc.unit.c_str(), doc.help.c_str());
    f.def_doc = doc.def;
    f.def_doc_verbatim = true;  // even when empty: no default to show
    f.allowed = doc.allowed;
    f.schema = std::move(schema);
    f.parse = [p = std::move(parse)](const Field&, Reader& r, T& out, const Ctx& ctx) { p(r, out, ctx); };
    return *this;
  }
  /// A docs row for a key that another step reads and adds to the schema (a
  /// protocol's section, read by the protocol's own parser): no parsing, no
  /// property of this section's schema.
  Section& DocRow(const char* key, KeyDoc doc) {
    Field& f = Add(key, doc.type.c_str(), doc.unit.c_str(), doc.help.c_str());
    f.def_doc = doc.def;
    f.def_doc_verbatim = true;
    f.allowed = doc.allowed;
    f.row_only = true;
    f.parse = [](const Field&, Reader&, T&, const Ctx&) {};
    return *this;
  }
  /// Sections a Custom key reads its entries or forms with (own docs tables).
  Section& Nests(std::vector<const Doc*> children) {
    for (const Doc* d : children) Last().children.push_back(d);
    return *this;
  }
  /// A step without a key of its own (the protocol's section, a topology
  /// build; `parse` may be null) that may add to the schema (`extend` gets
  /// the open fragment) and nest sections (`children`, asked for when docs
  /// are made).
  Section& Step(std::function<void(Reader&, T&, const Ctx&)> parse,
                std::function<void(nlohmann::json&)> extend = nullptr,
                std::function<std::vector<const Doc*>()> children = nullptr) {
    Field& f = AddStep();
    f.parse = [p = std::move(parse)](const Field&, Reader& r, T& out, const Ctx& ctx) {
      if (p) p(r, out, ctx);
    };
    if (extend) {
      f.extend = std::move(extend);
      open_ = true;
    }
    f.lazy_children = std::move(children);
    return *this;
  }

  // --- Cross-field rules ------------------------------------------------------

  /// Runs where it is declared: after the fields before it were read, before
  /// those after it (so the first error is the hand-written parser's); fails
  /// with r.Fail(key, problem) so the message names the key like a range error.
  Section& Check(std::function<void(const T&, Reader&)> check) {
    Field& f = AddStep();
    f.parse = [c = std::move(check)](const Field&, Reader& r, T& out, const Ctx&) { c(out, r); };
    return *this;
  }
  Section& CheckWithContext(std::function<void(const T&, const Ctx&, Reader&)> check) {
    Field& f = AddStep();
    f.parse = [c = std::move(check)](const Field&, Reader& r, T& out, const Ctx& ctx) { c(out, ctx, r); };
    return *this;
  }

  // --- Uses -------------------------------------------------------------------

  /// Runs every step into `out` in declaration order (errors and the
  /// resolved echo are the Reader's). Does not call r.Done(): the caller may
  /// read keys of its own (subsections, lists) before that.
  void Parse(Reader& r, T& out, const Ctx& ctx = Ctx{}) const { ParseInto(r, out, ctx); }
  void ParseInto(Reader& r, T& out, const Ctx& ctx) const {
    for (const Field& f : fields_) f.parse(f, r, out, ctx);
  }
  /// Reads one entry of a list (`path` names it, "faults.links[2]") into a
  /// fresh T, its resolved echo into `resolved`.
  T ParseEntry(const nlohmann::json& entry, std::string path, nlohmann::json& resolved, const Ctx& ctx = Ctx{}) const {
    Reader r(&entry, std::move(path), &resolved);
    T out{};
    ParseInto(r, out, ctx);
    r.Done();
    return out;
  }
  /// Reads the object `parent`.`key` (absent: `{}`), unknown keys included:
  /// the Reader for it, Parse, Done.
  void ParseObject(Reader& parent, const std::string& key, T& out, const Ctx& ctx = Ctx{}) const {
    Reader r = parent.Obj(key);
    ParseInto(r, out, ctx);
    r.Done();
  }

  /// {"title", "type": "object", "properties": {...}, "additionalProperties":
  /// false[, "required"]}; with variants, "allOf" of if/then and
  /// "unevaluatedProperties": false instead. Time keys are in their unit.
  nlohmann::json JsonSchema() const override {
    nlohmann::json s = {{"title", title_}, {"type", "object"}};
    s.update(SchemaFragment());
    s[open_ ? "unevaluatedProperties" : "additionalProperties"] = false;
    return s;
  }
  nlohmann::json SchemaFragment() const override {
    nlohmann::json props = nlohmann::json::object(), required = nlohmann::json::array();
    nlohmann::json fragment = nlohmann::json::object();
    for (const Field& f : fields_) {
      if (f.extend) f.extend(fragment);
      if (f.key.empty() || f.row_only) continue;
      props[f.key] = PropertySchema(f);
      if (f.required && !f.conditional) required.push_back(f.key);
    }
    fragment["properties"] = std::move(props);
    if (!required.empty()) fragment["required"] = std::move(required);
    return fragment;
  }

  /// One row per key, in docs/SCENARIO.md's 6-column format:
  /// | `path.key` | type | unit | default | allowed | meaning |
  std::string MarkdownRows() const override {
    std::string rows;
    for (const Field& f : fields_) {
      if (f.key.empty()) continue;
      rows += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", KeyPath(f.key),
                          detail::Cell(f.doc_type.empty() ? f.type : f.doc_type), detail::Cell(f.unit),
                          detail::Cell(DocDefault(f)), detail::Cell(f.allowed), detail::Cell(f.help));
    }
    // An empty unit or allowed cell is "| |" in the docs, not "|  |".
    for (size_t at; (at = rows.find("|  |")) != std::string::npos;) rows.replace(at, 4, "| |");
    return rows;
  }

  std::vector<const Doc*> Children() const override {
    std::vector<const Doc*> out;
    for (const Field& f : fields_) {
      out.insert(out.end(), f.children.begin(), f.children.end());
      if (f.lazy_children)
        for (const Doc* d : f.lazy_children()) out.push_back(d);
    }
    return out;
  }

  /// The declared keys, in order (e.g. for a "did you mean" before parsing).
  std::vector<std::string> Keys() const {
    std::vector<std::string> keys;
    for (const Field& f : fields_)
      if (!f.key.empty() && !f.row_only) keys.push_back(f.key);
    return keys;
  }

  const std::string& path() const override { return path_; }
  const std::string& name() const override { return name_; }
  const std::string& title() const override { return title_; }

 private:
  struct Field {
    std::string key;   // "" for a step without a key (a check, a variant)
    std::string type;  // JSON Schema's: integer, number, boolean, string; a Custom's docs type
    std::string doc_type, unit, help, allowed, max_doc, min_doc, def_doc, required_why;
    nlohmann::json def, lo, hi;  // null: none (required field, boolean, string)
    std::vector<std::string> option_names;  // Enum only
    bool required = false;
    bool known_when_absent = true;  // ObjectIfGiven
    bool row_only = false;          // DocRow: in the docs only
    bool def_doc_verbatim = false;  // Custom, DocRow: def_doc as declared, even empty
    bool conditional = false;       // ReadIf: read only sometimes
    From<uint64_t> max_from, min_from, def_u64;
    From<double> def_num;
    From<bool> required_if;
    std::function<nlohmann::json()> schema;       // Custom and Object: the property's schema
    nlohmann::json schema_also = nlohmann::json::object();  // SchemaAlso
    std::function<void(nlohmann::json&)> extend;  // adds to the section's open fragment (variants)
    std::vector<const Doc*> children;
    std::function<std::vector<const Doc*>()> lazy_children;
    std::function<void(const Field&, Reader&, T&, const Ctx&)> parse;

    // Required numbers are checked before they are read (the Reader has none).
    void CheckRequired(Reader& r) const {
      if (required && !r.Has(key)) r.Fail(key, required_why.empty() ? "is required" : "is required (" + required_why + ")");
    }
  };

  // A mistake in a declaration is the programmer's, found the first time the
  // Section is built (every test builds it), so it is not a ScenarioError.
  [[noreturn]] void Bug(const char* key, const std::string& what) const {
    throw std::logic_error(fmt::format("spec::Section {}: {}: {}", path_, key, what));
  }

  Field& Add(const char* key, const char* type, const char* unit, const char* help) {
    for (const Field& f : fields_)
      if (f.key == key) Bug(key, "declared twice");
    Field f;
    f.key = key;
    f.type = type;
    f.required = std::exchange(next_required_, false);
    f.required_why = std::exchange(next_required_why_, "");
    f.unit = unit ? unit : "";
    f.help = help ? help : "";
    fields_.push_back(std::move(f));
    return fields_.back();
  }
  Field& AddStep() {
    fields_.emplace_back();
    return fields_.back();
  }
  // The field declared last (checks after it do not count: a shared
  // declaration may end with its check, and the caller still adds a note).
  Field& Last() {
    for (auto it = fields_.rbegin(); it != fields_.rend(); ++it)
      if (!it->key.empty()) return *it;
    throw std::logic_error("spec::Section " + path_ + ": a modifier needs a field before it");
  }
  Field& Integer(const char* what) {
    Field& f = Last();
    if (f.type != "integer") Bug(f.key.c_str(), std::string(what) + " is for integer fields");
    return f;
  }
  const Field& FindField(const char* key) const {
    for (const Field& f : fields_)
      if (f.key == key) return f;
    Bug(key, "a variant's key must be declared before it");
  }

  template <class U>
  Section& Unsigned(const char* key, Ref<U> m, uint64_t def, uint64_t lo, uint64_t hi, const char* unit,
                    const char* help) {
    // The Reader checks [lo, hi] before the cast to U, so hi within U means
    // the stored value can never wrap (MaxFrom bounds are clamped to hi too).
    Field& f = Add(key, "integer", unit, help);
    if (hi > static_cast<uint64_t>(std::numeric_limits<U>::max()) || lo > hi || (!f.required && (def < lo || def > hi)))
      Bug(key, fmt::format("bad bounds: default {}, range {} .. {}", def, lo, hi));
    if (!f.required) f.def = def;
    f.lo = lo;
    f.hi = hi;
    f.allowed = fmt::format("{} .. {}", detail::DocNumber(lo), detail::DocNumber(hi));
    f.parse = [m = std::move(m), def, lo, hi](const Field& f, Reader& r, T& out, const Ctx& ctx) {
      const uint64_t top = f.max_from ? std::min(hi, f.max_from(out, ctx)) : hi;
      const uint64_t bottom = f.min_from ? std::max(lo, f.min_from(out, ctx)) : lo;
      const bool required = f.required || (f.required_if && f.required_if(out, ctx));
      if (required && !f.required_why.empty()) f.CheckRequired(r);
      m(out) = static_cast<U>(r.U64(f.key, f.def_u64 ? f.def_u64(out, ctx) : def, bottom, top, required));
    };
    return *this;
  }

  void SetNumeric(Field& f, double def, double lo, double hi) {
    if (!(lo <= hi && (f.required || (def >= lo && def <= hi))))
      Bug(f.key.c_str(), fmt::format("bad bounds: default {}, range {} .. {}", def, lo, hi));
    if (!f.required) f.def = def;
    f.lo = lo;
    f.hi = hi;
    f.allowed = fmt::format("{} .. {}", detail::DocNumber(lo), detail::DocNumber(hi));
  }

  template <class U, class C2>
  Section& ObjectStep(const char* key, Ref<U> m, const Section<U, C2>& sub, const char* help, bool if_given) {
    static_assert(std::is_same_v<C2, Ctx> || std::is_same_v<C2, NoContext> || std::is_same_v<C2, T>,
                  "a nested section's context is its parent's, its parent's struct, or none");
    const bool required = next_required_;
    Field& f = Add(key, "object", "", help);
    f.def_doc = required ? "**required**" : if_given ? "absent" : "`{}`";
    f.children = {&sub};
    f.schema = [sub = &sub, h = f.help] {
      nlohmann::json s = sub->JsonSchema();
      if (!h.empty()) s["description"] = h;
      return s;
    };
    f.parse = [m = std::move(m), sub = &sub, if_given](const Field& f, Reader& r, T& out, const Ctx& ctx) {
      if (if_given && !r.Has(f.key)) {
        if (f.known_when_absent) r.Raw(f.key);  // absent (or null): not echoed
        return;
      }
      Reader o = r.Obj(f.key);
      if (f.required && !r.Has(f.key)) r.Fail(f.key, "is required");
      if constexpr (std::is_same_v<C2, Ctx>) sub->ParseInto(o, m(out), ctx);
      else if constexpr (std::is_same_v<C2, NoContext>) sub->ParseInto(o, m(out), NoContext{});
      else sub->ParseInto(o, m(out), out);
      o.Done();
    };
    return *this;
  }

  nlohmann::json PropertySchema(const Field& f) const {
    nlohmann::json p = f.schema ? f.schema() : ScalarSchema(f);
    p.update(f.schema_also);
    return p;
  }
  nlohmann::json ScalarSchema(const Field& f) const {
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

  std::string DocDefault(const Field& f) const {
    if (!f.def_doc.empty() || f.def_doc_verbatim) return f.def_doc;
    if (f.required) return "**required**";
    if (f.def.is_number_float()) return "`" + detail::DocNumber(f.def.template get<double>()) + "`";
    return "`" + f.def.dump() + "`";  // integers as they are, strings quoted, booleans
  }
  std::string KeyPath(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  std::string path_, name_, title_;
  std::vector<Field> fields_;
  bool next_required_ = false;  // set by Required(), taken by the next field
  std::string next_required_why_;
  bool open_ = false;  // has variants: closed by unevaluatedProperties
};

}  // namespace inasim::spec
