#include "protocols/panama/dataplane/panama_dataplane.h"

#include "p4model/common/frame.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

namespace inasim::p4::panama {

PanamaDataplane::PanamaDataplane(PanamaConfig config)
    : config_((config.Validate(), std::move(config))),
      tree_(config_.num_ports, config_.float_mode),
      latency_(config_.latency, tree_.Depth()),
      buffers_(config_.PacketMemory(), static_cast<uint32_t>(config_.jobs.size()), config_.num_ports),
      control_(config_.jobs) {
  for (const PanamaJob& j : config_.jobs) jobs_.push_back(NewJobState(j));
  leaves_.assign(config_.num_ports, 0);
}

PanamaDataplane::JobState PanamaDataplane::NewJobState(const PanamaJob& j) const {
  JobState s;
  for (uint16_t p = 0; p < config_.num_ports; ++p)
    if (j.ports_bitmap >> p & 1) s.members.push_back(p);
  s.trees.resize(j.num_trees);
  for (TreeState& t : s.trees) t.q.resize(config_.num_ports);
  uint64_t total = 0;
  for (uint16_t p : s.members) {
    s.weights.push_back(j.port_workers.empty() ? 1u : j.port_workers[p]);
    total += s.weights.back();
  }
  s.partial = j.quorum < 1;
  // The quorum's weight, rounded up (PANAMA-0.88 of 8 workers waits for 8 x 0.88 = 7.04 -> 8).
  s.need = s.partial ? static_cast<uint64_t>(std::ceil(j.quorum * static_cast<double>(total) - 1e-9)) : total;
  s.contributes.assign(s.members.size(), 1);
  return s;
}

void PanamaDataplane::AddJob(const PanamaJob& job) {
  PanamaConfig with = config_;
  with.jobs.push_back(job);
  with.Validate();
  config_.jobs.push_back(job);
  buffers_.AddJob();
  control_.AddJob(job);
  jobs_.push_back(NewJobState(job));
}

bool PanamaDataplane::Claims(const FrameView& f) const {
  if (config_.claim_all_traffic) return true;
  return f.ipv4 && f.dscp == kAggregationDscp && f.protocol == kIpProtoUdp;
}

int PanamaDataplane::FindJob(uint16_t jid) const {
  for (size_t i = 0; i < config_.jobs.size(); ++i)
    if (config_.jobs[i].jid == jid) return static_cast<int>(i);
  return -1;
}

uint16_t PanamaDataplane::OwnWndCap() const {
  // panama §4.2.2 "Each accelerator calculates its available memory based on
  // the number of active training jobs (packet_memory/num_jobs)"; 16 bits.
  return static_cast<uint16_t>(std::min<uint64_t>(kMaxWndCap, buffers_.Share()));
}

void PanamaDataplane::Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds now,
                              Emitter& out) {
  now_ = now;
  ++stats_.processed;
  const uint32_t bytes = static_cast<uint32_t>(frame.size());
  const PanamaPacket p = HeaderParser::Parse(frame);
  switch (p.kind) {
    case PanamaPacket::Kind::kNonAggregation:
      // panama §5 (1) "other packets are forwarded directly to the switching
      // chip": untouched, with the non-aggregation cut-through latency (Table 1).
      ++stats_.non_aggregation;
      out.EmitRouted(frame, PortInOrder(ingress_port, latency_.NonAggregation(bytes)));
      return;
    case PanamaPacket::Kind::kMalformed:
      ++stats_.malformed_dropped;
      return;
    case PanamaPacket::Kind::kAggregation:
      break;
  }
  const int job = FindJob(p.jid);
  if (job < 0) {
    ++stats_.unknown_job_dropped;
    return;
  }
  JobState& js = jobs_[job];
  if (p.tid >= js.trees.size()) {
    ++stats_.unknown_tree_dropped;
    return;
  }
  if (ingress_port >= config_.num_ports) {
    ++stats_.bad_port_dropped;
    return;
  }
  if (!(control_.ports_bitmap(job) >> ingress_port & 1)) {
    // fp_datapath.v:449-450 "PORTS_BITMAP[i]==0 ... I just need to forward out
    // this result" (FORWARD_OUT_RESULT, :482-486): not aggregated here, e.g. a
    // result coming down the tree. Untouched, non-aggregation latency.
    ++stats_.forwarded;
    out.EmitRouted(frame, PortInOrder(ingress_port, latency_.NonAggregation(bytes)));
    return;
  }
  if (!js.active) {
    js.active = true;
    buffers_.JobStarted();
  }
  // panama §5 (1) "These packets are sent to dedicated aggregation buffers".
  if (!buffers_.Admit(static_cast<uint32_t>(job), ingress_port)) {
    ++stats_.buffer_overflow_dropped;
    MaybeEndJob(static_cast<uint32_t>(job));
    return;
  }
  ++stats_.buffered;
  TreeState& t = js.trees[p.tid];
  t.open = true;
  t.q[ingress_port].push_back(Entry{std::vector<uint8_t>(frame.begin(), frame.end()), p});
  Drain(static_cast<uint32_t>(job), p.tid, out);
}

void PanamaDataplane::PopHead(uint32_t job, uint32_t tree, uint16_t port) {
  jobs_[job].trees[tree].q[port].pop_front();
  buffers_.Release(job, port);
}

void PanamaDataplane::Drain(uint32_t job, uint32_t tree, Emitter& out) {
  JobState& js = jobs_[job];
  const size_t m = js.members.size();
  std::vector<uint32_t> vids(m);
  std::unique_ptr<bool[]> present(new bool[m]);
  for (;;) {
    TreeState& t = js.trees[tree];
    for (size_t i = 0; i < m; ++i) {
      const auto& q = t.q[js.members[i]];
      present[i] = !q.empty();
      vids[i] = q.empty() ? 0 : q.front().hdr.vid;
    }
    const uint32_t expected = control_.expected_vid(job, tree);
    const inasim::Span<const bool> have(present.get(), m);
    const ControlLogic::Verdict verdict =
        js.partial ? ControlLogic::InspectQuorum(expected, vids, have, js.weights, js.need)
                   : ControlLogic::Inspect(expected, vids, have);
    switch (verdict) {
      case ControlLogic::Verdict::kWait:
        return;
      case ControlLogic::Verdict::kDropStale:
        // An older vector than Expected_VID can never complete: drop it.
        for (size_t i = 0; i < m; ++i) {
          if (!present[i] || !ControlLogic::Older(vids[i], expected)) continue;
          PopHead(job, tree, js.members[i]);
          ++stats_.vid_mismatch_dropped;
        }
        continue;
      case ControlLogic::Verdict::kSkip: {
        // panama §5 (2) "Otherwise, gradients with missing values are dropped
        // and aggregation proceeds with the next Expected_VID". Trees deliver
        // in order, so every VID below the newest head is lost on that head's
        // port: drop the heads that match and move Expected_VID to the newest
        // head (the same end state as stepping one VID at a time).
        uint32_t newest = expected;
        for (size_t i = 0; i < m; ++i) {
          if (!present[i]) continue;  // (a quorum's skip waits for every port, as the hardware's)
          if (ControlLogic::Older(newest, vids[i])) newest = vids[i];
          if (vids[i] != expected) continue;
          PopHead(job, tree, js.members[i]);
          ++stats_.vid_mismatch_dropped;
        }
        stats_.vids_skipped += newest - expected;
        control_.skip_to(job, tree, newest);
        continue;
      }
      case ControlLogic::Verdict::kAggregate: {
        // Every member, or (quorum) the members whose head is Expected_VID.
        size_t lead = m;
        for (size_t i = 0; i < m; ++i) {
          js.contributes[i] = present[i] && vids[i] == expected;
          if (js.contributes[i] && lead == m) lead = i;
        }
        const uint32_t n = t.q[js.members[lead]].front().hdr.num_values;
        bool same = true;
        for (size_t i = 0; i < m; ++i)
          same = same && (!js.contributes[i] || t.q[js.members[i]].front().hdr.num_values == n);
        if (!same) {
          // Inputs of one vector with different lengths cannot be streamed
          // together (the hardware would desynchronise its lanes): dropped.
          for (size_t i = 0; i < m; ++i)
            if (js.contributes[i]) {
              PopHead(job, tree, js.members[i]);
              ++stats_.length_mismatch_dropped;
            }
          control_.advance(job, tree);
          continue;
        }
        Aggregate(job, tree, out);
        if (!js.trees[tree].open) return;  // FIN reset the tree: nothing left
        continue;
      }
    }
  }
}

Picoseconds PanamaDataplane::InOrder(Picoseconds latency) {
  // The adder trees stream vectors out in the order they complete: a short
  // vector (a gradient's last packet) cannot leave before the longer one ahead
  // of it, whatever eq. (3) gives each alone.
  if (now_ + latency < results_free_at_) latency = results_free_at_ - now_;
  results_free_at_ = now_ + latency;
  return latency;
}

Picoseconds PanamaDataplane::PortInOrder(uint16_t ingress_port, Picoseconds latency) {
  // What passes through from one port streams through in arrival order too: a
  // short frame (a gradient's last result coming down the tree) stays behind
  // the longer one ahead of it.
  if (ingress_port >= passthrough_free_at_.size()) passthrough_free_at_.resize(ingress_port + 1u, 0);
  Picoseconds& free_at = passthrough_free_at_[ingress_port];
  if (now_ + latency < free_at) latency = free_at - now_;
  free_at = now_ + latency;
  return latency;
}

void PanamaDataplane::Aggregate(uint32_t job, uint32_t tree, Emitter& out) {
  JobState& js = jobs_[job];
  TreeState& t = js.trees[tree];
  const PanamaJob& cfg = config_.jobs[job];
  // Members taking part (all of them unless a quorum let some out).
  js.contributors.clear();
  for (size_t i = 0; i < js.members.size(); ++i)
    if (js.contributes[i]) js.contributors.push_back(js.members[i]);
  const std::vector<uint16_t>& members = js.contributors;
  const Entry& first = t.q[members[0]].front();
  const uint32_t n = first.hdr.num_values;
  if (members.size() < js.members.size()) {
    ++stats_.partial_aggregations;
    if (on_partial_aggregate) on_partial_aggregate(cfg.jid, static_cast<uint8_t>(tree), first.hdr.vid, members);
  }

  // panama §4.2.2 ECN: "performs a bitwise OR operation on the ECN field of
  // packets received"; wnd_cap: the minimum of the inputs' and this
  // accelerator's packet_memory/num_jobs; FIN: any input's.
  uint8_t ecn = 0;
  uint16_t wnd_cap = OwnWndCap();
  bool fin = false;
  for (uint16_t p : members) {
    const PanamaPacket& h = t.q[p].front().hdr;
    ecn = static_cast<uint8_t>(ecn | h.ecn);
    wnd_cap = std::min(wnd_cap, h.wnd_cap);
    fin = fin || h.fin();
  }

  // panama §5 (3): every lane through the adder tree. fp_datapath.v:278-285
  // feeds +0 for a port outside PORTS_BITMAP.
  sums_.resize(n);
  std::fill(leaves_.begin(), leaves_.end(), 0u);
  for (uint32_t v = 0; v < n; ++v) {
    for (uint16_t p : members) {
      const Entry& e = t.q[p].front();
      leaves_[p] = LoadBe32(e.bytes.data() + e.hdr.gradient_offset + kValueBytes * v);
    }
    sums_[v] = tree_.Reduce(leaves_);
  }
  ++stats_.aggregations;

  // panama §5 (2) "the gradients are streamed through the adder trees ..., and
  // the Expected_VID register is incremented".
  control_.advance(job, tree);

  switch (cfg.result) {
    case ResultRoute::kEcho:
      // fp_datapath.v:523-552: each member port sends its own header registers
      // (data_reg[i], destination MAC rewritten at :385) then the sums.
      for (uint16_t p : members) {
        Deparse(t.q[p].front(), ecn, wnd_cap, fin);
        out.Emit(out_, p, InOrder(latency_.Aggregation(static_cast<uint32_t>(out_.size()))));
        ++stats_.result_packets;
      }
      break;
    case ResultRoute::kRouted:
      Deparse(first, ecn, wnd_cap, fin);
      out.EmitRouted(out_, InOrder(latency_.Aggregation(static_cast<uint32_t>(out_.size()))));
      ++stats_.result_packets;
      break;
    case ResultRoute::kPorts:
      Deparse(first, ecn, wnd_cap, fin);
      if (cfg.result_ports.size() == 1) {
        out.Emit(out_, cfg.result_ports[0], InOrder(latency_.Aggregation(static_cast<uint32_t>(out_.size()))));
      } else {
        out.EmitMulticast(out_, cfg.result_ports, InOrder(latency_.Aggregation(static_cast<uint32_t>(out_.size()))));
      }
      stats_.result_packets += cfg.result_ports.size();
      break;
  }
  for (uint16_t p : members) PopHead(job, tree, p);

  if (fin) {
    // panama §5 (2) "Workers notify accelerators that they have sent all their
    // aggregation packets by setting the FIN bit ..., and this resets the state".
    ++stats_.fin_resets;
    ResetTree(job, tree, &stats_.fin_flushed);
    MaybeEndJob(job);
  }
}

void PanamaDataplane::Deparse(const Entry& src, uint8_t ecn, uint16_t wnd_cap, bool fin) {
  out_.assign(src.bytes.begin(), src.bytes.end());
  uint8_t* b = out_.data();
  // fp_datapath.v:385 data_reg[DEST_MAC_POS+47:DEST_MAC_POS] <= NEW_DEST_MAC.
  std::copy(kNewDestMac, kNewDestMac + 6, b);
  // IPv4: ECN = OR of the inputs; header checksum recomputed for the new TOS.
  uint8_t* ip = b + src.hdr.ip_offset;
  ip[1] = static_cast<uint8_t>((ip[1] & 0xfc) | (ecn & 0x3));
  const size_t ihl_bytes = size_t{ip[0] & 0x0fu} * 4;
  StoreBe16(ip + 10, 0);
  StoreBe16(ip + 10, Ipv4HeaderChecksum(ip, ihl_bytes));
  // UDP checksum 0 ("no checksum", RFC 768): the payload is new.
  StoreBe16(b + src.hdr.header_offset - kUdpBytes + 6, 0);
  uint8_t* h = b + src.hdr.header_offset;
  h[kOffFlags] = static_cast<uint8_t>((h[kOffFlags] & ~kFinFlag) | (fin ? kFinFlag : 0));
  StoreBe16(h + kOffWndCap, wnd_cap);
  // fp_datapath.v:545 out_tdata = {fp_dout[1], fp_dout[0]}: the sums, in lane order.
  for (size_t v = 0; v < sums_.size(); ++v) StoreBe32(b + src.hdr.gradient_offset + kValueBytes * v, sums_[v]);
}

void PanamaDataplane::ResetTree(uint32_t job, uint32_t tree, uint64_t* flushed_counter) {
  TreeState& t = jobs_[job].trees[tree];
  for (uint16_t p = 0; p < config_.num_ports; ++p) {
    while (!t.q[p].empty()) {
      PopHead(job, tree, p);
      ++*flushed_counter;
    }
  }
  t.open = false;
  control_.reset(job, tree);
}

void PanamaDataplane::MaybeEndJob(uint32_t job) {
  JobState& js = jobs_[job];
  if (!js.active) return;
  for (const TreeState& t : js.trees)
    if (t.open) return;
  js.active = false;
  buffers_.JobEnded();
}

bool PanamaDataplane::ResetJob(uint16_t jid) {
  const int job = FindJob(jid);
  if (job < 0) return false;
  for (uint32_t t = 0; t < jobs_[job].trees.size(); ++t)
    ResetTree(static_cast<uint32_t>(job), t, &stats_.controller_flushed);
  MaybeEndJob(static_cast<uint32_t>(job));
  return true;
}

int64_t PanamaDataplane::ExpectedVid(uint16_t jid, uint8_t tid) const {
  const int job = FindJob(jid);
  if (job < 0 || tid >= jobs_[job].trees.size()) return -1;
  return control_.expected_vid(static_cast<uint32_t>(job), tid);
}

uint64_t PanamaDataplane::Buffered(uint16_t jid, uint16_t port) const {
  const int job = FindJob(jid);
  if (job < 0 || port >= config_.num_ports) return 0;
  return buffers_.Buffered(static_cast<uint32_t>(job), port);
}

bool PanamaDataplane::JobActive(uint16_t jid) const {
  const int job = FindJob(jid);
  return job >= 0 && jobs_[job].active;
}

std::string PanamaDataplane::DumpState() const {
  using nlohmann::json;
  json j;
  j["name"] = "panama";
  j["config"] = {{"num_ports", config_.num_ports},
                 {"float_mode", config_.float_mode == FloatMode::kFpga ? "fpga" : "ieee"},
                 {"latency_mode", config_.latency.mode == LatencyMode::kEquation ? "equation" : "table1"},
                 {"packet_memory", buffers_.packet_memory()},
                 {"claim_all_traffic", config_.claim_all_traffic}};
  j["stats"] = DumpedCounters(stats_, Stats::kCounters);
  j["stats"]["peak_buffered"] = buffers_.Peak();
  j["active_jobs"] = buffers_.active_jobs();
  j["wnd_cap"] = OwnWndCap();
  json jobs = json::array();
  for (size_t i = 0; i < jobs_.size(); ++i) {
    const JobState& js = jobs_[i];
    json trees = json::array();
    for (uint32_t t = 0; t < js.trees.size(); ++t) {
      json queued = json::array();
      for (uint16_t p : js.members) queued.push_back(js.trees[t].q[p].size());
      trees.push_back({{"tid", t},
                       {"expected_vid", control_.expected_vid(static_cast<uint32_t>(i), t)},
                       {"open", js.trees[t].open},
                       {"queued", queued}});
    }
    json buffered = json::array();
    for (uint16_t p : js.members) buffered.push_back(buffers_.Buffered(static_cast<uint32_t>(i), p));
    jobs.push_back({{"jid", config_.jobs[i].jid},
                    {"ports_bitmap", control_.ports_bitmap(static_cast<uint32_t>(i))},
                    {"members", js.members},
                    {"active", js.active},
                    {"buffered", buffered},
                    {"trees", trees}});
  }
  j["jobs"] = jobs;
  return j.dump();
}

}  // namespace inasim::p4::panama
