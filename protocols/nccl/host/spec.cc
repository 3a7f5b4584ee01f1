// NCCL's scenario keys: the workload.nccl section of a scenario -> NcclSpec
// (docs/SCENARIO.md), read through the registry (Protocol::parse).
#include "common/spec_fields.h"
#include "congestion/linux-tcp.h"
#include "ina/scenario-sections.h"
#include "protocols/nccl/host/spec.h"

namespace inasim::protocols::nccl {

using spec::Reader;

namespace {

using NcclSection = spec::Section<NcclSpec, Scenario>;

const NcclSection& Section() {
  static const NcclSection section =
      congestion::LinuxTcpKeys(NcclSection("workload.nccl", "NCCL ring allreduce over RoCE or TCP")
          .Enum("transport", &NcclSpec::transport, "roce", {{"roce", NcclTransport::kRoce}, {"tcp", NcclTransport::kTcp}},
                "`roce`: the IB verbs transport on RC queue pairs (the paper's \"NCCL with RDMA\"). `tcp`: the "
                "NET/Socket transport (\"NCCL with TCP\", NCCL_IB_DISABLE=1): one TCP connection per channel and "
                "direction, each slice a 4-byte size then its bytes, no clear-to-send: TCP's window is the only "
                "backpressure (docs/research/nccl-socket.md).")
          .U32("channels", &NcclSpec::channels, 2, 1, 32, "rings",
               "Rings, each with its own queue pairs (1 GPU and 1 NIC per node: 2, graph/connect.cc:291 doubles "
               "the rings it finds).")
          .U64("buffer_bytes", &NcclSpec::buffer_bytes, 4u << 20, 64, 1ull << 32, "bytes",
               "NCCL_BUFFSIZE (init.cc:399: 4 MiB): a chunk is half of it, a slice (one RDMA message) a quarter.")
          .U32("slots", &NcclSpec::slots, 4, 1, 64, "slices",
               "A connection's receive slots, and its send slots, in slices (NCCL_STEPS / SLICESTEPS = 8 / 2, "
               "net.cc:238, :345-348). RoCE needs at least 2 (a chunk's slices), or the ring deadlocks.")
          .U32("mtu_payload_bytes", &NcclSpec::mtu_payload_bytes, 1024, 256, 4096, "bytes",
               "RoCE path MTU (1024: the largest below a 1500 B Ethernet MTU).")
          .U32("ack_every", &NcclSpec::ack_every, 16, 1, 1 << 20, "packets",
               "The responder ACKs every this many packets, and every message's last (NIC ACK coalescing is "
               "not public; an assumption).")
          .U32("ib_timeout", &NcclSpec::ib_timeout, 14, 0, 31, "",
               "Local ACK timeout 4.096 us x 2^ib_timeout (NCCL_IB_TIMEOUT; 14 in NCCL 2.7, 67 ms; 18 since 2.14, "
               "20 today).")
          .U32("retry_count", &NcclSpec::retry_count, 7, 0, 7, "timeouts",
               "Timeouts in a row before the queue pair fails (NCCL_IB_RETRY_CNT), and with it the collective.")
          .U32("nic_queue_bytes", &NcclSpec::nic_queue_bytes, 16384, 1500, 1u << 30, "bytes",
               "A queue pair's frames queued at the host NIC (the NIC fetches more as they leave).")
          .U16("port", &NcclSpec::port, 4791, 1, 65535, "", "RoCE v2's UDP port."))
          .U32("sndbuf_bytes", &NcclSpec::sndbuf_bytes, 4u << 20, 4096, 1u << 30, "bytes",
               "TCP: send buffer (NCCL sets none, socket.h:380-382: Linux autotuning up to `tcp_wmem[2]`, 4 MiB).")
          .U32("rcvbuf_bytes", &NcclSpec::rcvbuf_bytes, 6u << 20, 4096, 1u << 30, "bytes",
               "TCP: receive buffer (autotuning up to `tcp_rmem[2]`, 6 MiB).")
          .U16("tcp_port", &NcclSpec::tcp_port, 5300, 1, 65535, "",
               "TCP: channel c's listening port is tcp_port + c (NCCL listens on an ephemeral port per "
               "connection; any free port does).");
  return section;
}

}  // namespace

void ParseWorkload(Reader& w, Scenario& s) { Section().ParseObject(w, "nccl", s.workload.spec<NcclSpec>(), s); }

std::vector<const spec::Doc*> WorkloadSections() { return {&Section()}; }

}  // namespace inasim::protocols::nccl
