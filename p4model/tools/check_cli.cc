// The `check` and `manifest` subcommands of inasim-p4 (see p4model/tools/README.md).
#include "p4model/tools/p4check.h"
#include "p4model/tools/p4diff.h"

#include "common/bounded_file.h"

#include <chrono>
#include <fstream>
#include <iostream>

#ifndef INASIM_SOURCE_DIR
#define INASIM_SOURCE_DIR "."
#endif

namespace inasim::p4tools {
namespace {

using nlohmann::json;

struct Options {
  std::string program, p4_src, manifest, out;
  bool verbose = false;
  bool drift = true;  ///< --no-drift: compare the model with the source, not the manifest with the source
  uint64_t inputs = 1'000'000;
  uint64_t seed = 1;
};

/// PROGRAM: every registered program with "model_check" (p4model/common/model_check.h).
std::string CheckUsage() {
  return "usage: inasim-p4 check PROGRAM [--p4-src DIR] [--manifest FILE] [--inputs N] [--seed S] [--no-drift] [--verbose]\n"
         "       inasim-p4 manifest PROGRAM --p4-src DIR [--out FILE]\n"
         "PROGRAM: " + ModelCheckedNames(" | ") + "; DIR: the upstream checkout (see p4model/tools/README.md)\n";
}

int Usage(const std::string& msg) {
  std::cerr << "inasim-p4: " << msg << "\n" << CheckUsage();
  return 2;
}

/// --inputs / --seed: digits only (std::stoull would take "-1" as 2^64 - 1).
bool ParseCount(const std::string& v, uint64_t& out) {
  if (v.empty() || v.size() > 19 || v.find_first_not_of("0123456789") != std::string::npos) return false;
  out = std::stoull(v);
  return true;
}

/// Where `manifest` writes by default (the committed file in the source tree).
std::string DefaultManifest(const std::string& program) {
  return std::string(INASIM_SOURCE_DIR) + "/protocols/" + program + "/dataplane/upstream-manifest.json";
}

bool ParseOptions(const std::vector<std::string>& args, Options& o, std::string& err) {
  if (args.size() < 2) {
    err = "expected: " + args[0] + " PROGRAM";
    return false;
  }
  o.program = args[1];
  for (size_t i = 2; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& into) {
      if (i + 1 >= args.size()) {
        err = a + " needs a value";
        return false;
      }
      into = args[++i];
      return true;
    };
    std::string v;
    if (a == "--p4-src") {
      if (!value(o.p4_src)) return false;
    } else if (a == "--manifest") {
      if (!value(o.manifest)) return false;
    } else if (a == "--out") {
      if (!value(o.out)) return false;
    } else if (a == "--inputs" || a == "--seed") {
      if (!value(v)) return false;
      if (!ParseCount(v, a == "--inputs" ? o.inputs : o.seed)) {
        err = a + " needs a non-negative integer, got \"" + v + "\"";
        return false;
      }
    } else if (a == "--verbose") {
      o.verbose = true;
    } else if (a == "--no-drift") {
      o.drift = false;
    } else {
      err = "unknown option " + a;
      return false;
    }
  }
  return true;
}

json Extract(const describe::ModelDescription& model, const std::string& p4_src, p4src::Program& prog) {
  prog = p4src::ReadProgram(p4_src, model.main_file);
  return ExtractManifest(model, prog, p4_src);
}

}  // namespace

int CommandHelp(const std::string& command) {
  (void)command;  // check and manifest share one usage text
  std::cout << CheckUsage();
  return 0;
}

int ManifestCommand(const std::vector<std::string>& args) {
  Options o;
  std::string err;
  if (!ParseOptions(args, o, err)) return Usage(err);
  if (o.p4_src.empty()) return Usage("manifest needs --p4-src DIR");
  try {
    const describe::ModelDescription model = ModelFor(o.program);
    p4src::Program prog;
    const json m = Extract(model, o.p4_src, prog);
    const std::string out = !o.out.empty() ? o.out : !o.manifest.empty() ? o.manifest : DefaultManifest(o.program);
    std::ofstream f(out);
    if (!f) {
      std::cerr << "inasim-p4: cannot write " << out << "\n";
      return 2;
    }
    f << m.dump(1) << "\n";
    std::cout << "wrote " << out << " (" << m["headers"].size() << " headers/structs, " << m["registers"].size()
              << " registers, " << m["register_actions"].size() << " register actions, " << m["tables"].size()
              << " tables)\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "inasim-p4: " << e.what() << "\n";
    return 2;
  }
}

int CheckCommand(const std::vector<std::string>& args) {
  Options o;
  std::string err;
  if (!ParseOptions(args, o, err)) return Usage(err);
  try {
    const describe::ModelDescription model = ModelFor(o.program);
    json manifest;
    try {
      // The built-in copy unless --manifest names a file: a build checks
      // wherever it is moved to.
      manifest = o.manifest.empty()
                     ? json::parse(ModelChecked(o.program).manifest)
                     : json::parse(util::ReadBoundedFile(o.manifest, util::kMaxJsonFileBytes, "manifest"));
    } catch (const util::FileReadError& e) {
      std::cerr << "inasim-p4: " << e.what() << "\n";
      return 2;
    } catch (const json::exception& e) {
      std::cerr << "inasim-p4: " << o.manifest << ": not JSON: " << e.what() << "\n";
      return 2;
    }
    CheckReport report;
    DiffSummary diff;
    if (o.p4_src.empty()) {
      CompareModel(model, manifest, report);
    } else {
      p4src::Program prog;
      const json fresh = Extract(model, o.p4_src, prog);
      // Drift flags any change of the source against the committed manifest.
      // Without it (--no-drift, as the mutation score runs: p4model/tools/mutants/)
      // the model is compared with the source itself.
      CompareModel(model, o.drift ? manifest : fresh, report);
      if (o.drift) CompareDrift(manifest, fresh, report);
      diff = RunDifferential(o.program, prog, fresh, o.inputs, o.seed, report, o.p4_src);
    }
    std::cout << "inasim-p4 check " << o.program << " (" << model.upstream << ")\n";
    std::cout << "  manifest: " << (o.manifest.empty() ? "built in (" + DefaultManifest(o.program) + " at build time)" : o.manifest)
              << (o.p4_src.empty() ? "" : "\n  upstream source: " + o.p4_src) << "\n";
    report.Print(std::cout, o.verbose);
    const int mismatches = report.Count(CheckRow::Status::kMismatch);
    std::cout << o.program << ": " << report.rows.size() - report.Count(CheckRow::Status::kNotModeled) << " checks, "
              << mismatches << " mismatches, " << report.Count(CheckRow::Status::kNotModeled)
              << " upstream items not modeled";
    if (!o.p4_src.empty())
      std::cout << "; differential: " << diff.register_actions << " register actions, " << diff.tables << " tables, "
                << diff.inputs << " inputs, " << diff.pipelines << " pipelines, " << diff.pipeline_packets
                << " frames, " << diff.failures << " failures";
    else
      std::cout << "; differential runs skipped (no --p4-src)";
    std::cout << "\n";
    return mismatches == 0 && diff.failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "inasim-p4: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace inasim::p4tools
