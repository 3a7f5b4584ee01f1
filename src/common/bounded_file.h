// Reading files a user names (scenario JSON, flow-size CDFs, LIBSVM datasets,
// inasim-p4 configs and packet traces) with a size cap, and only from regular
// files: /dev/zero would otherwise be read until memory runs out, and a FIFO
// without a writer would block open() for ever. Header-only, POSIX; shared by
// the simulator (src/) and inasim-p4 (p4model/tools/).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <istream>
#include <stdexcept>
#include <string>

namespace inasim::util {

/// A named file that cannot be read as asked: missing, not a regular file,
/// or larger than its cap. The message starts with the path. Derives from
/// std::invalid_argument, as every "bad input" error of the parsers does.
struct FileReadError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The caps, per kind of file (docs/SCENARIO.md "Input files"). JSON and CDF
// files are a few KiB in practice; 64 MiB leaves room for generated ones.
inline constexpr uint64_t kMaxJsonFileBytes = 64ull << 20;     ///< scenario files, inasim-p4 configs, manifests
inline constexpr uint64_t kMaxCdfFileBytes = 64ull << 20;      ///< flow-size CDF files
/// LIBSVM text: the reader keeps at most 4 GiB as a dense quantized matrix
/// (p4sgd-glm.h), so a larger text file cannot be trained on in any case.
inline constexpr uint64_t kMaxDatasetFileBytes = 4ull << 30;
inline constexpr uint64_t kMaxLineBytes = 1ull << 20;          ///< one line of an inasim-p4 packet trace
inline constexpr uint64_t kMaxSourceFileBytes = 64ull << 20;   ///< upstream P4 / Python sources (inasim-p4 check)

inline std::string HumanSize(uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

inline const char* FileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/// RAII file descriptor.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

/// Opens `path` for reading and checks that it is a regular file of at most
/// `max_bytes`. O_NONBLOCK: opening a FIFO must not wait for a writer (the
/// type check then refuses it). `what` names the kind of file in messages
/// ("scenario file"). Returns the open descriptor and its size.
inline int OpenRegularFile(const std::string& path, uint64_t max_bytes, const char* what, uint64_t* size = nullptr) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw FileReadError(path + ": cannot open " + what + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string type = FileTypeName(st.st_mode);
    ::close(fd);
    throw FileReadError(path + ": is " + type + ", not a regular file; a " + what + " must be a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw FileReadError(path + ": " + what + " too large (" + std::to_string(st.st_size) + " bytes; at most " +
                        HumanSize(max_bytes) + ")");
  }
  if (size) *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

/// Checks `path` as OpenRegularFile does, without keeping it open (for
/// readers that open the file themselves, e.g. a streamed ifstream).
inline void CheckRegularFile(const std::string& path, uint64_t max_bytes, const char* what) {
  Fd fd(OpenRegularFile(path, max_bytes, what));
}

/// The whole file, at most `max_bytes` (also if it grows while being read).
inline std::string ReadBoundedFile(const std::string& path, uint64_t max_bytes, const char* what) {
  uint64_t size = 0;
  Fd fd(OpenRegularFile(path, max_bytes, what, &size));
  std::string text;
  text.reserve(size);
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) throw FileReadError(path + ": cannot read " + what + ": " + std::strerror(errno));
    if (n == 0) return text;
    if (text.size() + static_cast<uint64_t>(n) > max_bytes)
      throw FileReadError(path + ": " + what + " too large (more than " + HumanSize(max_bytes) + ")");
    text.append(buf, static_cast<size_t>(n));
  }
}

/// std::getline with a cap: false at the end of input; throws (naming
/// `origin` and the line number) when a line is longer than `max_bytes`, so
/// an endless stream without newlines (/dev/zero on stdin) cannot fill memory.
inline bool GetBoundedLine(std::istream& in, std::string& line, uint64_t max_bytes, const std::string& origin,
                           uint64_t line_no) {
  line.clear();
  std::streambuf* sb = in.rdbuf();
  bool any = false;
  while (true) {
    const int c = sb->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return any;
    }
    any = true;
    if (c == '\n') return true;
    if (line.size() >= max_bytes)
      throw FileReadError(origin + ":" + std::to_string(line_no) + ": line longer than " + HumanSize(max_bytes));
    line.push_back(static_cast<char>(c));
  }
}

}  // namespace inasim::util
