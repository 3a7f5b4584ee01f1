// SwitchMLDataplane: the SwitchML Tofino program's UDP path behind the
// inasim::p4::Dataplane seam. See p4model/switchml/README.md.
#pragma once

#include "p4model/common/dataplane.h"
#include "p4model/switchml/config.h"
#include "p4model/switchml/controls.h"
#include "p4model/switchml/next_step_selector.h"

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
  const std::map<uint16_t, UDPReceiver::DirectCounter>& send_counter() const { return send_counter_; }
  void CountSend(uint16_t worker_id, size_t bytes);

 private:
  mac_addr_t switch_mac_;
  uint32_t switch_ip_;
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_sender.p4:100
  std::map<uint16_t, DstAddr> dst_addr_;
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/udp_sender.p4:28
  std::map<uint16_t, UDPReceiver::DirectCounter> send_counter_;
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
  void apply(port_metadata_t& port_metadata, bool& simulate_egress_drop);
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/drop_simulator.p4:51
  uint64_t simulated_drop_packet_counter = 0;

 private:
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/drop_simulator.p4:49
  std::mt19937_64 rng_;
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
    uint64_t sender_misses = 0;       ///< udp_sender.dst_addr miss (copy dropped)
    uint64_t recirculation_limit = 0; ///< more than kMaxPasses passes (cannot happen with the stock entries)
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
    // value00 .. value31
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:63
    std::array<Processor, kNumProcessors> value;
  };
  struct IngressResult {
    enum class Kind { kNextStep, kForward, kDrop } kind = Kind::kDrop;
    NextStepSelector::Decision decision;
  };

  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:96
  IngressResult Ingress(int pipe, uint16_t tofino_port, uint16_t sim_port, uint32_t frame_bytes,
                        header_t& hdr, ingress_metadata_t& ig_md);
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:206
  bool Egress(switchml_md_h eg_md, const std::vector<uint8_t>& payload, std::vector<uint8_t>& frame);

  SwitchMLConfig config_;
  std::array<std::unique_ptr<Pipe>, kNumPipes> pipes_;
  UDPReceiver udp_receiver_;
  UDPSender udp_sender_;
  NextStepSelector next_step_selector_;
  IngressDropSimulator ingress_drop_sim_;
  EgressDropSimulator egress_drop_sim_;
  port_metadata_t worker_port_metadata_;
  /// PRE: mgid -> nodes (rid = worker id, port), in the order they were added.
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/pre.py:75
  std::map<uint16_t, std::vector<std::pair<uint16_t, uint16_t>>> pre_;
  Stats stats_;
  uint32_t last_passes_ = 0;
  // Per-packet scratch (payload after the parsed headers, its recirculated
  // form, the egress payload, one output copy), reused across packets.
  std::vector<uint8_t> payload_, recirculated_, eg_payload_, copy_;
};

}  // namespace inasim::p4::switchml
