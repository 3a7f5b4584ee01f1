// One class per hardware block of the PANAMA accelerator (panama §5, Fig. 6a;
// the blocks of Table 2: Header Parser, Buffering Control, Aggregation
// Datapath Control Logic, Aggregation Datapath Adder) plus the latency model of
// Appendix A. The adders are in fp32.h.
#pragma once

#include "p4model/common/span.h"
#include "protocols/panama/dataplane/config.h"
#include "protocols/panama/dataplane/types.h"

#include <cstdint>
#include <vector>

namespace inasim::p4::panama {

using Picoseconds = uint64_t;

/// The fields the control logic reads, parsed once per packet.
struct PanamaPacket {
  enum class Kind : uint8_t {
    kNonAggregation,  ///< not IPv4 + DSCP 56 + UDP: straight to the switching chip
    kAggregation,     ///< to the aggregation buffers
    kMalformed,       ///< IPv4 + DSCP 56 but truncated or inconsistent: dropped, counted
  };
  Kind kind = Kind::kNonAggregation;
  uint8_t ecn = 0;               ///< IPv4 ECN (2 bits)
  size_t ip_offset = 14;
  size_t header_offset = 0;      ///< first byte of the PANAMA header (UDP payload)
  size_t gradient_offset = 0;    ///< first fp32 value
  uint32_t num_values = 0;       ///< (UDP length - 8 - 14) / 4
  uint16_t jid = 0;
  uint8_t tid = 0;
  uint8_t flags = 0;
  uint32_t vid = 0;
  uint16_t wnd_cap = 0;
  bool fin() const { return (flags & kFinFlag) != 0; }
};

// ============================================================================
// (1) Packet header parser: panama §5 (1); Table 2 "Header Parser" (one per port)
// ============================================================================
class HeaderParser {
 public:
  /// panama §5 (1): "inspects the EtherType and DSCP fields ... IPv4 packets
  /// with a DSCP field value equal to 56 are recognized as aggregation
  /// packets"; the experiments send them over UDP
  /// (Panama-MLSys-Hardware-Experiments@34c44f1:linerate_iperf_experiments/README.md:11).
  /// Never reads past frame.size().
  static PanamaPacket Parse(inasim::Span<const uint8_t> frame);
};

// ============================================================================
// Buffering control: Table 2 "Buffering Control" (one per port); panama §4.2.2
// ============================================================================
/// Counts buffered aggregation packets per (job, input port). Each input port
/// has its own buffer (panama §5 (1) "dedicated aggregation buffers", Fig. 6a)
/// of packet_memory packets, shared evenly by the active jobs (panama §4.2.2
/// "packet_memory/num_jobs"): a packet that would take a job past its share on
/// its port is an overflow, dropped and counted.
class BufferingControl {
 public:
  BufferingControl(uint64_t packet_memory, uint32_t num_jobs, uint32_t num_ports);
  /// panama §4.2.2 packet_memory / num_jobs (num_jobs >= 1).
  uint64_t Share() const { return packet_memory_ / (active_jobs_ == 0 ? 1 : active_jobs_); }
  /// Takes one slot of job's share on port; false on overflow.
  bool Admit(uint32_t job, uint32_t port);
  void Release(uint32_t job, uint32_t port);
  uint64_t Buffered(uint32_t job, uint32_t port) const { return count_[job * num_ports_ + port]; }
  uint64_t Total() const { return total_; }
  uint64_t Peak() const { return peak_; }
  uint64_t packet_memory() const { return packet_memory_; }
  uint32_t active_jobs() const { return active_jobs_; }
  void JobStarted() { ++active_jobs_; }
  void JobEnded() { --active_jobs_; }
  /// A job installed after construction: its buffers, empty, after the others'.
  void AddJob() { count_.resize(count_.size() + num_ports_, 0); }

 private:
  uint64_t packet_memory_;
  uint32_t num_ports_;
  uint32_t active_jobs_ = 0;
  std::vector<uint64_t> count_;  ///< job x port
  uint64_t total_ = 0;
  uint64_t peak_ = 0;
};

// ============================================================================
// (2) Control logic: panama §5 (2); Table 2 "Aggregation Datapath Control Logic"
// ============================================================================
class ControlLogic {
 public:
  /// What the comparison of the header registers against Expected_VID decided.
  enum class Verdict : uint8_t {
    kWait,       ///< some member port has no packet yet (panama §5 (2) "wait until at least one packet is available at each")
    kAggregate,  ///< every VID == Expected_VID: stream through the adder trees
    kDropStale,  ///< some VID is older than Expected_VID: drop those heads
    kSkip,       ///< some VID is ahead: the expected vector was lost on that port
  };

  ControlLogic(const std::vector<PanamaJob>& jobs);
  /// A job installed after construction: its registers after the others' (Expected_VID 0).
  void AddJob(const PanamaJob& job);

  // --- registers ----------------------------------------------------------------
  /// panama §5 (2) Ports_bitmap, one per job, set by the controller.
  uint64_t ports_bitmap(uint32_t job) const { return ports_bitmap_[job]; }
  /// panama §5 (2) Expected_VID, one per tree, "initialized to 0".
  uint32_t expected_vid(uint32_t job, uint32_t tree) const { return expected_vid_[job][tree]; }

  // --- register actions -------------------------------------------------------------
  /// panama §5 (2) "the Expected_VID register is incremented" after an
  /// aggregation (fp_datapath.v:388 current_vector_index + 1; 32 bits, wraps).
  void advance(uint32_t job, uint32_t tree) { ++expected_vid_[job][tree]; }
  /// Moves Expected_VID to `vid` (a skip past lost vectors).
  void skip_to(uint32_t job, uint32_t tree, uint32_t vid) { expected_vid_[job][tree] = vid; }
  /// panama §5 (2) "setting the FIN bit ... resets the state".
  void reset(uint32_t job, uint32_t tree) { expected_vid_[job][tree] = 0; }

  /// Serial-number order of 32-bit VIDs (they wrap): a is older than b.
  static bool Older(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) < 0; }

  /// Compares the head VIDs of the member ports (present[i] false: no packet)
  /// with Expected_VID, as the header registers are compared in panama §5 (2)
  /// (fp_datapath.v:383-393 INSPECT_MODIFY_HEADER: input_vector_index ==
  /// current_vector_index).
  static Verdict Inspect(uint32_t expected, inasim::Span<const uint32_t> vids, inasim::Span<const bool> present);
  /// PANAMA-<quorum> (panama §7, not in the FPGA): as Inspect, but kAggregate
  /// as soon as the ports whose head is Expected_VID weigh at least `need`
  /// (the others wait, or are skipped; their late packets are stale).
  static Verdict InspectQuorum(uint32_t expected, inasim::Span<const uint32_t> vids, inasim::Span<const bool> present,
                               inasim::Span<const uint32_t> weights, uint64_t need);

 private:
  std::vector<uint64_t> ports_bitmap_;
  std::vector<std::vector<uint32_t>> expected_vid_;
};

// ============================================================================
// Cut-through latency: panama Appendix A eq. (3) and §6 Table 1
// ============================================================================
class LatencyModel {
 public:
  LatencyModel(const PanamaLatency& p, uint32_t tree_depth) : p_(p), depth_(tree_depth) {}
  /// A frame that does not enter the aggregation datapath.
  Picoseconds NonAggregation(uint32_t frame_bytes) const;
  /// An aggregation result of frame_bytes, from the arrival of its last input.
  Picoseconds Aggregation(uint32_t frame_bytes) const;
  /// eq. (3)'s first term: (S/W - 1)/f, S in bits, 0 below one bus word.
  Picoseconds Streaming(uint32_t frame_bytes) const;

 private:
  Picoseconds Table1(uint32_t frame_bytes, bool aggregation) const;
  PanamaLatency p_;
  uint32_t depth_;
};

/// panama §6 Table 1 "Prototype cut-through latency", in picoseconds.
struct Table1Row {
  uint32_t bytes;
  Picoseconds non_aggregation;
  Picoseconds aggregation;
};
inline constexpr Table1Row kTable1[] = {
    {512, 340'000, 370'000},
    {1024, 665'000, 695'000},
    {1500, 957'500, 987'500},
};

}  // namespace inasim::p4::panama
