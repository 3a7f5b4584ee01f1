// The host-side protocol seam, next to the dataplane seam
// (p4model/common/dataplane.h): a Protocol is what the registry knows of one
// workload kind (its name, the scenario section it owns, what it accepts, a
// factory); a Workload is one run's instance of it (start, progress, report).
// The runner, the scenario parser, the Python bindings and the tools learn
// about protocols only from Protocols(), which the build generates from every
// protocols/<name>/protocol.json (static initialisers in static libraries
// would be dropped by the linker; a generated table cannot be).
#pragma once

#include "ina/collective-table.h"
#include "ina/frame-key.h"
#include "ina/iteration-schedule.h"
#include "ina/tensor-data.h"
#include "p4model/common/frame.h"
#include "p4model/common/span.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace inasim {

class Fabric;
struct Scenario;
struct ProtocolChecks;
namespace spec {
class Reader;
class Doc;
}

/// What one workload adds to a run's results: results.json's "workload"
/// object, its CSV tables, summary lines, the exactness verdict and the
/// payload bytes delivered (for perf's payload_bytes_per_wall_s).
struct WorkloadReport {
  nlohmann::json workload = nlohmann::json::object();
  std::vector<std::string> csv_names;
  std::vector<std::string> csv_texts;
  std::string summary;
  bool correct = true;  ///< every checked aggregate matched the exact sum (and the run finished)
  uint64_t payload_delivered = 0;
  /// Each rank's start and end of each listed collective (CollectiveTable::
  /// rank_spans()): the runner's hosts.csv and its straggler diagnosis.
  std::vector<RankSpan> rank_spans;
  /// Each rank's iterations (ina/iteration-schedule.h): with rank_spans, the
  /// runner's iterations.csv (step time, exposed communication).
  std::vector<IterationStart> iteration_starts;
  /// The protocol's own part of results.json's "diagnosis" (its "protocol"
  /// key; empty: none), e.g. Canary's stragglers per block.
  nlohmann::json diagnosis = nlohmann::json::object();
  void AddCsv(std::string name, std::string text) {
    csv_names.push_back(std::move(name));
    csv_texts.push_back(std::move(text));
  }
};

/// One run of one protocol. Built after the fabric, before the simulator
/// runs; destroyed after Simulator::Destroy (its sockets and applications may
/// call back into it until then).
class Workload {
 public:
  virtual ~Workload() = default;
  /// Schedules the workload's start; `on_finished` is called once, when it is done.
  virtual void Start(std::function<void()> on_finished) = 0;
  /// Fraction done in [0, 1] (progress display).
  virtual double Progress() const = 0;
  /// After the run: `finished` is false when the time limit stopped it.
  virtual void Report(bool finished, WorkloadReport& out) const = 0;
  /// The event trace's view of a frame on the wire (ina/frame-key.h): true,
  /// with `key` filled, when it is one of this workload's packets. `view` is
  /// the frame's parse (p4model/common/frame.h), `frame` its leading bytes.
  virtual bool KeyFrame(const p4::FrameView& view, inasim::Span<const uint8_t> frame, FrameKey& key) const {
    return false;
  }
};

/// What a factory gets: the validated scenario, the built fabric and the
/// hosts workload.hosts selected (in selection order).
struct WorkloadContext {
  const Scenario& scenario;
  Fabric& fabric;
  const std::vector<uint32_t>& hosts;
};

/// One registered protocol (protocols/<name>/protocol.json; the fields are
/// that file's keys, in its order).
struct Protocol {
  std::string_view name;           ///< workload.protocol (allreduce) or workload.type (permutation)
  std::string_view workload_type;  ///< "allreduce" or "permutation"
  std::string_view summary;        ///< one line for --help, docs and `inasim protocols`
  std::string_view section;        ///< the workload.<section> it owns ("" = none)
  std::vector<std::string_view> also_reads;  ///< other workload sections it reads (PANAMA's ring jobs: "ring")
  std::vector<DType> dtypes;       ///< accepted workload.dtype values
  std::string_view dtype_note;     ///< why only those (error messages)
  std::vector<DataPattern> data;   ///< accepted workload.data values
  std::string_view uniform_note;   ///< how it checks "uniform" (inexact float) sums
  /// How it runs concurrent jobs: "jobs" (workload.jobs host groups), "own"
  /// (its own section says how), "none".
  std::string_view concurrent_jobs;
  std::string_view jobs_note;      ///< why workload.jobs is refused ("" = a generic message)
  uint32_t min_hosts_per_job;      ///< hosts each job needs at least
  std::string_view dataplane;      ///< inasim-p4 program name ("" = none)
  std::string_view folder;         ///< protocols/<name>
  std::unique_ptr<Workload> (*make)(const WorkloadContext&);
  /// Reads its keys from the scenario's workload object (its own section, and
  /// those it also reads) into the Scenario, after the keys every workload of
  /// its type shares; errors name the JSON path (ScenarioError).
  void (*parse)(spec::Reader& workload, Scenario& s);
  /// The sections `parse` reads, as declared (spec::Section): its own
  /// workload.<section>, those it also reads, or (a workload type) the keys
  /// it adds to the workload object itself. Docs tables and `inasim schema`.
  std::vector<const spec::Doc*> (*sections)();
  /// What `validate` checks for it (src/ina/protocol-checks.h).
  const ProtocolChecks* checks;
  /// It runs workload.schedule (protocol.json "schedule": true; ina/iteration-schedule.h).
  bool runs_schedule = false;

  bool Accepts(DType t) const;
  bool Accepts(DataPattern d) const;
};

/// Every registered protocol, in folder-name order (generated).
const std::vector<Protocol>& Protocols();
/// workload.protocol's default (the protocol.json saying "default": true).
std::string_view DefaultProtocol();
/// nullptr when no protocol has that name.
const Protocol* FindProtocol(std::string_view name);
/// "ring", "switchml", ... quoted and comma-separated, for error messages.
std::string ProtocolNames(std::string_view workload_type = "allreduce");
/// The registry as JSON (`inasim protocols --json`, Python's inasim.protocols()):
/// every protocol.json plus its "folder".
nlohmann::json ProtocolsJson();
/// Every protocol.json as written (generated), in Protocols() order.
const std::vector<std::string_view>& ProtocolMetadataTexts();

}  // namespace inasim
