// Dataplane speed alone: SwitchML model packets per second on one core, 256 B
// and 1024 B modes (issue target: >= 5 M packets/s, so the switch is never the
// simulator's bottleneck). Workers send every slot of a pool in turn, as the
// client library does; each completion emits one copy per worker.
//
//   build/bench/p4model_bench [--workers N] [--packets N] [--size 256|1024] [--input hot|cold]
// Prints one JSON line per mode (both unless --size picks one; one mode alone
// is handy under perf).
//
// --input hot (default): each worker's frame lives in one buffer whose slot,
// set and tsi bytes are patched before each packet, so the model reads a
// cache-hot frame, as in the simulator, where the switch hands it a frame it
// has just copied into its scratch buffer. --input cold: every (slot, set,
// worker) frame is pre-built (8 MiB at 1024 B x 8 workers x 512 slots x 2
// sets), so each packet's bytes come from L3 or memory: the worst case.
#include "protocols/switchml/dataplane/config.h"
#include "protocols/switchml/dataplane/switchml_dataplane.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

using namespace inasim::p4;
using namespace inasim::p4::switchml;

class CountingEmitter : public Emitter {
 public:
  uint64_t copies = 0, bytes = 0;
  void Emit(inasim::Span<const uint8_t> f, uint16_t, Picoseconds) override { ++copies, bytes += f.size(); }
  void EmitMulticast(inasim::Span<const uint8_t> f, inasim::Span<const uint16_t> p, Picoseconds) override {
    copies += p.size(), bytes += f.size() * p.size();
  }
  void EmitRouted(inasim::Span<const uint8_t> f, Picoseconds) override { ++copies, bytes += f.size(); }
};

void Put16(uint8_t* p, uint16_t v) { StoreBe16(p, v); }

/// Worker w's packet for (slot, set) in `size` mode, as the client library lays it out.
std::vector<uint8_t> Packet(const SwitchMLConfig& c, int w, uint32_t slot, int set, uint32_t size) {
  const uint32_t data = size;
  std::vector<uint8_t> b(14 + 20 + 8 + 10 + data, 0);
  std::memcpy(b.data(), c.switch_mac.data(), 6);
  std::memcpy(b.data() + 6, c.workers[w].mac.data(), 6);
  Put16(b.data() + 12, 0x0800);
  uint8_t* ip = b.data() + 14;
  ip[0] = 0x45;
  Put16(ip + 2, static_cast<uint16_t>(20 + 8 + 10 + data));
  ip[8] = 64;
  ip[9] = 17;
  StoreBe32(ip + 12, c.workers[w].ip);
  StoreBe32(ip + 16, c.switch_ip);
  uint8_t* udp = ip + 20;
  Put16(udp, static_cast<uint16_t>(20000 + w));
  Put16(udp + 2, static_cast<uint16_t>(0xbee0 + w % 16));
  Put16(udp + 4, static_cast<uint16_t>(8 + 10 + data));
  uint8_t* sml = udp + 8;
  sml[0] = size == 1024 ? 3 : 1;  // msg_type 0, size code
  sml[1] = 1;                      // job
  StoreBe32(sml + 2, slot);
  Put16(sml + 6, static_cast<uint16_t>((set ? 0x8000 : 0) | (slot & 0x3fff)));
  for (uint32_t i = 0; i < data / 4; ++i) StoreBe32(sml + 10 + 4 * i, static_cast<uint32_t>(w + i));
  return b;
}

nlohmann::json Run(uint32_t size, int workers, uint64_t packets, bool hot) {
  SwitchMLConfig c;
  c.switch_mac = {2, 0, 0, 0, 0, 0xfe};
  c.switch_ip = 0x0a0000fe;
  c.elements_per_packet = size / 4;
  c.num_workers = static_cast<uint8_t>(workers);
  c.pool_size = 512;
  for (int w = 0; w < workers; ++w)
    c.workers.push_back({static_cast<uint16_t>(w), static_cast<uint16_t>(10 + w),
                         {2, 0, 0, 0, 1, static_cast<uint8_t>(w)}, 0x0a000001u + static_cast<uint32_t>(w), 0, {}});
  c.folded_pipe = size == 1024;
  SwitchMLDataplane dp(c);
  // Pre-built packets: (slot, set, worker) over the pool, both sets (cold),
  // or one frame per worker patched per packet (hot).
  std::vector<std::vector<uint8_t>> hot_frames;
  for (int w = 0; w < workers; ++w) hot_frames.push_back(Packet(c, w, 0, 0, size));
  std::vector<std::vector<uint8_t>> pkts;
  for (int set = 0; set < 2; ++set)
    for (uint32_t slot = 0; slot < c.pool_size; ++slot)
      for (int w = 0; w < workers; ++w) pkts.push_back(Packet(c, w, slot, set, size));
  CountingEmitter out;
  uint64_t passes = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < packets; ++i) {
    const uint64_t n = i % pkts.size();
    std::vector<uint8_t>* frame = &pkts[n];
    if (hot) {
      // The same (slot, set) sequence as the cold frames: n = (set * pool + slot) * workers + w.
      const int w = static_cast<int>(n % workers);
      const uint32_t slot = static_cast<uint32_t>((n / workers) % c.pool_size);
      const int set = static_cast<int>(n / (uint64_t{c.pool_size} * workers));
      frame = &hot_frames[w];
      uint8_t* sml = frame->data() + 14 + 20 + 8;
      StoreBe32(sml + 2, slot);
      Put16(sml + 6, static_cast<uint16_t>((set ? 0x8000 : 0) | (slot & 0x3fff)));
    }
    const auto& p = *frame;
    dp.Process(static_cast<uint16_t>(10 + (i % workers)), inasim::Span<const uint8_t>(p.data(), p.size()), 0, out);
    passes += dp.LastPasses();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {{"mode_bytes", size},   {"input", hot ? "hot" : "cold"},   {"workers", workers},        {"packets", packets},
          {"seconds", s},         {"packets_per_s", packets / s}, {"passes_per_packet", double(passes) / packets},
          {"copies_out", out.copies}, {"broadcasts", dp.stats().broadcasts}};
}

}  // namespace

int main(int argc, char** argv) {
  int workers = 8;
  uint64_t packets = 2'000'000;
  uint32_t only_size = 0;
  bool hot = true;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--workers")) workers = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--packets")) packets = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--size")) only_size = static_cast<uint32_t>(std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--input") && !std::strcmp(argv[i + 1], "hot")) hot = true;
    else if (!std::strcmp(argv[i], "--input") && !std::strcmp(argv[i + 1], "cold")) hot = false;
    else {
      std::fprintf(stderr, "usage: p4model_bench [--workers N] [--packets N] [--size 256|1024] [--input hot|cold]\n");
      return 2;
    }
  }
  if (workers < 1 || workers > 16 || packets == 0) {
    std::fprintf(stderr, "p4model_bench: --workers must be 1..16 (1024 B mode), --packets > 0\n");
    return 2;
  }
  if (only_size != 0 && only_size != 256 && only_size != 1024) {
    std::fprintf(stderr, "p4model_bench: --size must be 256 or 1024\n");
    return 2;
  }
  for (uint32_t size : {256u, 1024u})
    if (only_size == 0 || only_size == size) std::cout << Run(size, workers, packets, hot).dump() << std::endl;
  return 0;
}
