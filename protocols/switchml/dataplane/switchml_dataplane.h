// SwitchMLDataplane: the SwitchML Tofino program's UDP and RoCEv2 paths behind the
// inasim::p4::Dataplane seam. See protocols/switchml/dataplane/README.md.
#pragma once

#include "p4model/common/counters.h"
#include "p4model/common/dataplane.h"
#include "protocols/switchml/dataplane/config.h"
#include "protocols/switchml/dataplane/forwarder.h"
#include "protocols/switchml/dataplane/controls.h"
#include "protocols/switchml/dataplane/next_step_selector.h"
#include "protocols/switchml/dataplane/rdma.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace inasim::p4::switchml {

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_receiver.p4:24
class UDPReceiver {
 public:
  /// One controller entry of receive_udp (action set_bitmap).
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/udp_receiver.py:118
  struct Entry {
    mac_addr_t eth_src, eth_dst;
    uint32_t ip_src, ip_dst;
    Ternary udp_dst_port;
    // set_bitmap action data
    uint16_t mgid;
    WorkerType worker_type;
    uint16_t worker_id;
    uint8_t num_workers;
    uint32_t worker_bitmap;
  };
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_receiver.p4:32
  struct DirectCounter {
    uint64_t packets = 0, bytes = 0;
  };
  explicit UDPReceiver(const SwitchMLConfig& c);

  /// Table receive_udp; false when the default action forward() ran.
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_receiver.p4:94
  bool apply(header_t& hdr, ingress_metadata_t& ig_md, uint32_t frame_bytes);

  const std::vector<Entry>& entries() const { return entries_; }
  const std::vector<DirectCounter>& receive_counter() const { return receive_counter_; }
  const DirectCounter& default_counter() const { return default_counter_; }

 private:
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_receiver.p4:48
  static void set_bitmap(header_t& hdr, ingress_metadata_t& ig_md, const Entry& e);
  std::vector<Entry> entries_;
  std::vector<DirectCounter> receive_counter_;
  DirectCounter default_counter_;
};

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_sender.p4:23
class UDPSender {
 public:
  struct DstAddr {
    mac_addr_t eth_dst_addr;
    uint32_t ip_dst_addr;
  };
  explicit UDPSender(const SwitchMLConfig& c);
  /// Builds the egress header stack for `eg_md`; false if dst_addr missed.
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_sender.p4:111
  bool apply(const switchml_md_h& eg_md, header_t& hdr);
  /// send_counter of the worker ids that sent anything, by worker id.
  std::map<uint16_t, UDPReceiver::DirectCounter> send_counter() const;
  void CountSend(uint16_t worker_id, size_t bytes) {
    auto& c = send_counter_[worker_id];  // worker_id hit dst_addr, so it is in range
    ++c.packets;
    c.bytes += bytes;
  }

 private:
  mac_addr_t switch_mac_;
  uint32_t switch_ip_;
  // Exact match on worker_id, stored flat by worker id (ids are < 32).
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_sender.p4:100
  std::vector<DstAddr> dst_addr_;
  std::vector<uint8_t> dst_addr_valid_;
  // Direct counter of dst_addr, by worker id.
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_sender.p4:28
  std::vector<UDPReceiver::DirectCounter> send_counter_;
};

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/drop_simulator.p4:24
class IngressDropSimulator {
 public:
  explicit IngressDropSimulator(uint64_t seed) : rng_(seed) {}
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/drop_simulator.p4:36
  void apply(port_metadata_t& port_metadata);

 private:
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/drop_simulator.p4:28
  std::mt19937_64 rng_;
};

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/drop_simulator.p4:42
class EgressDropSimulator {
 public:
  explicit EgressDropSimulator(uint64_t seed) : rng_(seed) {}
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/drop_simulator.p4:58
  void apply(port_metadata_t& port_metadata, uint32_t qp_index, bool& simulate_egress_drop);
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/drop_simulator.p4:51: the
  // total, and by QP_INDEX (only the indices ever counted).
  uint64_t simulated_drop_packet_counter = 0;
  std::map<uint32_t, uint64_t> simulated_drop_packet_counter_by_qp;

 private:
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/drop_simulator.p4:49
  std::mt19937_64 rng_;
};

/// The bytes behind the parsed headers while a packet is in the switch. The
/// ingress deparser puts the still-valid data headers back in front of them
/// (Push) and the next pass's parser extracts them again (Pull); the egress
/// deparser puts the output headers in front. Kept as pushed bytes in a buffer
/// with headroom followed by the unparsed rest of the input frame, which is
/// not copied: Pull takes from the frame directly, so a 1024 B packet's
/// CONSUME1..3 passes and a consumed packet copy nothing, and only an output
/// copy is made contiguous (Flatten). Reused across packets (no allocation
/// once warmed up).
class PayloadBuffer {
 public:
  /// Replaces the contents with p[0..n), by reference: p must stay valid while
  /// the contents are used (the frame Process() was given).
  void Assign(const uint8_t* p, size_t n);
  /// n more bytes in front; returns where to write them.
  uint8_t* Push(size_t n) {
    if (begin_ < n) Grow(n);
    begin_ -= n;
    return buf_.data() + begin_;
  }
  /// Takes n bytes off the front; nullptr (nothing taken) if there are fewer.
  const uint8_t* Pull(size_t n) {
    if (begin_ == end_ && tail_size_ >= n) {
      tail_ += n;
      tail_size_ -= n;
      return tail_ - n;
    }
    if (end_ - begin_ < n) Flatten();
    if (end_ - begin_ < n) return nullptr;
    begin_ += n;
    return buf_.data() + begin_ - n;
  }
  /// The contents as one array of size() bytes (copies the frame's rest in).
  uint8_t* Flatten();
  size_t size() const { return end_ - begin_ + tail_size_; }

 private:
  void Grow(size_t n);
  std::vector<uint8_t> buf_;
  size_t begin_ = 0, end_ = 0;  ///< pushed bytes: buf_[begin_, end_)
  const uint8_t* tail_ = nullptr;  ///< then these, in the input frame
  size_t tail_size_ = 0;
};

class SwitchMLDataplane : public Dataplane {
 public:
  /// Model-level counters (not P4 counters) of what happened to packets.
  struct Stats {
    uint64_t processed = 0;           ///< Process() calls
    uint64_t malformed_dropped = 0;   ///< truncated claimed packets (parser would run out of bytes)
    uint64_t forwarded = 0;           ///< parsed as regular / receive_udp miss: EmitRouted
    uint64_t simulated_ingress_drops = 0;
    uint64_t simulated_egress_drops = 0;  ///< packets (not copies) dropped by the egress simulator
    uint64_t consumed = 0;            ///< finish_consume
    uint64_t dropped = 0;             ///< next_step drop (incl. default)
    uint64_t broadcasts = 0;
    uint64_t retransmits = 0;
    uint64_t copies_sent = 0;         ///< Emit() calls with a SwitchML result
    uint64_t sender_misses = 0;       ///< udp_sender.dst_addr / rdma_sender.create_roce_packet miss (copy dropped)
    uint64_t rdma_sequence_drops = 0; ///< RoCE middle/last packets dropped by rdma_receiver (PSN out of sequence)
    uint64_t recirculation_limit = 0; ///< more than kMaxPasses passes (cannot happen with the stock entries)
    // forwarding "l2" (forwarder.h): what the responder and forwarder did
    uint64_t arp_replies = 0;         ///< arp_icmp send_arp_reply
    uint64_t icmp_replies = 0;        ///< arp_icmp send_icmp_echo_reply
    uint64_t l2_unicast = 0;          ///< a unicast copy (send_back or set_egress_port)
    uint64_t l2_flooded = 0;          ///< flood(0x8000): one EmitMulticast
    static constexpr StatCounter<Stats> kCounters[] = {
        {"processed", &Stats::processed},
        {"malformed_dropped", &Stats::malformed_dropped},
        {"forwarded", &Stats::forwarded},
        {"simulated_ingress_drops", &Stats::simulated_ingress_drops},
        {"simulated_egress_drops", &Stats::simulated_egress_drops},
        {"consumed", &Stats::consumed},
        {"dropped", &Stats::dropped},
        {"broadcasts", &Stats::broadcasts},
        {"retransmits", &Stats::retransmits},
        {"copies_sent", &Stats::copies_sent},
        {"sender_misses", &Stats::sender_misses},
        {"rdma_sequence_drops", &Stats::rdma_sequence_drops},
        {"recirculation_limit", &Stats::recirculation_limit},
        {"arp_replies", &Stats::arp_replies},
        {"icmp_replies", &Stats::icmp_replies},
        {"l2_unicast", &Stats::l2_unicast},
        {"l2_flooded", &Stats::l2_flooded}};
  };
  static constexpr uint32_t kMaxPasses = 16;

  explicit SwitchMLDataplane(SwitchMLConfig config);

  std::string Name() const override { return "switchml"; }
  bool Claims(const FrameView& frame) const override;
  void Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds now,
               Emitter& out) override;
  std::string DumpState() const override;
  uint32_t LastPasses() const override { return last_passes_; }
  uint32_t last_passes() const { return last_passes_; }

  const SwitchMLConfig& config() const { return config_; }
  const Stats& stats() const { return stats_; }
  const NextStepSelector& next_step_selector() const { return next_step_selector_; }
  const UDPReceiver& udp_receiver() const { return udp_receiver_; }
  const UDPSender& udp_sender() const { return udp_sender_; }
  const RDMAReceiver& rdma_receiver() const { return rdma_receiver_; }
  const RDMASender& rdma_sender() const { return rdma_sender_; }
  const EgressDropSimulator& egress_drop_sim() const { return egress_drop_sim_; }

  // Register reads (no side effects). `pipe` in 0..3.
  worker_bitmap_pair_t WorkerBitmap(int pipe, uint32_t slot) const;
  num_workers_pair_t WorkersCount(int pipe, uint32_t pool_index) const;
  exponent_pair_t Exponent(int pipe, uint32_t pool_index) const;
  value_pair_t Value(int pipe, int processor, uint32_t pool_index) const;

 private:
  /// The per-pipe instances of the controls that hold registers.
  struct Pipe {
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:57
    UpdateAndCheckWorkerBitmap update_and_check_worker_bitmap;
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:55
    WorkersCounter workers_counter;
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:61
    Exponents exponents;
    // value00 .. value31: their `values` registers, one ValueRow (the 32
    // instances' pairs) per pool index; the actions are Processor's.
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:63
    Processor::ValueRegisters values{kRegisterSize};
  };
  struct IngressResult {
    enum class Kind { kNextStep, kForward, kDrop, kSequenceDrop } kind = Kind::kDrop;
    NextStepSelector::Decision decision;
  };

  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:96
  // `r` is an out parameter: an IngressResult returned by value was written
  // in two halves and read back as one word, which stalled store forwarding.
  void Ingress(int pipe, uint16_t tofino_port, uint32_t frame_bytes, header_t& hdr,
               ingress_metadata_t& ig_md, IngressResult& r);
  // The steps of Process() (inline: defined and inlined in switchml_dataplane.cc).
  /// The ingress pipeline, pass after pass (switchml.p4:96 each time), a
  /// recirculated packet re-entering on its recirculation port's pipe, until
  /// next_step decides. False when the packet ended there (forwarded by the
  /// switch, dropped); else `decision` is next_step's (not a recirculation).
  inline bool IngressPasses(uint16_t ingress_port, inasim::Span<const uint8_t> frame, ingress_metadata_t& ig_md,
                            NextStepSelector::Decision& decision, Emitter& out);
  /// What follows the ingress: consumed / dropped, or the ingress deparser's
  /// frame through the egress drop simulation, the PRE and the egress of
  /// each copy (switchml.p4:206-218).
  inline void TrafficManager(const NextStepSelector::Decision& decision, Picoseconds latency,
                             const ingress_metadata_t& ig_md, Emitter& out);
  // Egress of the copies the egress drop simulator drops: the sender still
  // runs for each (counters, RoCE PSNs), the frames are not sent.
  void EgressOfDroppedCopies(const NextStepSelector::Decision& decision, const ingress_metadata_t& ig_md,
                             uint8_t* frame, size_t frame_bytes);
  /// The PRE's copies of multicast group `mgid`, each through Egress.
  inline void Replicate(uint16_t mgid, switchml_md_h eg_md, const switchml_rdma_md_h& rdma_md, uint8_t* frame,
                        size_t frame_bytes, Picoseconds latency, Emitter& out);
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:206
  // `frame` is the output frame: EgressHeaderBytes(eg_md) for the headers
  // Egress writes, then the payload (the same for every copy).
  bool Egress(const switchml_md_h& eg_md, const switchml_rdma_md_h& rdma_md, uint8_t* frame, size_t frame_bytes);

  SwitchMLConfig config_;
  std::array<std::unique_ptr<Pipe>, kNumPipes> pipes_;
  UDPReceiver udp_receiver_;
  UDPSender udp_sender_;
  RDMAReceiver rdma_receiver_;
  RDMASender rdma_sender_;
  NextStepSelector next_step_selector_;
  IngressDropSimulator ingress_drop_sim_;
  EgressDropSimulator egress_drop_sim_;
  port_metadata_t worker_port_metadata_;
  /// PRE: multicast groups, each mgid with its nodes (rid = worker id, port) in
  /// the order they were added. The controller makes one group per session, so
  /// a linear search over a vector.
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/pre.py:75
  struct McGroup {
    uint16_t mgid;
    std::vector<std::pair<uint16_t, uint16_t>> nodes;
  };
  std::vector<McGroup> pre_;
  const McGroup* Group(uint16_t mgid) const {
    for (const McGroup& m : pre_)
      if (m.mgid == mgid) return &m;
    return nullptr;
  }
  // forwarding "l2": the regular-traffic path (forwarder.h) and its scratch.
  ArpIcmpResponder responder_;
  Forwarder forwarder_;
  std::vector<uint16_t> flood_ports_;
  std::vector<uint8_t> l2_frame_;
  std::vector<uint16_t> flood_copy_ports_;
  /// A frame that is not a SwitchML pass, forwarded as config_.forwarding says.
  void ForwardRegular(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds latency, Emitter& out);
  void ForwardL2(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds latency, Emitter& out);
  /// Worker simulator port -> its Tofino device port (SwitchMLConfig::DevPortOf),
  /// -1 for other ports; and back, for the unicast of a retransmit.
  std::vector<int16_t> dev_port_of_sim_;
  std::array<int32_t, 512> sim_port_of_dev_{};
  /// The device port a frame from simulator port `sim` enters on: a worker's
  /// dev_port; any other port is taken as an ordinary pipe-0 port (sim & 0x7f).
  uint16_t DevPort(uint16_t sim) const {
    return sim < dev_port_of_sim_.size() && dev_port_of_sim_[sim] >= 0 ? static_cast<uint16_t>(dev_port_of_sim_[sim])
                                                                       : static_cast<uint16_t>(sim & 0x7f);
  }
  /// The simulator port of device port `dev` (a worker's), else `dev` itself.
  uint16_t SimPort(uint16_t dev) const {
    return dev < sim_port_of_dev_.size() && sim_port_of_dev_[dev] >= 0 ? static_cast<uint16_t>(sim_port_of_dev_[dev]) : dev;
  }
  Stats stats_;
  uint32_t last_passes_ = 0;
  // Per-packet scratch, reused: the payload after the parsed headers, the
  // ingress and the egress header stacks.
  PayloadBuffer payload_;
  header_t hdr_;
  header_t egress_hdr_;
  bool roce_parsed_ = true;  ///< the last parse wrote RoCE headers (hdr_ starts unknown)
};

/// The ingress parser on a frame from a front-panel port, headers only (payload
/// and metadata dropped). inasim-p4 check flips the frame's bits one at a time
/// through it to read off the header layouts the model implements
/// (switchml/describe.cc). `hdr` holds what was parsed even when the frame is
/// not a SwitchML packet; returns true when it is.
bool ParseSwitchmlHeaders(const uint8_t* b, size_t len, header_t& hdr);

}  // namespace inasim::p4::switchml
