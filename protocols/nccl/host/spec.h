// NCCL's scenario section, workload.nccl (parsed by spec.cc).
#pragma once

#include <cstdint>
#include <string>

namespace inasim {

/// NCCL's network transport: the IB verbs plugin over RoCE RC queue pairs, or
/// the NET/Socket plugin over TCP (NCCL_IB_DISABLE=1; docs/research/nccl-socket.md).
enum class NcclTransport : uint8_t { kRoce, kTcp };

/// NCCL's ring allreduce over RoCE reliable-connection queue pairs or over
/// TCP (scenario `workload.nccl`); defaults are NCCL 2.7.8's, a RoCE NIC's
/// and Linux's (docs/research/baselines.md §3, §5, nccl-socket.md).
struct NcclSpec {
  NcclTransport transport = NcclTransport::kRoce;
  uint32_t channels = 2;               ///< rings (graph/connect.cc:291 doubles them)
  uint64_t buffer_bytes = 4u << 20;    ///< NCCL_BUFFSIZE: chunk = 1/2, slice = 1/4 of it
  uint32_t slots = 4;                  ///< slices in flight per connection (NCCL_STEPS / SLICESTEPS)
  uint32_t mtu_payload_bytes = 1024;   ///< RoCE path MTU
  uint32_t ack_every = 16;             ///< the responder ACKs every this many packets (and a message's last)
  uint32_t ib_timeout = 14;            ///< local ACK timeout 4.096 us x 2^ib_timeout (67 ms)
  uint32_t retry_count = 7;            ///< consecutive timeouts before the QP fails
  uint32_t nic_queue_bytes = 16384;    ///< a QP's frames the NIC holds queued (it fetches more as they leave)
  uint16_t port = 4791;                ///< RoCE v2's UDP port
  // TCP (the socket transport): one connection per channel and direction.
  std::string tcp_variant = "cubic";   ///< Linux's default congestion control
  uint64_t min_rto_ps = 200'000'000'000ULL;  ///< Linux TCP_RTO_MIN, 200 ms
  uint32_t mss_bytes = 1448;           ///< 1500 B MTU - IPv4 20 - TCP 20 - timestamps 12
  uint32_t sndbuf_bytes = 4u << 20;    ///< tcp_wmem[2]: NCCL sets no SO_SNDBUF (socket.h:380-382)
  uint32_t rcvbuf_bytes = 6u << 20;    ///< tcp_rmem[2]
  uint32_t initial_cwnd_segments = 10;
  uint16_t tcp_port = 5300;            ///< channel c's listener: tcp_port + c
};

}  // namespace inasim
