#include "protocols/p4sgd/dataplane/p4sgd_dataplane.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <utility>

namespace inasim::p4::p4sgd {

namespace {
constexpr uint16_t kFirstEtherType = 0x0600;  // IEEE 802.3: below this, bytes 12..13 are a length
}  // namespace

payload_t ParsePayload(const uint8_t* b) {
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:242-246 parse_load: pkt.extract(hdr.load).
  payload_t h;
  h.pad0 = static_cast<uint16_t>(b[kOffPad0] << 7 | b[kOffSlot] >> 1);
  h.slot = b[kOffSlot] & 1;
  h.index = LoadBe16(b + kOffIndex);
  h.seq_no = LoadBe32(b + kOffSeqNo);
  h.bitmap = LoadBe32(b + kOffBitmap);
  h.map_state = LoadBe32(b + kOffMapState);
  h.counter_state = LoadBe32(b + kOffCounterState);
  h.slot_state = b[kOffSlotState] >> 7;
  for (uint32_t i = 0; i < kValues; ++i) h.value[i] = LoadBe32(b + kOffValues + 4 * i);
  return h;
}

P4SGDDataplane::P4SGDDataplane(P4SGDConfig config)
    : config_((config.Finalize(), std::move(config))),
      pipes_(kPipes, Ingress(config_.node_size, config_.seq_sup)),
      paper_(config_.num_workers == 0 ? 1 : config_.num_workers, config_.mode == Mode::kPaper ? config_.slots : 1) {
  sim_port_of_dev_.assign(512, -1);
  for (size_t i = 0; i < config_.dev_ports.size(); ++i)
    sim_port_of_dev_[config_.dev_ports[i]] = static_cast<int16_t>(i);
  for (size_t i = 0; i < config_.workers.size(); ++i) {
    const uint16_t port = config_.workers[i].port;
    if (port >= worker_of_port_.size()) worker_of_port_.resize(port + 1u, -1);
    if (worker_of_port_[port] < 0) worker_of_port_[port] = static_cast<int16_t>(i);
  }
}

bool P4SGDDataplane::Claims(const FrameView& f) const {
  if (config_.encap == Encap::kUdp)
    return f.ipv4 && f.l4 && f.protocol == kIpProtoUdp && f.dst_port == config_.udp_port;
  return config_.claim_all_traffic || f.ether_type < kFirstEtherType;
}

void P4SGDDataplane::Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds /*now*/,
                             Emitter& out) {
  ++stats_.processed;
  last_passes_ = 1;
  if (config_.encap == Encap::kUdp) {
    // Our carriage: the load header is the UDP payload (README "Encapsulation").
    const FrameView f = ParseFrame(frame.data(), frame.size(), static_cast<uint32_t>(frame.size()));
    if (!Claims(f)) {
      ++stats_.not_p4sgd;
      out.EmitRouted(frame, config_.pass_latency_ps);
      return;
    }
    tos_ = static_cast<uint8_t>(f.dscp << 2 | f.ecn);
    const size_t off = std::min<size_t>(f.l4_payload_offset, frame.size());
    frame = frame.subspan(off, frame.size() - off);
  } else if (!config_.claim_all_traffic && frame.size() >= kEthernetBytes &&
             LoadBe16(frame.data() + 12) >= kFirstEtherType) {
    // Not ours (claim_all_traffic false, see Claims): the switch's own forwarding, untouched.
    ++stats_.not_p4sgd;
    out.EmitRouted(frame, config_.pass_latency_ps);
    return;
  }
  if (frame.size() < kPayloadBytes) {
    // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:244 extract of a 64-byte header from a
    // shorter packet: a parser error, which the Tofino ingress drops.
    ++stats_.malformed_dropped;
    return;
  }
  if (config_.mode == Mode::kPublicP4) ProcessPublic(ingress_port, frame, out);
  else ProcessPaper(ingress_port, frame, out);
}

void P4SGDDataplane::Deparse(const payload_t& h, inasim::Span<const uint8_t> frame) {
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:617-644 IngressDeparser: pkt.emit(hdr)
  // (only hdr.load is valid; the IPv4 checksum update acts on an invalid header).
  out_.assign(frame.begin(), frame.end());
  uint8_t* b = out_.data();
  b[kOffSlot] = static_cast<uint8_t>((b[kOffSlot] & 0xfe) | (h.slot & 1));
  StoreBe16(b + kOffIndex, h.index);
  StoreBe32(b + kOffSeqNo, h.seq_no);
  StoreBe32(b + kOffBitmap, h.bitmap);
  StoreBe32(b + kOffMapState, h.map_state);
  StoreBe32(b + kOffCounterState, h.counter_state);
  b[kOffSlotState] = static_cast<uint8_t>((h.slot_state & 1) << 7 | (b[kOffSlotState] & 0x7f));
  for (uint32_t i = 0; i < kValues; ++i) StoreBe32(b + kOffValues + 4 * i, h.value[i]);
}

void P4SGDDataplane::Multicast(Emitter& out) {
  stats_.multicast_copies += config_.multicast_ports.size();
  if (config_.encap == Encap::kRaw) {
    out.EmitMulticast(out_, config_.multicast_ports, config_.pass_latency_ps);
    return;
  }
  // Copies differ in their addresses, so each is its own Emit (Validate made
  // sure every member port has a worker), in group order as the PRE copies.
  for (uint16_t port : config_.multicast_ports) {
    Wrap(config_.workers[worker_of_port_[port]]);
    out.Emit(wire_, port, config_.pass_latency_ps);
  }
}

void P4SGDDataplane::EmitTo(Emitter& out, uint16_t port) {
  if (config_.encap == Encap::kRaw) {
    out.Emit(out_, port, config_.pass_latency_ps);
    return;
  }
  if (port >= worker_of_port_.size() || worker_of_port_[port] < 0) {
    ++stats_.no_worker_dropped;
    return;
  }
  Wrap(config_.workers[worker_of_port_[port]]);
  out.Emit(wire_, port, config_.pass_latency_ps);
}

void P4SGDDataplane::Wrap(const P4SGDWorker& w) {
  constexpr size_t kHeaders = kEthernetBytes + kIpv4MinBytes + kUdpBytes;
  wire_.resize(kHeaders + out_.size());
  uint8_t* b = wire_.data();
  std::copy(w.mac.begin(), w.mac.end(), b);
  std::copy(config_.switch_mac.begin(), config_.switch_mac.end(), b + 6);
  StoreBe16(b + 12, kEtherTypeIpv4);
  WriteIpv4Udp(b + kEthernetBytes, tos_, config_.switch_ip, w.ip, config_.udp_port, config_.udp_port, out_.size());
  std::copy(out_.begin(), out_.end(), b + kHeaders);
}

void P4SGDDataplane::ProcessPublic(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Emitter& out) {
  if (ingress_port >= config_.dev_ports.size()) {
    ++stats_.unmapped_port_dropped;
    return;
  }
  const uint16_t dev_port = config_.dev_ports[ingress_port];
  payload_t hdr = ParsePayload(frame.data());
  Ingress::Locals locals;
  Ingress::Path path = Ingress::Path::kNoBitmap;
  const TmDecision tm = pipes_[PipeOfDevPort(dev_port)].apply(hdr, dev_port, locals, path);
  switch (path) {
    case Ingress::Path::kNoBitmap: ++stats_.no_bitmap_dropped; break;
    case Ingress::Path::kSeqRejected: ++stats_.seq_dropped; break;
    case Ingress::Path::kFulfilled: ++stats_.fulfilled; break;
    case Ingress::Path::kEcho: ++stats_.echoed; break;
    case Ingress::Path::kPartial: ++stats_.partial_to_cpu; break;
  }
  switch (tm.kind) {
    case TmDecision::Kind::kDrop:
      return;
    case TmDecision::Kind::kMulticast:
      // The PRE replicates to group 1's members (the control plane's
      // multicast_ports); the empty Egress (p4fpga.p4:681-694) changes nothing.
      Deparse(hdr, frame);
      Multicast(out);
      return;
    case TmDecision::Kind::kUnicast: {
      const int16_t port = tm.ucast_egress_port < sim_port_of_dev_.size() ? sim_port_of_dev_[tm.ucast_egress_port] : -1;
      if (port < 0) {
        ++stats_.unmapped_egress_dropped;
        return;
      }
      Deparse(hdr, frame);
      EmitTo(out, static_cast<uint16_t>(port));
      return;
    }
  }
}

void P4SGDDataplane::ProcessPaper(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Emitter& out) {
  payload_t hdr = ParsePayload(frame.data());
  uint8_t flags = frame[kOffPad0];
  switch (paper_.apply(hdr, flags)) {
    case PaperSwitch::Path::kBadBitmap:
      ++stats_.bad_bitmap_dropped;
      return;
    case PaperSwitch::Path::kAggregated:
      ++stats_.aggregated;
      return;
    case PaperSwitch::Path::kAggDuplicateEarly:
      ++stats_.agg_duplicate_dropped;
      return;
    case PaperSwitch::Path::kAcked:
      ++stats_.acked;
      return;
    case PaperSwitch::Path::kAckDuplicateEarly:
      ++stats_.ack_duplicate_dropped;
      return;
    case PaperSwitch::Path::kCompleted:
      ++stats_.completed;
      Deparse(hdr, frame);
      Multicast(out);
      return;
    case PaperSwitch::Path::kReleased:
      ++stats_.released;
      Deparse(hdr, frame);
      out_[kOffPad0] = flags;
      Multicast(out);
      return;
    case PaperSwitch::Path::kAggResend:
      ++stats_.agg_resent;
      Deparse(hdr, frame);
      EmitTo(out, ingress_port);
      return;
    case PaperSwitch::Path::kAckResend:
      ++stats_.ack_resent;
      Deparse(hdr, frame);
      out_[kOffPad0] = flags;
      EmitTo(out, ingress_port);
      return;
  }
}

uint32_t P4SGDDataplane::Counter(uint32_t s, uint32_t index, uint32_t pipe) const {
  const Ingress& ig = pipes_.at(pipe);
  return (s == 0 ? ig.counter_reg_0 : ig.counter_reg_1).Peek(index);
}
uint32_t P4SGDDataplane::NodeMap(uint32_t s, uint32_t index, uint32_t pipe) const {
  const Ingress& ig = pipes_.at(pipe);
  return (s == 0 ? ig.node_map_reg_0 : ig.node_map_reg_1).Peek(index);
}
std::vector<int32_t> P4SGDDataplane::Values(uint32_t s, uint32_t index, uint32_t pipe) const {
  const Ingress& ig = pipes_.at(pipe);
  const ValueRow row = (s == 0 ? ig.value_reg_0 : ig.value_reg_1).Peek(index);
  return std::vector<int32_t>(row.begin(), row.end());
}
std::vector<int32_t> P4SGDDataplane::Aggregate(uint32_t index) const {
  const ValueRow row = paper_.agg_value.Peek(index);
  return std::vector<int32_t>(row.begin(), row.end());
}

std::string P4SGDDataplane::DumpState() const {
  using nlohmann::json;
  json j;
  j["name"] = "p4sgd";
  const bool paper = config_.mode == Mode::kPaper;
  j["mode"] = paper ? "paper" : "public-p4";
  j["last_passes"] = last_passes_;
  j["config"] = {{"num_workers", config_.num_workers},
                 {"multicast_ports", config_.multicast_ports},
                 {"slots", config_.slots},
                 {"node_size", config_.node_size},
                 {"pass_latency_ps", config_.pass_latency_ps},
                 {"seq_sup", config_.seq_sup},
                 {"claim_all_traffic", config_.claim_all_traffic},
                 {"encap", config_.encap == Encap::kUdp ? "udp" : "raw"},
                 {"udp_port", config_.udp_port}};
  j["stats"] = DumpedCounters(stats_, Stats::kCounters, paper ? Stats::kPaper : Stats::kPublicP4);
  if (paper) {
    json slots = json::array();
    for (uint32_t i = 0; i < config_.slots; ++i) {
      if (!paper_.agg_bm.Touched(i) && !paper_.ack_bm.Touched(i)) continue;
      slots.push_back({{"index", i},
                       {"agg_cnt", AggCount(i)},
                       {"ack_cnt", AckCount(i)},
                       {"agg_bm", AggBitmap(i)},
                       {"ack_bm", AckBitmap(i)},
                       {"value", Aggregate(i)}});
    }
    j["slots"] = slots;
  } else {
    DumpPublicState(j);
  }
  return j.dump();
}

void P4SGDDataplane::DumpPublicState(nlohmann::json& j) const {
  using nlohmann::json;
  // Every pipe's touched cells, pipe by pipe (most runs touch one pipe).
  json slots = json::array();
  json seq = json::array();
  for (uint32_t pipe = 0; pipe < kPipes; ++pipe) {
    const Ingress& ig = pipes_[pipe];
    for (uint32_t i = 0; i < kIndexSize; ++i) {
      if (!ig.node_map_reg_0.Touched(i) && !ig.node_map_reg_1.Touched(i)) continue;
      slots.push_back({{"pipe", pipe},
                       {"index", i},
                       {"counter_reg_0", Counter(0, i, pipe)},
                       {"counter_reg_1", Counter(1, i, pipe)},
                       {"node_map_reg_0", NodeMap(0, i, pipe)},
                       {"node_map_reg_1", NodeMap(1, i, pipe)},
                       {"value_reg_0", Values(0, i, pipe)},
                       {"value_reg_1", Values(1, i, pipe)}});
    }
    // "port" is the cell: the device port's low 8 bits (a 256-cell register).
    for (uint32_t p = 0; p < kSeqRegSize; ++p)
      if (ig.seq_reg.Touched(p)) seq.push_back({{"pipe", pipe}, {"port", p}, {"seq", ig.seq_reg.Peek(p)}});
  }
  j["slots"] = slots;
  j["seq_reg"] = seq;
}

}  // namespace inasim::p4::p4sgd
