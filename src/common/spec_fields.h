// spec::Section: declare each scenario key once (key, C++ member, type,
// default, range, unit, help) and get from that one declaration
//   * parsing, through spec::Reader, so error texts, unknown-key suggestions
//     and the resolved echo are exactly the hand-written parser's;
//   * a JSON Schema (draft 2020-12) of the section, for editor completion;
//   * the rows of docs/SCENARIO.md's table for the section.
// Header-only, no ns-3. A Section is built once (a function-local static) and
// then only read: parsing walks a vector of fields and writes through member
// pointers, with no string-keyed lookups and no allocation of its own.
//
//   static const spec::Section<RingSpec, Scenario> ring =
//       spec::Section<RingSpec, Scenario>("workload.ring", "Ring transport")
//           .U32("window_packets", &RingSpec::window_packets, 64, 1, 1 << 20, "packets", "Unacked packets per stream.")
//           .TimePs("rto_us", &RingSpec::rto_ps, 200, 0.001, 1e9, spec::TimeUnit::kUs, "Retransmission timeout.");
//   spec::Reader r = w.Obj("ring");
//   ring.Parse(r, s.workload.ring, s);
//   r.Done();
#pragma once

#include "common/spec_reader.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
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

namespace detail {

// Bounds as the docs write them: 2^40 rather than 1099511627776 (a power of
// two that big is always a buffer or size cap), 1e9 rather than 1000000000.
inline std::string DocNumber(uint64_t v) {
  if (v == std::numeric_limits<uint64_t>::max()) return "2^64-1";
  if (v >= (1ull << 32) && (v & (v - 1)) == 0) {
    int n = 0;
    while ((1ull << n) != v) ++n;
    return fmt::format("2^{}", n);
  }
  return fmt::format("{}", v);
}
inline std::string DocNumber(double v) {
  if (v >= 1e5 && v < 1e300) {
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

}  // namespace detail

/// One JSON object of a scenario (e.g. "workload.ring") bound to a struct T.
/// Ctx is what bounds and checks may look at besides T (the scenario parsed so
/// far, say, for a bound that depends on links.mtu_bytes); NoContext if none.
template <class T, class Ctx = NoContext>
class Section {
 public:
  Section(std::string path, std::string title) : path_(std::move(path)), title_(std::move(title)) {}

  // --- Field declarations (each one key; chain them) -------------------------

  Section& U16(const char* key, uint16_t T::*m, uint16_t def, uint16_t lo, uint16_t hi, const char* unit,
               const char* help) {
    return Unsigned(key, m, def, lo, hi, unit, help);
  }
  Section& U32(const char* key, uint32_t T::*m, uint32_t def, uint32_t lo, uint32_t hi, const char* unit,
               const char* help) {
    return Unsigned(key, m, def, lo, hi, unit, help);
  }
  Section& U64(const char* key, uint64_t T::*m, uint64_t def, uint64_t lo, uint64_t hi, const char* unit,
               const char* help) {
    return Unsigned(key, m, def, lo, hi, unit, help);
  }
  Section& Num(const char* key, double T::*m, double def, double lo, double hi, const char* unit, const char* help) {
    Field& f = Add(key, "number", unit, help);
    SetNumeric(f, def, lo, hi);
    f.parse = [m, def, lo, hi](const Field& f, Reader& r, T& out, const Ctx&) { out.*m = r.Num(f.key, def, lo, hi); };
    return *this;
  }
  /// A time written in `unit` (the key must end with _ns, _us or _ms to match)
  /// and stored in picoseconds, rounded to the nearest (Reader::TimePs).
  Section& TimePs(const char* key, uint64_t T::*m, double def, double lo, double hi, TimeUnit unit,
                  const char* help) {
    const std::string suffix = std::string("_") + UnitName(unit), k = key;
    if (k.size() <= suffix.size() || k.compare(k.size() - suffix.size(), suffix.size(), suffix) != 0)
      Bug(key, "a time key must end with " + suffix);
    Field& f = Add(key, "number", UnitName(unit), help);
    SetNumeric(f, def, lo, hi);
    const double ps = PsPer(unit);
    f.parse = [m, def, lo, hi, ps](const Field& f, Reader& r, T& out, const Ctx&) {
      out.*m = r.TimePs(f.key, def, lo, hi, ps);
    };
    return *this;
  }
  Section& Bool(const char* key, bool T::*m, bool def, const char* help) {
    Field& f = Add(key, "boolean", "", help);
    if (f.required) Bug(key, "Reader has no required boolean");
    f.def = def;
    f.parse = [m, def](const Field& f, Reader& r, T& out, const Ctx&) { out.*m = r.Bool(f.key, def); };
    return *this;
  }
  Section& Str(const char* key, std::string T::*m, const char* def, const char* help) {
    Field& f = Add(key, "string", "", help);
    if (f.required) Bug(key, "Reader has no required string (use an Enum)");
    f.def = def;
    f.allowed = "any";
    const std::string d = def;
    f.parse = [m, d](const Field& f, Reader& r, T& out, const Ctx&) { out.*m = r.Str(f.key, d); };
    return *this;
  }
  /// A string key stored as the enumerator paired with it, in any enum type.
  template <class E>
  Section& Enum(const char* key, E T::*m, const char* def, std::vector<std::pair<const char*, E>> options,
                const char* help) {
    Field& f = Add(key, "string", "", help);
    std::vector<E> values;
    for (const auto& [name, value] : options) {
      f.options.push_back(name);
      values.push_back(value);
    }
    bool known = false;
    for (const char* o : f.options) known |= std::string(o) == def;
    if (!f.required && !known) Bug(key, fmt::format("default \"{}\" is not one of the options", def));
    if (!f.required) f.def = def;
    for (size_t i = 0; i < f.options.size(); ++i)
      f.allowed += (i ? ", " : "") + fmt::format("`\"{}\"`", f.options[i]);
    const std::string d = def;
    f.parse = [m, d, values = std::move(values)](const Field& f, Reader& r, T& out, const Ctx&) {
      const std::string s = r.Enum(f.key, d, f.options, f.required);  // only returns one of the options
      for (size_t i = 0; i < f.options.size(); ++i)
        if (s == f.options[i]) out.*m = values[i];
    };
    return *this;
  }

  /// Makes the field declared NEXT required (Reader's "is required"):
  /// `.Required().U32("hosts", ...)`. A prefix, so that the declaration already
  /// knows that its default is unused and need not lie in the range.
  Section& Required() {
    next_required_ = true;
    return *this;
  }

  // --- Modifiers of the field declared last ---------------------------------

  /// An integer field's upper bound that depends on the context (the MTU, the
  /// host count...). Checked by the Reader itself while the field is read,
  /// rather than by a Check afterwards, so that the error text and which
  /// error comes first stay those of the hand-written parser. The declared
  /// `hi` stays the schema's maximum (the widest bound); `doc` is the docs'.
  Section& MaxFrom(std::function<uint64_t(const Ctx&)> hi, std::string doc) {
    Field& f = Last();
    if (f.type != "integer") Bug(f.key.c_str(), "MaxFrom is for integer fields");
    f.max_from = std::move(hi);
    f.allowed = fmt::format("{} .. {}", detail::DocNumber(f.lo.template get<uint64_t>()), doc);
    f.max_doc = std::move(doc);
    return *this;
  }
  /// A further rule, for the docs' "allowed" column (", multiple of 4").
  Section& AllowedNote(const std::string& note) {
    Last().allowed += (Last().allowed.empty() ? "" : ", ") + note;
    return *this;
  }

  // --- Cross-field rules ------------------------------------------------------

  /// Runs after every field was read (in declaration order); fails with
  /// r.Fail(key, problem) so the message names the key like a range error.
  Section& Check(std::function<void(const T&, Reader&)> check) {
    checks_.push_back([c = std::move(check)](const T& t, const Ctx&, Reader& r) { c(t, r); });
    return *this;
  }
  Section& CheckWithContext(std::function<void(const T&, const Ctx&, Reader&)> check) {
    checks_.push_back(std::move(check));
    return *this;
  }

  // --- Uses -------------------------------------------------------------------

  /// Reads every declared field into `out` (errors and the resolved echo are
  /// the Reader's), then runs the checks. Does not call r.Done(): the caller
  /// may read keys of its own (subsections, lists) before that.
  void Parse(Reader& r, T& out, const Ctx& ctx = Ctx{}) const {
    for (const Field& f : fields_) f.parse(f, r, out, ctx);
    for (const auto& c : checks_) c(out, ctx, r);
  }

  /// {"title", "type": "object", "properties": {...}, "additionalProperties":
  /// false[, "required"]}. Time keys are described in their unit, as written.
  /// A caller that reads more keys adds them to "properties" itself.
  nlohmann::json JsonSchema() const {
    nlohmann::json props = nlohmann::json::object(), required = nlohmann::json::array();
    for (const Field& f : fields_) {
      nlohmann::json p = {{"type", f.type}};
      if (!f.def.is_null()) p["default"] = f.def;
      if (!f.lo.is_null()) p["minimum"] = f.lo;
      if (!f.hi.is_null()) p["maximum"] = f.hi;
      if (!f.options.empty()) p["enum"] = f.options;
      std::string d = f.help;
      if (!f.unit.empty()) d += fmt::format(" (unit: {})", f.unit);
      if (!f.max_doc.empty()) d += fmt::format(" At most {}.", f.max_doc);
      p["description"] = d;
      props[f.key] = std::move(p);
      if (f.required) required.push_back(f.key);
    }
    nlohmann::json s = {{"title", title_}, {"type", "object"}, {"properties", std::move(props)},
                        {"additionalProperties", false}};
    if (!required.empty()) s["required"] = std::move(required);
    return s;
  }

  /// One row per field, in docs/SCENARIO.md's 6-column format:
  /// | `path.key` | type | unit | default | allowed | meaning |
  std::string MarkdownRows() const {
    std::string rows;
    for (const Field& f : fields_) {
      const std::string def = f.required ? "**required**" : "`" + DocDefault(f) + "`";
      rows += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", Path(f.key), f.type, detail::Cell(f.unit), def,
                          detail::Cell(f.allowed), detail::Cell(f.help));
    }
    // An empty unit or allowed cell is "| |" in the docs, not "|  |".
    for (size_t at; (at = rows.find("|  |")) != std::string::npos;) rows.replace(at, 4, "| |");
    return rows;
  }

  const std::string& path() const { return path_; }
  const std::string& title() const { return title_; }

 private:
  struct Field {
    std::string key;
    std::string type;  // JSON Schema's: integer, number, boolean, string
    std::string unit, help, allowed, max_doc;
    nlohmann::json def, lo, hi;  // null: none (required field, boolean, string)
    std::vector<const char*> options;  // Enum only
    bool required = false;
    std::function<uint64_t(const Ctx&)> max_from;  // MaxFrom only
    std::function<void(const Field&, Reader&, T&, const Ctx&)> parse;
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
    f.unit = unit ? unit : "";
    f.help = help ? help : "";
    fields_.push_back(std::move(f));
    return fields_.back();
  }
  Field& Last() {
    if (fields_.empty()) throw std::logic_error("spec::Section " + path_ + ": a modifier needs a field before it");
    return fields_.back();
  }

  template <class U>
  Section& Unsigned(const char* key, U T::*m, uint64_t def, uint64_t lo, uint64_t hi, const char* unit,
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
    f.parse = [m, def, lo, hi](const Field& f, Reader& r, T& out, const Ctx& ctx) {
      const uint64_t top = f.max_from ? std::min(hi, f.max_from(ctx)) : hi;
      out.*m = static_cast<U>(r.U64(f.key, def, lo, top, f.required));
    };
    return *this;
  }

  // Reader::Num and TimePs have no "required" form: a required number would
  // need one in the Reader first.
  void SetNumeric(Field& f, double def, double lo, double hi) {
    if (f.required) Bug(f.key.c_str(), "Reader has no required number");
    if (!(lo <= hi && def >= lo && def <= hi))
      Bug(f.key.c_str(), fmt::format("bad bounds: default {}, range {} .. {}", def, lo, hi));
    f.def = def;
    f.lo = lo;
    f.hi = hi;
    f.allowed = fmt::format("{} .. {}", detail::DocNumber(lo), detail::DocNumber(hi));
  }

  std::string DocDefault(const Field& f) const {
    if (f.def.is_number_float()) return detail::DocNumber(f.def.template get<double>());
    return f.def.dump();  // integers as they are, strings quoted, booleans
  }
  std::string Path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  std::string path_, title_;
  std::vector<Field> fields_;
  bool next_required_ = false;  // set by Required(), taken by the next field
  std::vector<std::function<void(const T&, const Ctx&, Reader&)>> checks_;
};

}  // namespace inasim::spec
