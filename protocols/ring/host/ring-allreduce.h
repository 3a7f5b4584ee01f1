// Host-based ring allreduce over UDP: the bandwidth-optimal baseline
// (reduce-scatter then allgather, 2(n-1) steps; Patarasuk & Yuan 2009), pipelined
// at packet granularity as NCCL/Gloo pipeline at slice granularity. In a
// schedule a collective may also be the reduce-scatter alone (its first n-1
// steps: each rank ends with the sum of one chunk) or the all-gather alone
// (its last n-1 steps: each rank starts with its chunk and ends with all),
// or a broadcast (a chain from the root, as NCCL's ring broadcast: each rank
// but the root receives the root's tensor and each but the last forwards it,
// packet by packet).
//
// Each rank streams 2(n-1) chunks to its successor. Packet j of step t can leave
// once packet j of step t-1 arrived from the predecessor (step 0 is the rank's
// own data). Reliability per stream: a window of unacknowledged packets,
// cumulative + 64-bit selective ACKs (coalesced), retransmission on timeout.
// Every fully reduced element a rank ends with is checked against the exact sum.
#pragma once

#include "ina/collective-table.h"
#include "ina/host-endpoint.h"
#include "ina/rank-collectives.h"
#include "ina/tensor-data.h"
#include "protocols/ring/host/spec.h"

#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/inet-socket-address.h"
#include "ns3/node-container.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace inasim {

struct RingConfig {
  uint32_t elements_per_packet = 0;   ///< 0: as many as fit the MTU
  uint32_t window_packets = 64;       ///< unacknowledged packets per stream
  uint32_t ack_every = 8;             ///< coalesce: one ACK per this many packets
  uint64_t ack_delay_ps = 2'000'000;  ///< flush a partial ACK batch after this long
  uint64_t rto_ps = 200'000'000;      ///< retransmission timeout
  uint16_t udp_port = 4791;
};

struct Scenario;
/// The ring's settings from scenario `workload.ring`.
RingConfig RingConfigOf(const Scenario& s);

/// Wire format of the ring's UDP payload (big-endian).
struct RingWire {
  static constexpr uint8_t kData = 1, kAck = 2;
  static constexpr uint32_t kDataHeader = 16;  // type, dtype, iter(2), step(2), count(2), seq(4), index(4)
  static constexpr uint32_t kAckBytes = 16;    // type, 0, iter(2), cum(4), sack(8)
};

/// Packet layout shared by all ranks of one collective. Steps count from
/// the collective's first: an allreduce's 2(n-1), a reduce-scatter's n-1
/// (the allreduce's first), an all-gather's n-1 (its last); a broadcast has
/// one step, the whole tensor as one chunk, empty at the root's previous
/// rank (the chain's last).
class RingPlan {
 public:
  RingPlan(uint32_t ranks, uint64_t elements, uint32_t elements_per_packet,
           CollectiveKind kind = CollectiveKind::kAllreduce, uint32_t root = 0);
  uint32_t ranks() const { return n_; }
  uint64_t elements() const { return elements_; }
  uint32_t epp() const { return epp_; }
  uint64_t total_packets() const { return total_; }
  CollectiveKind kind() const { return kind_; }
  uint32_t steps() const { return last_ - first_; }
  /// Step t as the allreduce's step (0 .. 2n-3): t < n-1 reduce, t >= n-2 complete an element.
  uint32_t allreduce_step(uint32_t t) const { return first_ + t; }
  uint64_t chunk_first(uint32_t c) const { return c * total_ / chunks_; }
  uint32_t chunk_packets(uint32_t c) const { return static_cast<uint32_t>(chunk_first(c + 1) - chunk_first(c)); }
  /// Chunk rank r sends at step t.
  uint32_t chunk_sent(uint32_t r, uint32_t t) const;
  /// First sequence number of step t in rank r's outgoing stream.
  uint64_t step_base(uint32_t r, uint32_t t) const;
  /// Whether rank r sends its own values at `step` (step 0; a broadcast's root).
  bool OwnData(uint32_t r, uint32_t step) const { return broadcast() ? r == root_ : step == 0; }
  /// Whether a packet received at the sender's `step` is reduced into the
  /// rank's own values, and whether it completes an element there.
  bool Reduces(uint32_t step) const { return !broadcast() && allreduce_step(step) < n_ - 1; }
  bool Completes(uint32_t step) const { return broadcast() || allreduce_step(step) + 2 >= n_; }
  /// The step at which rank r sends on what it received at the sender's
  /// `step`; false when it keeps it (its last step, the chain's last rank).
  bool Forwards(uint32_t r, uint32_t step, uint32_t& out_step) const;
  bool broadcast() const { return kind_ == CollectiveKind::kBroadcast; }
  /// What element e of `chunk` must be once complete: the sum, (all-gather)
  /// the contribution of the rank that owns the chunk, or the root's.
  uint32_t Expected(const TensorData& data, uint32_t chunk, uint64_t e) const;
  /// Elements every rank together checks: n x E (allreduce), E (reduce-scatter), (n-1) x E (all-gather).
  uint64_t checks() const;
  /// Bytes each rank sends, as a factor of the tensor: 2(n-1)/n, (n-1)/n,
  /// or 1 (a broadcast's every rank but the last sends the tensor).
  double traffic_factor() const { return TrafficFactor(kind_, n_); }
  /// The analytic bound's formula: "2(n-1)/n * S / B", "(n-1)/n * S / B" or "S / B".
  const char* bound_formula() const { return BoundFormula(kind_); }
  uint64_t stream_packets(uint32_t r) const { return step_base(r, steps()); }
  /// Elements carried by global packet g: [g*epp, end).
  uint32_t packet_elements(uint64_t g) const;

 private:
  uint64_t CyclicSum(uint32_t lo, uint32_t len) const;
  uint64_t AllreduceBase(uint32_t r, uint32_t t) const;
  uint32_t n_;
  uint64_t elements_;
  uint32_t epp_;
  uint64_t total_;
  CollectiveKind kind_;
  uint32_t root_ = 0;    ///< a broadcast's
  uint32_t chunks_ = 0;  ///< n, a broadcast's 1
  uint32_t first_ = 0, last_ = 0;  ///< the allreduce's steps this collective runs
};

class RingRank;

/// Coordinates one ring allreduce over a set of hosts: its collectives (one
/// per iteration, or workload.schedule's) start as RankCollectives says (the
/// next when every rank ended the last, after the gap or when the schedule
/// has it ready).
class RingAllreduce {
 public:
  /// `elements`: per collective of an iteration.
  RingAllreduce(const ns3::NodeContainer& hosts, const std::vector<ns3::Ipv4Address>& addresses,
                const std::vector<uint64_t>& elements, DType dtype, DataPattern pattern, uint64_t data_seed,
                const RingConfig& config, uint32_t iterations, uint64_t compute_gap_ps, uint16_t mtu_bytes,
                const ScheduleSpec& schedule = {});
  ~RingAllreduce();

  void Start(uint64_t at_ps);
  /// The hosts' ids by rank (set by the maker): hosts.csv's host column.
  void SetHosts(std::vector<uint32_t> hosts) { coll_.hosts = std::move(hosts); }
  bool done() const { return coll_.done(); }
  const std::vector<CollectiveRecord>& records() const { return coll_.records(); }
  /// The analytic bound 2(n-1)/n * S / B of the first collective at `host_rate_gbps`, in seconds.
  double AnalyticBound(double host_rate_gbps) const { return AnalyticBound(plan(), host_rate_gbps); }
  static double AnalyticBound(const RingPlan& plan, double host_rate_gbps);
  /// The ring's own columns of collectives.csv, after the core ones.
  static std::vector<std::string> ExtraColumns();
  /// Its collectives into `table` as a new job, with the ring's columns
  /// (busbw, the bound, retransmissions); adds the payload they delivered
  /// (summed over ranks). Returns the job's index.
  uint32_t AddCollectives(CollectiveTable& table, double host_rate_gbps, uint64_t& payload_delivered) const;
  /// The first collective's plan (the only one without a schedule); collective
  /// c's (in its first group); collective c's in group g of its communicator.
  const RingPlan& plan() const { return plans_[0][0]; }
  const RingPlan& plan_of(uint32_t c) const { return plans_[coll_.kind(c)][0]; }
  const RingPlan& plan_of(uint32_t c, uint32_t g) const { return plans_[coll_.kind(c)][g]; }
  /// Where rank r runs collective c: its group, its place there, and the
  /// addresses of the group's next and previous ranks around the ring.
  struct Seat {
    uint32_t group = 0, place = 0;
    ns3::Ipv4Address succ, pred;
  };
  Seat SeatOf(uint32_t c, uint32_t rank) const;
  /// Iteration starts per rank, with workload.schedule (iterations.csv).
  std::vector<IterationStart> IterationStarts(uint32_t job) const { return coll_.IterationStarts(job); }
  /// Fraction of the whole workload finished, for progress reports.
  double progress() const;
  uint64_t packets_sent() const;
  /// Called when every iteration finished.
  std::function<void()> on_finished;

  // Called by ranks: rank `rank` holds collective c's result, with this
  // collective's checks, mismatches and retransmissions.
  void RankDone(uint32_t rank, uint32_t c, uint64_t checked, uint64_t mismatches, uint64_t retransmissions);
  const TensorData& data(uint32_t c, uint32_t g) const { return coll_.data(c, g); }
  const RingConfig& config() const { return config_; }

 private:
  std::vector<std::vector<RingPlan>> plans_;  ///< [collective of an iteration][group of its communicator]
  std::vector<ns3::Ipv4Address> addresses_;  ///< by rank
  RingConfig config_;
  RankCollectives coll_;
  std::vector<uint64_t> retransmissions_;  ///< per collective
  uint32_t current_ = 0;                   ///< the collective in progress
  std::vector<ns3::Ptr<RingRank>> ranks_;
};

/// One rank: an ns-3 Application on a host, with one UDP socket.
class RingRank : public ns3::Application {
 public:
  static ns3::TypeId GetTypeId();
  RingRank() = default;
  void Setup(RingAllreduce* owner, uint32_t rank);
  void BeginCollective(uint32_t c);
  uint64_t mismatches() const { return mismatches_; }
  uint64_t checked() const { return checked_; }
  uint64_t retransmissions() const { return retransmissions_; }
  uint64_t packets_sent() const { return packets_sent_; }
  uint64_t progress_packets() const { return snd_acked_ + rcv_count_; }

 protected:
  void DoDispose() override;

 private:
  void StartApplication() override;
  void StopApplication() override;
  void OnDatagram(const uint8_t* p, uint32_t len);
  void OnData(const uint8_t* p, uint32_t len);
  void OnAck(const uint8_t* p, uint32_t len);
  void TrySend();
  void SendData(uint64_t seq);
  void SendAck();
  void OnAckTimer();
  void OnRto();
  void ArmRto();
  void CheckDone();
  uint32_t* Slot(uint64_t seq);  // outgoing payload store, by sequence number

  RingAllreduce* owner_ = nullptr;
  const RingPlan* plan_ = nullptr;
  uint32_t rank_ = 0;   ///< in the job
  uint32_t me_ = 0;     ///< in the current collective's group (the plan's rank)
  uint32_t group_ = 0;  ///< the current collective's group
  uint32_t collective_ = 0;
  HostEndpoint endpoint_;
  uint32_t succ_ = 0, pred_ = 0;  ///< IPv4 addresses
  uint16_t port_ = 0;

  // Outgoing stream.
  uint64_t snd_total_ = 0;
  uint64_t snd_una_ = 0;       // lowest unacknowledged
  uint64_t snd_next_ = 0;      // next never-sent
  uint64_t snd_acked_ = 0;     // count acknowledged
  uint32_t in_flight_ = 0;
  uint32_t cur_step_ = 0;      // step of snd_next_
  uint64_t cur_step_end_ = 0;  // first seq after cur_step_
  std::vector<uint8_t> acked_;     // per seq
  std::vector<uint8_t> ready_;     // per seq: payload in store
  std::vector<uint64_t> sent_ps_;  // ring indexed by seq % capacity
  std::vector<uint64_t> retx_;     // seqs to resend first
  std::vector<uint32_t> store_;    // ring of payload slots, epp words each
  uint64_t store_slots_ = 0;       // power of two
  ns3::EventId rto_event_;
  ns3::TracedCallback<uint32_t, uint64_t> timeout_trace_;  ///< (0, sequence number)

  // Incoming stream.
  uint64_t rcv_total_ = 0;
  uint64_t rcv_cum_ = 0;
  uint64_t rcv_count_ = 0;
  uint32_t unacked_rx_ = 0;
  std::vector<uint8_t> received_;
  ns3::EventId ack_event_;

  bool reported_done_ = false;
  uint64_t checked_before_ = 0, mismatches_before_ = 0, retransmissions_before_ = 0;  ///< at the collective's start
  uint64_t mismatches_ = 0;
  uint64_t checked_ = 0;
  uint64_t retransmissions_ = 0;
  uint64_t packets_sent_ = 0;
  std::vector<uint8_t> buf_;
};

}  // namespace inasim
