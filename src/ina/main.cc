// inasim: run scenario files.
//   inasim run SCENARIO.json [--set PATH=VALUE]... [--out DIR] [--seed N] [--progress auto|on|off] [--quiet]
//   inasim validate SCENARIO.json [--set PATH=VALUE]...
//   inasim sweep SWEEP.json [...] | inasim compare SCENARIO.json [--protocols all|NAME,...] [...]
//   | inasim fidelity [...] (these run the Python package: /usr/bin/python3 -m inasim ...)
//   inasim protocols [--json] | inasim schema [--markdown]
//   inasim --help, inasim run --help, inasim validate --help
// Exit codes: 0 ran and every aggregate was exact; 1 ran but a check failed or
// the workload did not finish; 2 bad input (nothing written: --out is checked
// and prepared before the run); 3 internal error.
#include "ina/build-paths.h"
#include "ina/runner.h"
#include "ina/workload.h"
#include "ina/scenario-checks.h"
#include "ina/scenario-sections.h"
#include "ina/scenario.h"
#include "ina/version.h"

#include <fmt/format.h>

#include <ns3/application.h>
#include <ns3/log.h>
#include <ns3/net-device.h>
#include <ns3/node.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>
#include <vector>

namespace {

constexpr const char* kUsage =
    "usage: inasim run SCENARIO.json [--set PATH=VALUE]... [--out DIR] [--seed N] [--progress auto|on|off] [--quiet]\n"
    "       inasim validate SCENARIO.json [--set PATH=VALUE]...\n"
    "       inasim sweep SWEEP.json [--out DIR] [--jobs N] [--scheduler tcp://HOST:PORT] [--no-resume]\n"
    "       inasim compare SCENARIO.json [--protocols all|NAME,...] [--repetitions N] [--set PATH=VALUE]...\n"
    "           [--out DIR]\n"
    "       inasim fidelity [--small] [--protocol P] [--results DIR] [--out DIR] [--run none|missing|all]\n"
    "       inasim protocols [--json]\n"
    "       inasim trace-sources [--json]\n"
    "       inasim log-components [--json]\n"
    "       inasim schema [--markdown]\n"
    "       inasim --version | --help | COMMAND --help\n"
    "Scenario keys, units and defaults: docs/SCENARIO.md\n";

constexpr const char* kRunUsage =
    "usage: inasim run SCENARIO.json [--set PATH=VALUE]... [--out DIR] [--seed N] [--progress auto|on|off] [--quiet]\n"
    "Runs a scenario and writes its results into DIR (default out/<name>): results.json, CSV tables,\n"
    "summary.txt. DIR must be new or the results directory of an earlier run; nothing else is replaced.\n"
    "  --set PATH=VALUE   override a scenario key (VALUE as JSON, else a string); repeatable\n"
    "  --out DIR          the results directory\n"
    "  --seed N           the scenario's seed (a positive integer)\n"
    "  --progress MODE    simulated time, % done and ETA on stderr: auto (when a terminal), on, off\n"
    "  --quiet            no summary on stdout\n"
    "Exit codes: 0 every aggregate exact; 1 a check failed or the workload did not finish;\n"
    "2 bad input (nothing written); 3 internal error. Keys: docs/SCENARIO.md\n";

constexpr const char* kValidateUsage =
    "usage: inasim validate SCENARIO.json [--set PATH=VALUE]...\n"
    "Checks a scenario as `inasim run` would (keys, ranges, the workload's placement on the topology,\n"
    "memory) without running it; prints warnings for settings that could run for hours.\n"
    "Exit codes: 0 valid; 2 not (the message names the JSON path). Keys: docs/SCENARIO.md\n";

constexpr const char* kProtocolsUsage =
    "usage: inasim protocols [--json]\n"
    "Lists the registered protocols (one folder each under protocols/): the workload.protocol values of\n"
    "an allreduce, the other workload types, and what each accepts. --json: every protocols/<name>/protocol.json.\n";

constexpr const char* kSchemaUsage =
    "usage: inasim schema [--markdown]\n"
    "Prints the JSON Schema (draft 2020-12) of a scenario file, made from the declaration of every key (the\n"
    "scenario core's and each registered protocol's), for editor completion and checking, e.g. in VS Code's\n"
    "settings: \"json.schemas\": [{\"fileMatch\": [\"scenarios/**/*.json\"], \"url\": \"./scenario.schema.json\"}]\n"
    "after `inasim schema > scenario.schema.json`. The schema does not take null for \"absent\" as inasim does.\n"
    "  --markdown   docs/SCENARIO.md's key tables instead, each in its <!-- generated: NAME --> region\n"
    "               (scripts/update-scenario-docs.py writes them into the docs)\n";

/// `inasim schema [--markdown]`: the scenario's JSON Schema, or its docs tables.
int SchemaCommand(const std::vector<std::string>& args) {
  if (args.size() > 2 || (args.size() == 2 && args[1] != "--markdown" && args[1] != "--help" && args[1] != "-h"))
    throw std::invalid_argument(args.size() > 2 ? "schema: too many arguments"
                                                : fmt::format("schema: unknown option \"{}\"", args[1]));
  if (args.size() == 2 && (args[1] == "--help" || args[1] == "-h")) {
    std::fputs(kSchemaUsage, stdout);
    return 0;
  }
  if (args.size() == 1) {
    std::printf("%s\n", inasim::ScenarioJsonSchema().dump(2).c_str());
    return 0;
  }
  std::string out;
  for (const inasim::spec::Doc* d : inasim::ScenarioDocs())
    out += fmt::format("<!-- generated: {} -->\n{}<!-- end generated -->\n\n", d->name(), d->MarkdownTable());
  std::fputs(out.c_str(), stdout);
  return 0;
}

/// A listing command's one optional argument: kHelp (usage printed), kJson or kText.
enum class ListingMode { kText, kJson, kHelp };
ListingMode ListingArgs(const std::vector<std::string>& args, const char* usage) {
  if (args.size() > 2 || (args.size() == 2 && args[1] != "--json" && args[1] != "--help"))
    throw std::invalid_argument(args.size() > 2 ? fmt::format("{}: too many arguments", args[0])
                                                : fmt::format("{}: unknown option \"{}\"", args[0], args[1]));
  if (args.size() == 2 && args[1] == "--help") {
    std::fputs(usage, stdout);
    return ListingMode::kHelp;
  }
  return args.size() == 2 ? ListingMode::kJson : ListingMode::kText;
}

/// `inasim protocols [--json]`: the registry, for people and for scripts.
int ProtocolsCommand(const std::vector<std::string>& args) {
  const ListingMode mode = ListingArgs(args, kProtocolsUsage);
  if (mode == ListingMode::kHelp) return 0;
  if (mode == ListingMode::kJson) {
    std::printf("%s\n", inasim::ProtocolsJson().dump(2).c_str());
    return 0;
  }
  for (const inasim::Protocol& p : inasim::Protocols())
    std::printf("%-12s %-11s %s\n", std::string(p.name).c_str(), std::string(p.workload_type).c_str(),
                std::string(p.summary).c_str());
  return 0;
}

constexpr const char* kTraceSourcesUsage =
    "usage: inasim trace-sources [--json]\n"
    "Lists the ns-3 trace sources of INA-Sim's objects (devices, switches, protocol agents) with the\n"
    "Config path that reaches every instance in a run, e.g. for Config::ConnectWithoutContext.\n";

/// The Config path of every instance of `tid` in a run: devices hang off
/// nodes' DeviceList, protocol agents off their ApplicationList, switches are
/// nodes; anything else is reached through the object that holds it.
std::string ConfigPathOf(ns3::TypeId tid, const std::string& source) {
  const std::string typed = "$" + tid.GetName() + "/" + source;
  if (tid.IsChildOf(ns3::NetDevice::GetTypeId())) return "/NodeList/*/DeviceList/*/" + typed;
  if (tid.IsChildOf(ns3::Application::GetTypeId())) return "/NodeList/*/ApplicationList/*/" + typed;
  if (tid.IsChildOf(ns3::Node::GetTypeId())) return "/NodeList/*/" + typed;
  return "(no Config path: connect on the object)";
}

int TraceSourcesCommand(const std::vector<std::string>& args) {
  const ListingMode mode = ListingArgs(args, kTraceSourcesUsage);
  if (mode == ListingMode::kHelp) return 0;
  nlohmann::json list = nlohmann::json::array();
  for (uint32_t i = 0; i < ns3::TypeId::GetRegisteredN(); ++i) {
    const ns3::TypeId tid = ns3::TypeId::GetRegistered(i);
    if (tid.GetName().rfind("inasim::", 0) != 0) continue;
    for (std::size_t s = 0; s < tid.GetTraceSourceN(); ++s) {
      const ns3::TypeId::TraceSourceInformation t = tid.GetTraceSource(s);
      list.push_back({{"type", tid.GetName()}, {"source", t.name}, {"path", ConfigPathOf(tid, t.name)},
                      {"callback", t.callback}, {"help", t.help}});
    }
  }
  if (mode == ListingMode::kJson) {
    std::printf("%s\n", list.dump(2).c_str());
    return 0;
  }
  for (const auto& t : list)
    std::printf("%s\n    %s\n    %s\n", t["path"].get<std::string>().c_str(), t["help"].get<std::string>().c_str(),
                t["callback"].get<std::string>().c_str());
  return 0;
}

constexpr const char* kLogComponentsUsage =
    "usage: inasim log-components [--json]\n"
    "Lists INA-Sim's ns-3 log components (its own source files'), for the NS_LOG environment variable:\n"
    "  NS_LOG='InaSwitchNode=level_logic|prefix_time:CanaryHost=level_info' inasim run ...\n"
    "Lines go to stderr; docs/DEBUGGING.md says what each component logs at which level.\n";

int LogComponentsCommand(const std::vector<std::string>& args) {
  const ListingMode mode = ListingArgs(args, kLogComponentsUsage);
  if (mode == ListingMode::kHelp) return 0;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [name, component] : *ns3::LogComponent::GetComponentList()) {
    const std::string file = component->File();
    size_t at = file.find("src/ina/");
    if (at == std::string::npos) at = file.find("protocols/");
    if (at == std::string::npos) continue;  // ns-3's own
    list.push_back({{"name", name}, {"file", file.substr(at)}});
  }
  if (mode == ListingMode::kJson) {
    std::printf("%s\n", list.dump(2).c_str());
    return 0;
  }
  for (const auto& c : list)
    std::printf("%-20s %s\n", c["name"].get<std::string>().c_str(), c["file"].get<std::string>().c_str());
  return 0;
}

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
  std::string path = inasim::BuildPythonPath();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path += std::string(":") + old;
  setenv("PYTHONPATH", path.c_str(), 1);
  std::vector<std::string> argv_s = {inasim::BuildPythonExecutable(), "-m", "inasim"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv_c;
  for (auto& a : argv_s) argv_c.push_back(a.data());
  argv_c.push_back(nullptr);
  execv(inasim::BuildPythonExecutable(), argv_c.data());
  std::fprintf(stderr, "inasim: cannot run %s: %s\n", inasim::BuildPythonExecutable(), std::strerror(errno));
  return 3;
}

/// The command line of `run` / `validate`.
struct Command {
  std::string name;  ///< "run" or "validate"
  std::string file, out, seed_text;
  bool out_given = false, quiet = false, help = false;
  std::vector<std::string> sets;
  inasim::RunOptions run;
};

inasim::ProgressMode ParseProgress(const std::string& v) {
  if (v == "auto") return inasim::ProgressMode::kAuto;
  if (v == "on") return inasim::ProgressMode::kOn;
  if (v == "off") return inasim::ProgressMode::kOff;
  throw UsageError(fmt::format("--progress: must be auto, on or off, got \"{}\"", v));
}

Command ParseCommand(const std::vector<std::string>& args) {
  Command c;
  c.name = args[0];
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* flag) -> std::string {
      if (i + 1 >= args.size()) throw UsageError(fmt::format("{}: needs a value", flag));
      return args[++i];
    };
    if (a == "--help" || a == "-h") c.help = true;
    else if (a == "--set") c.sets.push_back(value("--set"));
    else if (a.rfind("--set=", 0) == 0) c.sets.push_back(a.substr(6));
    else if (a == "--out") {
      c.out = value("--out");
      c.out_given = true;
    } else if (a == "--seed") c.seed_text = value("--seed");
    else if (a == "--quiet") c.quiet = true;
    else if (a == "--progress") c.run.progress = ParseProgress(value("--progress"));
    else if (!a.empty() && a[0] == '-') throw UsageError(fmt::format("unknown option \"{}\"", a));
    else if (c.file.empty()) c.file = a;
    else throw UsageError(fmt::format("unexpected argument \"{}\" (one scenario file per run)", a));
  }
  if (c.help) return c;
  if (c.file.empty()) throw UsageError("missing SCENARIO.json");
  if (c.name == "validate" && (c.out_given || !c.seed_text.empty()))
    throw UsageError("validate takes only a scenario and --set");
  return c;
}

inasim::Scenario LoadScenario(const Command& c) {
  nlohmann::json doc = inasim::LoadScenarioJson(c.file);
  for (const auto& s : c.sets) inasim::ApplyOverride(doc, s);
  if (!c.seed_text.empty()) inasim::ApplyOverride(doc, "seed=" + std::to_string(ParseSeed(c.seed_text)));
  // Files a scenario names (flow-size CDFs) are relative to the scenario file.
  return inasim::ParseScenario(doc, std::filesystem::path(c.file).parent_path().string());
}

/// Before anything runs, also when stderr is not a terminal (a batch job's log).
void PrintWarnings(const inasim::Scenario& s) {
  for (const std::string& w : inasim::SlowRunWarnings(s, inasim::BuildTopology(s)))
    std::fprintf(stderr, "inasim: warning: %s\n", w.c_str());
}

int RunCommand(const Command& c, const inasim::Scenario& scenario) {
  const std::string out = c.out_given ? c.out : "out/" + scenario.name;
  // A bad --out (a file, a foreign directory, read-only) fails now, not after the run.
  const std::vector<std::string> created = inasim::PrepareResultsDir(out);
  PrintWarnings(scenario);
  try {
    const inasim::RunResult result = inasim::RunScenario(scenario, c.run);
    inasim::WriteResults(result, out);
    if (!c.quiet) std::fputs((result.summary + fmt::format("  results: {}/results.json\n", out)).c_str(), stdout);
    return result.correct ? 0 : 1;
  } catch (...) {
    inasim::RemoveCreatedDirs(created);  // nothing written: not even the parents
    throw;
  }
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
      std::printf("inasim %s\n", inasim::Version());
      return 0;
    }
    if (args[0] == "sweep" || args[0] == "compare" || args[0] == "fidelity") return ExecPython(args);  // their --help is Python's
    if (args[0] == "protocols" || args[0] == "schema" || args[0] == "trace-sources" || args[0] == "log-components") {
      try {
        if (args[0] == "trace-sources") return TraceSourcesCommand(args);
        if (args[0] == "log-components") return LogComponentsCommand(args);
        return args[0] == "schema" ? SchemaCommand(args) : ProtocolsCommand(args);
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
    }
    if (args[0] != "run" && args[0] != "validate") throw UsageError(fmt::format("unknown command \"{}\"", args[0]));
    const Command c = ParseCommand(args);
    if (c.help) {
      std::fputs(c.name == "run" ? kRunUsage : kValidateUsage, stdout);
      return 0;
    }
    const inasim::Scenario scenario = LoadScenario(c);
    if (c.name == "run") return RunCommand(c, scenario);
    PrintWarnings(scenario);
    std::printf("%s: valid scenario \"%s\"\n", c.file.c_str(), scenario.name.c_str());
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "inasim: %s\n%s", e.what(), kUsage);
    return 2;
  } catch (const inasim::ScenarioError& e) {
    std::fprintf(stderr, "inasim: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "inasim: internal error: out of memory (the scenario's memory estimate missed it)\n");
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "inasim: internal error: %s\n", e.what());
    return 3;
  }
}
