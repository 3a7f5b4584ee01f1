// Strict JSON for user input: nlohmann's parser keeps the last of two equal
// keys in an object without a word, so a scenario or config that sets a key
// twice would silently lose the first value. FindDuplicateKey scans the text
// (already known to be valid JSON) and reports both places; the integer
// helpers range-check a value against the type it is stored in, instead of
// nlohmann's get<uint16_t>() wrapping 70000 to 4464. Header-only.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace inasim::util {

/// A place in a text, both 1-based.
struct TextPosition {
  uint64_t line = 1, column = 1;
  std::string ToString() const { return "line " + std::to_string(line) + ", column " + std::to_string(column); }
};

/// The first key that appears twice in one object: its JSON path (a.b[2].c)
/// and where each of the two occurrences starts.
struct DuplicateKey {
  std::string path;
  TextPosition first, second;
  std::string Describe() const {
    return "duplicate key \"" + path + "\" (at " + first.ToString() + " and " + second.ToString() + ")";
  }
};

namespace detail {

/// One open object or array while scanning.
struct JsonFrame {
  bool is_object = false;
  bool expect_key = false;        ///< object: the next string is a key
  std::string path;               ///< of this container
  std::string last_key;           ///< object: the key of the value being read
  uint64_t index = 0;             ///< array: index of the next value
  std::map<std::string, TextPosition> keys;
};

inline std::string ChildPath(const JsonFrame& f) {
  if (f.is_object) return f.path.empty() ? f.last_key : f.path + "." + f.last_key;
  return f.path + "[" + std::to_string(f.index) + "]";
}

/// The string token starting at text[i] (a '"'), decoded; i ends past it.
/// Nothing for a token the parser would not take (the text is meant to be
/// valid JSON, but nlohmann stops reading at a NUL byte and accepts what
/// came before it, so the rest may be anything).
inline std::optional<std::string> ReadStringToken(const std::string& text, size_t& i) {
  const size_t start = i++;
  while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
  if (i >= text.size()) return std::nullopt;
  ++i;
  try {
    return nlohmann::json::parse(text.substr(start, i - start)).get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace detail

/// Scans valid JSON text for a key given twice in the same object (keys
/// compared after unescaping, as the parser compares them). Never throws.
inline std::optional<DuplicateKey> FindDuplicateKey(const std::string& all_text) {
  // JSON has no raw NUL byte; nlohmann stops reading at one, and so do we.
  const std::string text = all_text.substr(0, all_text.find('\0'));
  std::vector<detail::JsonFrame> stack;
  TextPosition pos;
  size_t line_start = 0;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    pos.column = i - line_start + 1;
    if (c == '\n') {
      ++pos.line;
      line_start = ++i;
      continue;
    }
    if (c == '{' || c == '[') {
      detail::JsonFrame f;
      f.is_object = c == '{';
      f.expect_key = f.is_object;
      f.path = stack.empty() ? "" : detail::ChildPath(stack.back());
      stack.push_back(std::move(f));
      ++i;
    } else if (c == '}' || c == ']') {
      if (!stack.empty()) stack.pop_back();
      ++i;
    } else if (c == ',') {
      if (!stack.empty() && stack.back().is_object) stack.back().expect_key = true;
      if (!stack.empty() && !stack.back().is_object) ++stack.back().index;
      ++i;
    } else if (c == '"') {
      const TextPosition at = pos;
      const std::optional<std::string> s = detail::ReadStringToken(text, i);
      if (!s) return std::nullopt;  // past what the parser read: no more keys of the document
      if (!stack.empty() && stack.back().is_object && stack.back().expect_key) {
        detail::JsonFrame& f = stack.back();
        f.expect_key = false;
        f.last_key = *s;
        const auto [it, fresh] = f.keys.emplace(*s, at);
        if (!fresh) return DuplicateKey{detail::ChildPath(f), it->second, at};
      }
    } else {
      ++i;  // whitespace, ':', numbers, literals: nothing to track
    }
  }
  return std::nullopt;
}

/// Parses user JSON: nlohmann's errors as they are (parse_error,
/// out_of_range), then a duplicate key as std::invalid_argument with both
/// places, prefixed by `origin` ("cfg.json: ").
inline nlohmann::json ParseStrictJson(const std::string& text, const std::string& origin) {
  nlohmann::json j = nlohmann::json::parse(text);
  if (const auto dup = FindDuplicateKey(text)) throw std::invalid_argument(origin + dup->Describe());
  return j;
}

/// The integer at `v`, checked to lie in [lo, hi]: no fractions, booleans,
/// strings or negative numbers for unsigned fields. Throws
/// std::invalid_argument "<path>: must be an integer in lo..hi, got X".
inline uint64_t CheckedUnsigned(const nlohmann::json& v, const std::string& path, uint64_t lo, uint64_t hi) {
  const auto fail = [&] {
    throw std::invalid_argument(path + ": must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi) +
                                ", got " + v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  };
  uint64_t x = 0;
  if (v.is_number_unsigned()) x = v.get<uint64_t>();
  else if (v.is_number_integer()) fail();  // negative
  else if (v.is_number_float() && v.get<double>() >= 0 && v.get<double>() < 1.8e19 &&
           static_cast<double>(static_cast<uint64_t>(v.get<double>())) == v.get<double>())
    x = static_cast<uint64_t>(v.get<double>());  // 1e3 is the integer 1000
  else fail();
  if (x < lo || x > hi) fail();
  return x;
}

/// obj[key] as an unsigned T in [lo, hi] (default: T's own range), or `def`
/// when the key is absent. `path` is the object's path ("" at the top).
template <class T>
T UnsignedField(const nlohmann::json& obj, const std::string& key, const std::string& path, T def,
                uint64_t lo = 0, uint64_t hi = std::numeric_limits<T>::max()) {
  if (!obj.contains(key)) return def;
  return static_cast<T>(CheckedUnsigned(obj.at(key), path.empty() ? key : path + "." + key, lo, hi));
}

/// obj[key] as a string, or `def` when the key is absent (required keys are
/// checked by the caller). `path` is the object's path ("" at the top).
inline std::string StringField(const nlohmann::json& obj, const std::string& key, const std::string& path,
                               const std::string& def = "") {
  if (!obj.contains(key)) return def;
  const nlohmann::json& v = obj.at(key);
  if (!v.is_string()) throw std::invalid_argument((path.empty() ? key : path + "." + key) + ": must be a string");
  return v.get<std::string>();
}

/// Errors on a key of `obj` that is not in `known`, listing the known ones.
inline void CheckKnownKeys(const nlohmann::json& obj, const std::set<std::string>& known, const std::string& path) {
  for (const auto& [k, v] : obj.items()) {
    if (known.count(k)) continue;
    std::string list;
    for (const std::string& name : known) list += (list.empty() ? "" : ", ") + name;
    throw std::invalid_argument((path.empty() ? "" : path + ": ") + "unknown key \"" + k + "\" (known: " + list + ")");
  }
}

}  // namespace inasim::util
