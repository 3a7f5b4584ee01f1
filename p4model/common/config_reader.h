// Reading an `inasim-p4 replay --config` file, for every program: strict JSON
// (duplicate keys are errors), an object, every key through the program's
// declaration (spec::Section, src/common/spec_fields.h; the shared knobs are
// the very declarations the scenario's workload.<protocol> section uses, so
// they have the scenario's names, units, ranges and error texts, and an
// unknown key is named with a "did you mean"), then the program's own
// whole-config checks. Every error is std::invalid_argument
// "<program> config: <key>: <problem>". Pure C++, header-only.
#pragma once

#include "p4model/common/address_text.h"

#include "common/json_text.h"
#include "common/scenario_error.h"
#include "common/spec_fields.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace inasim::p4 {

/// The config in `text` of `program` ("switchml"), read with `keys`, then
/// `finish(config)` (its Validate or Finalize).
template <class Config, class Finish>
Config ReadConfig(const std::string& text, const std::string& program, const spec::Section<Config>& keys,
                  Finish finish) {
  const std::string prefix = program + " config: ";
  Config c;
  try {
    nlohmann::json j;
    try {
      j = util::ParseStrictJson(text, "");
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument(std::string("bad JSON: ") + e.what());
    }
    if (!j.is_object()) throw std::invalid_argument("not a JSON object");
    nlohmann::json resolved;
    spec::Reader r(&j, "", &resolved, spec::Reader::Texts::kConfig);
    keys.Parse(r, c);
    r.Done();
    std::invoke(finish, c);
  } catch (const ScenarioError& e) {
    throw std::invalid_argument(prefix + e.what());
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    throw std::invalid_argument(m.rfind(prefix, 0) == 0 ? m : prefix + m);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(prefix + e.what());
  }
  return c;
}

namespace detail {

// An address key: a string that `parse` accepts, echoed as given.
template <class C, class A>
spec::Section<C>& AddressKey(spec::Section<C>& s, const char* key, A C::*m, bool required, const char* what,
                             const char* example, const char* pattern, bool (*parse)(const std::string&, A&),
                             const char* help) {
  const std::string h = help;
  return s.Custom(key, {"string", "", required ? "**required**" : "(none)", fmt::format("a {}, e.g. `\"{}\"`", what, example), h},
                  [h, pattern] { return nlohmann::json{{"type", "string"}, {"pattern", pattern}, {"description", h}}; },
                  [key, m, required, what, parse](spec::Reader& r, C& c, const spec::NoContext&) {
                    const nlohmann::json* v = r.Raw(key);
                    if (!v) {
                      if (required) r.Fail(key, "is required");
                      return;
                    }
                    if (!v->is_string()) r.Fail(key, "must be a string, got " + spec::TypeName(*v));
                    if (!parse(v->get<std::string>(), c.*m))
                      r.Fail(key, fmt::format("bad {} '{}'", what, v->get<std::string>()));
                    r.out()[key] = *v;
                  });
}

}  // namespace detail

/// A MAC address key ("02:00:00:00:00:fe") of a config.
template <class C>
spec::Section<C>& MacKey(spec::Section<C>& s, const char* key, std::array<uint8_t, 6> C::*m, bool required,
                         const char* help) {
  return detail::AddressKey(s, key, m, required, "MAC address", "02:00:00:00:00:fe",
                            "^[0-9a-fA-F]{1,2}(:[0-9a-fA-F]{1,2}){5}$", &ParseMacText, help);
}

/// An IPv4 address key ("10.0.0.1", held in host order) of a config.
template <class C>
spec::Section<C>& Ipv4Key(spec::Section<C>& s, const char* key, uint32_t C::*m, bool required, const char* help) {
  return detail::AddressKey(s, key, m, required, "IPv4 address", "10.0.0.1", "^[0-9]{1,3}(\\.[0-9]{1,3}){3}$",
                            &ParseIpv4Text, help);
}

/// A key of a config read by hand (a list of workers, trees, jobs): `read`
/// gets its value when given (absent and null are alike) and must throw
/// std::invalid_argument naming what is wrong; the value is echoed as given.
template <class C>
spec::Section<C>& HandKey(spec::Section<C>& s, const char* key, spec::KeyDoc doc, nlohmann::json schema,
                          std::function<void(const nlohmann::json&, C&)> read, bool required = false) {
  return s.Custom(key, std::move(doc), [schema] { return schema; },
                  [key, read = std::move(read), required](spec::Reader& r, C& c, const spec::NoContext&) {
                    const nlohmann::json* v = r.Raw(key);
                    if (!v) {
                      if (required) r.Fail(key, "is required");
                      return;
                    }
                    read(*v, c);
                    r.out()[key] = *v;
                  });
}

}  // namespace inasim::p4
