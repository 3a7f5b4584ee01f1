// spec::Reader: reads one JSON object of a scenario, key by key, with the
// scenario's exact error texts ("workload.bytes: must be between 4 and ...")
// and unknown-key suggestions, and echoes every value it returns (defaults
// included) into the resolved document. Moved here from ina/scenario.cc,
// unchanged, so that code without ns-3 (spec_fields.h, tools, tests) can
// share it: it needs only nlohmann::json, fmt and ScenarioError.
#pragma once

#include "common/scenario_error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace inasim::spec {

using nlohmann::json;

inline size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

inline std::string TypeName(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return fmt::format("the integer {}", v.dump());
  if (v.is_number()) return fmt::format("the number {}", v.dump());
  if (v.is_string()) return fmt::format("the string {}", v.dump(-1, ' ', false, json::error_handler_t::replace));
  if (v.is_array()) return "an array";
  return "an object";
}

/// Reads one JSON object, remembering which keys were used (so that unknown
/// keys are errors, with a suggestion) and recording every value it returns,
/// defaults included, into `resolved`.
class Reader {
 public:
  /// Whose error texts: a scenario's, or an `inasim-p4 replay --config`
  /// file's (the texts its hand-written readers had, util::CheckedUnsigned
  /// and util::CheckKnownKeys: "must be an integer in 0..65535, got 70000",
  /// "unknown key \"pool\" (known: ...)"), which scripts may match.
  enum class Texts : uint8_t { kScenario, kConfig };

  Reader(const json* j, std::string path, json* resolved, Texts texts = Texts::kScenario)
      : j_(j), path_(std::move(path)), out_(resolved), texts_(texts) {
    if (j_ && !j_->is_object()) Fail("", "must be an object, got " + TypeName(*j_));
    *out_ = json::object();
  }

  [[noreturn]] void Fail(const std::string& key, const std::string& problem) const {
    throw ScenarioError(fmt::format("{}: {}", Path(key), problem));
  }
  std::string Path(const std::string& key) const {
    if (key.empty()) return path_.empty() ? "(top level)" : path_;
    return path_.empty() ? key : path_ + "." + key;
  }
  bool Has(const std::string& key) const { return j_ && j_->contains(key) && !(*j_)[key].is_null(); }
  const json* Raw(const std::string& key) {
    used_.insert(key);
    return Has(key) ? &(*j_)[key] : nullptr;
  }

  uint64_t U64(const std::string& key, uint64_t def, uint64_t lo, uint64_t hi, bool required = false) {
    const json* v = Raw(key);
    if (!v) {
      if (required) Fail(key, "is required");
      (*out_)[key] = def;
      return def;
    }
    const bool config = texts_ == Texts::kConfig;
    auto config_fail = [&] {
      Fail(key, fmt::format("must be an integer in {}..{}, got {}", lo, hi,
                            v->dump(-1, ' ', false, json::error_handler_t::replace)));
    };
    uint64_t x = 0;
    if (v->is_number_unsigned()) x = v->get<uint64_t>();
    else if (v->is_number_integer()) {
      if (config && v->get<int64_t>() < 0) config_fail();
      if (v->get<int64_t>() < 0) Fail(key, fmt::format("must be between {} and {}, got {}", lo, hi, v->dump()));
      x = static_cast<uint64_t>(v->get<int64_t>());
    }
    else if (v->is_number_float() && std::floor(v->get<double>()) == v->get<double>() && v->get<double>() >= 0 && v->get<double>() < 1.8e19)
      x = static_cast<uint64_t>(v->get<double>());
    else if (config) config_fail();
    else Fail(key, "must be a non-negative integer, got " + TypeName(*v));
    if (x < lo || x > hi) {
      if (config) config_fail();
      Fail(key, fmt::format("must be between {} and {}, got {}", lo, hi, x));
    }
    (*out_)[key] = x;
    return x;
  }
  uint32_t U32(const std::string& key, uint32_t def, uint32_t lo, uint32_t hi, bool required = false) {
    return static_cast<uint32_t>(U64(key, def, lo, hi, required));
  }
  double Num(const std::string& key, double def, double lo, double hi) {
    const json* v = Raw(key);
    if (!v) {
      (*out_)[key] = def;
      return def;
    }
    if (!v->is_number()) Fail(key, "must be a number, got " + TypeName(*v));
    const double x = v->get<double>();
    if (!(x >= lo && x <= hi)) Fail(key, fmt::format("must be between {} and {}, got {}", lo, hi, x));
    (*out_)[key] = x;
    return x;
  }
  /// A time given in `unit` (ns, us, ms) returned as picoseconds.
  uint64_t TimePs(const std::string& key, double def, double lo, double hi, double ps_per_unit) {
    return static_cast<uint64_t>(std::llround(Num(key, def, lo, hi) * ps_per_unit));
  }
  bool Bool(const std::string& key, bool def) {
    const json* v = Raw(key);
    if (!v) {
      (*out_)[key] = def;
      return def;
    }
    if (!v->is_boolean()) Fail(key, "must be true or false, got " + TypeName(*v));
    (*out_)[key] = v->get<bool>();
    return v->get<bool>();
  }
  std::string Str(const std::string& key, const std::string& def) {
    const json* v = Raw(key);
    if (!v) {
      (*out_)[key] = def;
      return def;
    }
    if (!v->is_string()) Fail(key, "must be a string, got " + TypeName(*v));
    (*out_)[key] = *v;
    return v->get<std::string>();
  }
  std::string Enum(const std::string& key, const std::string& def, std::initializer_list<const char*> options,
                   bool required = false) {
    return EnumIn(key, def, options.begin(), options.end(), required);
  }
  /// The same with options known only at run time (spec_fields.h's Section).
  std::string Enum(const std::string& key, const std::string& def, const std::vector<const char*>& options,
                   bool required = false) {
    return EnumIn(key, def, options.data(), options.data() + options.size(), required);
  }
  Reader Obj(const std::string& key) {
    const json* v = Raw(key);
    return Reader(v, Path(key), &(*out_)[key], texts_);
  }
  /// Errors on any key that was never asked for.
  void Done() const {
    if (!j_) return;
    for (auto it = j_->begin(); it != j_->end(); ++it) {
      if (used_.count(it.key())) continue;
      if (texts_ == Texts::kConfig) {
        std::string known;
        for (const auto& k : used_) known += (known.empty() ? "" : ", ") + k;
        throw ScenarioError(fmt::format("{}unknown key \"{}\" (known: {})", path_.empty() ? "" : path_ + ": ",
                                        it.key(), known));
      }
      std::string best;
      size_t best_d = 3;
      for (const auto& k : used_) {
        const size_t d = EditDistance(it.key(), k);
        if (d < best_d) { best_d = d; best = k; }
      }
      Fail(it.key(), best.empty() ? "unknown key" : fmt::format("unknown key (did you mean \"{}\"?)", best));
    }
  }
  json& out() { return *out_; }

 private:
  // One body for both Enum overloads (an initializer_list cannot be built from
  // a vector), so their checks and messages cannot drift apart.
  std::string EnumIn(const std::string& key, const std::string& def, const char* const* first,
                     const char* const* last, bool required) {
    if (required && !Has(key)) {
      used_.insert(key);
      Fail(key, fmt::format("is required (one of {})", Join(first, last)));
    }
    const std::string s = Str(key, def);
    for (const char* const* o = first; o != last; ++o)
      if (s == *o) return s;
    Fail(key, fmt::format("must be one of {}, got \"{}\"", Join(first, last), s));
  }
  static std::string Join(const char* const* first, const char* const* last) {
    std::string s;
    for (const char* const* o = first; o != last; ++o) s += (s.empty() ? "" : ", ") + fmt::format("\"{}\"", *o);
    return s;
  }
  const json* j_;
  std::string path_;
  json* out_;
  Texts texts_;
  std::set<std::string> used_;
};

}  // namespace inasim::spec
