// A lean full-duplex point-to-point device and its channel.
//
// Why not ns-3's PointToPointNetDevice: it fires seven trace sources and copies
// the packet per hop, and its queue knows nothing of ECN or PFC; measured, the
// stock device and channel cost a third of the run time before any protocol work
// (docs/ARCHITECTURE.md). Here a hop costs one event (the frame's arrival at the
// peer, last bit, store-and-forward) plus one transmit-complete event only while
// frames are waiting behind the wire: the htsim rule of one pending event per
// queue. Time is integer picoseconds.
//
// The same class serves hosts (under ns-3's IPv4 stack: it adds and strips the
// Ethernet header, needs no ARP) and switch ports (frames go straight to the
// owning InaSwitchNode, no IP stack).
#pragma once

#include "congestion/egress_queue.h"
#include "congestion/host_tx_backlog.h"
#include "p4model/common/frame.h"

#include "ns3/channel.h"
#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/event-impl.h"
#include "ns3/mac48-address.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/random-variable-stream.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace inasim {

class HostEndpoint;
class InaNetDevice;
class InaSwitchNode;

/// A frame's arrival at a device, as a reusable simulator event: a hop costs
/// no allocation. The pool holds one reference to every event it made; each
/// Simulator::Schedule adds one (GetPointer) that the simulator drops after
/// running it, or when it is destroyed with the event still pending.
class FrameArrival : public ns3::EventImpl {
 public:
  InaNetDevice* target = nullptr;
  ns3::Ptr<ns3::Packet> frame;
  class ArrivalPool* pool = nullptr;

 protected:
  void Notify() override;
};

class ArrivalPool {
 public:
  ArrivalPool() = default;
  ArrivalPool(const ArrivalPool&) = delete;
  ArrivalPool& operator=(const ArrivalPool&) = delete;
  /// Must outlive every pending event: destroy it after Simulator::Destroy().
  ~ArrivalPool();
  FrameArrival* Get() {
    if (free_.empty()) Grow();
    FrameArrival* e = free_.back();
    free_.pop_back();
    return e;
  }
  void Put(FrameArrival* e) { free_.push_back(e); }

 private:
  void Grow();
  std::vector<FrameArrival*> all_;
  std::vector<FrameArrival*> free_;
};

/// One multicast packet's claim on its ingress port's PFC account. A
/// shared-buffer switch (Tofino's traffic manager) stores a replicated packet
/// once, however many ports it leaves by, so the ingress is charged its bytes
/// once while any copy still waits, not once per waiting copy: a 32-way
/// broadcast of a 1,109 B packet into busy ports would otherwise count 35 KB
/// against a 32 KiB XOFF and pause the sender of every broadcast.
struct SharedIngressCharge {
  uint16_t ingress = 0;
  uint32_t bytes = 0;
  uint32_t waiting = 0;  ///< copies in egress queues
  uint32_t refs = 0;     ///< waiting copies + the switch while it enqueues them
};

/// Counters of one direction of one link, as seen by its transmitting device.
struct PortCounters {
  uint64_t tx_packets = 0;
  uint64_t tx_bytes = 0;        ///< frame bytes (Ethernet header onwards)
  uint64_t tx_wire_bytes = 0;   ///< plus per-frame wire overhead (FCS, preamble, gap)
  uint64_t drops_loss = 0;      ///< random loss on this link direction
  uint64_t drops_link_down = 0;
  uint64_t pause_sent = 0;      ///< PFC PAUSE frames this device sent to its peer
  uint64_t pause_received = 0;
  uint64_t paused_ps = 0;       ///< time this transmitter spent paused (PFC), or out of credit with a frame waiting
  uint64_t credit_stalls = 0;   ///< times its head frame had to wait for credit (switch.credit)
  uint64_t busy_ps = 0;         ///< time the wire was busy (utilisation numerator)
};

class InaChannel : public ns3::Channel {
 public:
  static ns3::TypeId GetTypeId();
  void Connect(ns3::Ptr<InaNetDevice> a, ns3::Ptr<InaNetDevice> b, uint64_t delay_ps);
  std::size_t GetNDevices() const override { return 2; }
  ns3::Ptr<ns3::NetDevice> GetDevice(std::size_t i) const override;
  uint64_t delay_ps() const { return delay_ps_; }
  /// The link fails (both directions) from `at_ps` on; frames are lost.
  void SetDownAt(uint64_t at_ps) { down_at_ps_ = at_ps; }
  bool IsUp(uint64_t now_ps) const { return now_ps < down_at_ps_; }
  uint32_t link_index = 0;

 private:
  ns3::Ptr<InaNetDevice> devices_[2];
  uint64_t delay_ps_ = 0;
  uint64_t down_at_ps_ = UINT64_MAX;
};

class InaNetDevice : public ns3::NetDevice, public congestion::HostTxBacklog {
 public:
  static ns3::TypeId GetTypeId();
  InaNetDevice();

  // ---- wiring (done once by the fabric builder) ----
  void AttachChannel(ns3::Ptr<InaChannel> channel, InaNetDevice* peer);
  /// Makes this a switch port: received frames go to `sw` as port `port`.
  void SetSwitchPort(InaSwitchNode* sw, uint16_t port);
  void SetRate(uint64_t bps);
  void SetWireOverhead(uint32_t bytes) { wire_overhead_ = bytes; }
  uint32_t wire_overhead() const { return wire_overhead_; }
  /// Extra one-way time for frames this device sends: the receiving switch's
  /// forwarding pipeline, folded into the hop so it costs no event of its own.
  void SetExtraDelay(uint64_t ps) { extra_delay_ps_ = ps; }
  uint64_t extra_delay_ps() const { return extra_delay_ps_; }
  void SetPortConfig(const congestion::PortConfig& c) { queue_.set_config(c); }
  /// Bernoulli loss of frames sent by this device, from its own random stream.
  void SetLoss(double rate, ns3::Ptr<ns3::UniformRandomVariable> rng);
  /// Drops (as a loss on the wire, counted with drops_loss) every frame this
  /// device sends for which `filter` says true: deterministic losses for
  /// worked examples (the SwitchML paper's appendix A). Empty = none.
  void SetLossFilter(std::function<bool(const ns3::Packet&)> filter) { loss_filter_ = std::move(filter); }
  void SetHostIpv4(uint32_t ip);
  /// Arrival events come from this pool (else they are allocated per hop).
  void SetArrivalPool(ArrivalPool* pool) { pool_ = pool; }

  // ---- data path ----
  /// A tracked host socket's frame bytes in this NIC's queue (HostTxBacklog).
  struct SourceBacklog {
    uint32_t limit = 0;
    uint32_t wake_below = 0;
    uint32_t queued = 0;
    bool armed = false;  ///< reached the limit since the last wake
    std::function<void()> wake;
  };
  /// Queues a complete frame (Ethernet header on) for transmission. `ingress` is
  /// the switch port it came in on (for PFC accounting), or kNoPort.
  /// Returns false if the frame was dropped (buffer full or link down).
  /// `source`: the host socket whose queued bytes this frame counts towards
  /// (congestion::HostTxBacklog; null: none).
  /// `shared` (switch multicast with PFC): the copies' one ingress charge.
  /// `tx_queue`: the host transmit queue it waits in (OpenTxQueue; 0: the
  /// ns-3 stack's, and every switch frame's).
  bool EnqueueFrame(ns3::Ptr<ns3::Packet> frame, const p4::FrameView& view, uint16_t ingress,
                    SourceBacklog* source = nullptr, SharedIngressCharge* shared = nullptr, uint16_t tx_queue = 0);
  /// The transmit queue of the kernel-bypass endpoint on UDP `port`: a queue
  /// of its own on a host NIC with `host.nic_tx_queues: "per_endpoint"`
  /// (the same one each time the port asks), else 0, the one FIFO.
  uint16_t OpenTxQueue(uint16_t port);

  // ---- per-socket backlogs (host NICs): TCP Small Queues, UDP send buffers ----
  const uint32_t* TrackSourcePort(uint8_t ip_protocol, uint16_t port, uint32_t limit_bytes,
                                  uint32_t wake_below_bytes, std::function<void()> wake) override;
  static constexpr uint16_t kNoPort = 0xffff;

  // ---- kernel-bypass endpoints (host NICs; host-endpoint.h) ----
  /// Frames for UDP `port` go to `endpoint` instead of the ns-3 stack; false
  /// if another endpoint holds the port.
  bool BindEndpoint(uint16_t port, HostEndpoint* endpoint);
  void UnbindEndpoint(uint16_t port);
  /// The identification of the next IPv4 datagram this host sends to `dst`
  /// with `protocol`: ns-3's per-(source, destination, protocol) counter.
  uint16_t NextIpv4Identification(uint32_t dst, uint8_t protocol);
  /// The tracked backlog of this host's sender on (protocol, port), or null.
  SourceBacklog* SourceAt(uint8_t ip_protocol, uint16_t port);
  uint32_t host_ipv4() const { return host_ip_; }
  /// A frame this host sent to itself: to the endpoint of its port, if any.
  void DeliverLocal(const ns3::Packet& frame) { DeliverToEndpoint(frame); }
  const ns3::Mac48Address& mac() const { return mac_; }

  /// Credit-based flow control (`switch.credit`): this transmitter starts a
  /// frame only when its bytes are in credit; its peer (a switch port) grants
  /// `bytes` at the start and gives them back as frames leave it.
  void SetCredit(uint64_t bytes) { credit_limit_ = credits_ = bytes; }
  /// The credit this transmitter holds now (its limit when nothing is out).
  uint64_t credits() const { return credits_; }
  uint64_t credit_limit() const { return credit_limit_; }
  /// Credit-based flow control, receiving side: `bytes` of what came in on
  /// this port left the switch; they reach the peer after the link delay.
  void ReturnCredit(uint32_t bytes);
  /// PFC: the peer asked this transmitter to pause (true) or resume (false).
  void SetPaused(bool paused);
  /// PFC: tell the peer to pause/resume (arrives after the link delay).
  void SendPfc(bool pause);

  // ---- observation ----
  uint64_t queued_bytes() const { return queue_.bytes() + extra_bytes_; }
  uint32_t queued_packets() const { return queue_.packets() + extra_frames_; }
  uint64_t buffer_bytes() const { return queue_.config().buffer_bytes; }
  uint64_t rate_bps() const { return rate_bps_; }
  /// Wire time of a `frame_bytes` frame (its overhead added), rounded up to whole ps.
  uint64_t SerializationPs(uint32_t frame_bytes) const;
  const PortCounters& counters() const { return counters_; }
  /// Rolling hash of every frame this device started transmitting (time,
  /// length, leading bytes; frame-fingerprint.h), in its own order.
  uint64_t fingerprint() const { return fingerprint_; }
  /// Every transmit queue's counters together (max_bytes: of all of them at once).
  congestion::QueueCounters queue_counters() const;
  bool link_up() const;
  uint16_t port() const { return port_; }
  InaNetDevice* peer() const { return peer_; }
  ns3::Ptr<InaChannel> ina_channel() const { return channel_; }

  // ---- ns3::NetDevice ----
  void SetIfIndex(const uint32_t index) override { if_index_ = index; }
  uint32_t GetIfIndex() const override { return if_index_; }
  ns3::Ptr<ns3::Channel> GetChannel() const override;
  void SetAddress(ns3::Address address) override;
  ns3::Address GetAddress() const override { return mac_; }
  bool SetMtu(const uint16_t mtu) override { mtu_ = mtu; return true; }
  uint16_t GetMtu() const override { return mtu_; }
  bool IsLinkUp() const override { return true; }
  void AddLinkChangeCallback(ns3::Callback<void> callback) override {}
  bool IsBroadcast() const override { return true; }
  ns3::Address GetBroadcast() const override { return ns3::Mac48Address::GetBroadcast(); }
  bool IsMulticast() const override { return false; }
  ns3::Address GetMulticast(ns3::Ipv4Address) const override { return ns3::Mac48Address::GetMulticast(ns3::Ipv4Address()); }
  ns3::Address GetMulticast(ns3::Ipv6Address) const override { return ns3::Mac48Address::GetMulticast(ns3::Ipv6Address()); }
  bool IsBridge() const override { return false; }
  bool IsPointToPoint() const override { return true; }
  bool Send(ns3::Ptr<ns3::Packet> packet, const ns3::Address& dest, uint16_t protocol) override;
  bool SendFrom(ns3::Ptr<ns3::Packet> packet, const ns3::Address& source, const ns3::Address& dest,
                uint16_t protocol) override;
  ns3::Ptr<ns3::Node> GetNode() const override { return node_; }
  void SetNode(ns3::Ptr<ns3::Node> node) override { node_ = node; }
  bool NeedsArp() const override { return false; }
  void SetReceiveCallback(ReceiveCallback cb) override { rx_callback_ = cb; }
  void SetPromiscReceiveCallback(PromiscReceiveCallback cb) override {}
  bool SupportsSendFrom() const override { return false; }

 protected:
  void DoDispose() override;

 private:
  /// A frame waiting for the wire. A host NIC's backlog can hold millions of
  /// frames (line-rate senders paused by PFC), a switch's deep buffers
  /// hundreds of thousands (the 1,024-host permutation); one whose bytes after
  /// its first kCompactHeadBytes are all zero (background payloads: headers,
  /// a 12-byte sequence/time stamp, zeros) and that carries no tags but the
  /// socket's don't-fragment flag waits as those head bytes plus a zero count
  /// instead of an ns3::Packet with its buffer, and is rebuilt, byte for byte,
  /// when it reaches the wire. 56: Ethernet + IPv4 + UDP (42) + UdpClient's
  /// SeqTsHeader (12), rounded up to 8.
  static constexpr uint32_t kCompactHeadBytes = 56;
  struct Waiting {
    ns3::Ptr<ns3::Packet> frame;  ///< null: compact, see head / zero_bytes
    uint32_t zero_bytes = 0;
    uint16_t ingress = kNoPort;
    uint8_t head_bytes = 0;
    uint8_t dont_fragment_tag = 0;  ///< compact: 0 none, 1 disabled, 2 enabled
    SourceBacklog* source = nullptr;  ///< host: the tracked socket it counts towards
    SharedIngressCharge* shared = nullptr;  ///< switch multicast copy: charged through this
    uint8_t head[kCompactHeadBytes] = {};
  };
  // Millions of these wait in paused NICs: the pointers after the small fields keep it at 88 B.
  static_assert(sizeof(Waiting) == 88, "a waiting frame's slot grew");
  static void Compact(Waiting& w, uint32_t bytes);
  static ns3::Ptr<ns3::Packet> Rebuild(const Waiting& w);
  friend class FrameArrival;
  class TxDone : public ns3::EventImpl {
   public:
    InaNetDevice* device = nullptr;

   protected:
    void Notify() override { device->TransmitComplete(); }
  };
  void TryTransmit(uint64_t now);
  /// Credit-based flow control: `bytes` of credit came back.
  void AddCredit(uint32_t bytes);
  /// Whether a frame of `bytes` may start now as far as credit goes; if not,
  /// the transmitter stalls until AddCredit (counted in paused_ps).
  bool InCredit(uint32_t bytes, uint64_t now) {
    if (credit_limit_ == 0) return true;
    if (credits_ >= bytes) {
      if (credit_stalled_) {
        credit_stalled_ = false;
        counters_.paused_ps += now - paused_since_ps_;
      }
      return true;
    }
    if (!credit_stalled_) {
      credit_stalled_ = true;
      paused_since_ps_ = now;
      ++counters_.credit_stalls;
    }
    return false;
  }
  /// Nothing waits in any transmit queue.
  bool Idle() const { return queue_.empty() && extra_frames_ == 0; }
  congestion::EgressQueue<Waiting>& TxQueue(uint16_t i) { return i == 0 ? queue_ : extra_queues_[i - 1]; }
  /// The next non-empty transmit queue in round-robin order (extra_frames_ > 0).
  uint16_t NextTxQueue();
  /// The queue NextTxQueue would take, without moving the round robin on.
  uint16_t PeekTxQueue();
  void Transmit(ns3::Ptr<ns3::Packet> frame, uint16_t ingress, uint32_t bytes, uint64_t now);
  void ScheduleTxDone(uint64_t delay_ps);
  void TransmitComplete();
  void ReceiveFrame(ns3::Ptr<ns3::Packet> frame);
  /// Hands the frame to the endpoint bound to its UDP port, if one is.
  bool DeliverToEndpoint(const ns3::Packet& frame);

  // Hot fields first.
  InaNetDevice* peer_ = nullptr;
  InaSwitchNode* switch_ = nullptr;
  congestion::EgressQueue<Waiting> queue_;  ///< transmit queue 0: switch ports, a host's ns-3 stack
  uint32_t extra_frames_ = 0;               ///< frames waiting in extra_queues_
  uint64_t busy_until_ps_ = 0;
  uint64_t ps_per_byte_num_ = 80;     // serialisation = bytes * 8e12 / rate
  uint64_t rate_bps_ = 100'000'000'000ULL;
  uint32_t wire_overhead_ = 24;
  uint64_t extra_delay_ps_ = 0;
  uint16_t port_ = 0;
  bool tx_event_pending_ = false;
  bool paused_ = false;
  bool credit_stalled_ = false;
  bool pfc_paused_peer_ = false;
  uint64_t credit_limit_ = 0;  ///< 0: no credit-based flow control on this link direction
  uint64_t credits_ = 0;
  uint64_t paused_since_ps_ = 0;
  double loss_rate_ = 0.0;
  std::function<bool(const ns3::Packet&)> loss_filter_;
  ns3::Ptr<ns3::UniformRandomVariable> loss_rng_;
  PortCounters counters_;
  uint64_t fingerprint_ = 0;
  ArrivalPool* pool_ = nullptr;
  ns3::Ptr<TxDone> tx_done_;
  // Host NICs with a transmit queue per kernel-bypass endpoint (OpenTxQueue).
  std::vector<congestion::EgressQueue<Waiting>> extra_queues_;  ///< queue i is extra_queues_[i - 1]
  std::vector<std::pair<uint16_t, uint16_t>> tx_queue_of_port_;  ///< (UDP port, queue)
  uint64_t extra_bytes_ = 0;
  uint64_t max_total_bytes_ = 0;  ///< the most waiting in all queues at once
  uint16_t rr_next_ = 0;          ///< round robin: the queue to look at first

  ns3::Ptr<InaChannel> channel_;
  ns3::Ptr<ns3::Node> node_;
  ns3::Mac48Address mac_;
  uint32_t host_ip_ = 0;
  // Tracked sockets: protocol << 16 | local port -> their bytes waiting here
  // (unordered_map: its entries, which queue slots point to, never move).
  std::unordered_map<uint32_t, SourceBacklog> sources_;
  SourceBacklog* SourceOf(const ns3::Packet& ip_packet, const uint8_t* head, uint32_t head_bytes);
  // Kernel-bypass endpoints: (UDP port, endpoint), a handful per host.
  std::vector<std::pair<uint16_t, HostEndpoint*>> endpoints_;
  std::unordered_map<uint64_t, uint16_t> ipv4_ids_;  // dst << 8 | protocol -> next identification
  std::vector<uint8_t> rx_frame_;                    // a frame for an endpoint, reused
  uint32_t if_index_ = 0;
  uint16_t mtu_ = 1500;
  ReceiveCallback rx_callback_;

  ns3::TracedCallback<ns3::Ptr<const ns3::Packet>> drop_trace_;
  ns3::TracedCallback<ns3::Ptr<const ns3::Packet>> mark_trace_;
  ns3::TracedCallback<bool> pfc_trace_;
  ns3::TracedCallback<ns3::Ptr<const ns3::Packet>, uint64_t> tx_trace_;
  ns3::TracedCallback<ns3::Ptr<const ns3::Packet>, uint64_t> enqueue_trace_;
  ns3::TracedCallback<ns3::Ptr<const ns3::Packet>> rx_trace_;
};

/// MAC address a host with IPv4 address `ip` uses: 02:00:<ip>, locally administered.
ns3::Mac48Address MacForIpv4(uint32_t ip);

/// Sets CE in the IPv4 header of `frame` (fixing the header checksum if one is set).
void MarkCongestionExperienced(ns3::Ptr<ns3::Packet> frame, const p4::FrameView& view);

}  // namespace inasim
