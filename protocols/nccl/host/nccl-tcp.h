// NCCL's ring allreduce over TCP: NCCL 2.7.8's NET/Socket transport under the
// same ring plan as over RoCE (NcclPlan, nccl-ring.h), as
// docs/research/nccl-socket.md reads nvidia/nccl@033d799:
//
//   - per channel one TCP connection to the next rank (the sender connects,
//     NS:302-320; with no data sockets, the default on a non-AWS/GCP NIC,
//     NS:229, the control socket carries everything), its 4-byte index first;
//   - each slice one message: a 4-byte size (host order), then the bytes
//     (NS:402-457); no clear-to-send: TCP's window is the only backpressure;
//   - the GPU walks the channel's ops in order (step 0 sends its own chunk,
//     steps 1 .. 2n-3 receive, reduce or copy and send, step 2n-2 receives):
//     an op waits for its slice to have arrived and for a free send slot;
//   - the send proxy writes one slice at a time into the socket; a send slot
//     frees when its last byte is in the socket's buffer (NET:307-314);
//   - the receive proxy reads only its oldest posted receive and posts at most
//     `slots` past what the GPU consumed (NET:345-348): slices beyond wait in
//     the socket, where they close TCP's window.
// Reductions and copies cost no time (an ideal GPU and host); every element
// every rank ends with is checked against the exact sum.
#pragma once

#include "protocols/nccl/host/spec.h"

#include "ns3/application.h"
#include "ns3/socket.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

namespace inasim {

class NcclRing;
struct NcclPlan;
class TensorData;

struct NcclTcpCounters {
  uint64_t tcp_timeouts = 0, tcp_recoveries = 0;
  uint64_t max_unread_bytes = 0;  ///< the most bytes a receiving socket held unread
  uint64_t bytes_written = 0;     ///< stream bytes handed to the sockets (indexes, sizes, slices)
  NcclTcpCounters& operator+=(const NcclTcpCounters& x) {
    tcp_timeouts += x.tcp_timeouts;
    bytes_written += x.bytes_written;
    tcp_recoveries += x.tcp_recoveries;
    max_unread_bytes = std::max(max_unread_bytes, x.max_unread_bytes);
    return *this;
  }
};

class NcclTcpRank : public ns3::Application {
 public:
  static ns3::TypeId GetTypeId();
  void Setup(NcclRing* owner, uint32_t rank);
  /// Listens on tcp_port + c per connection c (set x channels + channel)
  /// and connects to the set's next rank's.
  void Connect();
  void BeginIteration(uint32_t iteration);
  const NcclTcpCounters& counters() const { return counters_; }

 protected:
  void DoDispose() override;

 private:
  // A connection of one connection set (NcclRing::SeatOf), serving one
  // collective at a time (see NcclRank::Channel).
  struct Channel {
    ns3::Ptr<ns3::Socket> listener, out, in;
    uint32_t collective = UINT32_MAX;  ///< the collective it serves
    uint32_t channel = 0;              ///< its index in the plan's channels
    uint32_t place = 0;                ///< the rank's place in the collective's group
    const NcclPlan* plan = nullptr;
    const TensorData* data = nullptr;
    bool handshake = false;  ///< the connection's 4-byte index read
    size_t op = 0;           ///< the GPU's next op of this iteration
    // Send proxy.
    size_t posted = 0, written = 0;  ///< slices in send slots; slices whole in the socket
    std::deque<std::vector<uint8_t>> outbox;  ///< [size][bytes] per posted slice, in order
    size_t out_offset = 0;
    // Receive proxy.
    size_t received = 0, consumed = 0;
    std::vector<std::vector<uint8_t>> got;  ///< [message]: its bytes, until the GPU uses them
    std::vector<uint8_t> head;              ///< the oldest posted receive, so far
  };
  void StartApplication() override {}
  void StopApplication() override {}
  bool OnAcceptRequest(ns3::Ptr<ns3::Socket>, const ns3::Address&) { return true; }
  void OnAccept(uint32_t c, ns3::Ptr<ns3::Socket> s);
  void OnConnected(uint32_t c);
  void OnCongState(uint32_t from, uint32_t to);
  /// The GPU: runs the channel's ops while their slice is in and a send slot free.
  void Advance(uint32_t c);
  bool RunOp(uint32_t c);
  /// The send proxy: the oldest posted slices into the socket.
  void Write(uint32_t c);
  /// The receive proxy: the oldest posted receive out of the socket.
  void Read(uint32_t c);
  void Post(uint32_t c, std::vector<uint8_t>&& slice);
  void MaybeDone();

  NcclRing* owner_ = nullptr;
  uint32_t rank_ = 0;
  std::vector<std::unique_ptr<Channel>> channels_;  ///< [set x channels + channel]
  uint32_t iteration_ = 0;
  uint32_t first_conn_ = 0, conns_ = 0;  ///< the current collective's connections
  bool running_ = false;
  uint64_t checked_ = 0, mismatches_ = 0;
  NcclTcpCounters counters_;
};

}  // namespace inasim
