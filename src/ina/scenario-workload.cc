// The scenario's workload object, each key declared once (spec::Section):
// the workload type, its hosts, the keys every allreduce shares, and then,
// through the registry, the protocol's own keys (Protocol::parse and
// Protocol::sections: protocols/<name>/host/spec.cc). What a protocol
// accepts comes from its protocols/<name>/protocol.json; the refusals say
// why a scenario asks for something else.
#include "common/bounded_file.h"
#include "ina/scenario-sections.h"

#include "ina/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <cmath>
#include <string>
#include <vector>

namespace inasim {

using nlohmann::json;
using spec::Reader;
using spec::TimeUnit;

namespace {

using WorkloadKeys = spec::Section<Scenario, ScenarioInput>;

std::string JoinNames(const std::vector<std::string>& names, const char* last_sep) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? last_sep : ", ") + names[i];
  return s;
}

/// The quoted names of the allreduce protocols `pick` selects.
std::vector<std::string> NamesOf(bool (*pick)(const Protocol&)) {
  std::vector<std::string> names;
  for (const Protocol& p : Protocols())
    if (p.workload_type == "allreduce" && pick(p)) names.push_back(fmt::format("\"{}\"", p.name));
  return names;
}

std::string DataRefusal(const Protocol& p, DataPattern data) {
  if (data != DataPattern::kUniform)
    return fmt::format("protocol \"{}\" does not check \"{}\" data", p.name, data == DataPattern::kOnes ? "ones" : "hashed");
  std::vector<std::string> checkers;
  for (const Protocol& q : Protocols())
    if (q.Accepts(DataPattern::kUniform)) checkers.push_back(fmt::format("\"{}\" ({})", q.name, q.uniform_note));
  return fmt::format("\"uniform\" sums are inexact in float32; only protocols {} check them; protocol \"{}\" checks "
                     "the exact sum bit for bit (use \"hashed\")", JoinNames(checkers, " and "), p.name);
}

std::string JobsRefusal(const Protocol& p) {
  if (!p.jobs_note.empty()) return std::string(p.jobs_note);
  std::vector<std::string> able;
  for (const Protocol& q : Protocols())
    if (q.concurrent_jobs == "jobs") able.push_back(fmt::format("\"{}\"", q.name));
  return fmt::format("only protocols {} run concurrent jobs; this workload's protocol is \"{}\"",
                     JoinNames(able, " and "), p.name);
}

std::string DtypeRefusal(const Protocol& p) {
  const bool int32 = p.Accepts(DType::kInt32);
  return fmt::format("protocol \"{}\" aggregates {} ({}); use \"{}\"", p.name, int32 ? "int32" : "IEEE-754 fp32",
                     p.dtype_note, int32 ? "int32" : "float32");
}

/// Whether `p` reads workload.<section>: its own, or one it also reads.
bool Reads(const Protocol& p, std::string_view section) {
  return p.section == section || std::find(p.also_reads.begin(), p.also_reads.end(), section) != p.also_reads.end();
}

/// Every workload section some protocol reads, sorted, once.
std::vector<std::string_view> AllSections() {
  std::vector<std::string_view> sections;
  for (const Protocol& q : Protocols()) {
    if (!q.section.empty()) sections.push_back(q.section);
    for (std::string_view a : q.also_reads) sections.push_back(a);
  }
  std::sort(sections.begin(), sections.end());
  sections.erase(std::unique(sections.begin(), sections.end()), sections.end());
  return sections;
}

/// The protocols that read `section`, quoted: its owner first.
std::vector<std::string> Readers(std::string_view section) {
  std::vector<std::string> readers;
  for (const Protocol& q : Protocols())
    if (q.section == section) readers.insert(readers.begin(), fmt::format("\"{}\"", q.name));
    else if (Reads(q, section)) readers.push_back(fmt::format("\"{}\"", q.name));
  return readers;
}

/// Each protocol reads its own section; another's is an error, not ignored.
void RefuseOtherSections(Reader& w, const Protocol& p) {
  for (std::string_view section : AllSections()) {
    if (Reads(p, section)) continue;
    const std::string key(section);
    if (w.Has(key))
      w.Fail(key, fmt::format("only read with protocol {} (this workload's protocol is \"{}\")",
                              JoinNames(Readers(section), " or "), p.name));
    w.Raw(key);
  }
}

const Protocol& TheProtocol(const Scenario& s) { return *FindProtocol(s.workload.protocol); }

/// The schema of what `p`'s sections add to the workload object: its own
/// workload.<section> objects, or (path "workload") keys of the object itself.
json SectionsFragment(const Protocol& p) {
  json fragment = {{"properties", json::object()}};
  for (const spec::Doc* d : p.sections()) {
    if (d->path() == "workload") {
      const json f = d->SchemaFragment();
      fragment["properties"].update(f["properties"]);
      if (f.contains("required")) fragment["required"] = f["required"];
    } else {
      fragment["properties"][d->path().substr(std::string("workload.").size())] = d->JsonSchema();
    }
  }
  return fragment;
}

/// Reads the protocol's own keys (after refusing another's section).
void ParseProtocolKeys(Reader& w, Scenario& s, const ScenarioInput&) {
  const Protocol& protocol = TheProtocol(s);
  RefuseOtherSections(w, protocol);
  if (!protocol.Accepts(s.workload.dtype)) w.Fail("dtype", DtypeRefusal(protocol));
  protocol.parse(w, s);  // its own section (protocols/<name>/host/spec.cc)
}

/// The sections of every protocol whose workload type `pick` selects.
std::vector<const spec::Doc*> SectionsOf(bool allreduce) {
  std::vector<const spec::Doc*> docs;
  for (const Protocol& p : Protocols())
    if ((p.workload_type == "allreduce") == allreduce)
      for (const spec::Doc* d : p.sections()) docs.push_back(d);
  return docs;
}

/// One docs row per protocol section (the section's own table follows).
void DeclareSectionRows(WorkloadKeys& a) {
  for (std::string_view section : AllSections()) {
    const std::string key(section);
    std::string title;
    for (const spec::Doc* d : SectionsOf(true))
      if (d->path() == "workload." + key) title = d->title();
    a.DocRow(key.c_str(), {"object", "", "`{}`", "",
                           fmt::format("{}; read with protocol {}. See [workload.{}](#workload{}).", title,
                                       JoinNames(Readers(section), " or "), key, key)});
  }
}

std::string ProtocolHelp() {
  const auto ints = NamesOf([](const Protocol& p) { return !p.Accepts(DType::kFloat32); });
  const auto floats = NamesOf([](const Protocol& p) { return !p.Accepts(DType::kInt32); });
  return fmt::format("The allreduce algorithm (`inasim protocols` lists them); each reads its own section (the "
                     "`workload.<section>` rows below), giving another one is an error. `dtype` must be `\"int32\"` "
                     "with {} (the switches add 32-bit integers) and `\"float32\"` with {}.",
                     JoinNames(ints, " and "), JoinNames(floats, " and "));
}

std::string DataHelp() {
  std::vector<std::string> uniform, how;
  for (const Protocol& p : Protocols())
    if (p.Accepts(DataPattern::kUniform)) {
      uniform.push_back(fmt::format("\"{}\"", p.name));
      how.push_back(fmt::format("\"{}\": {}", p.name, p.uniform_note));
    }
  return fmt::format(
      "`hashed`: each rank weighs pseudo-random element coefficients with weights of its own (`a(e) + h_r b(e)`, "
      "one weight per rank and element class e mod 8), fresh coefficients every iteration and job, so the exact sum "
      "is known in closed form and a rank's values replaced by another's, a lost contribution, a stale "
      "previous-iteration result or a shifted element all show as mismatches (`src/ina/tensor-data.h`); `ones`: "
      "every value 1 (what some of the papers verified with): it checks counts only, and the verdict says so "
      "(`check: \"count only ...\"`, summary `COUNTS CORRECT (ones data: values not checked)`); `uniform` (float32; "
      "protocols {}): gradients s/2^23 in (-1, 1) with full 24-bit mantissas, checked against the real sum ({}). "
      "`float32` with `hashed` is exact up to 4,194,304 ranks.",
      JoinNames(uniform, " and "), JoinNames(how, "; "));
}

/// The type, size and data of the tensor every allreduce reduces.
WorkloadKeys& DeclareTensor(WorkloadKeys& a) {
  std::vector<std::string> names;
  for (const Protocol& p : Protocols())
    if (p.workload_type == "allreduce") names.emplace_back(p.name);
  return a
      .EnumOf<std::string>("protocol", spec::In(&Scenario::workload, &WorkloadSpec::protocol),
                           std::string(DefaultProtocol()), names, names, ProtocolHelp().c_str())
      .U64("bytes", spec::In(&Scenario::workload, &WorkloadSpec::bytes), 4ull << 20, 4, 1ull << 40, "bytes",
           "Size of the tensor each rank contributes (elements = bytes / 4).")
      .DocDefault("`4194304` (4 MiB)")
      .AllowedNote("multiple of 4")
      .SchemaAlso({{"multipleOf", 4}})
      .Check([](const Scenario& s, Reader& w) {
        if (s.workload.bytes % 4)
          w.Fail("bytes", fmt::format("must be a multiple of 4 (whole 32-bit elements), got {}", s.workload.bytes));
      })
      .Enum("dtype", spec::In(&Scenario::workload, &WorkloadSpec::dtype), "int32",
            {{"int32", DType::kInt32}, {"float32", DType::kFloat32}}, "Element type; int32 sums wrap modulo 2^32.")
      .Enum("data", spec::In(&Scenario::workload, &WorkloadSpec::data), "hashed",
            {{"hashed", DataPattern::kHashed}, {"ones", DataPattern::kOnes}, {"uniform", DataPattern::kUniform}},
            DataHelp().c_str())
      .Check([](const Scenario& s, Reader& w) {
        if (s.workload.data == DataPattern::kUniform && s.workload.dtype != DType::kFloat32)
          w.Fail("data", "\"uniform\" draws float32 gradients in (-1, 1); it needs dtype \"float32\"");
        if (!TheProtocol(s).Accepts(s.workload.data)) w.Fail("data", DataRefusal(TheProtocol(s), s.workload.data));
      });
}

using ScheduleKeys = spec::Section<ScheduleSpec, ScenarioInput>;

/// A collective's fields by name (nullptr: not given).
using FieldOf = std::function<const json*(const char*)>;
/// Reports a problem with one field of a collective: fail(field, problem).
using FailField = std::function<void(const std::string&, const std::string&)>;

/// `after`: "start" (default), "compute" or the index of an earlier collective.
int64_t ReadAfter(const json* after, size_t index, const FailField& fail) {
  if (!after || (after->is_string() && after->get<std::string>() == "start")) return kAfterStart;
  if (after->is_string() && after->get<std::string>() == "compute") return kAfterCompute;
  if (after->is_number_unsigned() && after->get<uint64_t>() < index) return after->get<int64_t>();
  fail("after", fmt::format("must be \"start\", \"compute\" or the index of an earlier collective {}, got {}",
                            index == 0 ? std::string("(there is none before the first)")
                                       : fmt::format("(0..{})", index - 1),
                            after->dump()));
  return kAfterStart;
}

/// `kind`: "allreduce" (default), "reduce_scatter", "all_gather" or "broadcast".
CollectiveKind ReadKind(const json* kind, const FailField& fail) {
  const std::string name = kind && kind->is_string() ? kind->get<std::string>() : "allreduce";
  if (name == "reduce_scatter") return CollectiveKind::kReduceScatter;
  if (name == "all_gather") return CollectiveKind::kAllGather;
  if (name == "broadcast") return CollectiveKind::kBroadcast;
  if (name != "allreduce" || (kind && !kind->is_string()))
    fail("kind", "must be \"allreduce\", \"reduce_scatter\", \"all_gather\" or \"broadcast\", got " + kind->dump());
  return CollectiveKind::kAllreduce;
}

/// `root`: a broadcast's root, its place in the group (default 0); no other kind takes one.
uint32_t ReadRoot(const json* root, CollectiveKind kind, const FailField& fail) {
  if (!root) return 0;
  if (kind != CollectiveKind::kBroadcast)
    fail("root", fmt::format("is only for kind \"broadcast\" (this collective is an {})", CollectiveKindName(kind)));
  if (!root->is_number_unsigned() || root->get<uint64_t>() > 65'535)
    fail("root", "must be a rank (its place in the collective's group) from 0 to 65535, got " + root->dump());
  return root->get<uint32_t>();
}

/// `communicator`: "world" (default: every rank) or a name of `communicators`.
int32_t ReadCommunicator(const ScheduleSpec& s, const json* name, const FailField& fail) {
  if (!name || *name == "world") return ScheduleSpec::kWorld;
  for (size_t i = 0; i < s.communicator_names.size(); ++i)
    if (*name == s.communicator_names[i]) return static_cast<int32_t>(i);
  std::string known = "\"world\"";
  for (const std::string& n : s.communicator_names) known += ", \"" + n + "\"";
  fail("communicator", fmt::format("must be a communicator ({}), got {}", known, name->dump()));
  return ScheduleSpec::kWorld;
}

/// One collective of a schedule: `bytes` (a multiple of 4, 4 .. 2^40),
/// `ready_us` (0 .. 1e9, default 0), `after`, `kind`, `root` and `communicator`.
void AddScheduleCollective(ScheduleSpec& s, const FieldOf& get, const FailField& fail) {
  const json* bytes = get("bytes");
  const json* ready = get("ready_us");
  if (!bytes || !bytes->is_number_unsigned() || bytes->get<uint64_t>() < 4 || bytes->get<uint64_t>() > (1ull << 40) ||
      bytes->get<uint64_t>() % 4)
    fail("bytes", "is required: a multiple of 4 from 4 to 2^40 (the collective's payload per rank), got " +
                      (bytes ? bytes->dump() : std::string("nothing")));
  if (ready && (!ready->is_number() || ready->get<double>() < 0 || ready->get<double>() > 1e9))
    fail("ready_us", "must be a number of microseconds from 0 to 1e9, got " + ready->dump());
  s.after.push_back(ReadAfter(get("after"), s.bytes.size(), fail));
  s.kinds.push_back(ReadKind(get("kind"), fail));
  s.roots.push_back(ReadRoot(get("root"), s.kinds.back(), fail));
  s.communicator.push_back(ReadCommunicator(s, get("communicator"), fail));
  s.bytes.push_back(bytes->get<uint64_t>());
  s.ready_ps.push_back(ready ? static_cast<uint64_t>(std::llround(ready->get<double>() * 1e6)) : 0);
}

constexpr const char* kCollectiveFields = "bytes, ready_us, after, kind, root, communicator";
bool IsCollectiveField(const std::string& k) {
  return k == "bytes" || k == "ready_us" || k == "after" || k == "kind" || k == "root" || k == "communicator";
}

/// The collectives of a JSON array [{"bytes", "ready_us"}, ...]; `at` prefixes the messages' keys.
void ReadCollectivesArray(const json& v, ScheduleSpec& s, const std::function<void(std::string, std::string)>& fail) {
  if (!v.is_array() || v.empty() || v.size() > 100'000)
    fail("", "must be an array of 1 to 100,000 objects {\"bytes\", \"ready_us\", ...}, got " +
                 v.dump().substr(0, 80));
  for (size_t i = 0; i < v.size(); ++i) {
    const json& e = v[i];
    const std::string at = fmt::format("[{}]", i);
    if (!e.is_object())
      fail(at, "must be an object {\"bytes\", \"ready_us\", ...}, got " + e.dump().substr(0, 80));
    for (const auto& [key, value] : e.items())
      if (!IsCollectiveField(key)) fail(at + "." + key, "unknown key (known: " + std::string(kCollectiveFields) + ")");
    AddScheduleCollective(
        s, [&e](const char* key) { return e.contains(key) ? &e[key] : nullptr; },
        [&](const std::string& field, const std::string& problem) { fail(at + "." + field, problem); });
  }
}

/// A collective-trace CSV: a header naming `bytes` and optionally
/// `ready_us`, `after`, `kind`, `root` and `communicator` (any order; other columns are refused), then one collective
/// per line; blank lines and lines starting with # are skipped.
void ReadCollectivesCsv(const std::string& text, const std::string& path, ScheduleSpec& s, Reader& r) {
  std::vector<std::string> columns;
  size_t line_no = 0, pos = 0;
  auto fail = [&](const std::string& what) { r.Fail("file", fmt::format("{}:{}: {}", path, line_no, what)); };
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    for (size_t a = 0, b; a <= line.size(); a = b + 1) {
      b = std::min(line.find(',', a), line.size());
      cells.push_back(line.substr(a, b - a));
    }
    if (columns.empty()) {
      columns = cells;
      for (const std::string& c : columns)
        if (!IsCollectiveField(c)) fail(fmt::format("column \"{}\": unknown (known: {})", c, kCollectiveFields));
      if (std::count(columns.begin(), columns.end(), "bytes") != 1) fail("the header must name the column bytes once");
      continue;
    }
    if (cells.size() != columns.size()) fail(fmt::format("{} fields, the header has {}", cells.size(), columns.size()));
    // Numbers are numbers; `after` an index or a word; `kind` and `communicator` words.
    json row = json::object();
    for (size_t i = 0; i < cells.size(); ++i) {
      const json v = json::parse(cells[i], nullptr, false);
      const bool number = !v.is_discarded() && v.is_number();
      if (columns[i] == "kind" || columns[i] == "communicator" || (columns[i] == "after" && !number)) {
        row[columns[i]] = cells[i];
        continue;
      }
      if (!number) fail(fmt::format("{}: \"{}\" is not a number", columns[i], cells[i]));
      row[columns[i]] = v;
    }
    if (s.bytes.size() == 100'000) fail("more than 100,000 collectives");
    AddScheduleCollective(
        s, [&row](const char* key) { return row.contains(key) ? &row[key] : nullptr; },
        [&](const std::string& field, const std::string& problem) { fail(field + ": " + problem); });
  }
  if (s.bytes.empty()) fail("no collectives (a header naming bytes and optional columns, then one line per collective)");
}

/// workload.schedule.file: the collectives from a CSV or JSON file (relative to the scenario).
void ReadScheduleFile(Reader& r, ScheduleSpec& s, const ScenarioInput& in) {
  const json* v = r.Raw("file");
  if (!v) return;
  if (r.Has("collectives")) r.Fail("collectives", "give the collectives or a file, not both");
  if (!v->is_string() || v->get<std::string>().empty()) r.Fail("file", "must be a file name, got " + v->dump());
  std::filesystem::path file(v->get<std::string>());
  if (file.is_relative() && !in.base_dir.empty()) file = std::filesystem::path(in.base_dir) / file;
  std::string text;
  try {
    text = util::ReadBoundedFile(file.string(), util::kMaxJsonFileBytes, "collective trace");
  } catch (const util::FileReadError& e) {
    r.Fail("file", e.what());
  }
  if (file.extension() == ".json") {
    const json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("collectives"))
      r.Fail("file", file.string() + ": not a JSON object with \"collectives\": [{\"bytes\", \"ready_us\"}, ...]");
    ReadCollectivesArray(doc["collectives"], s, [&](const std::string& at, const std::string& problem) {
      r.Fail("file", fmt::format("{}: collectives{}: {}", file.string(), at, problem));
    });
  } else {
    ReadCollectivesCsv(text, file.string(), s, r);
  }
  r.out()["file"] = *v;
}

/// workload.schedule.collectives: [{"bytes", "ready_us"}, ...], each checked (or `file`'s).
void ReadScheduleCollectives(Reader& r, ScheduleSpec& s, const ScenarioInput&) {
  const json* v = r.Raw("collectives");
  if (r.Has("file")) return;  // ReadScheduleFile read them (and refused both)
  if (!v) r.Fail("collectives", "is required: the iteration's collectives, [{\"bytes\": ..., \"ready_us\": ...}] (or file)");
  ReadCollectivesArray(*v, s, [&](const std::string& at, const std::string& problem) { r.Fail("collectives" + at, problem); });
  r.out()["collectives"] = *v;
}

/// workload.schedule.communicators: {"name": [[ranks], [ranks], ...], ...}:
/// each a list of disjoint groups of at least 2 ranks (that they cover the
/// job's ranks is checked once the job's size is known: CheckCommunicators).
void ReadCommunicators(Reader& r, ScheduleSpec& s, const ScenarioInput&) {
  const json* v = r.Raw("communicators");
  if (!v) return;
  if (!v->is_object() || v->empty() || v->size() > 64)
    r.Fail("communicators", "must be an object of 1 to 64 named communicators {\"name\": [[ranks], ...]}, got " +
                                v->dump().substr(0, 80));
  for (const auto& [name, groups] : v->items()) {
    const std::string at = "communicators." + name;
    if (name.empty() || name == "world" || name.size() > 64)
      r.Fail(at, "a communicator's name must be 1 to 64 characters and not \"world\" (every rank, built in)");
    if (!groups.is_array() || groups.empty())
      r.Fail(at, "must be a non-empty array of groups, each an array of ranks, got " + groups.dump().substr(0, 80));
    std::vector<std::vector<uint32_t>> parsed;
    for (size_t g = 0; g < groups.size(); ++g) {
      const json& group = groups[g];
      const std::string where = fmt::format("{}[{}]", at, g);
      if (!group.is_array() || group.size() < 2)
        r.Fail(where, "must be an array of at least 2 ranks (a collective needs two), got " + group.dump().substr(0, 80));
      std::vector<uint32_t> ranks;
      for (const json& x : group) {
        if (!x.is_number_unsigned() || x.get<uint64_t>() > 1'000'000)
          r.Fail(where, "must hold ranks (integers from 0), got " + x.dump());
        ranks.push_back(x.get<uint32_t>());
      }
      parsed.push_back(std::move(ranks));
    }
    s.communicator_names.push_back(name);
    s.communicator_groups.push_back(std::move(parsed));
  }
  r.out()["communicators"] = *v;
}

/// workload.schedule.stragglers: {"ranks": [...], "factor": >= 1}.
void ReadStragglers(Reader& r, ScheduleSpec& s, const ScenarioInput&) {
  const json* v = r.Raw("stragglers");
  if (!v) return;
  if (!v->is_object()) r.Fail("stragglers", "must be an object {\"ranks\": [...], \"factor\": ...}, got " + v->dump());
  for (const auto& [key, value] : v->items())
    if (key != "ranks" && key != "factor") r.Fail("stragglers." + key, "unknown key (known: ranks, factor)");
  const json* ranks = v->contains("ranks") ? &(*v)["ranks"] : nullptr;
  if (!ranks || !ranks->is_array() || ranks->empty())
    r.Fail("stragglers.ranks", "is required: a non-empty array of ranks (integers >= 0)");
  for (size_t i = 0; i < ranks->size(); ++i) {
    const json& x = (*ranks)[i];
    if (!x.is_number_unsigned() || x.get<uint64_t>() > UINT32_MAX)
      r.Fail(fmt::format("stragglers.ranks[{}]", i), "must be a rank (an integer >= 0), got " + x.dump());
    s.straggler_ranks.push_back(x.get<uint32_t>());
  }
  const json* f = v->contains("factor") ? &(*v)["factor"] : nullptr;
  if (!f || !f->is_number() || f->get<double>() < 1 || f->get<double>() > 1000)
    r.Fail("stragglers.factor", "is required: how many times slower, a number from 1 to 1000, got " +
                                    (f ? f->dump() : std::string("nothing")));
  s.straggler_factor = f->get<double>();
  r.out()["stragglers"] = *v;
}

/// workload.schedule: a training step's compute and its collectives' ready times.
const ScheduleKeys& Schedule() {
  static const ScheduleKeys section =
      ScheduleKeys("workload.schedule", "A training step: compute, and collectives ready during it")
          .Step([](Reader&, ScheduleSpec& s, const ScenarioInput&) { s.given = true; })
          .TimePs("compute_us", &ScheduleSpec::compute_ps, 0, 0, 1e9, TimeUnit::kUs,
                  "Each rank's compute per iteration (forward and backward pass).")
          .TimePs("after_us", &ScheduleSpec::after_ps, 0, 0, 1e9, TimeUnit::kUs,
                  "After the compute and the last collective of an iteration, before the next (the optimizer "
                  "step).")
          .Custom("communicators",
                  {"object", "", "(none)", "{\"name\": [[ranks], ...], ...}",
                   "Named communicators: each splits the job's ranks into groups (every rank in exactly one; at "
                   "least 2 per group). A collective naming one (`communicator`) runs in each of its groups at "
                   "once, each group on its own: its sum is the group's, and a group begins it when its own ranks "
                   "have launched it (tensor-parallel groups inside racks, data-parallel groups across them). "
                   "`\"world\"` (every rank in one group) is built in and the default."},
                  [] {
                    const json rank = {{"type", "integer"}, {"minimum", 0}};
                    const json group = {{"type", "array"}, {"minItems", 2}, {"items", rank}};
                    const json groups = {{"type", "array"}, {"minItems", 1}, {"items", group}};
                    return json{{"type", "object"}, {"additionalProperties", groups}};
                  },
                  ReadCommunicators)
          .Custom("file",
                  {"string", "", "(none)", "a .csv or .json file",
                   "The collectives from a collective-trace file instead of `collectives` (relative to the "
                   "scenario): a CSV with a header naming `bytes` and optionally `ready_us`, `after`, `kind`, `root` and "
                   "`communicator`, one collective per "
                   "line (# comments and blank lines skipped), or a JSON object {\"collectives\": [...]} as below. "
                   "Errors name the file, the line and the field."},
                  [] { return json{{"type", "string"}}; }, ReadScheduleFile)
          .Custom("collectives",
                  {"array of objects", "", "**required** (or `file`)",
                   "1 .. 100,000 of {`bytes`, `ready_us`, `after`, `kind`, `root`, `communicator`}",
                   "The iteration's collectives (allreduces), run in this order at each rank: each starts when it "
                   "is ready and the one before it has finished there. Ready: `ready_us` (default 0) after what "
                   "`after` names: `\"start\"` (the default: the iteration's start; a gradient bucket filled "
                   "during the backward pass), `\"compute\"` (the end of the rank's compute: e.g. a gradient-norm "
                   "allreduce after the backward pass) or the index of an earlier collective (its end at the rank: "
                   "a step that uses its result). `bytes`: payload per rank, a multiple of 4 (the whole tensor). "
                   "`kind`: `\"allreduce\"` (the default), or where the protocol runs them `\"reduce_scatter\"` "
                   "(each rank ends with its 1/n of the sum), `\"all_gather\"` (each rank contributes its "
                   "1/n and ends with every rank's) and `\"broadcast\"` (every rank ends with the tensor of "
                   "`root`, its place in the collective's group, default 0). `communicator`: `\"world\"` (the "
                   "default) or a name of `communicators`, where the protocol runs them."},
                  [] {
                    const json after = {{"oneOf", json::array({{{"enum", {"start", "compute"}}},
                                                               {{"type", "integer"}, {"minimum", 0}}})}};
                    const json properties = {{"bytes", {{"type", "integer"}, {"minimum", 4}, {"multipleOf", 4}}},
                                             {"ready_us", {{"type", "number"}, {"minimum", 0}}},
                                             {"after", after},
                                             {"kind", {{"enum", {"allreduce", "reduce_scatter", "all_gather", "broadcast"}}}},
                                             {"root", {{"type", "integer"}, {"minimum", 0}, {"maximum", 65535}}},
                                             {"communicator", {{"type", "string"}}}};
                    return json{{"type", "array"},
                                {"minItems", 1},
                                {"items",
                                 {{"type", "object"},
                                  {"required", {"bytes"}},
                                  {"additionalProperties", false},
                                  {"properties", properties}}}};
                  },
                  ReadScheduleCollectives)
          .Num("jitter_cv", &ScheduleSpec::jitter_cv, 0, 0, 0.5, "",
               "Each rank's compute per iteration (and its ready times with it) x max(0.1, 1 + jitter_cv z), z a "
               "standard normal drawn from the seed, the job, the rank and the iteration: per-rank compute jitter. "
               "0: every rank computes `compute_us`.")
          .Custom("stragglers",
                  {"object", "", "(none)", "{\"ranks\": [...], \"factor\": >= 1}",
                   "Ranks (of each job, in rank order) whose compute and ready times are always `factor` x "
                   "longer, on top of any jitter: slow GPUs."},
                  [] {
                    return json{{"type", "object"},
                                {"required", {"ranks", "factor"}},
                                {"additionalProperties", false},
                                {"properties",
                                 {{"ranks", {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}}}}},
                                  {"factor", {{"type", "number"}, {"minimum", 1}}}}}};
                  },
                  ReadStragglers)
          .Check([](const ScheduleSpec& s, Reader& r) {
            for (size_t i = 0; i < s.ready_ps.size(); ++i)
              if (s.after[i] == kAfterStart && s.ready_ps[i] > s.compute_ps)
                r.Fail(fmt::format("collectives[{}].ready_us", i),
                       fmt::format("{} us is after the iteration's compute ({} us): a gradient is ready during "
                                   "the backward pass, at the latest when it ends (or give `after`: \"compute\")",
                                   s.ready_ps[i] / 1e6, s.compute_ps / 1e6));
          });
  return section;
}

/// Protocol `q`'s protocol.json (the registry's metadata).
const json& MetadataOf(const Protocol& q) {
  static const json all = ProtocolsJson();
  for (const json& p : all)
    if (p.value("name", "") == q.name) return p;
  throw std::logic_error("protocol \"" + std::string(q.name) + "\" has no metadata");
}

/// Whether protocol `q` runs collectives of kind `k` in a schedule (every
/// one runs allreduce; protocol.json "schedule_kinds" lists the others).
bool RunsKind(const Protocol& q, CollectiveKind k) {
  if (k == CollectiveKind::kAllreduce) return true;
  const json kinds = MetadataOf(q).value("schedule_kinds", json::array());
  return std::find(kinds.begin(), kinds.end(), CollectiveKindName(k)) != kinds.end();
}

/// Whether protocol `q` runs a schedule's communicators (protocol.json
/// "schedule_communicators": true).
bool RunsCommunicators(const Protocol& q) { return MetadataOf(q).value("schedule_communicators", false); }

/// The protocols that run a schedule and satisfy `runs`, quoted.
std::string ScheduleProtocols(const std::function<bool(const Protocol&)>& runs = {}) {
  std::vector<std::string> names;
  for (const Protocol& q : Protocols())
    if (q.runs_schedule && (!runs || runs(q))) names.push_back(fmt::format("\"{}\"", q.name));
  return names.empty() ? "none" : JoinNames(names, " and ");
}

/// Iterations, timing and concurrent jobs.
WorkloadKeys& DeclareSchedule(WorkloadKeys& a) {
  std::vector<std::string> able;
  for (const Protocol& q : Protocols())
    if (q.concurrent_jobs == "jobs") able.push_back(fmt::format("`{}`", q.name));
  return a
      .U32("iterations", spec::In(&Scenario::workload, &WorkloadSpec::iterations), 1, 1, 1'000'000, "",
           "Number of back-to-back collectives.")
      .TimePs("compute_gap_us", spec::In(&Scenario::workload, &WorkloadSpec::compute_gap_ps), 0, 0, 1e9, TimeUnit::kUs,
              "Pause between iterations: at each rank, from the end of an iteration's last collective to the start "
              "of the next iteration (where a protocol has several tensors per iteration, they run back to back).")
      .TimePs("start_us", spec::In(&Scenario::workload, &WorkloadSpec::start_ps), 0, 0, 1e9, TimeUnit::kUs,
              "Start time of the first collective.")
      .ObjectIfGiven("schedule", spec::In(&Scenario::workload, &WorkloadSpec::schedule), Schedule(),
                     "A training step instead of one collective per iteration: each rank computes, its gradient "
                     "buckets become ready during the backward pass and are allreduced in order, overlapping the "
                     "compute still to come. See [workload.schedule](#workloadschedule).")
      .Check([](const Scenario& s, Reader& w) {
        if (!s.workload.schedule.given) return;
        if (!TheProtocol(s).runs_schedule)
          w.Fail("schedule", fmt::format("protocol \"{}\" does not run a schedule yet (the protocols that do: {})",
                                         TheProtocol(s).name, ScheduleProtocols()));
        if (s.workload.compute_gap_ps != 0)
          w.Fail("compute_gap_us", "is not used with workload.schedule: give the pause after an iteration as "
                                   "workload.schedule.after_us");
        if (s.workload.schedule.has_communicators() && !RunsCommunicators(TheProtocol(s)))
          w.Fail("schedule.communicators",
                 fmt::format("protocol \"{}\" runs every collective over all its ranks (the protocols with "
                             "communicators: {})", TheProtocol(s).name, ScheduleProtocols(RunsCommunicators)));
        const std::vector<CollectiveKind>& kinds = s.workload.schedule.kinds;
        for (size_t i = 0; i < kinds.size(); ++i)
          if (!RunsKind(TheProtocol(s), kinds[i]))
            w.Fail(fmt::format("schedule.collectives[{}].kind", i),
                   fmt::format("protocol \"{}\" does not run \"{}\" (the protocols that do: {})",
                               TheProtocol(s).name, CollectiveKindName(kinds[i]), ScheduleProtocols([&](const Protocol& q) { return RunsKind(q, kinds[i]); })));
      })
      .U32("jobs", spec::In(&Scenario::workload, &WorkloadSpec::jobs), 1, 1, 256, "",
           "Concurrent allreduces: the selected hosts are dealt into this many groups of equal size (+-1), each "
           "running its own allreduce of `bytes` at the same time (see below).")
      .AllowedNote(fmt::format("> 1 with {}; at least 2 selected hosts per job", JoinNames(able, " and ")))
      .Enum("job_split", spec::In(&Scenario::workload, &WorkloadSpec::jobs_contiguous), "shuffled",
            {{"shuffled", false}, {"contiguous", true}},
            "How `workload.jobs` splits the selected hosts: `shuffled` with the seed, then dealt out (each job "
            "scattered over the racks); `contiguous` in host-id order, so each job holds a range of racks, as a "
            "scheduler that partitions the system would give. `host_split` in the results says which.")
      .Check([](const Scenario& s, Reader& w) {
        if (s.workload.jobs > 1 && TheProtocol(s).concurrent_jobs != "jobs") w.Fail("jobs", JobsRefusal(TheProtocol(s)));
      });
}

/// allreduce: the keys every protocol shares, then the protocol's own (its registry entry).
const WorkloadKeys& Allreduce() {
  static const WorkloadKeys section = [] {
    WorkloadKeys a("workload", "Allreduce");
    a.Named("workload:allreduce");
    DeclareTensor(a);
    DeclareSchedule(a);
    a.Step(ParseProtocolKeys,
           [](json& fragment) {
             for (const Protocol& p : Protocols())
               if (p.workload_type == "allreduce")
                 fragment["allOf"].push_back(spec::detail::IfThen("protocol", json::array({p.name}),
                                                                  p.name == DefaultProtocol(), SectionsFragment(p)));
           },
           [] { return SectionsOf(true); });
    DeclareSectionRows(a);
    return a;
  }();
  return section;
}

/// Workload types other than allreduce (and "none"): one protocol each reads them.
void ParseOtherType(Reader& w, Scenario& s, const ScenarioInput&) {
  const std::string& type = w.out()["type"].get_ref<const std::string&>();
  for (const Protocol& p : Protocols())
    if (p.workload_type != "allreduce" && p.workload_type == type) p.parse(w, s);
}

void OtherTypesSchema(json& fragment) {
  for (const Protocol& p : Protocols())
    if (p.workload_type != "allreduce")
      fragment["allOf"].push_back(
          spec::detail::IfThen("type", json::array({p.workload_type}), false, SectionsFragment(p)));
  // "none": no hosts either.
  fragment["allOf"].push_back(spec::detail::IfThen("type", json::array({"none"}), false,
                                                   json{{"not", json{{"required", json::array({"hosts"})}}}}));
}

}  // namespace

const spec::Section<Scenario, ScenarioInput>& WorkloadSection() {
  static const WorkloadKeys section =
      WorkloadKeys("workload", "Workload")
          .Enum("type", spec::In(&Scenario::workload, &WorkloadSpec::type), "allreduce",
                {{"allreduce", WorkloadType::kAllreduce},
                 {"permutation", WorkloadType::kPermutation},
                 {"none", WorkloadType::kNone}},
                "What the hosts do.")
          .Custom("hosts", HostSelectionKeyDoc("Which hosts take part (`allreduce` and `permutation` only)."),
                  [] { return HostSelectionSchema(false); },
                  [](Reader& w, Scenario& s, const ScenarioInput&) {
                    if (s.workload.type != WorkloadType::kNone) ParseHosts(w, s.workload.hosts);
                  })
          .Nests({&HostSelectionObjectDoc()})
          .When("type", {"allreduce"}, Allreduce())
          .Step(ParseOtherType, OtherTypesSchema, [] { return SectionsOf(false); });
  return section;
}

}  // namespace inasim
