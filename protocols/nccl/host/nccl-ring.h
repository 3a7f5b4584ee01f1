// NCCL's ring allreduce over RoCE (the IB transport on RC queue pairs), as
// NCCL 2.7.8 runs it with its Simple protocol (nvidia/nccl@033d799:
// src/collectives/device/all_reduce.h:11-84, src/transport/net.cc, net_ib.cc;
// docs/research/baselines.md §3, §5):
//
//   - `channels` rings, each with its own queue pair to the next rank and
//     from the previous one; the tensor is walked in loops of
//     n x channels x chunk (chunk = buffer / 2), channel c taking n chunks of
//     each loop: realChunkSize = min(chunk, ceil(rest / (n channels)));
//   - per loop 2(n-1) steps (reduce-scatter then allgather): at step t rank r
//     sends chunk (r - t) mod n, received chunks are reduced (the first n-1
//     steps) or copied and sent on at the next step;
//   - each chunk goes as 2 slices (SLICESPERCHUNK), each slice one RDMA
//     message; per channel the GPU runs its ops in order, each waiting for
//     its slice from the previous rank and for a free send slot
//     (primitives.h:182-209);
//   - a send slot holds a slice from the moment the GPU writes it until the
//     next rank's NIC acknowledges it (net.cc:238, :307-315); it leaves once
//     the receiver granted it (its clear-to-send, an RDMA write back on the
//     same queue pair: net_ib.cc:289-295, :631-633); a receiver grants a
//     slot again once the GPU has consumed its slice (net.cc:345-348):
//     `slots` each way (NCCL_STEPS / SLICESTEPS = 4);
//   - the queue pairs are RcQp: go-back-N on a sequence error, the local ACK
//     timeout on a tail loss, failure after 7 expiries.
// Reductions cost no time (an ideal GPU); every element every rank ends with
// is checked against the exact sum.
#pragma once

#include "ina/rank-collectives.h"
#include "protocols/nccl/host/nccl-tcp.h"
#include "protocols/nccl/host/rc-qp.h"
#include "protocols/nccl/host/spec.h"

#include "ns3/application.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

namespace inasim {

class Fabric;
class NcclRing;

/// One slice message of a channel's stream (the same stream shape on every
/// connection of the channel): its loop, step, slice and chunk offset.
struct NcclSlice {
  uint32_t loop = 0, step = 0, slice = 0;
  uint64_t chunk_first = 0;  ///< element offset of chunk 0 of this (loop, channel)
  uint64_t real_chunk = 0;   ///< realChunkSize in elements
  uint64_t slice_elements = 0;
};

/// Who sends what, per channel: the messages of its stream in order. An
/// allreduce (all_reduce.h:20-84) walks the tensor in loops of
/// n x channels x chunk and runs 2(n-1) sending steps per loop; a
/// reduce-scatter (reduce_scatter.h:11-56) and an all-gather
/// (all_gather.h:11-63) take the tensor as n segments of `segment`
/// elements, one per rank (NCCL's per-rank count), walk a segment in loops
/// of channels x chunk and run n-1 sending steps per loop, each step on the
/// same chunk of another rank's segment. All three cut a chunk into the same
/// kSlicesPerChunk slices (collectives.h:62-67). A broadcast
/// (broadcast.h:10-52) is a chain from `root`: loops of channels x chunk
/// with chunks of buffer / 8 (BROADCAST_CHUNKSTEPS 1), one slice each
/// (BROADCAST_SLICESTEPS 1), so twice the allreduce's slots of half the
/// size; the root only sends, the rank before it only receives.
struct NcclPlan {
  /// Slices per chunk: ALLREDUCE_CHUNKSTEPS / ALLREDUCE_SLICESTEPS, and
  /// REDUCESCATTER_ and ALLGATHER_'s alike.
  static constexpr uint32_t kSlicesPerChunk = 2;
  /// `elements`: the whole tensor; a reduce-scatter or all-gather needs a
  /// multiple of `ranks` (NCCL takes the count per rank). `root`: a
  /// broadcast's.
  NcclPlan(uint32_t ranks, uint64_t elements, const NcclSpec& spec,
           CollectiveKind kind = CollectiveKind::kAllreduce, uint32_t root = 0);
  /// Element v of a slice the previous rank sent at its step t, as this rank
  /// takes it. An allreduce reduces it into `rank`'s contribution in the
  /// reduce-scatter steps (t < n-1) and checks it against the exact sum
  /// where it completes the result (t >= n-2); a reduce-scatter reduces at
  /// every step and checks at the last (t = n-2); an all-gather copies and
  /// checks every element against its segment owner's contribution, a
  /// broadcast copies and checks it against the root's. The value this rank
  /// keeps and, before the last step, sends on.
  uint32_t Take(const TensorData& data, uint32_t rank, uint32_t t, uint64_t element, uint32_t v, uint64_t& checked,
                uint64_t& mismatches) const;
  /// One of the GPU's ops on a channel (all_reduce.h:43-82,
  /// reduce_scatter.h:38-55, all_gather.h:38-62): a loop has SendSteps()+1
  /// steps of kSlicesPerChunk slices each; step u >= 1 takes the previous
  /// rank's step u-1 slice (`recv`), step u < SendSteps() sends (`send`).
  /// A broadcast's loop is one op: `rank` receives unless it is the root and
  /// sends unless the next rank is (broadcast.h:38-50).
  struct Op {
    bool recv = false, send = false;
    size_t sent_message = 0;      ///< the stream index this op sends (if `send`)
    size_t received_message = 0;  ///< the stream index it takes (if `recv`)
  };
  /// What `rank`'s GPU does in op `op` of channel c, both transports alike:
  /// step 0 writes the rank's own values to `out`; a later step takes the
  /// received slice's values `in` (nullptr: it came short, its elements
  /// count as mismatches) through Take and, if it sends, writes them to
  /// `out`. Big-endian 32-bit values, no headers.
  void RunGpuOp(const TensorData& data, uint32_t rank, uint32_t c, const Op& op, const uint8_t* in, uint8_t* out,
                uint64_t& checked, uint64_t& mismatches) const;
  /// Sending steps per loop: 2(n-1) for an allreduce, n-1 for a
  /// reduce-scatter or all-gather, 1 for a broadcast.
  uint32_t SendSteps() const;
  /// Steps per loop, each of slices() ops: SendSteps() + 1, a broadcast's 1.
  uint32_t StepsPerLoop() const { return broadcast() ? 1 : SendSteps() + 1; }
  /// Slices per chunk: kSlicesPerChunk, a broadcast's 1.
  uint32_t slices() const { return broadcast() ? 1 : kSlicesPerChunk; }
  bool broadcast() const { return kind == CollectiveKind::kBroadcast; }
  /// Whether `rank` receives slices (all but a broadcast's root).
  bool Receives(uint32_t rank) const { return !broadcast() || rank != root; }
  /// The ops of channel c, in the order the GPU runs them.
  size_t Ops(uint32_t c) const { return streams[c].size() / MessagesPerLoop() * StepsPerLoop() * slices(); }
  Op OpAt(size_t op, uint32_t rank) const;
  /// Elements every rank together checks: n E, E (each rank its segment's
  /// sum) or (n-1) E (each rank every other segment, or the root's tensor).
  uint64_t checks() const;
  /// Bytes a rank sends, as a factor of the tensor: 2(n-1)/n, (n-1)/n, or 1
  /// (a broadcast: each rank of the chain but the last sends the tensor).
  double traffic_factor() const { return TrafficFactor(kind, n); }
  uint32_t n = 0, channels = 0;
  uint64_t elements = 0;
  CollectiveKind kind = CollectiveKind::kAllreduce;
  uint32_t root = 0;     ///< a broadcast's
  uint64_t chunk_elements = 0;  ///< chunkSize: buffer / 2 (a broadcast's buffer / 8), in elements
  uint64_t segment = 0;  ///< a reduce-scatter's or all-gather's elements per rank
  /// Slices in flight each way per connection: NCCL_STEPS / SLICESTEPS, i.e.
  /// the spec's `slots` (the allreduce's), twice that for a broadcast.
  uint32_t slots = 0;
  std::vector<std::vector<NcclSlice>> streams;  ///< [channel][message]
  /// A loop's messages on one channel: SendSteps() sending steps of slices().
  size_t MessagesPerLoop() const { return size_t{SendSteps()} * slices(); }
  /// Elements [first, first + count) of rank r's message m on channel c
  /// (count 0: an empty slice, sent all the same).
  std::pair<uint64_t, uint64_t> Range(uint32_t r, uint32_t c, size_t m, bool received) const;

 private:
  /// The segment (of n) that `sender` sends at step t of a loop.
  uint32_t SegmentSent(uint32_t sender, uint32_t t) const;
};

class NcclRank : public ns3::Application {
 public:
  static ns3::TypeId GetTypeId();
  void Setup(NcclRing* owner, uint32_t rank);
  void BeginIteration(uint32_t iteration);
  /// A RoCE packet for one of this rank's queue pairs.
  void Deliver(const uint8_t* p, uint32_t len);
  RcCounters counters() const;
  /// The most slices one of its channels held at once (receive + send
  /// slots, the latter until acknowledged): at most 2 x `slots`.
  size_t max_slices_held() const;

 protected:
  void DoDispose() override;

 private:
  // Per channel, the GPU walks the plan's ops in order (NcclPlan::OpAt). An
  // op that sends needs a free send slot: a slice holds one from the moment
  // the GPU writes it until the next rank's NIC acknowledges it (net.cc:238,
  // :307-315). An op that receives needs its slice arrived; consuming it
  // frees its receive slot, which the receive proxy posts again with a
  // clear-to-send for `slots` messages later (net.cc:345-348).
  // A connection of one connection set (NcclRing::SeatOf): it serves one
  // collective at a time, which may still owe slices after the rank moved on
  // to a collective of another set (with communicators).
  struct Channel {
    RcQp to_next, from_prev;
    uint32_t collective = UINT32_MAX;  ///< the collective it serves
    uint32_t channel = 0;              ///< its index in the plan's channels
    uint32_t place = 0;                ///< the rank's place in the collective's group
    const NcclPlan* plan = nullptr;    ///< the collective's plan in that group
    const TensorData* data = nullptr;  ///< and its data
    size_t op = 0;           ///< the GPU's next op of this collective
    size_t granted = 0;      ///< messages the next rank has granted (clear-to-send)
    size_t sent = 0;         ///< messages handed to to_next
    size_t received = 0;     ///< messages arrived from prev
    uint32_t send_slots = 0; ///< slices written by the GPU and not yet acknowledged (across collectives)
    std::deque<std::vector<uint8_t>> outbox;  ///< written slices waiting for a grant, in order
    std::deque<std::vector<uint8_t>> inbox;   ///< arrived slices (header + values) the GPU has not consumed, in order
    size_t max_held = 0;     ///< the most slices in receive and send slots at once
  };
  void StartApplication() override {}
  void StopApplication() override;
  void OnSlice(uint32_t c, std::vector<uint8_t>&& msg);
  void OnGrant(uint32_t c, std::vector<uint8_t>&& msg);
  void OnAcknowledged(uint32_t c, uint32_t messages);
  void Grant(uint32_t c, size_t message);
  /// The GPU: runs channel c's ops while each has its slice and a send slot.
  void Advance(uint32_t c);
  bool RunOp(uint32_t c);
  /// The send proxy: written slices the next rank has granted, to the QP.
  void TrySend(uint32_t c);
  void MaybeDone();

  NcclRing* owner_ = nullptr;
  uint32_t rank_ = 0;
  HostEndpoint roce_;  ///< UDP 4791: every queue pair's incoming packets
  std::vector<std::unique_ptr<Channel>> channels_;  ///< [set x channels + channel]
  uint32_t iteration_ = 0;
  uint32_t first_conn_ = 0, conns_ = 0;  ///< the current collective's connections
  bool running_ = false;
  uint64_t checked_ = 0, mismatches_ = 0;
};

/// One NCCL ring over a set of hosts.
class NcclRing {
 public:
  /// `elements`: per collective of an iteration (RankCollectives).
  NcclRing(Fabric& fabric, const std::vector<uint32_t>& hosts, std::vector<uint64_t> elements, DType dtype,
           DataPattern pattern, uint64_t seed, const NcclSpec& spec, uint32_t iterations, uint64_t compute_gap_ps,
           const ScheduleSpec& schedule);
  ~NcclRing();
  void Start(uint64_t at_ps);
  double progress() const { return coll_.progress(); }
  bool done() const { return coll_.done(); }
  std::function<void()> on_finished;
  void Report(const struct Scenario& s, bool finished, struct WorkloadReport& out) const;

  // For the ranks. The first collective's plan (its channels and ranks: the
  // connections every rank makes); collective c's plan in group g of its
  // communicator, and its data there.
  const NcclPlan& plan() const { return plans_[0][0]; }
  const NcclPlan& plan_of(uint32_t c, uint32_t g) const { return plans_[coll_.kind(c)][g]; }
  const TensorData& data(uint32_t c, uint32_t g) const { return coll_.data(c, g); }
  const NcclSpec& spec() const { return spec_; }
  RcConfig rc() const;
  uint32_t host(uint32_t rank) const { return hosts_[rank]; }
  Fabric& fabric() const { return *fabric_; }
  /// Connection sets a rank makes (as NCCL connects each communicator's
  /// rings when it is made): set 0 the ring of every rank, set k > 0 the ring
  /// of the rank's group in communicator k-1; `channels` connections each way per set.
  uint32_t connection_sets() const { return static_cast<uint32_t>(neighbours_.size()); }
  /// Rank r's next and previous ranks around the ring of connection set k.
  std::pair<uint32_t, uint32_t> NeighboursIn(uint32_t k, uint32_t r) const { return neighbours_[k][r]; }
  /// Where rank r runs collective c: its connection set, its group and its place (the plan's rank).
  struct Seat {
    uint32_t set = 0, group = 0, place = 0;
  };
  Seat SeatOf(uint32_t c, uint32_t rank) const;
  /// Connections per rank each way, over every set: at most kMaxConnections.
  static constexpr uint32_t kMaxConnections = 64;
  /// Queue pair numbers: rank r's to-next and from-prev QPs of connection
  /// `conn` (set x channels + channel).
  static uint32_t QpnToNext(uint32_t r, uint32_t conn) { return 2 * (r * kMaxConnections + conn) + 16; }
  static uint32_t QpnFromPrev(uint32_t r, uint32_t conn) { return 2 * (r * kMaxConnections + conn) + 17; }
  void RankDone(uint32_t rank, uint32_t it, uint64_t checked, uint64_t mismatches) {
    coll_.RankDone(rank, it, checked, mismatches);
  }
  void QpFailed() { ++qp_failures_; }
  /// TCP: a rank's connection to the next rank, or from the previous one, is up.
  void TcpConnectionUp();
  /// TCP: the ranks' counters (timeouts and recoveries summed, the largest unread backlog).
  NcclTcpCounters tcp_counters() const;
  /// Every queue pair's counters, summed.
  RcCounters counters() const;
  size_t max_slices_held() const;
  const std::vector<CollectiveRecord>& records() const { return coll_.records(); }

 private:
  Fabric* fabric_;
  std::vector<uint32_t> hosts_;
  std::vector<std::vector<NcclPlan>> plans_;  ///< [collective of an iteration][group of its communicator]
  /// [connection set][rank]: its next and previous ranks.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> neighbours_;
  std::vector<uint32_t> set_of_;  ///< per collective of an iteration: its connection set
  NcclSpec spec_;
  RankCollectives coll_;
  std::vector<ns3::Ptr<NcclRank>> ranks_;          ///< RoCE
  std::vector<ns3::Ptr<NcclTcpRank>> tcp_ranks_;   ///< TCP
  uint32_t qp_failures_ = 0;
  uint32_t tcp_connections_ = 0;
  bool start_due_ = false;
  void CreateRanks(Fabric& fabric, const std::vector<uint32_t>& hosts);
  void SetNeighbours(const ScheduleSpec& schedule);
  /// TCP connections every rank makes and accepts: 2 x ranks x channels x sets.
  uint32_t connections() const {
    return 2 * static_cast<uint32_t>(hosts_.size()) * plan().channels * connection_sets();
  }
  bool tcp() const { return spec_.transport == NcclTransport::kTcp; }
};

}  // namespace inasim
