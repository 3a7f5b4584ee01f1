// Fuzz target: the scenario loader. The input is text: the scenario JSON, then
// optionally lines "--set PATH=VALUE" after a line "---". Any input must end
// in a parsed Scenario or a ScenarioError (the CLI's clear message); any other
// exception, a crash or a sanitizer report is a finding. Inputs whose topology
// would be large are skipped after parsing (only the loader is under test).
#include "ina/scenario.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1 << 16) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const size_t sep = text.find("\n---\n");
  const std::string doc_text = text.substr(0, sep);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(doc_text);
  } catch (const nlohmann::json::exception&) {
    return 0;  // the CLI reports a JSON syntax error with its position (LoadScenarioJson)
  }
  try {
    if (sep != std::string::npos) {
      size_t at = sep + 5;
      while (at < text.size()) {
        size_t nl = text.find('\n', at);
        if (nl == std::string::npos) nl = text.size();
        const std::string line = text.substr(at, nl - at);
        if (line.rfind("--set ", 0) == 0) inasim::ApplyOverride(doc, line.substr(6));
        at = nl + 1;
      }
    }
    (void)inasim::ParseScenario(doc);
  } catch (const inasim::ScenarioError&) {
    return 0;
  } catch (const std::exception& e) {
    // Anything else escaping the loader is a bug: the CLI would print an
    // internal error instead of naming the field.
    std::fprintf(stderr, "fuzz_scenario: not a ScenarioError: %s\n", e.what());
    std::abort();
  }
  return 0;
}
