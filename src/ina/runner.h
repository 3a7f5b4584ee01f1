// Runs one Scenario in this process: builds the fabric and the workload, runs
// the simulator, collects results, resets ns-3's global state afterwards (so a
// process can run many scenarios, e.g. from Python).
#pragma once

#include "ina/progress.h"
#include "ina/scenario.h"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace inasim {

enum class ProgressMode : uint8_t { kAuto, kOn, kOff };

struct RunOptions {
  ProgressMode progress = ProgressMode::kAuto;  ///< auto: when stderr is a terminal
  /// Called every 0.1-0.4 wall seconds while the simulation runs (Python:
  /// progress bars and Ctrl-C); returning false ends the run with RunInterrupted.
  TickCallback on_tick;
};

/// RunScenario stopped because options.on_tick returned false. ns-3 has been
/// reset (the process can run again); no results exist.
class RunInterrupted : public std::runtime_error {
 public:
  RunInterrupted() : std::runtime_error("run interrupted") {}
};

/// Everything a run produces. `json` is results.json; the CSV tables are
/// written beside it by WriteResults.
struct RunResult {
  nlohmann::json json;
  std::vector<std::string> csv_names;
  std::vector<std::string> csv_texts;
  /// Binary files beside them (pcap/*.pcap): name under the results
  /// directory, bytes.
  std::vector<std::pair<std::string, std::string>> files;
  bool gzip_csv = false;  ///< outputs.gzip: WriteResults writes <name>.csv.gz
  bool correct = true;  ///< every checked aggregate matched the exact sum
  std::string summary;  ///< a few human-readable lines
};

/// Must run before any ns3::Time exists: the fabric needs picosecond time
/// (one byte at 100 Gb/s is 80 ps). Idempotent.
void EnsurePicosecondTime();

RunResult RunScenario(const Scenario& scenario, const RunOptions& options = {});

/// Before a run: checks that `dir` can take its results, so that a bad --out
/// fails before the simulation. `dir` must be absent or a results directory
/// of an earlier run (holding the marker file .inasim-results, or an inasim
/// results.json, and nothing but the files a run writes): never a file, a
/// symbolic link or a directory of anything else. Creates the missing parent
/// directories and proves that they are writable. Throws ScenarioError
/// naming --out. Returns the directories it created, for RemoveCreatedDirs
/// when the run fails after all.
std::vector<std::string> PrepareResultsDir(const std::string& dir);
/// Removes the directories PrepareResultsDir created, deepest first, each
/// only if it is still empty.
void RemoveCreatedDirs(const std::vector<std::string>& dirs);

/// Writes results.json and the CSVs into `dir` atomically: everything goes into
/// a sibling temporary directory (.<dir>.tmp-<pid>) that is renamed into place
/// at the end, so a failed run never leaves a half-written result. Refuses
/// (ScenarioError) to replace what PrepareResultsDir refuses. Removes the
/// temporary siblings of runs that were killed (their process is gone).
void WriteResults(const RunResult& result, const std::string& dir);

}  // namespace inasim
