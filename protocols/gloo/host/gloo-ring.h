// Gloo's ring allreduce as PyTorch's ProcessGroupGloo runs it
// (facebookincubator/gloo@cc44198: gloo/allreduce.cc:147-392, the ring
// algorithm `allreduce(opts)` picks; docs/research/baselines.md §2), over
// ns-3's TCP:
//
//   - rank r receives from r+1 and sends to r-1, one TCP connection per pair
//     (tcp/pair.h: one socket per peer); data flows towards r-1 and the
//     receive-ready notifications come back on the same connection;
//   - the tensor is cut into numSegments = roundUp(max(ceil(S / 1 MiB), 2n), n)
//     segments, P = numSegments / n per rank (allreduce.cc:196-218);
//   - reduce-scatter, then allgather, each numSegments - P + 2 iterations: at
//     iteration i, wait for recv(i-2) (reduce it) and send(i-2), then post
//     recv(i) and send(i): at most two sends and two receives in flight; the
//     segment received at iteration j is sent on at j + P (:278-320, :361-391);
//   - a send leaves only after the peer's NOTIFY_RECV_READY for it
//     (tcp/pair.cc:898-929), each message after a 48-byte preamble;
//   - loss is TCP's to recover (Gloo retries nothing).
// Reductions cost no time (the ideal host); every element every rank ends
// with is checked against the exact sum.
#pragma once

#include "ina/rank-collectives.h"
#include "protocols/gloo/host/spec.h"

#include "ns3/application.h"
#include "ns3/socket.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace inasim {

class Fabric;
class GlooRing;
class GlooContext;

/// Who sends which piece when: the plan every rank shares. An allreduce's
/// pieces are its segments; an all-gather's (gloo/allgather.cc:52-96, its
/// own ring: rank r sends to r+1, one phase of 2(n-1) transfers, two in
/// flight) are the two halves of each rank's 1/n of the tensor. A
/// broadcast (gloo/broadcast.cc:43-94) is a binomial tree over Gloo's full
/// mesh: the whole tensor in one message per edge (Parent, Children).
struct GlooPlan {
  GlooPlan(uint32_t ranks, uint64_t bytes, uint64_t max_segment_bytes,
           CollectiveKind kind = CollectiveKind::kAllreduce, uint32_t root = 0);
  /// Collective `c` of an iteration of `schedule` (`elements` of it) in a
  /// group of `ranks`, as ProcessGroupGloo runs it: a reduce-scatter is the
  /// allreduce of the whole tensor, an all-gather and a broadcast Gloo's own.
  /// Throws std::invalid_argument as the constructor.
  static GlooPlan Of(const ScheduleSpec& schedule, size_t c, uint32_t ranks, uint64_t elements,
                     uint64_t max_segment_bytes);
  uint32_t n = 0;
  uint64_t elements = 0;
  CollectiveKind kind = CollectiveKind::kAllreduce;
  uint32_t root = 0;  ///< a broadcast's root rank
  bool broadcast() const { return kind == CollectiveKind::kBroadcast; }
  /// A broadcast's tree (broadcast.cc:45-83): vrank v = (r - root) mod n;
  /// in round i (0 .. ceil(log2 n) - 1) vrank v < 2^i sends to v + 2^i (if
  /// < n), so v's parent is v minus its highest bit, and v sends to v + 2^i
  /// for every 2^i > v, in round order. Parent: nullopt for the root.
  std::optional<uint32_t> Parent(uint32_t r) const;
  std::vector<uint32_t> Children(uint32_t r) const;
  uint32_t segments = 0;     ///< numSegments (an all-gather: n)
  uint32_t per_rank = 0;     ///< P
  uint64_t segment_elements = 0;
  bool all_gather() const { return kind == CollectiveKind::kAllGather; }
  /// Phases: reduce-scatter and allgather, or the all-gather's one.
  uint32_t phases() const { return all_gather() ? 1 : 2; }
  /// Iterations with a send and a receive per phase: numSegments - P, or 2(n-1).
  uint32_t transfers() const { return all_gather() ? 2 * (n - 1) : segments - per_rank; }
  /// Elements of piece s: [first, first + count).
  uint64_t first(uint32_t s) const;
  uint64_t count(uint32_t s) const;
  /// Piece rank r sends (receives) at iteration i of reduce-scatter (phase 0) or allgather (1).
  uint32_t sent(uint32_t r, uint32_t phase, uint32_t i) const;
  uint32_t received(uint32_t r, uint32_t phase, uint32_t i) const;
  /// Whether rank r sends its own values at iteration i of `phase` (else a piece it received).
  bool OwnData(uint32_t phase, uint32_t i) const { return phase == 0 && i < (all_gather() ? 2 : per_rank); }
  /// Whether what arrives at iteration i of `phase` completes its elements, and is sent on later.
  bool Final(uint32_t phase, uint32_t i) const { return all_gather() || phase == 1 || i + per_rank >= transfers(); }
  bool Forwards(uint32_t phase, uint32_t i) const;
  /// Its owner's contribution (an all-gather's piece) or the sum, for element e.
  uint32_t Expected(const TensorData& data, uint64_t e) const;
};

class GlooRank : public ns3::Application {
 public:
  static ns3::TypeId GetTypeId();
  /// `rank`: its place in the context's group.
  void Setup(GlooContext* owner, uint32_t rank);
  /// Opens the listener and connects towards rank - 1, and to the higher
  /// of its other broadcast peers (GlooContext::MeshPeers).
  void Connect();
  bool connected() const { return send_ready_ && recv_ready_ && mesh_pending_ == 0; }
  /// Its sending connection's TCP: retransmission timeouts (entries into
  /// CA_LOSS) and fast recoveries (into CA_RECOVERY).
  uint64_t tcp_timeouts() const { return tcp_timeouts_; }
  uint64_t tcp_recoveries() const { return tcp_recoveries_; }
  void BeginIteration(uint32_t iteration);

 protected:
  void DoDispose() override;

 private:
  struct Message {
    uint64_t type = 0, iteration = 0, index = 0, bytes = 0;
  };
  void StartApplication() override {}
  void StopApplication() override {}
  bool OnAcceptRequest(ns3::Ptr<ns3::Socket>, const ns3::Address&) { return true; }
  void OnAccept(ns3::Ptr<ns3::Socket> s, const ns3::Address&);
  void OnConnected(ns3::Ptr<ns3::Socket>);
  void OnConnectFailed(ns3::Ptr<ns3::Socket>);
  void OnCongState(uint32_t from, uint32_t to);
  void OnData(ns3::Ptr<ns3::Socket> s);
  void OnSendSpace(ns3::Ptr<ns3::Socket>, uint32_t);
  /// A connection's bytes still to hand to its socket (its buffer was full).
  struct Outbox {
    ns3::Ptr<ns3::Socket> socket;
    std::vector<uint8_t> bytes;
    size_t sent = 0;
    std::vector<std::pair<size_t, uint32_t>> marks;  ///< (end offset, transfer): a send completes there
  };
  /// A connection to a broadcast peer that is no ring neighbour (Gloo's full
  /// mesh has a pair for every peer: rendezvous/context.cc:25-31).
  struct MeshPeer {
    ns3::Ptr<ns3::Socket> socket;
    Outbox box;
    std::vector<uint8_t> in;
  };
  void ConnectMesh();
  void OnMeshConnected(uint32_t peer);
  /// The mesh pair on socket `s` and its peer, or nullptr.
  MeshPeer* MeshOf(ns3::Ptr<ns3::Socket> s, uint32_t* peer = nullptr);
  /// The box that reaches `peer`: a ring neighbour's connection, else its mesh pair.
  Outbox& BoxTo(uint32_t peer);
  uint32_t prev() const;
  uint32_t next() const;
  void Parse(std::vector<uint8_t>& in, bool from_next, uint32_t peer);
  // Broadcast (gloo/broadcast.cc): receive from the parent, then send to
  // every child at once; done when received and every send is written.
  void BeginBroadcast();
  void OnBcastReady(uint32_t peer);
  void OnBcastData(const Message& m, const uint8_t* payload, uint32_t peer);
  void TryBcastSends();
  void TrySendBcastOrDone();
  void BcastMaybeDone();
  void Write(Outbox& box, const Message& m, const uint8_t* payload, uint64_t payload_bytes, int transfer);
  void Flush(Outbox& box);
  void Advance();
  void Post(uint32_t i);
  void TrySend(uint32_t i);
  void OnSegment(const Message& m, const uint8_t* payload);
  void OnRecvReady(const Message& m);
  void PhaseDone();

  GlooContext* owner_ = nullptr;
  uint32_t rank_ = 0;
  ns3::Ptr<ns3::Socket> listener_, to_prev_, from_next_;
  bool send_ready_ = false, recv_ready_ = false;
  std::vector<uint8_t> in_prev_, in_next_;  ///< bytes read, not yet parsed
  Outbox to_prev_box_, from_next_box_;
  std::vector<uint8_t> scratch_;
  // The collective in progress.
  uint32_t iteration_ = 0, phase_ = 0;
  bool running_ = false;
  uint32_t next_ = 0;  ///< the iteration the loop stands at
  std::vector<uint8_t> received_, peer_ready_, posted_, sent_;  ///< per transfer of this phase
  std::unordered_map<uint32_t, std::vector<uint32_t>> segments_;  ///< held segment -> values
  std::map<uint32_t, MeshPeer> mesh_;  ///< by peer rank
  uint32_t mesh_pending_ = 0;          ///< mesh connections not yet up
  std::optional<uint32_t> parent_;     ///< the broadcast in progress: this rank's parent, children
  std::vector<uint32_t> children_;
  std::vector<uint8_t> bcast_data_;    ///< the tensor, big-endian, once held
  bool have_data_ = false;
  uint64_t checked_ = 0, mismatches_ = 0;
  uint64_t tcp_timeouts_ = 0, tcp_recoveries_ = 0;
};

/// One Gloo context: the ranks of one process group (the world, or one
/// group of a communicator), each with its own pairs and listener, as
/// PyTorch's ProcessGroupGloo makes one per group (new_group: its own
/// store prefix, device and connectFullMesh). It runs the group's
/// collectives one at a time; ranks are places in the group.
class GlooContext {
 public:
  /// `set`: 0 the world, k communicator k - 1 (its collectives only;
  /// CommunicatorSet); `members`: the job's ranks in the group, in group order.
  GlooContext(GlooRing& job, uint32_t set, uint32_t group, std::vector<uint32_t> members, uint16_t port);
  /// The plan of the collective in progress (the group runs one at a time).
  const GlooPlan& plan() const { return *plans_[current_]; }
  /// The largest segment of its collectives (the sockets' buffers are
  /// sized for it); a broadcast's unbound buffer does not raise SO_SNDBUF
  /// (tcp/pair.cc:845-857 is the bound-buffer path), so it is not counted.
  uint64_t max_segment_elements() const;
  /// Place r's broadcast parents and children over every broadcast of its
  /// collectives that are not its ring neighbours: the pairs it connects besides the ring.
  std::vector<uint32_t> MeshPeers(uint32_t r) const;
  const GlooSpec& spec() const;
  uint16_t port() const { return port_; }
  const TensorData& data(uint32_t c) const;
  uint32_t num_ranks() const { return static_cast<uint32_t>(members_.size()); }
  uint32_t host(uint32_t place) const;
  void RankConnected();
  void RankDone(uint32_t place, uint32_t c, uint64_t checked, uint64_t mismatches);
  /// Creates its ranks' applications (one per member host) and connects them.
  void Connect();
  /// Starts collective c (of this context's set) at its ranks.
  void Begin(uint32_t c);
  const std::vector<ns3::Ptr<GlooRank>>& ranks() const { return ranks_; }
  /// Its plan of collective `kind` of an iteration, or nullptr (another set's).
  const GlooPlan* plan_of(uint32_t kind) const { return plans_[kind] ? &*plans_[kind] : nullptr; }

 private:
  GlooRing* job_;
  uint32_t group_;
  std::vector<uint32_t> members_;
  uint16_t port_;
  std::vector<std::optional<GlooPlan>> plans_;  ///< per collective of an iteration: this set's
  uint32_t current_ = 0;
  std::vector<ns3::Ptr<GlooRank>> ranks_;
};

/// One Gloo job over a set of hosts: a context for the world and one per
/// group of each communicator its collectives use (PyTorch: one
/// ProcessGroupGloo each, listening on `port` + the set's index).
class GlooRing {
 public:
  /// `elements`: per collective of an iteration (RankCollectives).
  GlooRing(Fabric& fabric, const std::vector<uint32_t>& hosts, const std::vector<uint64_t>& elements, DType dtype,
           DataPattern pattern, uint64_t seed, const GlooSpec& spec, uint32_t iterations, uint64_t compute_gap_ps,
           const ScheduleSpec& schedule);
  ~GlooRing();
  void Start(uint64_t at_ps);
  double progress() const { return coll_.progress(); }
  bool done() const { return coll_.done(); }
  std::function<void()> on_finished;
  void Report(const struct Scenario& s, bool finished, struct WorkloadReport& out) const;

  // For the contexts.
  const GlooSpec& spec() const { return spec_; }
  const RankCollectives& collectives() const { return coll_; }
  const ScheduleSpec& schedule() const { return schedule_; }
  uint32_t host(uint32_t rank) const { return hosts_[rank]; }
  Fabric& fabric() const { return *fabric_; }
  /// The set (0: the world, k: communicator k - 1) collective `kind` of an iteration runs in.
  uint32_t set_of(uint32_t kind) const { return set_of_[kind]; }
  void RankConnected();
  void RankDone(uint32_t rank, uint32_t c, uint64_t checked, uint64_t mismatches) {
    coll_.RankDone(rank, c, checked, mismatches);
  }
  uint64_t tcp_timeouts() const;
  uint64_t tcp_recoveries() const;

 private:
  /// `count` of every rank of every context, summed.
  uint64_t SumOverRanks(uint64_t (GlooRank::*count)() const) const;

  Fabric* fabric_;
  std::vector<uint32_t> hosts_;
  GlooSpec spec_;
  ScheduleSpec schedule_;
  RankCollectives coll_;
  std::vector<uint32_t> set_of_;  ///< per collective of an iteration
  std::vector<std::vector<std::unique_ptr<GlooContext>>> contexts_;  ///< [set][group]; empty: a set no collective uses
  uint32_t apps_ = 0, connected_ = 0;
  bool start_due_ = false;
};

}  // namespace inasim
