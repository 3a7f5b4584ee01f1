// PanamaDataplane: the PANAMA bump-in-the-wire aggregation accelerator
// (panama §5, Fig. 6a; prototype nadeengebara/my_netfpga@92c98fe
// lib/my_hw/std/cores/fp_datapath_v1_0_0/hdl/fp_datapath.v) behind the
// inasim::p4::Dataplane seam. See protocols/panama/dataplane/README.md.
#pragma once

#include "p4model/common/counters.h"
#include "p4model/common/dataplane.h"
#include "protocols/panama/dataplane/config.h"
#include "protocols/panama/dataplane/controls.h"
#include "protocols/panama/dataplane/fp32.h"
#include "protocols/panama/dataplane/types.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace inasim::p4::panama {

class PanamaDataplane : public Dataplane {
 public:
  /// Named outcomes, counted.
  struct Stats {
    uint64_t processed = 0;               ///< Process() calls
    uint64_t non_aggregation = 0;         ///< passed to the switch untouched (panama §5 (1))
    uint64_t malformed_dropped = 0;       ///< IPv4 DSCP 56 but truncated / inconsistent lengths
    uint64_t unknown_job_dropped = 0;     ///< JID the controller never installed
    uint64_t unknown_tree_dropped = 0;    ///< TID >= the job's trees
    uint64_t bad_port_dropped = 0;        ///< ingress port >= num_ports
    uint64_t buffered = 0;                ///< admitted to an aggregation buffer
    uint64_t aggregations = 0;            ///< vectors summed (Expected_VID matched on every member port)
    uint64_t result_packets = 0;          ///< result copies emitted
    uint64_t forwarded = 0;               ///< from a port outside the job's bitmap (fp_datapath.v:449 FORWARD_OUT_RESULT)
    uint64_t buffer_overflow_dropped = 0; ///< over the job's share of its port buffer (panama §4.2.2)
    uint64_t vid_mismatch_dropped = 0;    ///< packets dropped by the VID check (panama §5 (2))
    uint64_t vids_skipped = 0;            ///< Expected_VID values passed over without aggregating
    uint64_t length_mismatch_dropped = 0; ///< packets of a matched vector whose value counts differ
    uint64_t fin_resets = 0;              ///< trees reset by FIN (panama §5 (2))
    uint64_t partial_aggregations = 0;    ///< PANAMA-<quorum>: vectors summed without every member port
    uint64_t fin_flushed = 0;             ///< packets still buffered in a tree at its FIN reset
    uint64_t controller_flushed = 0;      ///< packets dropped by ResetJob()
    /// All but partial_aggregations in the dump (its format predates
    /// PANAMA-<quorum>); the report shows the aggregation work and the drops
    /// per accelerator (CSV) and sums them with the partial aggregations and
    /// malformed drops.
    static constexpr StatCounter<Stats> kCounters[] = {
        {"processed", &Stats::processed},
        {"non_aggregation", &Stats::non_aggregation},
        {"malformed_dropped", &Stats::malformed_dropped, Shown::kDump | Shown::kSums},
        {"unknown_job_dropped", &Stats::unknown_job_dropped},
        {"unknown_tree_dropped", &Stats::unknown_tree_dropped},
        {"bad_port_dropped", &Stats::bad_port_dropped},
        {"buffered", &Stats::buffered, Shown::kEverywhere},
        {"aggregations", &Stats::aggregations, Shown::kEverywhere},
        {"result_packets", &Stats::result_packets, Shown::kEverywhere},
        {"forwarded", &Stats::forwarded, Shown::kEverywhere},
        {"buffer_overflow_dropped", &Stats::buffer_overflow_dropped, Shown::kEverywhere},
        {"vid_mismatch_dropped", &Stats::vid_mismatch_dropped, Shown::kEverywhere},
        {"vids_skipped", &Stats::vids_skipped, Shown::kEverywhere},
        {"length_mismatch_dropped", &Stats::length_mismatch_dropped, Shown::kEverywhere},
        {"fin_resets", &Stats::fin_resets, Shown::kEverywhere},
        {"partial_aggregations", &Stats::partial_aggregations, Shown::kSums},
        {"fin_flushed", &Stats::fin_flushed},
        {"controller_flushed", &Stats::controller_flushed}};
  };

  explicit PanamaDataplane(PanamaConfig config);

  std::string Name() const override { return "panama"; }
  /// claim_all_traffic: every frame (the accelerator is a bump in the wire);
  /// otherwise IPv4 + DSCP 56 + UDP frames only.
  bool Claims(const FrameView& frame) const override;
  void Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds now, Emitter& out) override;
  std::string DumpState() const override;

  /// Controller action: clears every tree of a job (Expected_VID 0, buffers
  /// flushed), as the controller initialising a job would. False: unknown JID.
  bool ResetJob(uint16_t jid);
  /// Controller action: installs one more job (panama §3 (2) "initializes our
  /// in-network aggregation accelerators on path with the state of the job"),
  /// as if the configuration had listed it last. Throws std::invalid_argument
  /// as the constructor would (a JID installed already, ports >= num_ports).
  void AddJob(const PanamaJob& job);

  const PanamaConfig& config() const { return config_; }
  const Stats& stats() const { return stats_; }
  /// Observer (not hardware): a PANAMA-<quorum> job summed vector `vid` of
  /// tree `tid` from these member ports only; the others added +0. A
  /// simulation uses it to know which workers a result holds.
  std::function<void(uint16_t jid, uint8_t tid, uint32_t vid, inasim::Span<const uint16_t> ports)>
      on_partial_aggregate;
  const LatencyModel& latency() const { return latency_; }
  const AdderTree& adder_tree() const { return tree_; }
  // --- register reads for tests ----------------------------------------------------
  /// -1 when the JID is not installed.
  int64_t ExpectedVid(uint16_t jid, uint8_t tid) const;
  uint64_t Buffered(uint16_t jid, uint16_t port) const;
  bool JobActive(uint16_t jid) const;
  uint32_t ActiveJobs() const { return buffers_.active_jobs(); }
  /// Observer: most aggregation packets buffered at once, every job and port.
  uint64_t PeakBuffered() const { return buffers_.Peak(); }
  /// wnd_cap this accelerator offers now: min(65535, packet_memory / active_jobs).
  uint16_t OwnWndCap() const;

 private:
  struct Entry {
    std::vector<uint8_t> bytes;
    PanamaPacket hdr;
  };
  struct TreeState {
    bool open = false;                     ///< received a packet since its last reset
    std::vector<std::deque<Entry>> q;  ///< per input port
  };
  struct JobState {
    bool active = false;
    std::vector<uint16_t> members;  ///< ports of the bitmap, ascending
    std::vector<TreeState> trees;
    // PANAMA-<quorum> (config quorum < 1): workers per member, the weight needed.
    bool partial = false;
    std::vector<uint32_t> weights;
    uint64_t need = 0;
    std::vector<uint8_t> contributes;  ///< per member: its head is in the vector being summed
    std::vector<uint16_t> contributors;  ///< scratch for on_partial_aggregate
  };

  JobState NewJobState(const PanamaJob& job) const;
  int FindJob(uint16_t jid) const;
  /// Runs the control logic on one tree until it must wait for a packet.
  void Drain(uint32_t job, uint32_t tree, Emitter& out);
  void Aggregate(uint32_t job, uint32_t tree, Emitter& out);
  void PopHead(uint32_t job, uint32_t tree, uint16_t port);
  /// The result frame built over `src` (a member's input frame).
  void Deparse(const Entry& src, uint8_t ecn, uint16_t wnd_cap, bool fin);
  void ResetTree(uint32_t job, uint32_t tree, uint64_t* flushed_counter);
  void MaybeEndJob(uint32_t job);

  PanamaConfig config_;
  AdderTree tree_;
  LatencyModel latency_;
  /// Results leave in order: the latency of one, made no earlier than the last one's departure.
  Picoseconds InOrder(Picoseconds latency);
  Picoseconds now_ = 0;              ///< of the Process() call being served
  Picoseconds results_free_at_ = 0;  ///< when the last result left the adder trees
  /// Pass-through (non-aggregation and forwarded frames) keeps each ingress port's order.
  Picoseconds PortInOrder(uint16_t ingress_port, Picoseconds latency);
  std::vector<Picoseconds> passthrough_free_at_;  ///< per ingress port
  BufferingControl buffers_;
  ControlLogic control_;
  std::vector<JobState> jobs_;
  Stats stats_;
  std::vector<uint8_t> out_;       ///< result scratch, reused
  std::vector<uint32_t> sums_;     ///< per value
  std::vector<uint32_t> leaves_;   ///< per port
};

}  // namespace inasim::p4::panama
