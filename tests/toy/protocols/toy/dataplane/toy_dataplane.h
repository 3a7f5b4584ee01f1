// ToyDataplane: the smallest in-network aggregation switch there is, written
// to prove that a protocol registers by adding files only (tests/toy/README.md)
// and to show a newcomer every part a protocol has. It models no real program:
// no upstream to cite, no loss recovery.
//
// Wire format: Ethernet / IPv4 / UDP to `udp_port`, then an 8-byte header and
// k big-endian int32 elements:
//   offset 0  u32 seq           packet index in the worker's stream
//   offset 4  u8  kind          0 = a worker's contribution, 1 = the result
//   offset 5  u8  reserved      0
//   offset 6  u16 contributors  result: how many workers were summed
// A slot (seq mod slots) sums the contributions of the configured worker
// ports, once each; when every worker has sent, the switch multicasts the
// result to all worker ports (IPv4 destination 255.255.255.255, so every host
// stack accepts it) and frees the slot. Anything else is dropped and counted.
#pragma once

#include "p4model/common/counters.h"
#include "p4model/common/dataplane.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace inasim::p4::toy {

inline constexpr size_t kToyHeaderBytes = 8;
inline constexpr uint8_t kKindContribution = 0;
inline constexpr uint8_t kKindResult = 1;

struct ToyConfig {
  uint32_t switch_ip = 0;                 ///< source of the results
  std::array<uint8_t, 6> switch_mac{};
  std::vector<uint16_t> worker_ports;     ///< one per worker, at most 64
  uint16_t udp_port = 47000;
  uint32_t elements_per_packet = 64;      ///< k
  uint32_t slots = 16;                    ///< aggregation slots (the workers' window)
  uint64_t pass_latency_ps = 500'000;
  /// Throws std::invalid_argument naming the key and the problem.
  void Validate() const;
};

class ToyDataplane : public Dataplane {
 public:
  struct Stats {
    uint64_t contributions = 0;   ///< summed into a slot
    uint64_t results = 0;         ///< multicast to the workers
    uint64_t malformed = 0;       ///< too short, or a kind the switch does not take
    uint64_t not_a_worker = 0;    ///< from a port that is no worker's
    uint64_t duplicates = 0;      ///< the same worker's seq twice
    uint64_t slot_conflicts = 0;  ///< another seq holds the slot
    static constexpr StatCounter<Stats> kCounters[] = {
        {"contributions", &Stats::contributions},
        {"results", &Stats::results},
        {"malformed", &Stats::malformed},
        {"not_a_worker", &Stats::not_a_worker},
        {"duplicates", &Stats::duplicates},
        {"slot_conflicts", &Stats::slot_conflicts}};
  };

  explicit ToyDataplane(ToyConfig config);
  std::string Name() const override { return "toy"; }
  bool Claims(const FrameView& frame) const override;
  void Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds now, Emitter& out) override;
  std::string DumpState() const override;
  const Stats& stats() const { return stats_; }

 private:
  struct Slot {
    bool valid = false;
    uint32_t seq = 0;
    uint64_t seen = 0;  ///< bitmap over worker indices
    uint32_t count = 0;
  };
  /// Adds one contribution (the header at `h`) from worker `w`; true when the slot is complete.
  bool Aggregate(uint32_t w, const uint8_t* h);
  void EmitResult(uint32_t slot, Emitter& out);

  ToyConfig config_;
  std::vector<int16_t> worker_of_port_;  ///< port -> worker index, -1 if none
  std::vector<Slot> slots_;
  std::vector<uint32_t> sums_;           ///< slots x k accumulators
  std::vector<uint8_t> out_;             ///< the result frame being built
  Stats stats_;
};

}  // namespace inasim::p4::toy
