#include "ina/runner.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

namespace inasim {

namespace fs = std::filesystem;

namespace {
void WriteFile(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  f.close();
  if (!f) throw std::runtime_error(fmt::format("cannot write {}", p.string()));
}
}  // namespace

void WriteResults(const RunResult& result, const std::string& dir) {
  fs::path target = fs::absolute(dir).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();  // "out/" -> "out"
  if (target == target.root_path() || target.filename() == "." || target.filename() == "..")
    throw std::invalid_argument(fmt::format("--out {}: must name a directory to create or replace", dir));
  const fs::path parent = target.parent_path();
  fs::create_directories(parent);
  const fs::path tmp = parent / fmt::format(".{}.tmp-{}", target.filename().string(), getpid());
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  try {
    WriteFile(tmp / "results.json", result.json.dump(2) + "\n");
    for (size_t i = 0; i < result.csv_names.size(); ++i) WriteFile(tmp / result.csv_names[i], result.csv_texts[i]);
    WriteFile(tmp / "summary.txt", result.summary);
    // Replace an older result only once the new one is complete.
    if (fs::exists(target)) {
      const fs::path old = parent / fmt::format(".{}.old-{}", target.filename().string(), getpid());
      fs::rename(target, old);
      fs::rename(tmp, target);
      fs::remove_all(old);
    } else {
      fs::rename(tmp, target);
    }
  } catch (...) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace inasim
