// inasim: run scenario files.
//   inasim run SCENARIO.json [--set PATH=VALUE]... [--out DIR] [--seed N] [--progress auto|on|off] [--quiet]
//   inasim validate SCENARIO.json [--set PATH=VALUE]...
//   inasim sweep SWEEP.json [...] | inasim compare SCENARIO.json --protocols ring[,...] [...]
//     (both run the Python package: /usr/bin/python3 -m inasim ...)
// Exit codes: 0 ran and every aggregate was exact; 1 ran but a check failed or
// the workload did not finish; 2 bad input (nothing written); 3 internal error.
#include "ina/runner.h"
#include "ina/scenario.h"

#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr const char* kUsage =
    "usage: inasim run SCENARIO.json [--set PATH=VALUE]... [--out DIR] [--seed N] [--progress auto|on|off] [--quiet]\n"
    "       inasim validate SCENARIO.json [--set PATH=VALUE]...\n"
    "       inasim sweep SWEEP.json [--out DIR] [--jobs N] [--scheduler tcp://HOST:PORT] [--no-resume]\n"
    "       inasim compare SCENARIO.json --protocols ring[,...] [--set PATH=VALUE]... [--out DIR]\n"
    "       inasim --version\n"
    "Scenario keys, units and defaults: docs/SCENARIO.md\n";

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

uint64_t ParseSeed(const std::string& v) {
  if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError(fmt::format("--seed: must be a positive integer, got \"{}\"", v));
  const uint64_t s = std::stoull(v);
  if (s == 0) throw UsageError("--seed: must be a positive integer, got 0");
  return s;
}

/// `inasim sweep|compare`: hands over to the Python package (same process
/// image replaced), with this build's package on PYTHONPATH.
int ExecPython(const std::vector<std::string>& args) {
  std::string path = INASIM_PYTHONPATH;
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path += std::string(":") + old;
  setenv("PYTHONPATH", path.c_str(), 1);
  std::vector<std::string> argv_s = {INASIM_PYTHON, "-m", "inasim"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv_c;
  for (auto& a : argv_s) argv_c.push_back(a.data());
  argv_c.push_back(nullptr);
  execv(INASIM_PYTHON, argv_c.data());
  std::fprintf(stderr, "inasim: cannot run %s: %s\n", INASIM_PYTHON, std::strerror(errno));
  return 3;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
      std::fputs(kUsage, args.empty() ? stderr : stdout);
      return args.empty() ? 2 : 0;
    }
    if (args[0] == "--version") {
      std::printf("inasim %s\n", INASIM_VERSION);
      return 0;
    }
    const std::string cmd = args[0];
    if (cmd == "sweep" || cmd == "compare") return ExecPython(args);
    if (cmd != "run" && cmd != "validate") throw UsageError(fmt::format("unknown command \"{}\"", cmd));
    std::string file, out;
    std::vector<std::string> sets;
    std::string seed_text;
    inasim::RunOptions opts;
    bool quiet = false;
    for (size_t i = 1; i < args.size(); ++i) {
      const std::string& a = args[i];
      auto value = [&](const char* flag) -> std::string {
        if (i + 1 >= args.size()) throw UsageError(fmt::format("{}: needs a value", flag));
        return args[++i];
      };
      if (a == "--set") sets.push_back(value("--set"));
      else if (a.rfind("--set=", 0) == 0) sets.push_back(a.substr(6));
      else if (a == "--out") out = value("--out");
      else if (a == "--seed") seed_text = value("--seed");
      else if (a == "--quiet") quiet = true;
      else if (a == "--progress") {
        const std::string v = value("--progress");
        if (v == "auto") opts.progress = inasim::ProgressMode::kAuto;
        else if (v == "on") opts.progress = inasim::ProgressMode::kOn;
        else if (v == "off") opts.progress = inasim::ProgressMode::kOff;
        else throw UsageError(fmt::format("--progress: must be auto, on or off, got \"{}\"", v));
      } else if (!a.empty() && a[0] == '-') throw UsageError(fmt::format("unknown option \"{}\"", a));
      else if (file.empty()) file = a;
      else throw UsageError(fmt::format("unexpected argument \"{}\" (one scenario file per run)", a));
    }
    if (file.empty()) throw UsageError("missing SCENARIO.json");
    if (cmd == "validate" && (!out.empty() || !seed_text.empty()))
      throw UsageError("validate takes only a scenario and --set");

    nlohmann::json doc = inasim::LoadScenarioJson(file);
    for (const auto& s : sets) inasim::ApplyOverride(doc, s);
    if (!seed_text.empty()) inasim::ApplyOverride(doc, "seed=" + std::to_string(ParseSeed(seed_text)));
    // Files a scenario names (flow-size CDFs) are relative to the scenario file.
    const inasim::Scenario scenario =
        inasim::ParseScenario(doc, std::filesystem::path(file).parent_path().string());
    if (cmd == "validate") {
      std::printf("%s: valid scenario \"%s\"\n", file.c_str(), scenario.name.c_str());
      return 0;
    }
    if (out.empty()) out = "out/" + scenario.name;
    {  // reject an unusable --out before spending the run
      const std::filesystem::path p = std::filesystem::path(out).lexically_normal();
      const std::string leaf = (p.has_filename() ? p : p.parent_path()).filename().string();
      if (leaf.empty() || leaf == "." || leaf == "..")
        throw UsageError(fmt::format("--out {}: must name a directory to create or replace", out));
    }
    const inasim::RunResult result = inasim::RunScenario(scenario, opts);
    inasim::WriteResults(result, out);
    if (!quiet) std::fputs((result.summary + fmt::format("  results: {}/results.json\n", out)).c_str(), stdout);
    return result.correct ? 0 : 1;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "inasim: %s\n%s", e.what(), kUsage);
    return 2;
  } catch (const inasim::ScenarioError& e) {
    std::fprintf(stderr, "inasim: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "inasim: internal error: %s\n", e.what());
    return 3;
  }
}
