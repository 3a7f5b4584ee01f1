// spec::Section: declare each scenario key once (key, C++ member, type,
// default, range, unit, help) and get from that one declaration
//   * parsing, through spec::Reader, so error texts, unknown-key suggestions
//     and the resolved echo are exactly the hand-written parser's;
//   * a JSON Schema (draft 2020-12) of the section, for editor completion;
//   * the table of docs/SCENARIO.md for the section.
// No ns-3. A Section is built once (a function-local static) and then only
// read: parsing walks a vector of steps in declaration order (keys, checks,
// nested objects, variants), writing through accessors.
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
//
// Build cost: everything that does not depend on the struct (the keys' docs,
// the schema, the docs rows, the declaration checks, running the steps) is
// SectionBase, compiled once in spec_fields.cc (library inasim_spec).
// Section<T, Ctx> only adds the typed declarations: each makes one small
// parse closure over the struct and context as untyped pointers, which casts
// them back; a field's closure captures only its accessor (a member pointer,
// usually), so every field of a kind and member type shares one closure type.
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
inline constexpr NoContext kNoContext{};

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
void CollectDocs(const Doc& root, std::vector<const Doc*>& out);

namespace detail {

// Bounds as the docs write them: 2^40 rather than 1099511627776 (a power of
// two from 2^20 up is always a buffer, size or table cap), 1e9 rather than
// 1000000000.
std::string DocNumber(uint64_t v);
std::string DocNumber(double v);

// A Markdown table cell must not contain a bare '|'.
std::string Cell(const std::string& s);

// Merges a variant's open fragment into `then` of an if/then clause.
nlohmann::json IfThen(const std::string& key, const nlohmann::json& values, bool match_absent, nlohmann::json then);

}  // namespace detail

/// A Section whatever its struct and context: its keys' docs (for the docs
/// rows and the schema), the declaration checks, and its steps, each a parse
/// closure over the struct being read and the context as untyped pointers.
/// Only Section<T, Ctx> below declares keys, so the pointers always have the
/// types the closures cast them back to.
class SectionBase : public Doc {
 public:
  SectionBase(const SectionBase&);
  SectionBase(SectionBase&&) noexcept;
  SectionBase& operator=(const SectionBase&);
  SectionBase& operator=(SectionBase&&) noexcept;
  ~SectionBase() override;

  /// {"title", "type": "object", "properties": {...}, "additionalProperties":
  /// false[, "required"]}; with variants, "allOf" of if/then and
  /// "unevaluatedProperties": false instead. Time keys are in their unit.
  nlohmann::json JsonSchema() const override;
  nlohmann::json SchemaFragment() const override;
  /// One row per key, in docs/SCENARIO.md's 6-column format:
  /// | `path.key` | type | unit | default | allowed | meaning |
  std::string MarkdownRows() const override;
  std::vector<const Doc*> Children() const override;
  /// The declared keys, in order (e.g. for a "did you mean" before parsing).
  std::vector<std::string> Keys() const;

  const std::string& path() const override;
  const std::string& name() const override;
  const std::string& title() const override;

 protected:
  struct Key;
  /// One step: reads its key (if any) of `r` into the struct at `out`.
  using Parse = std::function<void(const Key&, Reader& r, void* out, const void* ctx)>;
  /// A bound, default or condition computed from the struct read so far and the context.
  template <class V>
  using Computed = std::function<V(const void* out, const void* ctx)>;

  struct Key {
    std::string key;   // "" for a step without a key (a check, a variant)
    std::string type;  // JSON Schema's: integer, number, boolean, string; a Custom's docs type
    std::string doc_type, unit, help, allowed, max_doc, min_doc, def_doc, required_why;
    nlohmann::json def, lo, hi;  // null: none (required field, boolean, string)
    std::vector<std::string> option_names;  // Enum only
    // The declared default and bounds as parsing uses them (even where `def`
    // is null: a required key's default is unused but still declared).
    uint64_t def_u64 = 0, lo_u64 = 0, hi_u64 = 0;
    double def_num = 0, lo_num = 0, hi_num = 0, ps_per_unit = 1;
    bool def_bool = false;
    std::string def_str;
    bool required = false;
    bool if_given = false;          // ObjectIfGiven
    bool known_when_absent = true;  // ObjectIfGiven
    bool row_only = false;          // DocRow: in the docs only
    bool def_doc_verbatim = false;  // Custom, DocRow: def_doc as declared, even empty
    bool conditional = false;       // ReadIf: read only sometimes
    Computed<uint64_t> max_from, min_from, def_from_u64;
    Computed<double> def_from_num;
    Computed<bool> required_if;
    std::function<nlohmann::json()> schema;       // Custom and Object: the property's schema
    nlohmann::json schema_also = nlohmann::json::object();  // SchemaAlso
    std::function<void(nlohmann::json&)> extend;  // adds to the section's open fragment (variants)
    std::vector<const Doc*> children;
    std::function<std::vector<const Doc*>()> lazy_children;
    Parse parse;

    // Required numbers are checked before they are read (the Reader has none).
    void CheckRequired(Reader& r) const;
  };

  SectionBase(std::string path, std::string title);

  /// Runs every step into `out` in declaration order.
  void Run(Reader& r, void* out, const void* ctx) const;

  // Declarations: the docs and checks of each kind; the caller sets `parse`.
  Key& DeclareUnsigned(const char* key, uint64_t def, uint64_t lo, uint64_t hi, uint64_t type_max, const char* unit,
                       const char* help);
  Key& DeclareNumber(const char* key, double def, double lo, double hi, const char* unit, const char* help);
  Key& DeclareTime(const char* key, double def, double lo, double hi, TimeUnit unit, const char* help);
  Key& DeclareBool(const char* key, bool def, const char* help);
  Key& DeclareString(const char* key, const char* def, const char* help);
  Key& DeclareEnum(const char* key, const std::string& def, std::vector<std::string> names, const char* help);
  Key& DeclareObject(const char* key, const Doc& sub, const char* help, bool if_given, bool known_when_absent);
  void DeclareWhen(const char* key, std::vector<std::string> values, const SectionBase& sub);
  Key& DeclareCustom(const char* key, KeyDoc doc, std::function<nlohmann::json()> schema);
  void DeclareDocRow(const char* key, KeyDoc doc);
  void DeclareNests(std::vector<const Doc*> children);
  Key& DeclareStep(std::function<void(nlohmann::json&)> extend,
                   std::function<std::vector<const Doc*>()> children);
  Key& DeclareCheck();

  // Modifiers of the key declared last.
  void SetName(std::string name);
  void SetRequired(const char* why);
  void SetMaxFrom(Computed<uint64_t> hi, std::string doc);
  void SetMinFrom(Computed<uint64_t> lo, std::string doc);
  void SetDefaultFrom(Computed<uint64_t> integer, Computed<double> number, std::string doc);
  void SetNoDefault(std::string doc);
  void SetRequiredIf(Computed<bool> when, std::string doc);
  void SetAllowedNote(const std::string& note);
  void SetAllowed(std::string text);
  void SetDocDefault(std::string text);
  void SetReadIf(std::function<bool(Reader&, const void* out, const void* ctx)> when);
  void SetSchemaAlso(nlohmann::json extra);
  void SetDocType(std::string text);

  // What the parse closures read through the Reader (defaults, bounds and
  // conditions from the key).
  static uint64_t ReadUnsigned(const Key& k, Reader& r, const void* out, const void* ctx);
  static double ReadNumber(const Key& k, Reader& r, const void* out, const void* ctx);
  static uint64_t ReadTime(const Key& k, Reader& r, const void* out, const void* ctx);
  static bool ReadBool(const Key& k, Reader& r);
  static std::string ReadString(const Key& k, Reader& r);
  /// The index of the option read (the last one of that name; none: the option count).
  static size_t ReadEnum(const Key& k, Reader& r);
  /// The object `k.key` read with `sub` into `member`, with `sub_ctx` as its context.
  static void ReadObject(const Key& k, Reader& r, const SectionBase& sub, void* member, const void* sub_ctx);

 private:
  // A mistake in a declaration is the programmer's, found the first time the
  // Section is built (every test builds it), so it is not a ScenarioError.
  [[noreturn]] void Bug(const char* key, const std::string& what) const;
  Key& Add(const char* key, const char* type, const char* unit, const char* help);
  Key& AddStep();
  Key& Last();
  Key& Integer(const char* what);
  const Key& FindKey(const char* key) const;
  template <class V>
  void SetRange(Key& f, V def, V lo, V hi, bool fits);
  void SetNumeric(Key& f, double def, double lo, double hi);
  nlohmann::json PropertySchema(const Key& f) const;
  nlohmann::json ScalarSchema(const Key& f) const;
  std::string DocDefault(const Key& f) const;
  std::string KeyPath(const std::string& key) const;

  std::string path_, name_, title_;
  std::vector<Key> keys_;
  bool next_required_ = false;  // set by Required(), taken by the next field
  std::string next_required_why_;
  bool open_ = false;  // has variants: closed by unevaluatedProperties
};

/// One JSON object of a scenario (e.g. "workload.ring") bound to a struct T.
/// Ctx is what bounds and checks may look at besides T (the scenario parsed so
/// far, say, for a bound that depends on links.mtu_bytes); NoContext if none.
/// An accessor is a member pointer of T or any callable `M&(T&)` (In, Self).
template <class T, class Ctx = NoContext>
class Section : public SectionBase {
 public:
  using Struct = T;  ///< for declarations shared by sections of different structs
  /// A bound or default computed from what was read so far.
  template <class V>
  using From = std::function<V(const T&, const Ctx&)>;

  Section(std::string path, std::string title) : SectionBase(std::move(path), std::move(title)) {}
  /// Names the docs region (default: the path), e.g. "topology:fat_tree".
  Section& Named(std::string name) { return Modify(&Section::SetName, std::move(name)); }

  // --- Field declarations (each one key; chain them) -------------------------

  template <class Acc>
  Section& U8(const char* key, Acc m, uint8_t def, uint8_t lo, uint8_t hi, const char* unit, const char* help) {
    return Unsigned<uint8_t>(key, std::move(m), def, lo, hi, unit, help);
  }
  template <class Acc>
  Section& U16(const char* key, Acc m, uint16_t def, uint16_t lo, uint16_t hi, const char* unit, const char* help) {
    return Unsigned<uint16_t>(key, std::move(m), def, lo, hi, unit, help);
  }
  template <class Acc>
  Section& U32(const char* key, Acc m, uint32_t def, uint32_t lo, uint32_t hi, const char* unit, const char* help) {
    return Unsigned<uint32_t>(key, std::move(m), def, lo, hi, unit, help);
  }
  template <class Acc>
  Section& U64(const char* key, Acc m, uint64_t def, uint64_t lo, uint64_t hi, const char* unit, const char* help) {
    return Unsigned<uint64_t>(key, std::move(m), def, lo, hi, unit, help);
  }
  template <class Acc>
  Section& Num(const char* key, Acc m, double def, double lo, double hi, const char* unit, const char* help) {
    CheckAccessor<double, Acc>();
    DeclareNumber(key, def, lo, hi, unit, help).parse = [m](const Key& k, Reader& r, void* out, const void* ctx) {
      std::invoke(m, AsT(out)) = ReadNumber(k, r, out, ctx);
    };
    return *this;
  }
  /// A time written in `unit` (the key must end with _ns, _us or _ms to match)
  /// and stored in picoseconds, rounded to the nearest (Reader::TimePs).
  template <class Acc>
  Section& TimePs(const char* key, Acc m, double def, double lo, double hi, TimeUnit unit, const char* help) {
    CheckAccessor<uint64_t, Acc>();
    DeclareTime(key, def, lo, hi, unit, help).parse = [m](const Key& k, Reader& r, void* out, const void* ctx) {
      std::invoke(m, AsT(out)) = ReadTime(k, r, out, ctx);
    };
    return *this;
  }
  template <class Acc>
  Section& Bool(const char* key, Acc m, bool def, const char* help) {
    CheckAccessor<bool, Acc>();
    DeclareBool(key, def, help).parse = [m](const Key& k, Reader& r, void* out, const void*) {
      std::invoke(m, AsT(out)) = ReadBool(k, r);
    };
    return *this;
  }
  template <class Acc>
  Section& Str(const char* key, Acc m, const char* def, const char* help) {
    CheckAccessor<std::string, Acc>();
    DeclareString(key, def, help).parse = [m](const Key& k, Reader& r, void* out, const void*) {
      std::invoke(m, AsT(out)) = ReadString(k, r);
    };
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
    return EnumOf<E>(key, std::move(m), def, std::move(names), std::move(values), help);
  }
  /// The same with options known only when the Section is built (the registry's protocols).
  template <class E, class Acc>
  Section& EnumOf(const char* key, Acc m, const std::string& def, std::vector<std::string> names,
                  std::vector<E> values, const char* help) {
    CheckAccessor<E, Acc>();
    DeclareEnum(key, def, std::move(names), help).parse =
        [m, values = std::move(values)](const Key& k, Reader& r, void* out, const void*) {
          if (const size_t i = ReadEnum(k, r); i < values.size()) std::invoke(m, AsT(out)) = values[i];
        };
    return *this;
  }

  /// Makes the field declared NEXT required (Reader's "is required"):
  /// `.Required().U32("hosts", ...)`. A prefix, so that the declaration already
  /// knows that its default is unused and need not lie in the range. `why`
  /// follows the message in parentheses: "is required (when flow arrivals stop, in us)".
  Section& Required(const char* why = nullptr) { return Modify(&Section::SetRequired, why); }

  // --- Modifiers of the field declared last ---------------------------------

  /// An integer field's upper bound that depends on the context (the MTU, the
  /// host count...) or on fields read before it. Checked by the Reader itself
  /// while the field is read, rather than by a Check afterwards, so that the
  /// error text and which error comes first stay those of the hand-written
  /// parser. The declared `hi` stays the schema's maximum (the widest
  /// bound); `doc` is the docs'.
  Section& MaxFrom(std::function<uint64_t(const Ctx&)> hi, std::string doc) {
    SetMaxFrom([hi = std::move(hi)](const void*, const void* ctx) { return hi(AsCtx(ctx)); }, std::move(doc));
    return *this;
  }
  Section& MaxFrom(From<uint64_t> hi, std::string doc) {
    SetMaxFrom(Erase(std::move(hi)), std::move(doc));
    return *this;
  }
  /// The same for the lower bound (the declared `lo` is the schema's).
  Section& MinFrom(From<uint64_t> lo, std::string doc) {
    SetMinFrom(Erase(std::move(lo)), std::move(doc));
    return *this;
  }
  /// A default that depends on the context or the fields before it (the
  /// declared one is unused); `doc` is the docs' default cell, as written.
  /// `def(t, ctx)` in the key's unit (an integer for integers).
  template <class F>
  Section& DefaultFrom(F def, std::string doc) {
    SetDefaultFrom(
        [def](const void* out, const void* ctx) { return static_cast<uint64_t>(def(AsConstT(out), AsCtx(ctx))); },
        [def](const void* out, const void* ctx) { return static_cast<double>(def(AsConstT(out), AsCtx(ctx))); },
        std::move(doc));
    return *this;
  }
  /// A field that has no default (read only when given, ReadIf): the declared
  /// one is unused; `doc` is the docs' default cell ("(none)").
  Section& NoDefault(std::string doc) { return Modify(&Section::SetNoDefault, std::move(doc)); }
  /// An integer field required only when `when` says so (else its default).
  Section& RequiredIf(From<bool> when, std::string doc) {
    SetRequiredIf(Erase(std::move(when)), std::move(doc));
    return *this;
  }
  /// A further rule, for the docs' "allowed" column (", multiple of 4").
  Section& AllowedNote(const std::string& note) { return Modify(&Section::SetAllowedNote, note); }
  /// Replaces the docs' "allowed" cell.
  Section& Allowed(std::string text) { return Modify(&Section::SetAllowed, std::move(text)); }
  /// Replaces the docs' "default" cell, as written ("`1048576` (1 MiB)").
  Section& DocDefault(std::string text) { return Modify(&Section::SetDocDefault, std::move(text)); }
  /// Reads the field only when `when` says so (another key is absent, say);
  /// otherwise it is neither read nor echoed.
  Section& ReadIf(std::function<bool(Reader&, const T&, const Ctx&)> when) {
    SetReadIf([w = std::move(when)](Reader& r, const void* out, const void* ctx) { return w(r, AsConstT(out), AsCtx(ctx)); });
    return *this;
  }
  /// More of the schema's property than type and bounds say
  /// (`{{"enum", {64, 256}}}`, `{{"multipleOf", 4}}`), merged into it.
  Section& SchemaAlso(nlohmann::json extra) { return Modify(&Section::SetSchemaAlso, std::move(extra)); }
  /// Replaces the docs' "type" cell ("bool" reads as the schema's "boolean").
  Section& DocType(std::string text) { return Modify(&Section::SetDocType, std::move(text)); }

  // --- Structure ----------------------------------------------------------------

  /// A nested object read with its own Section: `{}` when absent (echoed with
  /// its defaults), "is required" after a Required() prefix. Its context is
  /// this one's (Ctx), none (NoContext), or this section's struct itself (T).
  template <class U, class C2, class Acc>
  Section& Object(const char* key, Acc m, const Section<U, C2>& sub, const char* help) {
    return ObjectStep(key, std::move(m), sub, help, false, true);
  }
  /// The same, read only when given: absent (or null), it is not echoed,
  /// and known for "did you mean" only if `known_when_absent`.
  template <class U, class C2, class Acc>
  Section& ObjectIfGiven(const char* key, Acc m, const Section<U, C2>& sub, const char* help,
                         bool known_when_absent = true) {
    return ObjectStep(key, std::move(m), sub, help, true, known_when_absent);
  }
  /// A variant: when `key` (read before, an Enum of this section) resolved to
  /// one of `values`, the keys of `sub` are read from this same object; its
  /// own docs table (name path:variant), and an if/then in the schema.
  Section& When(const char* key, std::vector<std::string> values, const Section<T, Ctx>& sub) {
    return Modify(&Section::DeclareWhen, key, std::move(values), sub);
  }
  /// A key read by hand (`parse` must read it through the Reader: Raw marks
  /// it known, and echo what it resolved), declared for the docs row and the
  /// schema's property.
  Section& Custom(const char* key, KeyDoc doc, std::function<nlohmann::json()> schema,
                  std::function<void(Reader&, T&, const Ctx&)> parse) {
    DeclareCustom(key, std::move(doc), std::move(schema)).parse =
        [p = std::move(parse)](const Key&, Reader& r, void* out, const void* ctx) { p(r, AsT(out), AsCtx(ctx)); };
    return *this;
  }
  /// A docs row for a key that another step reads and adds to the schema (a
  /// protocol's section, read by the protocol's own parser): no parsing, no
  /// property of this section's schema.
  Section& DocRow(const char* key, KeyDoc doc) { return Modify(&Section::DeclareDocRow, key, std::move(doc)); }
  /// Sections a Custom key reads its entries or forms with (own docs tables).
  Section& Nests(std::vector<const Doc*> children) { return Modify(&Section::DeclareNests, std::move(children)); }
  /// A step without a key of its own (the protocol's section, a topology
  /// build; `parse` may be null) that may add to the schema (`extend` gets
  /// the open fragment) and nest sections (`children`, asked for when docs
  /// are made).
  Section& Step(std::function<void(Reader&, T&, const Ctx&)> parse,
                std::function<void(nlohmann::json&)> extend = nullptr,
                std::function<std::vector<const Doc*>()> children = nullptr) {
    Key& k = DeclareStep(std::move(extend), std::move(children));
    if (parse)
      k.parse = [p = std::move(parse)](const Key&, Reader& r, void* out, const void* ctx) { p(r, AsT(out), AsCtx(ctx)); };
    return *this;
  }

  // --- Cross-field rules ------------------------------------------------------

  /// Runs where it is declared: after the fields before it were read, before
  /// those after it (so the first error is the hand-written parser's); fails
  /// with r.Fail(key, problem) so the message names the key like a range error.
  Section& Check(std::function<void(const T&, Reader&)> check) {
    DeclareCheck().parse = [c = std::move(check)](const Key&, Reader& r, void* out, const void*) { c(AsConstT(out), r); };
    return *this;
  }
  Section& CheckWithContext(std::function<void(const T&, const Ctx&, Reader&)> check) {
    DeclareCheck().parse = [c = std::move(check)](const Key&, Reader& r, void* out, const void* ctx) {
      c(AsConstT(out), AsCtx(ctx), r);
    };
    return *this;
  }

  // --- Uses -------------------------------------------------------------------

  /// Runs every step into `out` in declaration order (errors and the
  /// resolved echo are the Reader's). Does not call r.Done(): the caller may
  /// read keys of its own (subsections, lists) before that.
  void Parse(Reader& r, T& out, const Ctx& ctx = Ctx{}) const { ParseInto(r, out, ctx); }
  void ParseInto(Reader& r, T& out, const Ctx& ctx) const { Run(r, &out, &ctx); }
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

 private:
  // The untyped pointers of the steps, back to what this Section declared them with.
  static T& AsT(void* out) { return *static_cast<T*>(out); }
  static const T& AsConstT(const void* out) { return *static_cast<const T*>(out); }
  static const Ctx& AsCtx(const void* ctx) { return *static_cast<const Ctx*>(ctx); }
  // Calls one of SectionBase's declarations or modifiers, for chaining.
  template <class... Params, class... Args>
  Section& Modify(void (SectionBase::*declare)(Params...), Args&&... args) {
    (this->*declare)(std::forward<Args>(args)...);
    return *this;
  }
  template <class V>
  static Computed<V> Erase(From<V> f) {
    return [f = std::move(f)](const void* out, const void* ctx) { return f(AsConstT(out), AsCtx(ctx)); };
  }
  // An accessor must give the member's very type (as the std::function<M&(T&)> it replaces).
  template <class M, class Acc>
  static void CheckAccessor() {
    static_assert(std::is_same_v<std::invoke_result_t<Acc&, T&>, M&>, "the accessor must give an M& of the struct");
  }

  template <class U, class Acc>
  Section& Unsigned(const char* key, Acc m, uint64_t def, uint64_t lo, uint64_t hi, const char* unit,
                    const char* help) {
    CheckAccessor<U, Acc>();
    // The Reader checks [lo, hi] before the cast to U, so hi within U means
    // the stored value can never wrap (MaxFrom bounds are clamped to hi too).
    DeclareUnsigned(key, def, lo, hi, std::numeric_limits<U>::max(), unit, help).parse =
        [m](const Key& k, Reader& r, void* out, const void* ctx) {
          std::invoke(m, AsT(out)) = static_cast<U>(ReadUnsigned(k, r, out, ctx));
        };
    return *this;
  }

  template <class U, class C2, class Acc>
  Section& ObjectStep(const char* key, Acc m, const Section<U, C2>& sub, const char* help, bool if_given,
                      bool known_when_absent) {
    static_assert(std::is_same_v<C2, Ctx> || std::is_same_v<C2, NoContext> || std::is_same_v<C2, T>,
                  "a nested section's context is its parent's, its parent's struct, or none");
    CheckAccessor<U, Acc>();
    DeclareObject(key, sub, help, if_given, known_when_absent).parse =
        [m, sub = static_cast<const SectionBase*>(&sub)](const Key& k, Reader& r, void* out, const void* ctx) {
          const void* sub_ctx = out;  // C2 is T
          if constexpr (std::is_same_v<C2, Ctx>) sub_ctx = ctx;
          else if constexpr (std::is_same_v<C2, NoContext>) sub_ctx = &kNoContext;
          ReadObject(k, r, *sub, &std::invoke(m, AsT(out)), sub_ctx);
        };
    return *this;
  }
};

}  // namespace inasim::spec
