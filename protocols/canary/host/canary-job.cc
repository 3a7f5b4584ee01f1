#include "protocols/canary/host/canary-job.h"

#include "ina/addressing.h"
#include "ina/fabric.h"
#include "ina/shared-program.h"
#include "protocols/canary/dataplane/canary_dataplane.h"
#include "p4model/common/frame.h"
#include "protocols/static_tree/dataplane/static_tree_dataplane.h"

#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace inasim {

NS_LOG_COMPONENT_DEFINE("CanaryHost");

using ns3::PicoSeconds;
using ns3::Ptr;
using ns3::Simulator;
namespace cn = p4::canary;

namespace {

uint64_t NowPs() { return static_cast<uint64_t>(Simulator::Now().GetPicoSeconds()); }

/// Control messages between hosts (UDP port kControlPort, claimed by no switch):
///   byte 0 type, 1 attempt, 2..3 zero, 4..11 global block (big-endian 64),
///   12..15 sender rank, then k int32 for kResult / kFallbackData.
constexpr uint16_t kControlPort = 45502;
constexpr uint32_t kControlHeader = 16;
enum ControlType : uint8_t {
  kRetransmitRequest = 1,  // canary-fgcs24 §3.3 "a retransmission request is issued"
  kFailure = 2,            // canary-fgcs24 §3.3 "it broadcasts a failure message"
  kResult = 3,             // canary-fgcs24 §3.3 "the reduced data is retransmitted to the host"
  kFallbackData = 4,       // canary-fgcs24 §3.3 "fall back to a host-based reduction"
};
enum BlockState : uint8_t { kNotIssued = 0, kIssued = 1, kDone = 2 };

}  // namespace

// ------------------------------------------------------------------ host ----

// Registered at load time, so `inasim trace-sources` lists it before any run.
NS_OBJECT_ENSURE_REGISTERED(CanaryHost);

ns3::TypeId CanaryHost::GetTypeId() {
  static ns3::TypeId tid = ns3::TypeId("inasim::CanaryHost")
                               .SetParent<ns3::Application>()
                               .SetGroupName("Inasim")
                               .AddConstructor<CanaryHost>()
                               .AddTraceSource("Reissue",
                                               "A failure message re-issued a block this host had sent; args: global "
                                               "block, ps since that attempt was sent (canary-fgcs24 §6: at most "
                                               "3 RTT with a 2 RTT timer)",
                                               ns3::MakeTraceSourceAccessor(&CanaryHost::reissue_trace_),
                                               "inasim::CanaryHost::ReissueTracedCallback")
                               .AddTraceSource("Timeout",
                                               "A block's retransmission timer expired with the block unfinished "
                                               "(a request to its leader follows, or the data itself after "
                                               "max_failures); args: job, global block",
                                               ns3::MakeTraceSourceAccessor(&CanaryHost::timeout_trace_),
                                               "inasim::TimeoutTracedCallback");
  return tid;
}

void CanaryHost::Setup(CanaryJob* job, uint32_t rank) {
  job_ = job;
  rank_ = rank;
  n_ = job->num_hosts();
  k_ = job->k();
  const uint64_t total = job->total_blocks();
  attempt_.assign(total, 0);
  if (job->mode() == InaTreeMode::kCanary) {
    sent_at_ps_.assign(total, 0);
    requests_.assign(total, 0);
  }
  state_.assign(total, kNotIssued);
  timers_.Reset(job->mode() == InaTreeMode::kCanary ? total : 0);
  if (job->mode() == InaTreeMode::kCanary) {
    // Blocks g with g mod n == my slot: g / n indexes them.
    const uint64_t slot = job->LeaderSlot(rank);
    lead_.resize(total > slot ? (total - slot + n_ - 1) / n_ : 0);
  }
  tx_.assign(std::max<size_t>(kControlHeader, cn::kCanaryHBytes) + 4ull * k_, 0);
  scratch_.assign(k_, 0);
  // Its own stream per host, from the scenario's seed: the same run draws the same delays.
  noise_state_ = congestion::Mix64(job->seed() ^ congestion::Mix64(0x6e6f697365ull + rank));
  const uint16_t port = job->mode() == InaTreeMode::kCanary ? cn::kCanaryUdpPort : p4::statictree::kStaticTreeUdpPort;
  InaNetDevice& nic = job->fabric().device(job->host_id(rank), 0);
  data_port_.Open(nic, port, [this](const uint8_t* b, uint32_t len, const DatagramInfo&) { HandleData(b, len); });
  if (job->nic_queue_bytes() > 0) {
    queued_.assign(total, 0);
    nic_queued_ = nic.TrackSourcePort(p4::kIpProtoUdp, port, job->nic_queue_bytes(), job->nic_queue_bytes(),
                                      [this] { Pump(); });
  }
  if (job->mode() == InaTreeMode::kCanary)
    control_port_.Open(nic, kControlPort,
                       [this](const uint8_t* b, uint32_t len, const DatagramInfo&) { HandleControl(b, len); });
}

void CanaryHost::StopApplication() {
  data_port_.Close();
  control_port_.Close();
  timers_.CancelEvent();
}

void CanaryHost::DoDispose() {
  data_port_.Close();
  control_port_.Close();
  timers_.CancelEvent();
  ns3::Application::DoDispose();
}

CanaryHost::LeadBlock& CanaryHost::Lead(uint64_t g) { return lead_[g / n_]; }

void CanaryHost::BeginCollective(uint32_t c) {
  collective_ = c;
  running_ = true;
  first_ = job_->layout().FirstUnitOf(c);
  end_ = first_ + job_->layout().UnitsOf(c);
  next_issue_ = first_;
  oldest_open_ = first_;
  in_flight_ = 0;
  done_in_collective_ = 0;
  job_->record(c).start_ps[rank_] = NowPs();
  IssueMore();
}

// A window of outstanding blocks per host keeps the pipe full while bounding
// the descriptors a host's blocks hold in the switches (canary-fgcs24 §3.2.2:
// in-flight blocks are bounded by the bandwidth-delay product).
void CanaryHost::IssueMore() {
  const uint32_t window = job_->window();
  while (running_ && in_flight_ < window && next_issue_ < end_) {
    if (job_->sliding_window()) {
      // A static tree's switch holds block id's sum in slot id mod
      // slots_per_tree (>= the window), and a block of another id in that slot
      // is dropped; a Canary switch with ids mapped directly (into a job's
      // share, §5.2.4) holds it in descriptor id mod its size and bypasses the
      // other to the leader. Blocks finish out of order (several trees, Canary
      // stragglers), so a count of blocks in flight is not enough: a block may
      // go only when every block `window` ids before it has its result
      // (SwitchML's pool discipline).
      while (oldest_open_ < next_issue_ && state_[oldest_open_] == kDone) ++oldest_open_;
      if (next_issue_ >= oldest_open_ + window) break;
    }
    Issue(next_issue_++);
  }
}

void CanaryHost::Issue(uint64_t g) {
  if (state_[g] == kDone) return;  // a unicast result came before we got here
  state_[g] = kIssued;
  ++in_flight_;
  if (job_->mode() == InaTreeMode::kCanary && job_->LeaderOf(g) == rank_) {
    // canary-fgcs24 §3.1.4 "The leader does not send its data on the network.
    // Instead, it waits for data to arrive".
    LeadBlock& L = Lead(g);
    if (L.final) {
      for (uint32_t i = 0; i < k_; ++i) p4::StoreBe32(tx_.data() + 4 * i, L.acc[i]);
      Complete(g, tx_.data());
    }
    return;
  }
  if (nic_queued_) {
    queued_[g] = 1;
    pending_.push_back(g);
    Pump();
    c_.nic_held += queued_[g];
    return;
  }
  SendBlock(g);
  if (job_->mode() == InaTreeMode::kCanary) ArmTimer(g);
}

void CanaryHost::Pump() {
  while (!pending_.empty() && *nic_queued_ < job_->nic_queue_bytes()) {
    const uint64_t g = pending_.front();
    pending_.pop_front();
    queued_[g] = 0;
    if (state_[g] != kIssued) continue;  // finished (a unicast result) while it waited
    SendBlock(g);  // with the block's current attempt: a failure while it waited needs no resend
    if (job_->mode() == InaTreeMode::kCanary) ArmTimer(g);
  }
}

void CanaryHost::SendBlock(uint64_t g) {
  const auto [c, first, count] = job_->layout().Locate(g);
  const TensorData& data = job_->data(c);
  if (job_->mode() == InaTreeMode::kCanary && attempt_[g] > job_->canary().max_failures) {
    // canary-fgcs24 §3.3 "the hosts fall back to a host-based reduction": the
    // data goes to the leader directly, as a control message.
    for (uint64_t i = 0; i < k_; ++i) scratch_[i] = i < count ? data.Contribution(rank_, first + i) : 0;
    ++c_.fallback_sends;
    SendControl(job_->LeaderOf(g), kFallbackData, g, attempt_[g], scratch_.data());
    return;
  }
  uint8_t* h = tx_.data();
  std::memset(h, 0, cn::kCanaryHBytes);
  uint32_t dst;
  if (job_->mode() == InaTreeMode::kCanary) {
    const uint32_t leader = HostIpv4(job_->host_id(job_->LeaderOf(g)));
    // canary-fgcs24 §4.1: destination = the leader; counter 1 (one host's data,
    // Fig. 3 (1)); hosts = the hosts that send (the leader does not, §3.1.4).
    p4::StoreBe32(h + cn::kOffDestination, leader);
    p4::StoreBe32(h + cn::kOffId, job_->BlockId(g, attempt_[g]));
    p4::StoreBe16(h + cn::kOffHosts, static_cast<uint16_t>(n_ - 1));
    dst = leader;
  } else {
    // Static trees: to the ToR, which knows its children (canary-fgcs24 §5.2).
    p4::StoreBe32(h + cn::kOffId, static_cast<uint32_t>(g));
    p4::StoreBe16(h + cn::kOffHosts, static_cast<uint16_t>(n_));
    p4::StoreBe32(h + cn::kOffChildren, job_->TreeOf(g));
    dst = job_->TorIpv4(rank_);
  }
  p4::StoreBe16(h + cn::kOffCounter, 1);
  uint8_t* d = h + cn::kCanaryHBytes;
  data.FillBe32(rank_, first, count, d);
  std::memset(d + 4 * count, 0, 4 * (k_ - count));
  const uint32_t len = static_cast<uint32_t>(cn::kCanaryHBytes + 4ull * k_);
  const uint16_t port = job_->mode() == InaTreeMode::kCanary ? cn::kCanaryUdpPort : p4::statictree::kStaticTreeUdpPort;
  SendReducePacket(h, len, dst, port);
  ++c_.packets_sent;
}

bool CanaryHost::DrawSendNoise() {
  const double p = job_->send_noise().probability;
  if (p <= 0) return false;
  noise_state_ += 0x9e3779b97f4a7c15ull;
  const double u = static_cast<double>(congestion::Mix64(noise_state_) >> 11) * 0x1.0p-53;  // [0, 1)
  return u < p;
}

// canary-fgcs24 §5.2.5 (Fig. 11): a packet the host's noise holds back
// reaches the NIC `delay` later; the packets after it do not wait for it.
void CanaryHost::SendReducePacket(const uint8_t* payload, uint32_t len, uint32_t dst, uint16_t port) {
  if (!DrawSendNoise()) {
    data_port_.SendTo(dst, port, payload, len);
    return;
  }
  ++c_.noise_delayed;
  // It reaches the NIC when due, whatever nic_queue_bytes says (as a
  // broadcast does); the blocks after it do not wait for it.
  Simulator::Schedule(PicoSeconds(job_->send_noise().delay_ps),
                      [this, bytes = std::vector<uint8_t>(payload, payload + len), dst, port] {
                        data_port_.SendTo(dst, port, bytes.data(), static_cast<uint32_t>(bytes.size()));
                      });
}

void CanaryHost::SendControl(uint32_t to_rank, uint8_t type, uint64_t g, uint8_t attempt, const uint32_t* data) {
  uint8_t* b = tx_.data();
  std::memset(b, 0, kControlHeader);
  b[0] = type;
  b[1] = attempt;
  p4::StoreBe64(b + 4, g);
  p4::StoreBe32(b + 12, rank_);
  uint32_t len = kControlHeader;
  if (data) {
    for (uint32_t i = 0; i < k_; ++i) p4::StoreBe32(b + kControlHeader + 4 * i, data[i]);
    len += 4 * k_;
  }
  control_port_.SendTo(HostIpv4(job_->host_id(to_rank)), kControlPort, b, len);
}

void CanaryHost::HandleData(const uint8_t* h, uint32_t len) {
  if (len < cn::kCanaryHBytes + 4ull * k_) return;
  const uint32_t id = p4::LoadBe32(h + cn::kOffId);
  const uint8_t flags = h[cn::kOffFlags];
  const uint8_t* data = h + cn::kCanaryHBytes;
  uint64_t g;
  uint32_t attempt = 0;
  if (job_->mode() == InaTreeMode::kStaticTree) {
    g = id;
    if (g >= state_.size() || !(flags & cn::kMulticastBit)) return;
    Complete(g, data);
    return;
  }
  if (!job_->DecodeId(id, g, attempt)) return;
  if (flags & cn::kMulticastBit) {
    // canary-fgcs24 §3.1.2 the broadcast (or a §3.2.1 restoration copy): the
    // final sum, whatever attempt produced it.
    Complete(g, data);
    return;
  }
  // The reduce path ends at the leader: an aggregate from its ToR, a straggler,
  // or a packet bypassed after a collision.
  if (job_->LeaderOf(g) != rank_) return;
  LeaderAccept(g, attempt, p4::LoadBe16(h + cn::kOffCounter), (flags & cn::kBypassBit) != 0,
               p4::LoadBe16(h + cn::kOffSwitchAddress), p4::LoadBe32(h + cn::kOffChildren), data);
}

void CanaryHost::LeaderAccept(uint64_t g, uint32_t attempt, uint16_t counter, bool collided, uint16_t sw,
                              uint32_t port, const uint8_t* be_data) {
  ++c_.leader_packets;
  LeadBlock& L = Lead(g);
  if (L.final || L.fallback || attempt != L.attempt) {
    ++c_.leader_stale;  // a failed attempt's late aggregate, or after completion
    return;
  }
  if (L.acc.empty()) L.acc.assign(k_, 0);
  for (uint32_t i = 0; i < k_; ++i) L.acc[i] += p4::LoadBe32(be_data + 4 * i);  // int32 wraps, as the switch adds
  L.counter += counter;
  if (collided) {
    // canary-fgcs24 §3.2.1 "the leader host knows the unreachable subtrees:
    // i.e., it has a list of switches and respective ports".
    ++c_.collisions_recorded;
    const std::pair<uint16_t, uint32_t> c{sw, port};
    if (std::find(L.collisions.begin(), L.collisions.end(), c) == L.collisions.end()) L.collisions.push_back(c);
  }
  if (L.counter > n_ - 1) ++c_.overcounts;
  if (L.counter >= n_ - 1) Finalize(g);
}

void CanaryHost::Finalize(uint64_t g) {
  LeadBlock& L = Lead(g);
  if (L.acc.empty()) L.acc.assign(k_, 0);
  // canary-fgcs24 §3.1.4 "it aggregates the received data with its own, and
  // then starts the broadcast phase".
  const auto [c, first, count] = job_->layout().Locate(g);
  const TensorData& data = job_->data(c);
  for (uint64_t i = 0; i < count; ++i) L.acc[i] += data.Contribution(rank_, first + i);
  L.final = true;
  if (L.fallback) {
    // Host-based reduction: the result goes to every host directly.
    for (uint32_t r = 0; r < n_; ++r)
      if (r != rank_) SendControl(r, kResult, g, L.attempt, L.acc.data());
  } else {
    uint8_t* h = tx_.data();
    std::memset(h, 0, cn::kCanaryHBytes);
    const uint32_t me = HostIpv4(job_->host_id(rank_));
    p4::StoreBe32(h + cn::kOffDestination, me);
    p4::StoreBe32(h + cn::kOffId, job_->BlockId(g, L.attempt));
    p4::StoreBe16(h + cn::kOffCounter, static_cast<uint16_t>(n_ - 1));
    p4::StoreBe16(h + cn::kOffHosts, static_cast<uint16_t>(n_ - 1));
    h[cn::kOffFlags] = cn::kMulticastBit;
    for (uint32_t i = 0; i < k_; ++i) p4::StoreBe32(h + cn::kCanaryHBytes + 4 * i, L.acc[i]);
    const uint32_t len = static_cast<uint32_t>(cn::kCanaryHBytes + 4ull * k_);
    // canary-fgcs24 §3.1.2: to the ToR (the root), which multicasts to its
    // children; limited broadcast so every host below accepts the copies.
    data_port_.SendTo(cn::kIpv4LimitedBroadcast, cn::kCanaryUdpPort, h, len);
    ++c_.broadcasts_sent;
    // canary-fgcs24 §3.2.1 "the leader host uses this information to send an
    // additional packet to these switches": one per (switch, §4.2 shard group).
    std::vector<std::pair<uint16_t, uint32_t>> groups;  // (switch, group id)
    std::vector<uint32_t> first_port;
    for (const auto& [sw, port] : L.collisions) {
      const uint32_t group = job_->GroupOf(port);
      const uint32_t shard_mask = ~((uint32_t{1} << job_->canary().multicast_shard_ports) - 1);
      bool merged = false;
      for (auto& [gs, gg] : groups)
        if (gs == sw && (gg & shard_mask) == (group & shard_mask)) {
          gg |= group;
          merged = true;
        }
      if (!merged) {
        groups.emplace_back(sw, group);
        first_port.push_back(port);
      }
    }
    for (size_t i = 0; i < groups.size(); ++i) {
      bool certain = false;
      const uint32_t target = job_->RestorationTarget(groups[i].first, first_port[i], rank_, certain);
      p4::StoreBe32(h + cn::kOffChildren, groups[i].second);
      p4::StoreBe16(h + cn::kOffSwitchAddress, groups[i].first);
      h[cn::kOffFlags] = cn::kBypassBit | cn::kMulticastBit;
      data_port_.SendTo(HostIpv4(target), cn::kCanaryUdpPort, h, len);
      ++c_.restorations_sent;
      c_.restorations_best_effort += !certain;
    }
  }
  L.fallback_got.clear();
  L.fallback_got.shrink_to_fit();
  if (state_[g] == kIssued) {
    for (uint32_t i = 0; i < k_; ++i) p4::StoreBe32(tx_.data() + 4 * i, L.acc[i]);
    Complete(g, tx_.data());
  }
}

// canary-fgcs24 §3.3 "because the leader cannot determine which packet should
// be re-transmitted, it broadcasts a failure message. Upon the reception of
// this message, the hosts re-issue the reduction of that packet with a
// different id ... the hosts fall back to a host-based reduction after a given
// number of failed retransmissions."
void CanaryHost::Fail(uint64_t g) {
  LeadBlock& L = Lead(g);
  ++c_.failures;
  ++L.attempt;
  L.counter = 0;
  L.acc.assign(k_, 0);
  L.collisions.clear();
  if (L.attempt > job_->canary().max_failures) {
    L.fallback = true;
    L.fallback_got.assign(n_, 0);
    ++c_.fallbacks;
  }
  for (uint32_t r = 0; r < n_; ++r)
    if (r != rank_) SendControl(r, kFailure, g, L.attempt, nullptr);
}

void CanaryHost::HandleControl(const uint8_t* b, uint32_t len) {
  if (len < kControlHeader) return;
  const uint8_t type = b[0];
  const uint8_t attempt = b[1];
  const uint64_t g = p4::LoadBe64(b + 4);
  const uint32_t from = p4::LoadBe32(b + 12);
  if (g >= state_.size() || from >= n_) return;
  const bool with_data = len >= kControlHeader + 4ull * k_;
  switch (type) {
    case kRetransmitRequest: {
      if (job_->LeaderOf(g) != rank_) return;
      LeadBlock& L = Lead(g);
      if (L.final) {
        // "If the leader entirely reduced the data, the packet was lost during
        // the broadcast phase, and the reduced data is retransmitted".
        ++c_.retransmissions;
        SendControl(from, kResult, g, L.attempt, L.acc.data());
      } else if (attempt == L.attempt && !L.fallback) {
        Fail(g);  // "Otherwise ... some packet was lost in the reduce phase."
      } else {
        SendControl(from, kFailure, g, L.attempt, nullptr);  // the requester missed the failure message
      }
      return;
    }
    case kFailure:
      if (state_[g] == kDone || attempt <= attempt_[g]) return;
      attempt_[g] = attempt;
      ++c_.reissues;
      if (state_[g] == kIssued && !(nic_queued_ && queued_[g])) {
        const uint64_t delay = NowPs() - sent_at_ps_[g];
        ++c_.reissues_timed;
        c_.reissue_delay_sum_ps += delay;
        c_.reissue_delay_max_ps = std::max(c_.reissue_delay_max_ps, delay);
        if (requests_[g] <= 1) {
          ++c_.reissues_first_request;
          c_.reissue_first_request_delay_max_ps = std::max(c_.reissue_first_request_delay_max_ps, delay);
        }
        reissue_trace_(g, delay);
        NS_LOG_INFO("rank " << rank_ << ": block " << g << " re-issued after a failure message");
        SendBlock(g);
        ArmTimer(g);
      }
      return;
    case kResult:
      if (!with_data) return;
      if (state_[g] != kDone) ++c_.unicast_results;
      Complete(g, b + kControlHeader);
      return;
    case kFallbackData: {
      if (!with_data || job_->LeaderOf(g) != rank_) return;
      LeadBlock& L = Lead(g);
      if (L.final) {
        ++c_.retransmissions;
        SendControl(from, kResult, g, L.attempt, L.acc.data());
        return;
      }
      if (!L.fallback || L.fallback_got[from]) return;
      L.fallback_got[from] = 1;
      if (L.acc.empty()) L.acc.assign(k_, 0);
      for (uint32_t i = 0; i < k_; ++i) L.acc[i] += p4::LoadBe32(b + kControlHeader + 4 * i);
      if (++L.counter >= n_ - 1) Finalize(g);
      return;
    }
    default:
      return;
  }
}

void CanaryHost::Complete(uint64_t g, const uint8_t* be_data) {
  if (state_[g] == kDone) {
    ++c_.duplicate_results;
    return;
  }
  const auto [c, first, count] = job_->layout().Locate(g);
  const bool issued = state_[g] == kIssued;
  state_[g] = kDone;
  ++c_.results_received;
  ++blocks_done_total_;
  if (job_->mode() == InaTreeMode::kCanary) timers_.Stop(g);
  // Every element this host ends with, against the exact sum.
  const TensorData& data = job_->data(c);
  CollectiveRecord& rec = job_->record(c);
  rec.mismatches += data.CountMismatchesBe32(first, count, be_data);
  rec.elements_checked += count;
  if (c != collective_ || !running_) return;  // a result for a collective not begun: counted there when it is
  if (issued) --in_flight_;
  if (++done_in_collective_ == job_->layout().UnitsOf(c)) {
    running_ = false;
    const uint64_t now = NowPs();
    rec.end_ps[rank_] = now;
    job_->HostCollectiveDone(rank_, c);
    if (c + 1 < job_->collectives())
      Simulator::Schedule(PicoSeconds(job_->StartOf(rank_, c + 1, now) - now), &CanaryHost::BeginCollective, this,
                          c + 1);
    return;
  }
  IssueMore();
}

void CanaryHost::ArmTimer(uint64_t g) {
  sent_at_ps_[g] = NowPs();
  requests_[g] = 0;
  timers_.Start(g, NowPs() + job_->retransmit_timeout_ps());
  timers_.Arm(NowPs(), this, &CanaryHost::OnTimerEvent);
}

// canary-fgcs24 §3.3 "all the hosts (excluding the leader) set a timeout for
// each packet right before transmitting it ... If the timeout expires, a
// retransmission request is issued."
void CanaryHost::OnTimerEvent() {
  const uint64_t now = NowPs();
  timers_.Fired();
  uint64_t g;
  while (timers_.PopDue(now, g)) {
    if (state_[g] != kIssued) continue;
    timeout_trace_(job_->job_index(), g);
    NS_LOG_LOGIC("rank " << rank_ << ": block " << g << " attempt " << uint32_t{attempt_[g]} << " timed out");
    if (attempt_[g] > job_->canary().max_failures) {
      SendBlock(g);  // host-based reduction: resend the data itself
    } else {
      ++c_.retransmit_requests;
      requests_[g] = static_cast<uint8_t>(std::min(255, requests_[g] + 1));
      SendControl(job_->LeaderOf(g), kRetransmitRequest, g, attempt_[g], nullptr);
    }
    timers_.Start(g, now + job_->retransmit_timeout_ps());
  }
  timers_.Arm(now, this, &CanaryHost::OnTimerEvent);
}

// ------------------------------------------------------------------- job ----

CanaryJob::CanaryJob(Fabric& fabric, const std::vector<uint32_t>& hosts, InaTreeMode mode, DataPattern pattern,
                     uint64_t seed, const WorkloadSpec& spec, uint32_t job_index)
    : fabric_(&fabric), hosts_(hosts), mode_(mode), spec_(spec), canary_(&spec_.spec<CanarySpec>()), seed_(seed) {
  const uint32_t n = static_cast<uint32_t>(hosts.size());
  const char* name = mode == InaTreeMode::kCanary ? "canary" : "static_tree";
  if (n < 2) throw std::invalid_argument(fmt::format("{} needs at least two hosts", name));
  if (n > 0xffff) throw std::invalid_argument(fmt::format("{}: the hosts field is 16 bits (at most 65,535 hosts)", name));
  if (spec.dtype != DType::kInt32) throw std::invalid_argument(fmt::format("{} aggregates int32 only", name));
  k_ = mode == InaTreeMode::kCanary ? spec.spec<CanarySpec>().elements_per_packet : spec.spec<StaticTreeSpec>().elements_per_packet;
  window_ = mode == InaTreeMode::kCanary ? spec.spec<CanarySpec>().window_blocks : spec.spec<StaticTreeSpec>().window_blocks;
  nic_queue_bytes_ = mode == InaTreeMode::kCanary ? spec.spec<CanarySpec>().nic_queue_bytes : spec.spec<StaticTreeSpec>().nic_queue_bytes;
  num_trees_ = mode == InaTreeMode::kCanary ? 1 : spec.spec<StaticTreeSpec>().trees;
  tree_offset_ = job_index * num_trees_;
  job_index_ = job_index;
  // An iteration's collectives: the schedule's buckets, or one of workload.bytes.
  layout_.emplace(CollectiveElements(spec.schedule, spec.bytes), k_, spec.iterations);
  schedule_ = IterationSchedule::Of(spec.schedule, n, layout_->elements().size(), spec.compute_gap_ps, seed);
  if (mode == InaTreeMode::kCanary &&
      total_blocks() * (uint64_t{spec.spec<CanarySpec>().max_failures} + 1) > (uint64_t{1} << 24))
    throw std::invalid_argument("canary: the blocks and their re-issues do not fit the 24-bit id sequence");
  if (mode == InaTreeMode::kStaticTree && total_blocks() > UINT32_MAX)
    throw std::invalid_argument("static_tree: more blocks than 32-bit ids");
  const topo::Topology& t = fabric.topology();
  // Leaders: racks interleaved (rank order within a rack, ToR order across),
  // so block g and g + 1 have different root switches (canary-fgcs24 §3.1.3
  // "each block in a different root ... selected in a round-robin way").
  if (!spec.spec<CanarySpec>().leader_order.empty() && mode == InaTreeMode::kCanary) {
    leader_order_ = spec.spec<CanarySpec>().leader_order;
    if (leader_order_.empty()) throw std::invalid_argument("canary: empty leader order");
    for (uint32_t r : leader_order_)
      if (r >= n) throw std::invalid_argument("canary: leader order names a rank beyond the hosts");
  } else {
    std::vector<std::pair<uint32_t, uint32_t>> key;  // (index within rack, ToR vertex) per rank
    std::vector<uint32_t> seen(t.num_vertices(), 0);
    for (uint32_t r = 0; r < n; ++r) {
      const uint32_t tor = t.ports(hosts[r]).at(0).peer;
      key.emplace_back(seen[tor]++, tor);
    }
    leader_order_.resize(n);
    for (uint32_t r = 0; r < n; ++r) leader_order_[r] = r;
    std::stable_sort(leader_order_.begin(), leader_order_.end(), [&](uint32_t a, uint32_t b) { return key[a] < key[b]; });
  }
  leader_slot_.assign(n, UINT32_MAX);
  for (uint32_t i = 0; i < leader_order_.size(); ++i)
    if (leader_slot_[leader_order_[i]] == UINT32_MAX) leader_slot_[leader_order_[i]] = i;
  if (leader_order_.size() != n)
    throw std::invalid_argument("canary: the leader order must name every rank once");
  for (uint32_t r = 0; r < n; ++r)
    if (leader_slot_[r] == UINT32_MAX) throw std::invalid_argument("canary: the leader order must name every rank once");
  for (uint32_t r = 0; r < n; ++r) {
    const auto& ports = t.ports(hosts[r]);
    if (ports.empty()) throw std::invalid_argument(fmt::format("{}: host {} has no link", name, hosts[r]));
    tor_ip_.push_back(SwitchIpv4(ports[0].peer - t.num_hosts()));
  }
  records_ = IterationRecords(n, spec.iterations, layout_->elements(), job_index);
  // Fresh values for every collective: a stale result is wrong data.
  const TensorData job_data(DType::kInt32, pattern, seed, n);
  for (uint32_t c = 0; c < records_.size(); ++c) data_.push_back(job_data.ForIteration(c));
  if (mode == InaTreeMode::kCanary) {
    InstallCanary();
    leader_rtt_ps_ = LeaderRttPs();
    const double rtts = spec.spec<CanarySpec>().retransmit_timeout_rtts;
    retransmit_timeout_ps_ = rtts > 0 ? static_cast<uint64_t>(std::llround(rtts * static_cast<double>(leader_rtt_ps_)))
                                      : spec.spec<CanarySpec>().retransmit_timeout_ps;
  } else {
    InstallStaticTrees();
  }
  for (uint32_t r = 0; r < n; ++r) {
    auto a = ns3::CreateObject<CanaryHost>();
    fabric.host(hosts[r])->AddApplication(a);
    a->Setup(this, r);
    agents_.push_back(a);
  }
}

CanaryJob::~CanaryJob() = default;

uint64_t CanaryJob::LeaderRttPs() const {
  // Every rank leads some blocks (the leader order names each once), so the
  // longest round trip is over every pair. The timer guards a block's round
  // trip (§3.3: set "right before transmitting", deleted "when the reduced
  // data arrives"), so the RTT is the data path's: a reduce packet to the
  // leader and a result back, one pipeline pass per switch, no aggregation
  // wait (the switch timeouts are the protocol's, not the network's). The
  // request and failure themselves are header-only control messages that no
  // switch program claims: each takes less than half of it.
  const uint32_t frame = static_cast<uint32_t>(p4::kEthernetBytes + p4::kIpv4MinBytes + p4::kUdpBytes +
                                               cn::kCanaryHBytes + 4 * k_);
  const uint64_t pass = (*canary_).pass_latency_ps;
  uint64_t worst = 0;
  for (uint32_t a = 0; a < hosts_.size(); ++a)
    for (uint32_t b = a + 1; b < hosts_.size(); ++b)
      worst = std::max(worst, fabric_->IdleOneWayPs(hosts_[a], hosts_[b], frame, pass) +
                                  fabric_->IdleOneWayPs(hosts_[b], hosts_[a], frame, pass));
  return worst;
}

uint32_t CanaryJob::BlockId(uint64_t g, uint32_t attempt) const {
  const uint64_t seq = uint64_t{attempt} * total_blocks() + g;
  return (*canary_).application_id << 24 | static_cast<uint32_t>(seq & 0xffffff);
}

bool CanaryJob::DecodeId(uint32_t id, uint64_t& g, uint32_t& attempt) const {
  if ((id >> 24) != (*canary_).application_id) return false;
  const uint64_t seq = id & 0xffffff;
  g = seq % total_blocks();
  attempt = static_cast<uint32_t>(seq / total_blocks());
  return attempt <= (*canary_).max_failures;
}

bool CanaryJob::KeyFrame(const p4::FrameView& view, inasim::Span<const uint8_t> frame, FrameKey& key) const {
  if (!view.ipv4 || !view.l4 || view.protocol != p4::kIpProtoUdp) return false;
  const uint8_t* h = frame.data() + view.l4_payload_offset;
  const size_t left = frame.size() > view.l4_payload_offset ? frame.size() - view.l4_payload_offset : 0;
  const uint16_t data_port = mode_ == InaTreeMode::kCanary ? cn::kCanaryUdpPort : p4::statictree::kStaticTreeUdpPort;
  if (view.dst_port == data_port && left >= cn::kCanaryHBytes) {
    const uint32_t id = p4::LoadBe32(h + cn::kOffId);
    uint64_t g = id;
    uint32_t attempt = 0;
    if (mode_ == InaTreeMode::kCanary && !DecodeId(id, g, attempt)) return false;
    if (mode_ == InaTreeMode::kStaticTree && g >= total_blocks()) return false;
    const uint8_t flags = h[cn::kOffFlags];
    key.kind = (flags & cn::kMulticastBit) ? "result" : (flags & cn::kBypassBit) ? "bypass" : "reduce";
    key.id = g;
    key.aux = attempt;
    return true;
  }
  if (view.dst_port != kControlPort || left < kControlHeader) return false;
  // Control messages carry no job: one between this job's hosts is its own.
  const uint32_t to = HostOfIpv4(view.dst_ip), from = HostOfIpv4(view.src_ip);
  if (std::find(hosts_.begin(), hosts_.end(), to) == hosts_.end() ||
      std::find(hosts_.begin(), hosts_.end(), from) == hosts_.end())
    return false;
  static constexpr const char* kKinds[] = {"control", "retransmit_request", "failure", "result_unicast",
                                           "fallback_data"};
  key.kind = kKinds[h[0] <= kFallbackData ? h[0] : 0];
  key.id = p4::LoadBe64(h + 4);
  key.aux = h[1];
  return true;
}

void CanaryJob::InstallCanary() {
  const topo::Topology& t = fabric_->topology();
  const uint32_t nh = t.num_hosts();
  const CanarySpec& cs = (*canary_);
  // Every switch runs Canary: adaptive routing may take a packet anywhere
  // (canary-fgcs24 §3.2 "it cannot reserve any resource because the paths that
  // packets will take are not known a priori").
  for (uint32_t sw = 0; sw < fabric_->num_switches(); ++sw) {
    const uint32_t v = nh + sw;
    // One Canary program per switch serves every application id
    // (canary-fgcs24 §3.4): a later concurrent job joins the one installed.
    InstallOrJoin<cn::CanaryDataplane>(
        fabric_->switch_node(sw),
        [&] {
          auto dp = std::make_unique<cn::CanaryDataplane>(SwitchConfig(t, v, cs, k_));
          AddPartition(*dp);
          return dp;
        },
        [&](cn::CanaryDataplane& installed) { AddPartition(installed); });
    switch_vertices_.push_back(v);
  }
}

cn::CanaryConfig CanaryJob::SwitchConfig(const topo::Topology& t, uint32_t v, const CanarySpec& cs, uint32_t k) {
  const uint32_t sw = v - t.num_hosts();
  cn::CanaryConfig c;
  c.switch_address = static_cast<uint16_t>(sw + 1);
  c.switch_ip = SwitchIpv4(sw);
  c.switch_mac = MacBytesOfIpv4(c.switch_ip);
  c.num_ports = static_cast<uint32_t>(t.ports(v).size());
  if (c.num_ports > cn::kMaxPorts)
    throw ScenarioError(fmt::format("workload.protocol: \"canary\" runs on every switch, and {} has {} ports; the "
                                    "children bitmap holds {} (a topology with smaller switches)",
                                    t.node(v).name, c.num_ports, cn::kMaxPorts));
  if (sw + 1 > 0xffff) throw ScenarioError("topology: canary switch addresses are 16 bits (at most 65,535 switches)");
  c.num_elements = k;
  c.table_size = cs.table_size;
  c.index_hash = cs.direct_index ? cn::IndexHash::kDirect : cn::IndexHash::kCrc32;
  c.timeout_ps = cs.timeout_ps;
  c.timeout_mode =
      cs.timeout_mode == CanaryTimeoutMode::kExact ? cn::TimeoutMode::kExactTimer : cn::TimeoutMode::kClockScan;
  c.clock_period_ps = cs.clock_period_ps;
  c.scan_entries_per_clock = cs.scan_entries_per_clock;
  c.multicast_shard_ports = cs.multicast_shard_ports;
  c.pass_latency_ps = cs.pass_latency_ps;
  try {
    c.Validate();
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(fmt::format("workload.canary: the program on {} ({} ports): {}", t.node(v).name,
                                    c.num_ports, e.what()));
  }
  return c;
}

std::vector<topo::AggregationTree> CanaryJob::StaticTrees(const topo::Topology& t, const std::vector<uint32_t>& hosts,
                                                          const StaticTreeSpec& st, uint64_t seed, uint32_t job_index) {
  std::vector<topo::AggregationTree> trees;
  try {
    // The paper roots its static trees at random switches (§5.2); "spread" is
    // the deterministic even spread over the candidate tier.
    trees = st.random_roots ? topo::BuildRandomTrees(t, hosts, st.trees, seed ^ (0x100u + job_index))
                            : topo::BuildTrees(t, hosts, st.trees);
  } catch (const std::exception& e) {
    throw ScenarioError(fmt::format("workload.static_tree.trees: {} trees: {}", st.trees, e.what()));
  }
  for (const topo::AggregationTree& tree : trees)
    for (uint32_t v : tree.vertices())
      if (!t.is_host(v) && t.ports(v).size() > 64)
        throw ScenarioError(fmt::format("workload.protocol: \"static_tree\" needs switches of at most 64 ports (the "
                                        "duplicate bitmap), and {} in a tree has {}", t.node(v).name,
                                        t.ports(v).size()));
  return trees;
}

void CanaryJob::CheckPlacement(const topo::Topology& t, const std::vector<uint32_t>& hosts, InaTreeMode mode,
                               uint64_t seed, const WorkloadSpec& spec, uint32_t job_index) {
  if (mode == InaTreeMode::kStaticTree) {
    (void)StaticTrees(t, hosts, spec.spec<StaticTreeSpec>(), seed, job_index);
    return;
  }
  for (uint32_t v = t.num_hosts(); v < t.num_vertices(); ++v)
    (void)SwitchConfig(t, v, spec.spec<CanarySpec>(), spec.spec<CanarySpec>().elements_per_packet);
}

uint32_t CanaryJob::table_share() const {
  const CanarySpec& cs = (*canary_);
  if (!cs.partition_per_job || spec_.jobs <= 1) return cs.table_size;
  // §5.2.4: the table split equally between the jobs, a power of two each
  // (the index is base + the hash's low bits).
  uint32_t share = 1;
  while (share * 2 <= cs.table_size / spec_.jobs) share *= 2;
  return share;
}

void CanaryJob::AddPartition(p4::canary::CanaryDataplane& dp) const {
  const uint32_t share = table_share();
  if (share == (*canary_).table_size) return;  // the whole table: the default action
  dp.AddPartition({static_cast<uint8_t>((*canary_).application_id), job_index_ * share, share});
}

void CanaryJob::InstallStaticTrees() {
  namespace st = p4::statictree;
  const topo::Topology& t = fabric_->topology();
  const uint32_t nh = t.num_hosts();
  const std::vector<topo::AggregationTree> trees = StaticTrees(t, hosts_, spec_.spec<StaticTreeSpec>(), seed_, job_index_);
  std::vector<std::vector<st::TreeEntry>> per_switch(fabric_->num_switches());
  for (uint32_t i = 0; i < trees.size(); ++i) {
    tree_roots_.push_back(t.node(trees[i].root).name);
    for (uint32_t v : trees[i].vertices()) {
      if (t.is_host(v)) continue;
      st::TreeEntry e;
      e.tree_id = tree_offset_ + i;
      e.child_ports = trees[i].child_ports[v];
      e.parent_port = trees[i].parent_port[v];
      per_switch[v - nh].push_back(std::move(e));
    }
  }
  for (uint32_t sw = 0; sw < fabric_->num_switches(); ++sw) {
    if (per_switch[sw].empty()) continue;
    const uint32_t v = nh + sw;
    st::StaticTreeConfig c;
    c.switch_ip = SwitchIpv4(sw);
    c.switch_mac = MacBytesOfIpv4(c.switch_ip);
    c.num_ports = static_cast<uint32_t>(t.ports(v).size());
    c.num_elements = k_;
    c.slots_per_tree = spec_.spec<StaticTreeSpec>().slots_per_tree;
    c.pass_latency_ps = spec_.spec<StaticTreeSpec>().pass_latency_ps;
    c.trees = per_switch[sw];
    // One program holds every concurrent job's trees: a later job adds its own.
    try {
      InstallOrJoin<st::StaticTreeDataplane>(
          fabric_->switch_node(sw), [&] { return std::make_unique<st::StaticTreeDataplane>(c); },
          [&](st::StaticTreeDataplane& installed) { installed.AddTrees(c.trees); });
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("static_tree program on {}: {}", t.node(v).name, e.what()));
    }
    switch_vertices_.push_back(v);
  }
}

uint32_t CanaryJob::GroupOf(uint32_t port) const {
  const uint32_t w = (*canary_).multicast_shard_ports;
  return (port / w) << w | uint32_t{1} << (port % w);
}

uint32_t CanaryJob::RestorationTarget(uint16_t sw_address, uint32_t port, uint32_t leader_rank, bool& certain) const {
  const topo::Topology& t = fabric_->topology();
  const uint32_t v = t.num_hosts() + sw_address - 1u;
  certain = false;
  if (sw_address == 0 || v >= t.num_vertices() || port >= t.ports(v).size()) return hosts_[leader_rank];
  // Down from the port's peer to the first host: every route from the leader
  // to it crosses the switch when the switch is that host's ToR or the
  // leader's own ToR; otherwise adaptive routing may take another path, the
  // copy then reaches that host only, and the rest of the subtree recovers
  // through retransmission requests.
  // A participating host is preferred (it has the Canary socket).
  std::vector<uint8_t> participant(t.num_hosts(), 0);
  for (uint32_t h : hosts_) participant[h] = 1;
  uint32_t x = t.ports(v)[port].peer;
  while (!t.is_host(x)) {
    uint32_t next = x;
    for (const topo::Port& p : t.ports(x)) {
      if (t.node(p.peer).tier >= t.node(x).tier) continue;
      if (next == x) next = p.peer;
      if (t.is_host(p.peer) && participant[p.peer]) {
        next = p.peer;
        break;
      }
    }
    if (next == x) return hosts_[leader_rank];
    x = next;
  }
  const uint32_t leader_tor = t.ports(hosts_[leader_rank]).at(0).peer;
  certain = t.ports(x).at(0).peer == v || leader_tor == v;
  return x;
}

void CanaryJob::Start(uint64_t at_ps) {
  for (uint32_t r = 0; r < agents_.size(); ++r) {
    agents_[r]->SetStartTime(PicoSeconds(0));
    Simulator::Schedule(PicoSeconds(StartOf(r, 0, at_ps)), &CanaryHost::BeginCollective, agents_[r], 0u);
  }
}

double CanaryJob::progress() const {
  uint64_t done = 0;
  for (const auto& a : agents_) done += a->blocks_done();
  const uint64_t total = total_blocks() * agents_.size();
  return total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
}

void CanaryJob::HostCollectiveDone(uint32_t, uint32_t c) {
  if (c + 1 == records_.size()) {
    ++hosts_done_;
    if (done() && on_finished) on_finished();
  }
}

}  // namespace inasim
