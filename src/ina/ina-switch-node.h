// A switch: no IP stack, ports are InaNetDevices, forwarding is one array
// lookup (destination host -> equal-cost next hops) plus a load-balancing
// choice. Frames that the hosted dataplane claims go to it instead; what the
// dataplane emits goes out of the ports it names.
#pragma once

#include "congestion/load_balancer.h"
#include "ina/ina-net-device.h"
#include "p4model/common/dataplane.h"
#include "topology/topology.h"

#include "ns3/node.h"
#include "ns3/random-variable-stream.h"
#include "ns3/traced-callback.h"

#include <memory>
#include <vector>

namespace inasim {

struct SwitchCounters {
  uint64_t rx_frames = 0;
  uint64_t forwarded = 0;
  uint64_t dropped_not_ipv4 = 0;
  uint64_t dropped_no_route = 0;
  uint64_t dataplane_in = 0;   ///< frames the dataplane claimed
  uint64_t dataplane_out = 0;  ///< frames it emitted (each multicast copy counts)
};

struct ForwardingConfig {
  congestion::ForwardingPolicy policy = congestion::ForwardingPolicy::kEcmp;
  double adaptive_threshold = 0.5;  ///< fraction of the port buffer
  /// Where `adaptive` starts: the flow-hashed port (false) or the port chosen
  /// by the destination host alone, d-mod-k (true).
  bool adaptive_by_destination = false;
  uint64_t hash_seed = 0;
  bool pfc_enabled = false;
  uint64_t pfc_xoff_bytes = 0;
  uint64_t pfc_xon_bytes = 0;
  /// Credit-based flow control (`switch.credit`): each received frame holds
  /// its ingress's credit until it and what was made of it have left. The
  /// fabric sets it from its switch ports' PortConfig::credit_enabled.
  bool credit_enabled = false;
};

class InaSwitchNode : public ns3::Node, private p4::Emitter, private p4::TimerService {
 public:
  static ns3::TypeId GetTypeId();
  InaSwitchNode();
  ~InaSwitchNode() override;

  /// tier: the topology's tier of this switch (1 = ToR/leaf/edge).
  void Configure(uint32_t vertex, uint16_t tier, const topo::RoutingTable* routing, uint32_t num_hosts,
                 const ForwardingConfig& config, ns3::Ptr<ns3::UniformRandomVariable> spray_rng);
  /// Swaps in a recomputed table (after a failure); the caller keeps it alive.
  void SetRouting(const topo::RoutingTable* routing) { routing_ = routing; }
  /// Adds the next port (ports are numbered in call order, as in the topology).
  void AddPort(ns3::Ptr<InaNetDevice> device);
  /// Hosts a dataplane; the switch owns it.
  void SetDataplane(std::unique_ptr<p4::Dataplane> dataplane);
  p4::Dataplane* dataplane() const { return dataplane_.get(); }

  // Called by the ports.
  void ReceiveFromPort(uint16_t port, ns3::Ptr<ns3::Packet> frame);
  void OnEnqueue(uint16_t ingress, uint32_t bytes) {
    ingress_bytes_[ingress] += bytes;
    if (pfc_ && ingress_bytes_[ingress] > cfg_.pfc_xoff_bytes) ports_[ingress]->SendPfc(true);
  }
  void OnDequeue(uint16_t ingress, uint32_t bytes) {
    ingress_bytes_[ingress] -= bytes;
    if (pfc_ && ingress_bytes_[ingress] < cfg_.pfc_xon_bytes) ports_[ingress]->SendPfc(false);
  }
  /// A multicast copy starts / stops waiting: the ingress holds the packet's
  /// bytes while at least one copy waits (SharedIngressCharge).
  void ChargeShared(SharedIngressCharge* c) {
    ++c->refs;
    if (c->waiting++ == 0) OnEnqueue(c->ingress, c->bytes);
  }
  void ReleaseShared(SharedIngressCharge* c) {
    if (--c->waiting == 0) OnDequeue(c->ingress, c->bytes);
    DropCharge(c);
  }
  /// A charge on `ingress` for a frame of `bytes`, one reference held.
  SharedIngressCharge* NewCharge(uint16_t ingress, uint32_t bytes) {
    if (free_charges_.empty()) {
      charges_.push_back(std::make_unique<SharedIngressCharge>());
      free_charges_.push_back(charges_.back().get());
    }
    SharedIngressCharge* c = free_charges_.back();
    free_charges_.pop_back();
    *c = SharedIngressCharge{ingress, bytes, 0, 1};
    return c;
  }

  uint32_t vertex() const { return vertex_; }
  uint32_t num_ports() const { return static_cast<uint32_t>(ports_.size()); }
  InaNetDevice* port(uint16_t i) const { return ports_[i]; }
  const SwitchCounters& counters() const { return counters_; }
  /// ProgramOut's port for a frame the program left to the switch's table.
  static constexpr uint16_t kRouted = 0xffff;

 protected:
  void DoDispose() override;

 private:
  void Process(uint16_t port, ns3::Ptr<ns3::Packet> frame);
  /// A frame with no route (or no such egress port): counted and logged.
  void DropNoRoute();
  /// `hold` (credit-based flow control): the received frame's charge that
  /// what is enqueued here keeps until it leaves; null: none.
  void Forward(ns3::Ptr<ns3::Packet> frame, const p4::FrameView& view, uint16_t ingress,
               SharedIngressCharge* hold = nullptr);
  uint16_t ChoosePort(inasim::Span<const uint16_t> hops, const p4::FrameView& view, uint32_t host);
  void SendOut(uint16_t port, ns3::Ptr<ns3::Packet> frame, uint16_t ingress, SharedIngressCharge* hold);
  void SendOutLater(uint16_t port, ns3::Ptr<ns3::Packet> frame, uint16_t ingress, SharedIngressCharge* hold);
  /// The hold a frame emitted now takes with it (a reference), or null.
  SharedIngressCharge* TakeHold() {
    if (current_hold_) ++current_hold_->refs;
    return current_hold_;
  }
  void LetGo(SharedIngressCharge* hold) {
    if (hold) DropCharge(hold);
  }
  /// The copies of one multicast, sent after the pipeline latency.
  struct MulticastBatch {
    ns3::Ptr<ns3::Packet> frame;
    p4::FrameView view;  ///< parsed once for every copy
    std::vector<uint16_t> ports;
    uint16_t ingress = 0;
    SharedIngressCharge* hold = nullptr;
  };
  void SendMulticastLater(MulticastBatch* batch);
  void SendCopies(ns3::Ptr<ns3::Packet> frame, const p4::FrameView& view, inasim::Span<const uint16_t> ports,
                  uint16_t ingress, SharedIngressCharge* hold);
  void ForwardLater(ns3::Ptr<ns3::Packet> frame, uint16_t ingress, SharedIngressCharge* hold);
  void FireTimer(uint64_t cookie);

  // p4::Emitter
  void Emit(inasim::Span<const uint8_t> frame, uint16_t port, p4::Picoseconds latency) override;
  void EmitMulticast(inasim::Span<const uint8_t> frame, inasim::Span<const uint16_t> ports,
                     p4::Picoseconds latency) override;
  void EmitRouted(inasim::Span<const uint8_t> frame, p4::Picoseconds latency) override;
  // p4::TimerService
  void ScheduleAt(p4::Picoseconds at, uint64_t cookie) override;

  std::vector<InaNetDevice*> ports_;
  std::vector<uint64_t> ingress_bytes_;
  std::vector<std::unique_ptr<MulticastBatch>> batches_;  ///< owned, in flight or free
  std::vector<MulticastBatch*> free_batches_;
  void DropCharge(SharedIngressCharge* c) {
    if (--c->refs != 0) return;
    if (credit_) ports_[c->ingress]->ReturnCredit(c->bytes);  // the frame has left the switch
    free_charges_.push_back(c);
  }
  std::vector<std::unique_ptr<SharedIngressCharge>> charges_;  ///< owned, in use or free
  std::vector<SharedIngressCharge*> free_charges_;
  const topo::RoutingTable* routing_ = nullptr;
  uint32_t vertex_ = 0;
  uint32_t num_hosts_ = 0;
  uint64_t salt_ = 0;
  uint16_t tier_ = 1;
  ForwardingConfig cfg_;
  bool pfc_ = false;
  bool credit_ = false;
  SharedIngressCharge* current_hold_ = nullptr;  ///< credit: the frame being processed's
  ns3::Ptr<ns3::UniformRandomVariable> spray_rng_;
  std::unique_ptr<p4::Dataplane> dataplane_;
  uint16_t current_ingress_ = InaNetDevice::kNoPort;
  bool log_frames_ = false;  ///< NS_LOG InaSwitchNode=logic: one line per program frame
  std::vector<uint8_t> scratch_;
  SwitchCounters counters_;
  ns3::TracedCallback<uint16_t, const uint8_t*, uint32_t> program_in_trace_;
  ns3::TracedCallback<uint16_t, const uint8_t*, uint32_t, uint64_t> program_out_trace_;
  ns3::TracedCallback<uint64_t> program_timer_trace_;
};

}  // namespace inasim
