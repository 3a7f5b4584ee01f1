// What the SwitchML controller installs for one UDP job, as one struct.
#pragma once

#include "protocols/switchml/dataplane/types.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace inasim::p4::switchml {

/// SwitchMLWorker::dev_port not given: the worker's position in the list.
inline constexpr uint16_t kDefaultDevPort = 0xffff;

/// One worker (rank) of the job. Becomes one udp_receiver.receive_udp entry,
/// one udp_sender.dst_addr entry and one PRE node (rid = worker_id, port).
// p4lang/p4app-switchML@b5c74a04:dev_root/controller/switchml.py:506
struct SwitchMLWorker {
  uint16_t worker_id = 0;  ///< rank, < 32
  uint16_t port = 0;       ///< switch (simulator) port the worker is attached to
  mac_addr_t mac{};
  uint32_t ip = 0;         ///< host order
  /// RoCE workers only (config `transport` "rdma"): the worker's remote key
  /// and, for each of its queue pairs in index order, the QPN and initial PSN
  /// the switch writes results with (one fill_in_qpn_and_psn entry each).
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/rdma_sender.py:100
  uint32_t rkey = 0;
  std::vector<std::pair<uint32_t, uint32_t>> qpns_and_psns;
  /// The Tofino device port `port` stands for (what ports.yaml and
  /// $PORT_HDL_INFO give the controller, switchml.py:261-317). kDefaultDevPort:
  /// the worker's position in `workers` (0..31, pipe-0 front-panel ports).
  /// Upstream parses frames from pipes 1-3 and from ports 64 and 68 as
  /// recirculated passes (parsers.p4:50-57), so a worker there never
  /// aggregates; Validate() refuses them.
  uint16_t dev_port = kDefaultDevPort;
};

/// How a job's workers reach the switch: SwitchML's UDP header, or RDMA UC
/// writes over RoCEv2 (receive_roce / rdma_sender instead of receive_udp /
/// udp_sender).
enum class SwitchMLTransport : uint8_t { kUdp, kRdma };

/// What happens to frames that are not SwitchML passes (switchml.p4:184-190).
enum class SwitchMLForwarding : uint8_t {
  /// Our choice for fabrics: the simulator's own table routes them by IPv4
  /// destination (the fabric's per-destination tables), untouched.
  kRouted,
  /// Upstream's: ARPandICMPResponder then Forwarder (forwarder.h): ARP and
  /// ICMP echo to the switch answered, everything else switched by
  /// destination MAC (`forward`), flooding the rest to `flood_ports`.
  kL2,
};

struct SwitchMLConfig {
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/udp_sender.py:49
  mac_addr_t switch_mac{};
  uint32_t switch_ip = 0;  ///< host order

  uint8_t num_workers = 0;              ///< receive_udp set_bitmap num_workers
  std::vector<SwitchMLWorker> workers;  ///< in PRE node order

  /// Job's elements per packet: 64 (256 B of data) or 256 (1024 B), as the
  /// scenario's workload.switchml.elements_per_packet. The P4 acts on each
  /// packet's own switchml_h.size; this selects the default of folded_pipe
  /// and is checked by Validate().
  uint32_t elements_per_packet = 64;
  /// Slots the workers use (informational, <= num_slots; registers are modeled
  /// at their full P4 size).
  uint32_t pool_size = kNumSlots;

  /// The controller's --enable-folded-pipe: installs the 1024 B next_step entries.
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:88
  bool folded_pipe = true;

  /// Recirculation port of the 1024 B HARVEST3 pass: 448 as the controller
  /// installs it (pipe 3: elements 128..159 come back with the sums of
  /// 192..223, invisible with the all-ones tensors the paper verified), or
  /// 320 (pipe 2: every element correct, as the paper reports). See README.
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:66
  uint16_t harvest3_port = 448;

  /// Session multicast group (the controller uses session id 0).
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/switchml.py:541
  uint16_t multicast_group = 0;

  /// receive_udp's UDP destination port key (value, mask).
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/switchml.py:63
  uint16_t udp_port = kUdpPortSwitchmlBase;
  uint16_t udp_mask = kUdpPortSwitchmlMask;

  /// The workers' transport; "rdma" installs receive_roce's six entries per
  /// worker and the RoCE sender's tables (controller: add_rdma_worker).
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/rdma_receiver.py:94
  SwitchMLTransport transport = SwitchMLTransport::kUdp;
  /// RDMA: the session's partition key (receive_roce key).
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/rdma_receiver.py:146
  uint16_t partition_key = 0xffff;
  /// RDMA: bytes per message, a power-of-two number of packets.
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/rdma_sender.py:138
  uint32_t message_size = 0;
  /// Data bytes per packet: 256 or 1024.
  uint32_t PacketBytes() const { return elements_per_packet * 4; }
  /// workers[i]'s device port: its dev_port, else i (kDefaultDevPort).
  uint16_t DevPortOf(size_t i) const {
    return workers[i].dev_port == kDefaultDevPort ? static_cast<uint16_t>(i) : workers[i].dev_port;
  }
  /// RDMA: packets per message (message_size / packet size).
  uint32_t PacketsPerMessage() const { return message_size / PacketBytes(); }

  /// Drop simulation, as probabilities in [0, 1], converted like the controller.
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/drop_simulator.py:64
  double ingress_drop_probability = 0.0;
  double egress_drop_probability = 0.0;
  uint64_t drop_seed = 1;  ///< seed of the model's Random<bit<16>> stand-in

  /// Frames that are not SwitchML passes: routed by the simulator (default) or
  /// upstream's L2 forwarder and ARP/ICMP responder.
  SwitchMLForwarding forwarding = SwitchMLForwarding::kRouted;
  /// kL2: forward's set_egress_port entries, MAC -> simulator port (the
  /// controller's, one per ports.yaml MAC, switchml.py:311-325). Empty: each
  /// worker's MAC -> its port.
  std::vector<std::pair<mac_addr_t, uint16_t>> forward;
  /// kL2: the flood group's ports (group 0x8000, every listed port,
  /// switchml.py:327-337). Empty: the workers' ports.
  std::vector<uint16_t> flood_ports;

  /// Pipeline time per ingress pass, picoseconds (paper: 520 ns).
  uint64_t pass_latency_ps = 520'000;

  /// Throws std::invalid_argument naming the problem.
  void Validate() const;
  void ValidateRdma() const;

  /// Parses JSON like (protocols/switchml/dataplane/README.md; the keys a
  /// scenario's workload.switchml has too, with its names and units):
  /// {"switch_mac":"02:00:00:00:00:fe","switch_ip":"10.0.0.254","num_workers":2,
  ///  "elements_per_packet":64,"pool_size":512,"multicast_group":0,
  ///  "workers":[{"id":0,"port":1,"mac":"02:00:00:00:00:01","ip":"10.0.0.1"},...],
  ///  "ingress_drop_probability":0,"egress_drop_probability":0,"drop_seed":1,
  ///  "pass_latency_ns":520,"folded_pipe":true,"harvest3":"upstream","udp_port":48864,"udp_mask":65520}
  /// Missing optional keys keep their defaults ("num_workers" defaults to the
  /// number of workers; "folded_pipe" to elements_per_packet == 256). Throws
  /// std::invalid_argument "switchml config: <key>: <problem>" on malformed input.
  static SwitchMLConfig FromJson(const std::string& text);
};

}  // namespace inasim::p4::switchml
