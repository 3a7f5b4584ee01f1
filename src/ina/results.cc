// Writing a run's results directory, atomically, and never over anything
// that is not a results directory of ours (docs/SCENARIO.md "Outputs").
#include "ina/runner.h"

#include "common/bounded_file.h"

#include <fmt/format.h>
#include <zlib.h>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <stdexcept>

namespace inasim {

namespace fs = std::filesystem;

namespace {

// Written first into every results directory: how a later run recognises a
// directory it may replace (besides results.json's "inasim_version").
constexpr const char* kMarkerName = ".inasim-results";
constexpr const char* kMarkerText = "A results directory written by inasim; `inasim run --out` may replace it.\n";
// An older inasim's results.json is read to recognise it; larger ones are not ours.
constexpr uint64_t kMaxResultsJsonBytes = 256ull << 20;

void WriteFile(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  f.close();
  if (!f) throw std::runtime_error(fmt::format("cannot write {}", p.string()));
}

bool EndsWith(const std::string& s, const char* tail) {
  const size_t n = std::strlen(tail);
  return s.size() > n && s.compare(s.size() - n, n, tail) == 0;
}

/// The names a run writes: the marker, results.json, summary.txt, *.csv (or *.csv.gz).
bool IsResultsFileName(const std::string& name) {
  return name == kMarkerName || name == "results.json" || name == "summary.txt" || EndsWith(name, ".csv") ||
         EndsWith(name, ".csv.gz");
}

/// `text` as a gzip file (RFC 1952; zlib's header: no name, mtime 0, so the
/// same text gives the same bytes).
std::string Gzip(const std::string& text) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("gzip: deflateInit2 failed");
  std::string out(deflateBound(&zs, text.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("gzip: deflate did not finish");
  return out;
}

/// The captures' folder (outputs.pcap): nothing but regular *.pcap files.
bool IsPcapFolder(const fs::path& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!fs::is_regular_file(it->symlink_status(ec)) || name.size() < 6 || name.compare(name.size() - 5, 5, ".pcap") != 0)
      return false;
  }
  return !ec;
}

/// Empty if `dir` holds nothing but regular files a run writes; else the first other entry.
std::string ForeignEntry(const fs::path& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::file_status st = it->symlink_status(ec);
    if (!ec && fs::is_directory(st) && it->path().filename() == "pcap" && IsPcapFolder(it->path())) continue;
    if (ec || !fs::is_regular_file(st) || !IsResultsFileName(it->path().filename().string()))
      return it->path().filename().string();
  }
  if (ec) return "(unreadable: " + ec.message() + ")";
  return "";
}

/// results.json as an inasim run writes it (also before the marker file existed).
bool HasInasimResultsJson(const fs::path& dir) {
  try {
    const std::string text =
        util::ReadBoundedFile((dir / "results.json").string(), kMaxResultsJsonBytes, "results file");
    const nlohmann::json j = nlohmann::json::parse(text);
    return j.is_object() && j.contains("inasim_version") && j.contains("scenario");
  } catch (const std::exception&) {
    return false;
  }
}

/// Empty if `target` may be replaced (a results directory of ours), else why not.
std::string WhyNotReplaceable(const fs::path& target) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(target, ec);
  if (fs::is_symlink(st)) return "is a symbolic link";
  if (!fs::is_directory(st)) return fs::is_regular_file(st) ? "is a file" : "is not a directory";
  const std::string foreign = ForeignEntry(target);
  if (!foreign.empty()) return fmt::format("holds \"{}\", which no inasim run writes", foreign);
  const bool marked = fs::is_regular_file(fs::symlink_status(target / kMarkerName, ec));
  if (!marked && !HasInasimResultsJson(target)) return "is not an inasim results directory (no results.json of ours)";
  if (::access(target.c_str(), W_OK | X_OK) != 0) return fmt::format("cannot be replaced: {}", std::strerror(errno));
  return "";
}

/// `dir` as an absolute directory path; "", ".", ".." and "/" name no directory to replace.
fs::path ResolveTarget(const std::string& dir) {
  const fs::path rel = fs::path(dir).lexically_normal();
  const fs::path leaf = rel.has_filename() ? rel.filename() : rel.parent_path().filename();
  fs::path target = fs::absolute(rel).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();  // "out/" -> "out"
  if (dir.empty() || leaf.empty() || leaf == "." || leaf == ".." || target == target.root_path())
    throw ScenarioError(fmt::format("--out {}: must name a directory to create or replace", dir));
  return target;
}

void CheckTarget(const std::string& dir, const fs::path& target) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(target, ec))) return;
  const std::string why = WhyNotReplaceable(target);
  if (!why.empty())
    throw ScenarioError(fmt::format("--out {}: exists and {}; inasim replaces only a results directory of an earlier "
                                    "run (give another --out, or remove it yourself)", dir, why));
}

/// A process with this id still runs (or may: another user's).
bool ProcessAlive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

/// Removes `.<name>.tmp-<pid>` / `.<name>.old-<pid>` siblings in `parent` that
/// runs killed before they finished left behind: only when that process is
/// gone and the directory holds nothing but files a run writes.
void RemoveStaleSiblings(const fs::path& parent) {
  static const std::regex kOurs(R"(^\..+\.(tmp|old)-([0-9]{1,9})$)");
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, kOurs)) continue;
    const long pid = std::stol(m[2].str());
    if (pid == ::getpid() || ProcessAlive(pid)) continue;
    std::error_code st_ec;
    if (!fs::is_directory(it->symlink_status(st_ec)) || !ForeignEntry(it->path()).empty()) continue;
    std::error_code rm_ec;
    fs::remove_all(it->path(), rm_ec);  // best effort: a leftover is harmless
  }
}

}  // namespace

std::vector<std::string> PrepareResultsDir(const std::string& dir) {
  const fs::path target = ResolveTarget(dir);
  CheckTarget(dir, target);
  // Create the missing parents now (remembering them), and prove that a run
  // can write there, so that a read-only or impossible --out fails before the run.
  std::vector<std::string> created;
  for (fs::path p = target.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path()) {
    std::error_code ec;
    if (fs::exists(fs::symlink_status(p, ec))) break;
    created.insert(created.begin(), p.string());
  }
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) {
    RemoveCreatedDirs(created);
    throw ScenarioError(
        fmt::format("--out {}: cannot create {}: {}", dir, target.parent_path().string(), ec.message()));
  }
  const fs::path probe = target.parent_path() / fmt::format(".{}.tmp-{}", target.filename().string(), ::getpid());
  if (::mkdir(probe.c_str(), 0755) != 0 && errno != EEXIST) {
    const std::string why = std::strerror(errno);
    RemoveCreatedDirs(created);
    throw ScenarioError(fmt::format("--out {}: cannot write into {}: {}", dir, target.parent_path().string(), why));
  }
  ::rmdir(probe.c_str());
  return created;
}

void RemoveCreatedDirs(const std::vector<std::string>& dirs) {
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) ::rmdir(it->c_str());  // only if still empty
}

void WriteResults(const RunResult& result, const std::string& dir) {
  const fs::path target = ResolveTarget(dir);
  CheckTarget(dir, target);  // again: something may have appeared there during the run
  const fs::path parent = target.parent_path();
  fs::create_directories(parent);
  RemoveStaleSiblings(parent);
  const fs::path tmp = parent / fmt::format(".{}.tmp-{}", target.filename().string(), ::getpid());
  std::error_code ec;
  if (fs::exists(fs::symlink_status(tmp, ec))) {
    if (!fs::is_directory(fs::symlink_status(tmp, ec)) || !ForeignEntry(tmp).empty())
      throw ScenarioError(fmt::format("--out {}: {} exists and is not a directory an inasim run left", dir,
                                      tmp.string()));
    fs::remove_all(tmp);
  }
  if (!fs::create_directory(tmp)) throw std::runtime_error(fmt::format("cannot create {}", tmp.string()));
  try {
    WriteFile(tmp / kMarkerName, kMarkerText);  // first: a killed run's leftover is recognisably ours
    WriteFile(tmp / "results.json", result.json.dump(2) + "\n");
    for (size_t i = 0; i < result.csv_names.size(); ++i) {
      if (result.gzip_csv) WriteFile(tmp / (result.csv_names[i] + ".gz"), Gzip(result.csv_texts[i]));
      else WriteFile(tmp / result.csv_names[i], result.csv_texts[i]);
    }
    for (const auto& [name, bytes] : result.files) {
      fs::create_directories((tmp / name).parent_path());
      WriteFile(tmp / name, bytes);
    }
    WriteFile(tmp / "summary.txt", result.summary);
    // Replace an older result only once the new one is complete.
    if (fs::exists(fs::symlink_status(target, ec))) {
      const fs::path old = parent / fmt::format(".{}.old-{}", target.filename().string(), ::getpid());
      fs::rename(target, old);
      fs::rename(tmp, target);
      fs::remove_all(old, ec);  // the new results are in place; a leftover is removed by a later run
    } else {
      fs::rename(tmp, target);
    }
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace inasim
