// HostTxBacklog: what a host's senders may ask of its NIC's transmit queue,
// per socket. Two Linux behaviours need it: TCP Small Queues (a TCP sender
// keeps at most ~1 MiB of its own in the NIC queue; tsq-tcp-socket.h) and a
// blocking UDP socket's send buffer (a line-rate UDP sender waits while
// SO_SNDBUF bytes of its own are queued, and is woken when half drained;
// uniform-congestion.h). Implemented by src/ina's InaNetDevice.
#pragma once

#include <cstdint>
#include <functional>

namespace inasim::congestion {

/// A host NIC's view of its transmit queue, per sending socket: what TCP
/// Small Queues and a blocking UDP socket's send buffer both need.
class HostTxBacklog {
 public:
  virtual ~HostTxBacklog() = default;
  /// Counts the queued frames sent from local port `port` of IP protocol
  /// `ip_protocol` (6 TCP, 17 UDP) from now on. Once their bytes have reached
  /// `limit_bytes`, `wake` runs (as its own event, never from inside the NIC)
  /// when they fall below `wake_below_bytes` (<= limit_bytes). Returns the live
  /// count of those frame bytes, valid as long as the NIC: the sender reads it
  /// before each send, with no lookup.
  virtual const uint32_t* TrackSourcePort(uint8_t ip_protocol, uint16_t port, uint32_t limit_bytes,
                                          uint32_t wake_below_bytes, std::function<void()> wake) = 0;
};

}  // namespace inasim::congestion
