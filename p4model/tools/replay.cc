// inasim-p4: drive a dataplane model with packets, without ns-3.
//
//   inasim-p4 replay PROGRAM --config CFG.json [--input FILE] [--dump] [--now-ns N]
//   inasim-p4 check PROGRAM [--p4-src DIR]     (check_cli.cc: the model against the upstream P4)
//   inasim-p4 manifest PROGRAM --p4-src DIR    (check_cli.cc: regenerate upstream-manifest.json)
//   inasim-p4 --help, inasim-p4 COMMAND --help (usage, exit 0)
//
// Reads ingress packets as JSON lines, {"port": N, "hex": "...", "time_ns": T}
// (time optional; default: the previous packet's time, starting at --now-ns),
// from --input or stdin, and prints one JSON line per input packet with
// everything the program emitted: unicast {"port", "hex", "latency_ns"},
// multicast {"ports": [...], "hex", "latency_ns"}, or routed {"routed": true,
// "hex", "latency_ns"}, plus "passes" (pipeline passes) and, with --dump, the
// program's register state after the packet. Unclaimed packets print
// {"claimed": false}. Timers the program asks for (TimerService::ScheduleAt)
// fire in time order (equal times: in the order they were scheduled) before
// the first input packet whose time is at or after theirs, and after the last
// input line; each prints its own line {"timer": cookie, "time_ns": T,
// "emitted": [...], "passes": N} (plus "state" with --dump). Exit codes: 0 ok,
// 2 bad input (the message names the line and the problem), 3 internal error.
// The config is read up to 64 MiB, input lines up to 1 MiB each; a named
// --input must be a regular file (inasim::util, src/common/bounded_file.h).
#include "p4model/common/dataplane.h"
#include "p4model/common/frame.h"
#include "p4model/tools/p4check.h"
#include "p4model/tools/programs.h"

#include "common/bounded_file.h"
#include "common/json_text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <functional>
#include <memory>
#include <queue>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using nlohmann::json;
using inasim::p4::Picoseconds;

struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr size_t kMaxTimers = 10'000'000;

std::string Hex(inasim::Span<const uint8_t> b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  s.reserve(b.size() * 2);
  for (uint8_t x : b) {
    s += d[x >> 4];
    s += d[x & 15];
  }
  return s;
}

std::vector<uint8_t> Unhex(const std::string& s, const std::string& where) {
  if (s.size() % 2) throw BadInput(where + ": \"hex\" has an odd number of digits");
  std::vector<uint8_t> out(s.size() / 2);
  auto nibble = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw BadInput(where + ": \"hex\" contains '" + std::string(1, c) + "', not a hex digit");
  };
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(nibble(s[2 * i]) << 4 | nibble(s[2 * i + 1]));
  return out;
}

/// Records what the program emits for one input packet.
class Recorder : public inasim::p4::Emitter {
 public:
  json out = json::array();
  void Emit(inasim::Span<const uint8_t> frame, uint16_t port, Picoseconds latency) override {
    out.push_back({{"port", port}, {"hex", Hex(frame)}, {"latency_ns", latency / 1000.0}});
  }
  void EmitMulticast(inasim::Span<const uint8_t> frame, inasim::Span<const uint16_t> ports,
                     Picoseconds latency) override {
    out.push_back({{"ports", std::vector<uint16_t>(ports.begin(), ports.end())},
                   {"hex", Hex(frame)},
                   {"latency_ns", latency / 1000.0}});
  }
  void EmitRouted(inasim::Span<const uint8_t> frame, Picoseconds latency) override {
    out.push_back({{"routed", true}, {"hex", Hex(frame)}, {"latency_ns", latency / 1000.0}});
  }
};

/// Timers a program asks for fire when input time reaches them.
class Timers : public inasim::p4::TimerService {
 public:
  struct Timer {
    Picoseconds at;
    uint64_t seq;  ///< scheduling order: ties fire first-scheduled first (as ns-3 does)
    uint64_t cookie;
    bool operator>(const Timer& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> pending;
  void ScheduleAt(Picoseconds at, uint64_t cookie) override { pending.push(Timer{at, next_seq_++, cookie}); }

 private:
  uint64_t next_seq_ = 0;
};

/// A time in ps as JSON nanoseconds: an integer when whole.
json Nanoseconds(Picoseconds t) { return t % 1000 == 0 ? json(t / 1000) : json(t / 1000.0); }

constexpr const char* kUsage =
    "usage: inasim-p4 replay PROGRAM --config CFG.json [--input FILE] [--dump] [--now-ns N]\n"
    "       inasim-p4 check PROGRAM [--p4-src DIR] [--manifest FILE] [--inputs N] [--seed S] [--verbose]\n"
    "       inasim-p4 manifest PROGRAM --p4-src DIR [--out FILE]\n"
    "       inasim-p4 --help | COMMAND --help\n"
    "replay: packets as JSON lines {\"port\", \"hex\", \"time_ns\"} from FILE or stdin (p4model/tools/README.md)\n";

int Usage(const std::string& msg) {
  std::fprintf(stderr, "inasim-p4: %s\n%sprograms: %s\n", msg.c_str(), kUsage, inasim::p4tools::ProgramNames().c_str());
  return 2;
}

bool IsHelp(const std::string& a) { return a == "--help" || a == "-h"; }

// Times are ns in input and ps inside: at most 2^64 / 1000 ns, so that the
// conversion cannot wrap (about 213 days).
constexpr uint64_t kMaxTimeNs = UINT64_MAX / 1000;

/// --now-ns: a non-negative whole number of ns (no sign, no suffix).
Picoseconds ParseNowNs(const std::string& v) {
  uint64_t ns = 0;
  const bool digits = !v.empty() && v.size() <= 20 && v.find_first_not_of("0123456789") == std::string::npos;
  if (digits) {
    errno = 0;
    ns = std::strtoull(v.c_str(), nullptr, 10);
  }
  if (!digits || errno == ERANGE || ns > kMaxTimeNs)
    throw BadInput("--now-ns: must be a non-negative integer number of ns up to " + std::to_string(kMaxTimeNs) +
                   ", got \"" + v + "\"");
  return ns * 1000;
}

struct ReplayOptions {
  std::string program, config_path, input_path;
  bool dump = false;
  Picoseconds now = 0;
};

ReplayOptions ParseReplayOptions(const std::vector<std::string>& args) {
  ReplayOptions o;
  o.program = args[1];
  for (size_t i = 2; i < args.size(); ++i) {
    auto value = [&](const char* flag) {
      if (i + 1 >= args.size()) throw BadInput(std::string(flag) + ": needs a value");
      return args[++i];
    };
    if (args[i] == "--config") o.config_path = value("--config");
    else if (args[i] == "--input") o.input_path = value("--input");
    else if (args[i] == "--dump") o.dump = true;
    else if (args[i] == "--now-ns") o.now = ParseNowNs(value("--now-ns"));
    else throw BadInput("unknown option \"" + args[i] + "\"");
  }
  return o;
}

/// The program with its config (capped and strict: inasim::util), or nullptr for an unknown name.
std::unique_ptr<inasim::p4::Dataplane> LoadProgram(const ReplayOptions& o) {
  std::string config = "{}";
  try {
    if (!o.config_path.empty())
      config = inasim::util::ReadBoundedFile(o.config_path, inasim::util::kMaxJsonFileBytes, "config file");
    return inasim::p4tools::MakeProgram(o.program, config);
  } catch (const inasim::util::FileReadError& e) {
    throw BadInput(std::string("--config ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw BadInput((o.config_path.empty() ? std::string("config") : o.config_path) + ": " + e.what());
  }
}

/// One input line as a packet: its port and bytes; `now` moves to its time_ns.
std::vector<uint8_t> ParsePacketLine(const std::string& line, const std::string& where, uint16_t& port,
                                     Picoseconds& now) {
  json pkt;
  try {
    pkt = inasim::util::ParseStrictJson(line, where + ": ");
  } catch (const json::exception& e) {
    throw BadInput(where + ": not valid JSON: " + e.what());
  } catch (const std::invalid_argument& e) {
    throw BadInput(e.what());
  }
  if (!pkt.is_object() || !pkt.contains("port") || !pkt["port"].is_number_unsigned() ||
      pkt["port"].get<uint64_t>() > 65535)
    throw BadInput(where + ": needs \"port\": an integer 0..65535");
  if (!pkt.contains("hex") || !pkt["hex"].is_string()) throw BadInput(where + ": needs \"hex\": the frame bytes");
  if (pkt.contains("time_ns")) {
    if (!pkt["time_ns"].is_number_unsigned() || pkt["time_ns"].get<uint64_t>() > kMaxTimeNs)
      throw BadInput(where + ": \"time_ns\" must be a non-negative integer up to " + std::to_string(kMaxTimeNs));
    now = pkt["time_ns"].get<uint64_t>() * 1000;
  }
  port = static_cast<uint16_t>(pkt["port"].get<uint64_t>());
  return Unhex(pkt["hex"].get<std::string>(), where);
}

/// Drives the program with every input line, timers in between (see the top of this file).
void Replay(inasim::p4::Dataplane& dp, std::istream& in, const std::string& origin, bool dump, Picoseconds now) {
  Timers timers;
  dp.AttachTimers(&timers);
  // Fires every pending timer due at or before `until` (all of them when
  // `all`), each on its own output line; a timer may schedule more.
  size_t timers_fired = 0;
  auto fire_timers = [&](Picoseconds until, bool all) {
    while (!timers.pending.empty() && (all || timers.pending.top().at <= until)) {
      const Timers::Timer t = timers.pending.top();
      timers.pending.pop();
      if (++timers_fired > kMaxTimers)
        throw BadInput("more than 10,000,000 timers fired: the program keeps rescheduling");
      Recorder rec;
      dp.OnTimer(t.cookie, t.at, rec);
      json line = {{"timer", t.cookie}, {"time_ns", Nanoseconds(t.at)}, {"emitted", rec.out},
                   {"passes", dp.LastPasses()}};
      if (dump) line["state"] = json::parse(dp.DumpState());
      std::cout << line.dump() << '\n';
    }
  };
  std::string line;
  for (uint64_t n = 1; inasim::util::GetBoundedLine(in, line, inasim::util::kMaxLineBytes, origin, n); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    uint16_t port = 0;
    const std::vector<uint8_t> bytes = ParsePacketLine(line, origin + ":" + std::to_string(n), port, now);
    fire_timers(now, false);  // timers due by now fire first, in time order
    Recorder rec;
    json result = {{"line", n}};
    const inasim::p4::FrameView view = inasim::p4::ParseFrame(
        bytes.data(), std::min(bytes.size(), inasim::p4::kParseBytes), static_cast<uint32_t>(bytes.size()));
    result["claimed"] = dp.Claims(view);
    if (result["claimed"].get<bool>()) {
      dp.Process(port, inasim::Span<const uint8_t>(bytes.data(), bytes.size()), now, rec);
      result["passes"] = dp.LastPasses();
    }
    result["out"] = rec.out;
    if (dump) result["state"] = json::parse(dp.DumpState());
    std::cout << result.dump() << '\n';
  }
  fire_timers(0, true);  // end of input: the rest, in time order
}

int ReplayCommand(const std::vector<std::string>& args) {
  if (args.size() < 2) return Usage("replay needs a PROGRAM");
  const ReplayOptions o = ParseReplayOptions(args);
  std::unique_ptr<inasim::p4::Dataplane> dp = LoadProgram(o);
  if (!dp) return Usage("unknown program \"" + o.program + "\"");
  if (o.input_path.empty()) {
    Replay(*dp, std::cin, "stdin", o.dump, o.now);
    return 0;
  }
  // A named input must be a regular file (a FIFO could block for ever; a
  // stream of its own goes to stdin instead). Lines are capped as they are read.
  try {
    inasim::util::CheckRegularFile(o.input_path, UINT64_MAX, "packet input file");
  } catch (const inasim::util::FileReadError& e) {
    throw BadInput(std::string("--input ") + e.what() + " (pipe a stream to stdin instead)");
  }
  std::ifstream file(o.input_path, std::ios::binary);
  if (!file) throw BadInput(o.input_path + ": cannot open");
  Replay(*dp, file, o.input_path, o.dump, o.now);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && IsHelp(args[0])) {
    std::printf("%sprograms: %s\n", kUsage, inasim::p4tools::ProgramNames().c_str());
    return 0;
  }
  // `inasim-p4 COMMAND ... --help`: that command's usage (the commands have no
  // argument that could itself be spelt --help).
  if (args.size() >= 2 && std::any_of(args.begin() + 1, args.end(), IsHelp)) {
    if (args[0] == "check" || args[0] == "manifest") return inasim::p4tools::CommandHelp(args[0]);
    std::printf("%sprograms: %s\n", kUsage, inasim::p4tools::ProgramNames().c_str());
    return 0;
  }
  if (!args.empty() && args[0] == "check") return inasim::p4tools::CheckCommand(args);
  if (!args.empty() && args[0] == "manifest") return inasim::p4tools::ManifestCommand(args);
  if (args.empty() || args[0] != "replay") return Usage("expected: replay PROGRAM, check PROGRAM or manifest PROGRAM");
  try {
    return ReplayCommand(args);
  } catch (const BadInput& e) {
    std::fprintf(stderr, "inasim-p4: %s\n", e.what());
    return 2;
  } catch (const inasim::util::FileReadError& e) {  // a line past the cap
    std::fprintf(stderr, "inasim-p4: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "inasim-p4: internal error: %s\n", e.what());
    return 3;
  }
}
