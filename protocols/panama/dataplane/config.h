// What the PANAMA controller installs on one accelerator (panama §3 (2) "The
// PANAMA controller also initializes our in-network aggregation accelerators on
// path with the state of the job"), plus the accelerator's build parameters.
#pragma once

#include "protocols/panama/dataplane/fp32.h"
#include "protocols/panama/dataplane/types.h"

#include <cstdint>
#include <string>
#include <vector>

namespace inasim::p4::panama {

/// Where the aggregation result of a job goes.
enum class ResultRoute : uint8_t {
  /// One packet, forwarded by the switch by its IPv4 destination (the tree's
  /// multicast address, towards the tree root: panama §3 (2)).
  kRouted,
  /// The prototype: one copy out of every member port, each carrying that
  /// port's own input header (fp_datapath.v:499-554 writes data_reg[i] then
  /// the sums on m_axis_i for every i in PORTS_BITMAP, :619).
  kEcho,
  /// One packet to an explicit set of ports (the root of a tree: down to its children).
  kPorts,
};

/// How the latency of a packet through the accelerator is computed.
enum class LatencyMode : uint8_t {
  /// panama Appendix A eq. (3) plus the fixed terms fitted to Table 1 (README).
  kEquation,
  /// Table 1's measured points, piecewise linear in the frame size (README).
  kTable1,
};

struct PanamaJob {
  uint16_t jid = 0;
  /// panama §5 (2) Ports_bitmap: bit p = accelerator input port p takes part.
  uint64_t ports_bitmap = 0;
  /// Trees of the job; each has its own Expected_VID (panama §5 (2)). TIDs are 0..num_trees-1.
  uint32_t num_trees = 1;
  ResultRoute result = ResultRoute::kRouted;
  std::vector<uint16_t> result_ports;  ///< kPorts only
  /// panama §7 PANAMA-0.88 / 0.94 (the paper only; the FPGA waits for every
  /// port): aggregate as soon as the ports whose head is Expected_VID carry
  /// at least this fraction of the job's workers (rounded up); the others add
  /// +0 and their packets of that vector come later, stale, and are dropped.
  double quorum = 1.0;
  /// Workers behind each input port (indexed by port, num_ports long), the
  /// quorum's weights; empty: one per member port.
  std::vector<uint32_t> port_workers;
};

struct PanamaLatency {
  LatencyMode mode = LatencyMode::kEquation;
  /// panama Appendix A: W = 64 bits for 10 Gb/s ports, f = 200 MHz, La = 10 ns (FPGA).
  uint32_t bus_bits = 64;
  uint64_t clock_hz = 200'000'000;
  uint64_t adder_ps = 10'000;
  /// Fixed cut-through terms eq. (3) leaves out, fitted to Table 1 (README):
  /// every packet 25 ns (5 cycles), aggregation 10 ns more.
  uint64_t fixed_ps = 25'000;
  uint64_t agg_fixed_ps = 10'000;
};

struct PanamaConfig {
  /// Input ports of the accelerator = leaves of the adder tree (N of eq. (3)).
  uint32_t num_ports = kPrototypePorts;
  FloatMode float_mode = FloatMode::kFpga;
  PanamaLatency latency;
  /// Buffer memory of the whole accelerator, split evenly over the input ports
  /// (panama Fig. 6a: a dedicated buffer per input port), in slots of
  /// slot_bytes each: packet_memory = buffer_bytes / num_ports / slot_bytes.
  uint64_t buffer_bytes = kPaperBufferBytes;
  uint32_t slot_bytes = kMaxPacketBytes;
  /// true: the accelerator is a bump in the wire and every frame crosses it
  /// (non-aggregation frames with the non-aggregation latency, Table 1);
  /// false: Claims() takes aggregation frames only.
  bool claim_all_traffic = true;
  std::vector<PanamaJob> jobs;

  /// Per input port, per job share before division: panama §4.2.2 packet_memory.
  uint64_t PacketMemory() const { return buffer_bytes / num_ports / slot_bytes; }

  /// Throws std::invalid_argument naming the problem.
  void Validate() const;

  /// Parses JSON like (the keys a scenario's workload.panama has too keep its
  /// names and values: protocols/panama/dataplane/keys.h):
  /// {"num_ports":4,"float_mode":"fpga"|"ieee","claim_all_traffic":true,
  ///  "accelerator_buffer_bytes":67108864,"slot_bytes":1600,
  ///  "latency":"equation"|"table1",
  ///  "latency_model":{"bus_bits":64,"clock_mhz":200,"adder_ns":10,"fixed_ns":25,"agg_fixed_ns":10},
  ///  "jobs":[{"jid":1,"ports":[0,1,2,3],"trees":1,
  ///           "result":"routed"|"echo"|[0,1]}]}
  /// Every key is optional; unknown keys are errors.
  static PanamaConfig FromJson(const std::string& text);
};

}  // namespace inasim::p4::panama
