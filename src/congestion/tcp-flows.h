// Background TCP flows on ns-3's own TCP (DCTCP by default): a list of flows
// (source, destination, size, start) is opened, written and timed. The
// receiving side is one listening socket per destination host; a flow is done
// when its receiver has every byte, which is what flow completion time (FCT)
// means in the DCTCP, pFabric and PANAMA papers.
#pragma once

#include "congestion/flow_generator.h"
#include "congestion/tcp_config.h"
#include "congestion/tsq-tcp-socket.h"

#include "ns3/inet-socket-address.h"
#include "ns3/node.h"
#include "ns3/ptr.h"
#include "ns3/socket.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-socket-base.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace inasim::congestion {

/// The ns-3 TCP congestion control of a variant name ("dctcp", "cubic",
/// "newreno"); std::invalid_argument for another.
ns3::TypeId VariantTypeId(const std::string& variant);
/// Applies `config` to an ns-3 TCP socket (segment size, buffers, delayed
/// ACKs, minimum RTO with 1 ns clock granularity, ECN).
void ConfigureTcpSocket(ns3::Ptr<ns3::Socket> socket, const TcpConfig& config);

struct FlowState {
  FlowSpec spec;
  uint64_t sent_bytes = 0;      ///< handed to the socket
  uint64_t received_bytes = 0;  ///< delivered to the receiving application
  uint64_t end_ps = 0;          ///< receiver got the last byte (0: not yet)
  bool done() const { return received_bytes == spec.bytes; }
};

/// TcpL4Protocol::CreateSocket() with our socket class (TsqTcpSocket: its
/// RTT in microseconds, and TSQ once asked): the node's RTT estimator,
/// congestion control and recovery, registered with its TCP. Every TCP
/// socket the simulator opens comes from here; `cc` (if given) gets its
/// congestion control.
ns3::Ptr<TsqTcpSocket> CreateTcpSocket(ns3::Ptr<ns3::Node> node, ns3::Ptr<ns3::TcpCongestionOps>* cc = nullptr);

/// Opens every flow at its start time and times it. Node lookups go through
/// `node_of(host)` and `address_of(host)` so this class knows nothing of the
/// fabric.
class TcpFlowSet {
 public:
  TcpFlowSet(std::vector<FlowSpec> flows, const TcpConfig& config,
             std::function<ns3::Ptr<ns3::Node>(uint32_t)> node_of,
             std::function<ns3::Ipv4Address(uint32_t)> address_of);

  /// Where each host's NIC counts its TCP backlog: with it (and a non-zero
  /// TcpConfig::small_queue_bytes) senders are TsqTcpSockets. Call before Install().
  void SetHostBacklogs(std::function<HostTxBacklog*(uint32_t)> backlog_of) { backlog_of_ = std::move(backlog_of); }
  /// Sender sockets' TCP Small Queues throttles and withheld window increases, summed.
  uint64_t tsq_throttles() const;
  uint64_t cwnd_growth_withheld() const;
  /// Retransmission timeouts of every sender (each one that sent data again).
  uint64_t retransmission_timeouts() const { return *timeouts_; }

  /// Sets the congestion control of every involved node, installs the
  /// listeners and schedules every flow's start.
  void Install();

  const std::vector<FlowState>& flows() const { return flows_; }
  uint64_t completed() const { return completed_; }
  /// Called once, when every flow has completed.
  std::function<void()> on_all_done;
  /// Called after each completed flow (index into flows()).
  std::function<void(size_t)> on_flow_done;
  /// Called when flow `flow`'s sender is created, before it connects, with
  /// its congestion control (for observers such as TcpTrace).
  std::function<void(size_t flow, ns3::Ptr<ns3::TcpSocketBase>, ns3::Ptr<ns3::TcpCongestionOps>)> on_sender;

 private:
  void Start(size_t flow);
  static void OnConnected(TcpFlowSet* self, size_t flow, ns3::Ptr<ns3::Socket>) { self->Fill(flow); }
  static void OnTxRoom(TcpFlowSet* self, size_t flow, ns3::Ptr<ns3::Socket>, uint32_t) { self->Fill(flow); }
  void Fill(size_t flow);
  void OnAccept(ns3::Ptr<ns3::Socket> socket, const ns3::Address& from);
  void OnReceive(size_t flow, ns3::Ptr<ns3::Socket> socket);
  static void OnData(TcpFlowSet* self, size_t flow, ns3::Ptr<ns3::Socket> s) { self->OnReceive(flow, s); }
  void ConfigureSocket(ns3::Ptr<ns3::Socket> socket) const;
  static uint64_t Key(ns3::Ipv4Address a, uint16_t port) { return uint64_t{a.Get()} << 16 | port; }

  std::vector<FlowState> flows_;
  TcpConfig config_;
  std::function<ns3::Ptr<ns3::Node>(uint32_t)> node_of_;
  std::function<ns3::Ipv4Address(uint32_t)> address_of_;
  std::function<HostTxBacklog*(uint32_t)> backlog_of_;
  std::vector<ns3::Ptr<TsqTcpSocket>> tsq_senders_;
  std::vector<ns3::Ptr<ns3::Socket>> senders_;                 // per flow (null when done)
  std::vector<ns3::Ptr<ns3::Socket>> listeners_;
  std::unordered_map<uint64_t, size_t> pending_;               // (src ip, src port) -> flow, until accepted
  uint64_t completed_ = 0;
  std::unique_ptr<uint64_t> timeouts_ = std::make_unique<uint64_t>(0);  // stable for the sockets
};

}  // namespace inasim::congestion
