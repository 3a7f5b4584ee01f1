// What the P4SGD control plane installs on the switch, as one struct.
#pragma once

#include "protocols/p4sgd/dataplane/types.h"

#include <cstdint>
#include <string>
#include <vector>

namespace inasim::p4::p4sgd {

/// Which switch program runs.
enum class Mode : uint8_t {
  /// p4sgd §3.3 and Algorithm 2: one copy of the aggregate per slot,
  /// aggregation and acknowledgement counters and bitmaps, ack-complete.
  kPaper,
  /// RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4, register by register.
  kPublicP4,
};

/// How the 64-byte load header travels (see README "Encapsulation").
enum class Encap : uint8_t {
  /// The frame is the header, as the FPGA's CMAC sends it (sgd_work_send.sv:177).
  kRaw,
  /// Ethernet/IPv4/UDP to `udp_port` carrying the header as the UDP payload: our
  /// carriage for ns-3 hosts, which speak UDP. The switch's replies are
  /// addressed to each worker (its MAC, IP, `udp_port`) from the switch.
  kUdp,
};

/// Default UDP port of the kUdp carriage (our choice; upstream has none).
inline constexpr uint16_t kDefaultUdpPort = 20050;

/// One FPGA worker. Paper mode: its bitmap bit is 1 << id (p4sgd §3.3 "a
/// bitmap with the source worker's index set to one"). Both modes: its port is
/// a member of the result multicast group unless multicast_ports says otherwise.
struct P4SGDWorker {
  uint16_t id = 0;    ///< worker index, < 32
  uint16_t port = 0;  ///< simulator switch port it is attached to
  /// Addresses: the raw 64-byte frame carries none (see README); the UDP
  /// carriage addresses each reply to its worker's MAC and IP.
  mac_addr_t mac{};
  uint32_t ip = 0;  ///< host order
};

struct P4SGDConfig {
  Mode mode = Mode::kPaper;
  /// Workers taking part (paper: N of Algorithm 2, an operation completes at N
  /// contributions). public-p4 ignores it for completion (NODE_SIZE decides).
  uint32_t num_workers = 0;
  std::vector<P4SGDWorker> workers;
  /// Ports of the result multicast group (PRE). Default: the workers' ports.
  /// public-p4: group kMulticastGroup (1), p4fpga.p4:513.
  std::vector<uint16_t> multicast_ports;
  /// Paper mode: register cells (slots); a power of two <= 65536; the index
  /// uses its low bits, as Tofino addresses a register. public-p4: fixed 65536.
  uint32_t slots = kPaperSlots;
  /// public-p4 only: NODE_SIZE, as if recompiled (p4fpga.p4:19 has 1).
  uint32_t node_size = kNodeSize;
  /// public-p4 only: `#define SEQ_SUP` (p4fpga.p4:4 has it); false compiles
  /// the sequence check out (:463-475): every seq_no is stored and accepted.
  bool seq_sup = kSeqSup;
  /// encap raw: every frame is a load header, as the P4 parser reads every
  /// frame (p4fpga.p4:185-196 start -> meta_init -> parse_load, no EtherType
  /// test). false (our option, to share a fabric with Ethernet II traffic):
  /// only frames whose bytes 12..13 are below 0x0600 (not an EtherType); the
  /// rest are routed untouched.
  bool claim_all_traffic = true;
  /// public-p4 only: simulator port i is Tofino device port dev_ports[i]; the
  /// P4's bitmap_mapping, seq_reg, send() and send(192) act on device ports,
  /// and a packet's registers are those of its ingress port's pipe
  /// (PipeOfDevPort). Default: kFrontPanelDevPorts (the 32 table ports, then
  /// 192): simulator ports 0-15 on pipe 0, 16-32 on pipe 1.
  std::vector<uint16_t> dev_ports;
  /// Pipeline time per pass, picoseconds (the paper gives none for the switch;
  /// SwitchML's 520 ns, as the other models).
  uint64_t pass_latency_ps = 520'000;
  /// Carriage of the load header; kUdp needs every multicast port to be a
  /// worker's port and every worker to have an IP.
  Encap encap = Encap::kRaw;
  uint16_t udp_port = kDefaultUdpPort;  ///< kUdp: claimed destination port, and the replies' ports
  mac_addr_t switch_mac{};               ///< kUdp: source MAC of the replies
  uint32_t switch_ip = 0;                ///< kUdp: source IPv4 of the replies (host order)

  /// Fills defaults (workers from num_workers, multicast ports, dev ports) and
  /// checks; throws std::invalid_argument naming the problem.
  void Finalize();
  void Validate() const;

  /// Parses JSON like:
  /// {"mode":"paper"|"public-p4","num_workers":4,
  ///  "workers":[{"id":0,"port":0,"mac":"02:00:00:00:00:01","ip":"10.0.0.1"},...],
  ///  "multicast_ports":[0,1,2,3],"slots":65536,"node_size":1,
  ///  "dev_ports":[0,4,...]|"identity","seq_sup":true,"claim_all_traffic":true,
  ///  "pass_latency_ns":520,
  ///  "encap":"raw"|"udp","udp_port":20050,"switch_mac":"..","switch_ip":".."}
  /// Every key is optional except that paper mode needs num_workers or
  /// workers; num_workers defaults to the number of workers, workers to ids
  /// 0..num_workers-1 on ports 0..num_workers-1. Unknown keys are errors.
  static P4SGDConfig FromJson(const std::string& text);
};

}  // namespace inasim::p4::p4sgd
