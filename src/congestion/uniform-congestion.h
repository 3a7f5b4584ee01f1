// Canary's congestion pattern (Canary, FGCS 2024, Sec. 5.2): each chosen host
// sends a message to a random other host of the set at line rate, then picks
// a new random peer, so hot spots move over time. Peers are drawn either
// independently per message or as one random permutation per message round. Like Canary's SST
// hosts it injects UDP at line rate with no congestion control, from a
// kernel-bypass endpoint on the NIC (ina/host-endpoint.h). Each sender
// blocks as a UDP socket does: it waits while `socket_buffer_bytes` of its own
// frames are queued in its NIC (PFC-paused, or behind other traffic) and
// resumes when half of that has left, as Linux's sock_writeable() does;
// without that, a paused sender would pile up megabytes it never gets to send.
#pragma once

#include "ina/host-endpoint.h"

#include "ns3/event-id.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <vector>

namespace inasim::congestion {

using inasim::DatagramInfo;
using inasim::HostEndpoint;
using inasim::InaNetDevice;

struct UniformCongestionConfig {
  std::vector<uint32_t> hosts;      ///< senders and receivers (at least 2)
  uint64_t message_bytes = 1 << 20;  ///< payload per message
  uint32_t payload_bytes = 1472;    ///< UDP payload per packet
  double rate_bps = 100e9;          ///< sending rate counting IP, UDP, Ethernet and wire overhead
  uint32_t wire_overhead_bytes = 24;
  uint64_t start_ps = 0;
  uint64_t stop_ps = UINT64_MAX;    ///< no packet starts at or after this
  uint64_t seed = 1;
  uint16_t port = 7;                ///< receivers' UDP port
  /// Senders' UDP source port: 49153, the first ephemeral port ns-3 gave
  /// the kernel socket this sender was before (Ipv4EndPointDemux).
  uint16_t source_port = 49153;
  /// SO_SNDBUF: frame bytes a sender may have queued in its NIC (0: no
  /// limit, the NIC queue's own). Linux's net.core.wmem_default.
  uint32_t socket_buffer_bytes = 212992;
  /// false: each message goes to an independently drawn random other host
  /// (a host may get several at once). true: message round r of every host
  /// follows one random derangement of the hosts (a random n-cycle), so each
  /// host sends one message and receives one per round (canary-fgcs24 §5.2:
  /// "each host sends a message to a randomly selected host and receives a
  /// message from another randomly selected host").
  bool permutation = false;
};

class UniformCongestion {
 public:
  /// `nic_of(host)`: the host's NIC, where its endpoints send and receive
  /// and where a sender's queued frames are counted (socket_buffer_bytes).
  UniformCongestion(const UniformCongestionConfig& config, std::function<InaNetDevice&(uint32_t)> nic_of);
  void Install();
  /// Stops every sender now (e.g. when the measured workload has finished).
  void Stop();

  uint64_t messages_started() const { return messages_started_; }
  uint64_t messages_sent() const { return messages_sent_; }  ///< every packet of it sent
  uint64_t bytes_sent() const { return bytes_sent_; }
  uint64_t bytes_received() const { return bytes_received_; }
  uint64_t last_send_ps() const { return last_send_ps_; }
  /// Times a sender found its send buffer full and waited.
  uint64_t blocked() const { return blocked_; }
  /// permutation: the index (in config.hosts) host index `i` sends its
  /// message of round `round` to. Depends only on the seed, n and the round.
  static uint32_t PermutationPeer(uint64_t seed, uint32_t n, uint64_t round, uint32_t i,
                                  std::vector<std::vector<uint32_t>>& rounds);

 private:
  struct HostState {
    uint32_t host = 0;
    uint32_t index = 0;  ///< position in config.hosts
    std::unique_ptr<HostEndpoint> tx, rx;
    std::mt19937_64 rng;
    uint32_t peer = 0;   ///< IPv4 address of the current message's receiver
    uint64_t left = 0;   ///< bytes of the current message still to send
    uint64_t round = 0;  ///< permutation: messages started so far
    ns3::EventId next;
    const uint32_t* nic_queued = nullptr;  ///< its frame bytes in the NIC queue (null: never blocks)
    bool waiting = false;          ///< blocked on a full send buffer
  };
  void SendNext(size_t i);
  void Wake(size_t i);

  UniformCongestionConfig config_;
  std::function<InaNetDevice&(uint32_t)> nic_of_;
  std::vector<uint8_t> zeros_;  ///< the payload: ns-3's zero-filled packets
  std::vector<HostState> hosts_;
  std::vector<std::vector<uint32_t>> rounds_;  ///< permutation: round r's peer of each host index
  uint64_t blocked_ = 0;
  bool stopped_ = false;
  uint64_t messages_started_ = 0, messages_sent_ = 0, bytes_sent_ = 0, bytes_received_ = 0, last_send_ps_ = 0;
};

}  // namespace inasim::congestion
