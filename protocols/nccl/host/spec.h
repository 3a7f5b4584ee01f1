// NCCL's scenario section, workload.nccl (parsed by spec.cc).
#pragma once

#include <cstdint>

namespace inasim {

/// NCCL's ring allreduce over RoCE reliable-connection queue pairs
/// (scenario `workload.nccl`); defaults are NCCL 2.7.8's and a RoCE NIC's
/// (docs/research/baselines.md §3, §5).
struct NcclSpec {
  uint32_t channels = 2;               ///< rings (graph/connect.cc:291 doubles them)
  uint64_t buffer_bytes = 4u << 20;    ///< NCCL_BUFFSIZE: chunk = 1/2, slice = 1/4 of it
  uint32_t slots = 4;                  ///< slices in flight per connection (NCCL_STEPS / SLICESTEPS)
  uint32_t mtu_payload_bytes = 1024;   ///< RoCE path MTU
  uint32_t ack_every = 16;             ///< the responder ACKs every this many packets (and a message's last)
  uint32_t ib_timeout = 14;            ///< local ACK timeout 4.096 us x 2^ib_timeout (67 ms)
  uint32_t retry_count = 7;            ///< consecutive timeouts before the QP fails
  uint32_t nic_queue_bytes = 16384;    ///< a QP's frames the NIC holds queued (it fetches more as they leave)
  uint16_t port = 4791;                ///< RoCE v2's UDP port
};

}  // namespace inasim
