// P4SGDDataplane: the P4SGD switch behind the inasim::p4::Dataplane seam, in
// one of two modes: the paper's protocol (p4sgd §3.3) or the public P4
// (RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4). See protocols/p4sgd/dataplane/README.md.
#pragma once

#include "p4model/common/counters.h"
#include "p4model/common/dataplane.h"
#include "protocols/p4sgd/dataplane/config.h"
#include "protocols/p4sgd/dataplane/controls.h"
#include "protocols/p4sgd/dataplane/types.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace inasim::p4::p4sgd {

class P4SGDDataplane : public Dataplane {
 public:
  /// Named outcomes, counted.
  struct Stats {
    uint64_t processed = 0;          ///< Process() calls
    uint64_t malformed_dropped = 0;  ///< shorter than the 64-byte load header (Tofino parser error)
    uint64_t not_p4sgd = 0;          ///< Process() on a frame Claims() refuses: routed untouched
    uint64_t no_worker_dropped = 0;  ///< encap udp: a unicast reply to a port without a worker
    // public-p4
    uint64_t unmapped_port_dropped = 0;  ///< ingress port has no device port in dev_ports
    uint64_t no_bitmap_dropped = 0;      ///< p4fpga.p4:492 bitmap == 0: no egress set
    uint64_t seq_dropped = 0;            ///< p4fpga.p4:492 seq_check false: no egress set
    uint64_t fulfilled = 0;              ///< p4fpga.p4:513/548 multicast(1)
    uint64_t echoed = 0;                 ///< p4fpga.p4:517/552 send(ingress_port)
    uint64_t partial_to_cpu = 0;         ///< p4fpga.p4:522/557 send(192)
    uint64_t unmapped_egress_dropped = 0;  ///< a device egress port with no simulator port
    // paper
    uint64_t bad_bitmap_dropped = 0;  ///< not one configured worker bit
    uint64_t aggregated = 0;          ///< first contribution absorbed
    uint64_t completed = 0;           ///< last contribution: result multicast
    uint64_t agg_resent = 0;          ///< duplicate after completion: result unicast back
    uint64_t agg_duplicate_dropped = 0;  ///< duplicate before completion
    uint64_t acked = 0;               ///< first ack absorbed
    uint64_t released = 0;            ///< last ack: slot cleared, ack-complete multicast
    uint64_t ack_resent = 0;          ///< duplicate ack after release: ack-complete unicast back
    uint64_t ack_duplicate_dropped = 0;  ///< duplicate ack before release
    // both
    uint64_t multicast_copies = 0;  ///< ports summed over EmitMulticast calls
    /// In the dump: the counters of the mode run (kPublicP4, kPaper: program
    /// bits, counters.h), both modes' included.
    static constexpr uint8_t kPublicP4 = Shown::kDump | Shown::kProgram;
    static constexpr uint8_t kPaper = Shown::kDump | Shown::kProgram << 1;
    static constexpr uint8_t kBoth = kPublicP4 | kPaper;
    static constexpr StatCounter<Stats> kCounters[] = {
        {"processed", &Stats::processed, kBoth},
        {"malformed_dropped", &Stats::malformed_dropped, kBoth},
        {"not_p4sgd", &Stats::not_p4sgd, kBoth},
        {"no_worker_dropped", &Stats::no_worker_dropped, kBoth},
        {"unmapped_port_dropped", &Stats::unmapped_port_dropped, kPublicP4},
        {"no_bitmap_dropped", &Stats::no_bitmap_dropped, kPublicP4},
        {"seq_dropped", &Stats::seq_dropped, kPublicP4},
        {"fulfilled", &Stats::fulfilled, kPublicP4},
        {"echoed", &Stats::echoed, kPublicP4},
        {"partial_to_cpu", &Stats::partial_to_cpu, kPublicP4},
        {"unmapped_egress_dropped", &Stats::unmapped_egress_dropped, kPublicP4},
        {"bad_bitmap_dropped", &Stats::bad_bitmap_dropped, kPaper},
        {"aggregated", &Stats::aggregated, kPaper},
        {"completed", &Stats::completed, kPaper},
        {"agg_resent", &Stats::agg_resent, kPaper},
        {"agg_duplicate_dropped", &Stats::agg_duplicate_dropped, kPaper},
        {"acked", &Stats::acked, kPaper},
        {"released", &Stats::released, kPaper},
        {"ack_resent", &Stats::ack_resent, kPaper},
        {"ack_duplicate_dropped", &Stats::ack_duplicate_dropped, kPaper},
        {"multicast_copies", &Stats::multicast_copies, kBoth}};
  };

  explicit P4SGDDataplane(P4SGDConfig config);

  std::string Name() const override { return "p4sgd"; }
  /// encap raw: every frame, as the P4 parser reads every frame as a load
  /// header; with claim_all_traffic false, only frames whose bytes 12..13 are
  /// not an Ethernet II EtherType (< 0x0600; the FPGA sends zero there) and
  /// frames shorter than 14 bytes. encap udp: IPv4/UDP to config().udp_port.
  bool Claims(const FrameView& frame) const override;
  void Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds now,
               Emitter& out) override;
  std::string DumpState() const override;
  uint32_t LastPasses() const override { return last_passes_; }

  const P4SGDConfig& config() const { return config_; }
  const Stats& stats() const { return stats_; }
  Mode mode() const { return config_.mode; }
  /// Pipeline time of one pass (every output of this program takes one pass).
  Picoseconds PassLatency() const { return config_.pass_latency_ps; }

  // --- register reads for tests (no side effects) ------------------------------
  // public-p4: slot s (0/1) at index i, in pipe `pipe`'s registers.
  uint32_t Counter(uint32_t s, uint32_t index, uint32_t pipe = 0) const;
  uint32_t NodeMap(uint32_t s, uint32_t index, uint32_t pipe = 0) const;
  std::vector<int32_t> Values(uint32_t s, uint32_t index, uint32_t pipe = 0) const;
  /// seq_reg of the device port's pipe, at the port.
  uint32_t Seq(uint16_t dev_port) const { return pipes_[PipeOfDevPort(dev_port)].seq_reg.Peek(dev_port); }
  /// seq_reg of `pipe` at `cell` (the port's low 8 bits).
  uint32_t SeqCell(uint32_t pipe, uint32_t cell) const { return pipes_.at(pipe).seq_reg.Peek(cell); }
  // paper: slot i.
  uint32_t AggCount(uint32_t index) const { return paper_.agg_cnt.Peek(index); }
  uint32_t AckCount(uint32_t index) const { return paper_.ack_cnt.Peek(index); }
  uint32_t AggBitmap(uint32_t index) const { return paper_.agg_bm.Peek(index); }
  uint32_t AckBitmap(uint32_t index) const { return paper_.ack_bm.Peek(index); }
  std::vector<int32_t> Aggregate(uint32_t index) const;

 private:
  void ProcessPublic(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Emitter& out);
  void ProcessPaper(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Emitter& out);
  /// The frame with the (possibly rewritten) header deparsed over its first 64
  /// bytes; bytes after them pass through (p4fpga.p4:642 emits the headers,
  /// then the unparsed payload follows).
  void Deparse(const payload_t& hdr, inasim::Span<const uint8_t> frame);
  void Multicast(Emitter& out);
  /// out_ to one port: as is (raw), or wrapped for the port's worker (udp).
  void EmitTo(Emitter& out, uint16_t port);
  /// encap udp: Ethernet/IPv4/UDP from the switch to `w` in front of out_, in wire_.
  void Wrap(const P4SGDWorker& w);

  void DumpPublicState(nlohmann::json& j) const;

  P4SGDConfig config_;
  /// public-p4: control Ingress once per Tofino pipe (p4fpga.p4:714-723, kPipes);
  /// a packet runs in its ingress device port's pipe.
  std::vector<Ingress> pipes_;
  PaperSwitch paper_;
  std::vector<int16_t> sim_port_of_dev_;  ///< device port -> simulator port, -1 none
  Stats stats_;
  uint32_t last_passes_ = 1;
  std::vector<uint8_t> out_;  ///< per-packet scratch, reused
  std::vector<uint8_t> wire_;  ///< encap udp: headers + out_, reused
  std::vector<int16_t> worker_of_port_;  ///< simulator port -> index in config_.workers, -1 none
  uint8_t tos_ = 0;  ///< encap udp: the request's IPv4 TOS, kept on the replies
};

/// Parses the 64-byte load header at the start of `frame` (>= 64 bytes).
payload_t ParsePayload(const uint8_t* b);

}  // namespace inasim::p4::p4sgd
