#include "protocols/canary/dataplane/canary_dataplane.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <stdexcept>
#include <utility>

namespace inasim::p4::canary {

namespace {

canary_h ExtractCanary(const uint8_t* c) {
  canary_h h;
  h.destination = LoadBe32(c + kOffDestination);
  h.id = LoadBe32(c + kOffId);
  h.counter = LoadBe16(c + kOffCounter);
  h.hosts = LoadBe16(c + kOffHosts);
  h.children = LoadBe32(c + kOffChildren);
  h.switch_address = LoadBe16(c + kOffSwitchAddress);
  h.bypass = (c[kOffFlags] & kBypassBit) != 0;
  h.multicast = (c[kOffFlags] & kMulticastBit) != 0;
  h.padding = c[kOffFlags] & kPaddingMask;
  return h;
}

void DeparseCanary(const canary_h& h, uint8_t* c) {
  StoreBe32(c + kOffDestination, h.destination);
  StoreBe32(c + kOffId, h.id);
  StoreBe16(c + kOffCounter, h.counter);
  StoreBe16(c + kOffHosts, h.hosts);
  StoreBe32(c + kOffChildren, h.children);
  StoreBe16(c + kOffSwitchAddress, h.switch_address);
  c[kOffFlags] = static_cast<uint8_t>((h.bypass ? kBypassBit : 0) | (h.multicast ? kMulticastBit : 0) |
                                      (h.padding & kPaddingMask));
}

/// Rewrites the IPv4 destination of a frame in place. A zero checksum stays
/// zero (ns-3 leaves it unset when checksums are off); any other is recomputed.
void SetIpv4Destination(uint8_t* ip, size_t ip_bytes, uint32_t dst) {
  StoreBe32(ip + 16, dst);
  if (LoadBe16(ip + 10) == 0) return;
  StoreBe16(ip + 10, 0);
  StoreBe16(ip + 10, Ipv4HeaderChecksum(ip, ip_bytes));
}

std::string Ipv4Text(uint32_t a) {
  return std::to_string(a >> 24) + "." + std::to_string(a >> 16 & 255) + "." + std::to_string(a >> 8 & 255) + "." +
         std::to_string(a & 255);
}

}  // namespace

CanaryDataplane::CanaryDataplane(CanaryConfig config)
    : config_((config.Validate(), std::move(config))),
      hash_(config_.index_hash),
      partition_(config_.table_size),
      port_to_one_hot_(config_.num_ports),
      table_(config_.table_size, config_.num_elements),
      timeout_(config_),
      shards_(config_.num_ports, config_.multicast_shard_ports) {
  for (const TablePartition& p : config_.partitions) partition_.set_partition(p);
}

void CanaryDataplane::AddPartition(const TablePartition& p) {
  config_.ValidatePartition(p);
  config_.partitions.push_back(p);
  partition_.set_partition(p);
}

bool CanaryDataplane::Claims(const FrameView& f) const {
  return f.ipv4 && f.protocol == kIpProtoUdp && f.l4 && f.dst_port == config_.udp_port;
}

CanaryDataplane::ParseResult CanaryDataplane::Parse(inasim::Span<const uint8_t> frame, Packet& p) const {
  const uint8_t* b = frame.data();
  const size_t len = frame.size();
  if (len < kEthernetBytes) return ParseResult::kMalformed;
  if (LoadBe16(b + 12) != kEtherTypeIpv4) return ParseResult::kNotCanary;
  if (len < kEthernetBytes + kIpv4MinBytes) return ParseResult::kMalformed;
  p.ip_at = kEthernetBytes;
  const uint8_t* ip = b + p.ip_at;
  const size_t ihl = (ip[0] & 0x0f) * size_t{4};
  if ((ip[0] >> 4) != 4 || ihl < kIpv4MinBytes || ip[9] != kIpProtoUdp) return ParseResult::kNotCanary;
  const uint16_t frag = LoadBe16(ip + 6);
  if ((frag & 0x1fff) != 0) return ParseResult::kNotCanary;  // a later fragment has no UDP header
  p.udp_at = p.ip_at + ihl;
  if (len < p.udp_at + kUdpBytes) return ParseResult::kMalformed;
  if (LoadBe16(b + p.udp_at + 2) != config_.udp_port) return ParseResult::kNotCanary;
  // From here on the packet is Canary's: anything short or inconsistent is
  // malformed (dropped and counted), including a first fragment (MF set).
  p.canary_at = p.udp_at + kUdpBytes;
  const size_t body = kCanaryHBytes + size_t{4} * config_.num_elements;
  if ((frag & 0x2000) != 0 || len < p.canary_at + body || LoadBe16(b + p.udp_at + 4) < kUdpBytes + body ||
      LoadBe16(ip + 2) < ihl + kUdpBytes + body) {
    return ParseResult::kMalformed;
  }
  p.ip_dst = LoadBe32(ip + 16);
  p.hdr = ExtractCanary(b + p.canary_at);
  return ParseResult::kCanary;
}

void CanaryDataplane::Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds now,
                              Emitter& out) {
  ++stats_.processed;
  last_passes_ = 1;
  Packet p;
  switch (Parse(frame, p)) {
    case ParseResult::kMalformed:
      ++stats_.malformed_dropped;
      return;
    case ParseResult::kNotCanary:
      ++stats_.not_canary;
      out.EmitRouted(frame, config_.pass_latency_ps);
      return;
    case ParseResult::kCanary:
      break;
  }
  switch (Classify::apply(p.hdr, config_.switch_address)) {
    case Classify::Action::kReduce:
      Reduce(ingress_port, frame, p, now, out);
      return;
    case Classify::Action::kBroadcast:
      Broadcast(frame, p, out);
      return;
    case Classify::Action::kRestore:
      Restore(frame, p, out);
      return;
    case Classify::Action::kBypass:
      // canary-fgcs24 §3.2.1 "the packet is marked and ignored by all the other
      // switches on the path"; §4.1 "Bypass ... only forward it to the next hop".
      ++stats_.bypassed;
      out.EmitRouted(frame, config_.pass_latency_ps);
      return;
  }
}

void CanaryDataplane::Reduce(uint16_t ingress_port, inasim::Span<const uint8_t> frame, const Packet& p,
                             Picoseconds now, Emitter& out) {
  // canary-fgcs24 §4.2: one-hot of the ingress port from the TCAM.
  const uint64_t one_hot = port_to_one_hot_.apply(ingress_port);
  if (one_hot == 0) {
    ++stats_.bad_port_dropped;
    return;
  }
  const uint8_t* data = frame.data() + p.canary_at + kCanaryHBytes;
  const uint32_t k = config_.num_elements;
  const uint32_t index = IndexOf(p.hdr.id);
  switch (table_.apply(index, p.hdr.id)) {
    case DescriptorTable::Lookup::kEmpty: {
      // canary-fgcs24 §3.1.1: allocate, store the data, start the timer, drop.
      Descriptor& d = table_.At(index);
      const uint32_t generation = DescriptorTable::descriptor_allocate(d, p.hdr, one_hot, now);
      DescriptorTable::accumulator_write(table_.Accumulator(index), data, k);
      table_.CountAllocate();
      ++stats_.allocated;
      if (d.counter >= d.hosts) {
        // Already complete (e.g. one host, or a lower switch saw every packet).
        DescriptorTable::timed_out_set(d);
        ++stats_.completed;
        SendAggregate(index, out);
        return;
      }
      if (timers() != nullptr) timers()->ScheduleAt(timeout_.FireTime(index, now), TimerCookie(index, generation));
      return;
    }
    case DescriptorTable::Lookup::kHit: {
      Descriptor& d = table_.At(index);
      DescriptorTable::children_or(d, one_hot);
      if (d.timed_out) {
        // canary-fgcs24 §3.1.1 / §3.5: "If a packet arrives and the timeout for
        // that id already expired, the switch updates the list of children and
        // forwards the packet to the next hop."
        ++stats_.stragglers;
        RouteToLeader(frame, p, /*collided=*/false, ingress_port, out);
        return;
      }
      DescriptorTable::accumulator_add(table_.Accumulator(index), data, k);
      const uint16_t counter = DescriptorTable::counter_add(d, p.hdr.counter);
      ++stats_.aggregated;
      // canary-fgcs24 §3.1.1 "the accumulated counter will be equal to the
      // number of hosts"; §3.1.4 the root "sends the aggregated data to the
      // leader host as soon as the timeout expires (or when all the expected
      // data is received)". >= so a duplicate cannot hold the block back.
      if (counter >= d.hosts) {
        DescriptorTable::timed_out_set(d);
        ++stats_.completed;
        SendAggregate(index, out);
      }
      return;
    }
    case DescriptorTable::Lookup::kCollision:
      // canary-fgcs24 §3.2.1 "the switch inserts its address in the packet
      // alongside the identifier of the port from which it received it. Then,
      // it forwards the packet directly to the leader host (the packet is marked
      // and ignored by all the other switches on the path)."
      ++stats_.collisions;
      RouteToLeader(frame, p, /*collided=*/true, ingress_port, out);
      return;
  }
}

void CanaryDataplane::RouteToLeader(inasim::Span<const uint8_t> frame, const Packet& p, bool collided,
                                    uint16_t ingress_port, Emitter& out) {
  // canary-fgcs24 §4.1 "CANARY uses the same routing tables used for IP routing
  // to determine how to reach the destination": we route by the IPv4 header,
  // so it must name the leader; rewrite it when a sender set it otherwise.
  const bool readdress = p.ip_dst != p.hdr.destination;
  if (!collided && !readdress) {
    out.EmitRouted(frame, config_.pass_latency_ps);  // byte-identical
    return;
  }
  out_.assign(frame.begin(), frame.end());
  if (collided) {
    canary_h h = p.hdr;
    h.switch_address = config_.switch_address;  // canary-fgcs24 §4.1 "Switch Address"
    h.children = ingress_port;                  // canary-fgcs24 §4.1 "Children": the port identifier
    h.bypass = true;                            // canary-fgcs24 §4.1 "Bypass"
    DeparseCanary(h, out_.data() + p.canary_at);
  }
  if (readdress) SetIpv4Destination(out_.data() + p.ip_at, p.udp_at - p.ip_at, p.hdr.destination);
  StoreBe16(out_.data() + p.udp_at + 6, 0);  // payload or addresses changed: no UDP checksum
  out.EmitRouted(out_, config_.pass_latency_ps);
}

void CanaryDataplane::Broadcast(inasim::Span<const uint8_t> frame, const Packet& p, Emitter& out) {
  const uint32_t index = IndexOf(p.hdr.id);
  if (table_.apply(index, p.hdr.id) != DescriptorTable::Lookup::kHit) {
    // canary-fgcs24 §3.5 "If the switch does not have a descriptor for that id
    // (because it could not store it due to a collision), it drops the packet."
    ++stats_.broadcast_misses;
    return;
  }
  // canary-fgcs24 §3.1.2 "a switch forwards the packet to its children and
  // deallocates the descriptor"; §4.2 one multicast group per non-empty shard.
  Descriptor& d = table_.At(index);
  shards_.Groups(d.children, groups_);
  const uint32_t per_pass = config_.multicast_groups_per_pass;
  for (size_t g = 0; g < groups_.size(); ++g) {
    shards_.Ports(groups_[g], ports_);
    const uint32_t pass = static_cast<uint32_t>(g / per_pass) + 1;
    ++stats_.multicast_groups;
    stats_.multicast_copies += ports_.size();
    out.EmitMulticast(frame, ports_, pass * config_.pass_latency_ps);
  }
  last_passes_ = groups_.empty() ? 1 : static_cast<uint32_t>((groups_.size() + per_pass - 1) / per_pass);
  DescriptorTable::descriptor_free(d);
  table_.ReleaseAccumulator(index);
  table_.CountFree();
  ++stats_.broadcasts;
}

void CanaryDataplane::Restore(inasim::Span<const uint8_t> frame, const Packet& p, Emitter& out) {
  // canary-fgcs24 §3.2.1 "the leader host uses this information to send an
  // additional packet to these switches, allowing them to bootstrap a local
  // broadcast ... these packets also carry the list of ports on which the
  // switch must forward the data (e.g., encoded as a bitmap)". The list is one
  // §4.2 shard group id in the children field.
  if (!shards_.Ports(p.hdr.children, ports_)) {
    ++stats_.restoration_bad_group;
    return;
  }
  // The copies continue as ordinary broadcast packets: the switches below use
  // their own descriptors, hosts accept the limited-broadcast address.
  out_.assign(frame.begin(), frame.end());
  canary_h h = p.hdr;
  h.bypass = false;
  h.multicast = true;
  h.children = 0;
  h.switch_address = 0;
  DeparseCanary(h, out_.data() + p.canary_at);
  SetIpv4Destination(out_.data() + p.ip_at, p.udp_at - p.ip_at, kIpv4LimitedBroadcast);
  StoreBe16(out_.data() + p.udp_at + 6, 0);
  ++stats_.restorations;
  ++stats_.multicast_groups;
  stats_.multicast_copies += ports_.size();
  out.EmitMulticast(out_, ports_, config_.pass_latency_ps);
}

void CanaryDataplane::OnTimer(uint64_t cookie, Picoseconds now, Emitter& out) {
  last_passes_ = 1;
  const uint32_t index = CookieIndex(cookie);
  if (index >= table_.size()) {
    ++stats_.stale_timers;
    return;
  }
  const Descriptor& peek = table_.Peek(index);
  if (!peek.valid || peek.generation != CookieGeneration(cookie) || peek.timed_out ||
      !timeout_.Expired(peek.alloc_ps, now)) {
    ++stats_.stale_timers;
    return;
  }
  // canary-fgcs24 §3.1.1 "When the timeout expires, the switch retrieves the
  // accumulated data from the descriptor, stores it in a new packet, and sends
  // it to the next hop towards the root"; §4.3 in the prototype the clock
  // packet that found the entry expired becomes that packet.
  DescriptorTable::timed_out_set(table_.At(index));
  ++stats_.timeouts;
  SendAggregate(index, out);
}

void CanaryDataplane::SendAggregate(uint32_t index, Emitter& out) {
  const Descriptor& d = table_.Peek(index);
  const uint32_t k = config_.num_elements;
  const size_t body = kCanaryHBytes + size_t{4} * k;
  out_.assign(kEthernetBytes + kIpv4MinBytes + kUdpBytes + body, 0);
  uint8_t* b = out_.data();
  // Ethernet: to 02:00:<leader IPv4> (the simulator's host MAC convention; the
  // fabric forwards by IPv4 and ignores it), from the switch.
  const uint8_t dst_mac[6] = {0x02, 0x00, uint8_t(d.leader >> 24), uint8_t(d.leader >> 16), uint8_t(d.leader >> 8),
                              uint8_t(d.leader)};
  std::memcpy(b, dst_mac, 6);
  std::memcpy(b + 6, config_.switch_mac.data(), 6);
  StoreBe16(b + 12, kEtherTypeIpv4);
  // IPv4 from the switch to the leader; UDP: Canary port both ways.
  WriteIpv4Udp(b + kEthernetBytes, 0, config_.switch_ip, d.leader, config_.udp_port, config_.udp_port, body);
  // Canary: the descriptor's block, counter and leader; no collision fields.
  canary_h h;
  h.destination = d.leader;
  h.id = d.id;
  h.counter = d.counter;
  h.hosts = d.hosts;
  uint8_t* c = b + kEthernetBytes + kIpv4MinBytes + kUdpBytes;
  DeparseCanary(h, c);
  const uint32_t* acc = table_.PeekAccumulator(index);
  for (uint32_t i = 0; i < k; ++i) StoreBe32(c + kCanaryHBytes + 4 * i, acc[i]);
  // Routed: the switch's own table and load-balancing policy pick the up-port.
  out.EmitRouted(out_, config_.pass_latency_ps);
}

const Descriptor* CanaryDataplane::Find(uint32_t id) const {
  const Descriptor& d = table_.Peek(IndexOf(id));
  return d.valid && d.id == id ? &d : nullptr;
}

std::vector<int32_t> CanaryDataplane::Accumulator(uint32_t index) const {
  std::vector<int32_t> v(config_.num_elements, 0);
  if (index >= table_.size()) return v;
  if (const uint32_t* acc = table_.PeekAccumulator(index)) {
    for (uint32_t i = 0; i < config_.num_elements; ++i) v[i] = static_cast<int32_t>(acc[i]);
  }
  return v;
}

std::string CanaryDataplane::DumpState() const {
  using nlohmann::json;
  json j;
  j["name"] = "canary";
  j["switch_address"] = config_.switch_address;
  j["last_passes"] = last_passes_;
  j["config"] = {{"num_ports", config_.num_ports},
                 {"num_elements", config_.num_elements},
                 {"table_size", config_.table_size},
                 {"index_hash", config_.index_hash == IndexHash::kCrc32 ? "crc32" : "direct"},
                 {"timeout_ps", config_.timeout_ps},
                 {"timeout_mode", config_.timeout_mode == TimeoutMode::kExactTimer ? "exact" : "clock_scan"},
                 {"clock_period_ps", config_.clock_period_ps},
                 {"scan_entries_per_clock", config_.scan_entries_per_clock},
                 {"multicast_shard_ports", config_.multicast_shard_ports},
                 {"multicast_shards", shards_.shards()},
                 {"multicast_group_entries", shards_.group_entries()}};
  if (!config_.partitions.empty()) {  // only when installed: older dumps stay as they were
    json parts = json::array();
    for (const TablePartition& p : config_.partitions)
      parts.push_back({{"application_id", p.application_id}, {"base", p.base}, {"size", p.size}});
    j["config"]["partitions"] = parts;
  }
  j["stats"] = DumpedCounters(stats_, Stats::kCounters);
  j["occupied"] = table_.occupied();
  j["peak_occupied"] = table_.peak_occupied();
  json ds = json::array();
  for (uint32_t i : table_.ValidIndices()) {
    const Descriptor& d = table_.Peek(i);
    json children = json::array();
    for (uint32_t port = 0; port < kMaxPorts; ++port)
      if (d.children >> port & 1) children.push_back(port);
    ds.push_back({{"index", i},
                  {"id", d.id},
                  {"counter", d.counter},
                  {"hosts", d.hosts},
                  {"leader", Ipv4Text(d.leader)},
                  {"children", children},
                  {"alloc_ps", d.alloc_ps},
                  {"timed_out", d.timed_out},
                  {"generation", d.generation},
                  {"accumulator", Accumulator(i)}});
  }
  j["descriptors"] = ds;
  return j.dump();
}

}  // namespace inasim::p4::canary
