#include "protocols/static_tree/dataplane/static_tree_dataplane.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace inasim::p4::statictree {

using canary::kCanaryHBytes;

void StaticTreeConfig::Validate() const {
  if (num_ports == 0 || num_ports > 64)
    throw std::invalid_argument("static_tree: num_ports must be 1..64 (the duplicate bitmap), got " +
                                std::to_string(num_ports));
  if (num_elements == 0 || num_elements > 16384)
    throw std::invalid_argument("static_tree: num_elements must be 1..16384, got " + std::to_string(num_elements));
  if (slots_per_tree == 0 || (slots_per_tree & (slots_per_tree - 1)) != 0)
    throw std::invalid_argument("static_tree: slots_per_tree must be a power of two, got " +
                                std::to_string(slots_per_tree));
  if (trees.empty()) throw std::invalid_argument("static_tree: the switch is in no tree");
  for (size_t i = 0; i < trees.size(); ++i) {
    const TreeEntry& t = trees[i];
    for (size_t j = 0; j < i; ++j)
      if (trees[j].tree_id == t.tree_id)
        throw std::invalid_argument("static_tree: tree " + std::to_string(t.tree_id) + " given twice");
    if (t.child_ports.empty())
      throw std::invalid_argument("static_tree: tree " + std::to_string(t.tree_id) + " has no children here");
    for (uint16_t p : t.child_ports)
      if (p >= num_ports || static_cast<int32_t>(p) == t.parent_port)
        throw std::invalid_argument("static_tree: tree " + std::to_string(t.tree_id) + ": bad child port " +
                                    std::to_string(p));
    if (t.parent_port >= static_cast<int32_t>(num_ports))
      throw std::invalid_argument("static_tree: tree " + std::to_string(t.tree_id) + ": bad parent port");
  }
}

StaticTreeDataplane::StaticTreeDataplane(StaticTreeConfig config) : config_((config.Validate(), std::move(config))) {
  for (const TreeEntry& e : config_.trees) AddTree(e);
}

void StaticTreeDataplane::AddTrees(const std::vector<TreeEntry>& trees) {
  StaticTreeConfig with = config_;
  with.trees.insert(with.trees.end(), trees.begin(), trees.end());
  with.Validate();
  config_.trees = std::move(with.trees);
  for (const TreeEntry& e : trees) AddTree(e);
}

void StaticTreeDataplane::AddTree(const TreeEntry& e) {
  Tree t;
  t.entry = e;
  std::sort(t.entry.child_ports.begin(), t.entry.child_ports.end());
  for (uint16_t p : e.child_ports) t.child_mask |= uint64_t{1} << p;
  trees_.push_back(std::move(t));
}

bool StaticTreeDataplane::Claims(const FrameView& f) const {
  return f.ipv4 && f.protocol == kIpProtoUdp && f.l4 && f.dst_port == config_.udp_port;
}

StaticTreeDataplane::Tree* StaticTreeDataplane::FindTree(uint32_t tree_id) {
  for (Tree& t : trees_)
    if (t.entry.tree_id == tree_id) return &t;
  return nullptr;
}

void StaticTreeDataplane::Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds,
                                  Emitter& out) {
  ++stats_.processed;
  const uint8_t* b = frame.data();
  const size_t len = frame.size();
  const uint32_t k = config_.num_elements;
  const size_t body = kCanaryHBytes + size_t{4} * k;
  // Ethernet, IPv4 (IHL honoured), UDP, header, k elements: anything shorter is dropped.
  if (len < kEthernetBytes + kIpv4MinBytes || LoadBe16(b + 12) != kEtherTypeIpv4) {
    ++stats_.malformed_dropped;
    return;
  }
  const size_t ip_at = kEthernetBytes;
  const size_t ihl = (b[ip_at] & 0x0f) * size_t{4};
  const size_t udp_at = ip_at + ihl;
  const size_t h_at = udp_at + kUdpBytes;
  if (ihl < kIpv4MinBytes || len < h_at + body || LoadBe16(b + udp_at + 4) < kUdpBytes + body) {
    ++stats_.malformed_dropped;
    return;
  }
  const uint8_t* h = b + h_at;
  const uint32_t id = LoadBe32(h + canary::kOffId);
  const uint32_t tree_id = LoadBe32(h + canary::kOffChildren);
  const bool down = (h[canary::kOffFlags] & canary::kMulticastBit) != 0;
  Tree* t = FindTree(tree_id);
  if (t == nullptr) {
    ++stats_.unknown_tree;
    return;
  }
  if (down) {
    // The result from the parent: to every child of the static tree.
    if (static_cast<int32_t>(ingress_port) != t->entry.parent_port) {
      ++stats_.not_from_parent;
      return;
    }
    ++stats_.broadcasts;
    out.EmitMulticast(frame, t->entry.child_ports, config_.pass_latency_ps);
    return;
  }
  if (ingress_port >= 64 || !(t->child_mask >> ingress_port & 1)) {
    ++stats_.not_a_child;
    return;
  }
  const uint32_t index = id & (config_.slots_per_tree - 1);
  if (t->slots.empty()) t->slots.assign(config_.slots_per_tree, Slot{});
  Slot& s = t->slots[index];
  const uint8_t* data = h + kCanaryHBytes;
  if (!s.valid) {
    s.valid = true;
    s.cells = TakeCells();
    uint32_t* acc = Cells(s.cells);
    s.id = id;
    s.counter = LoadBe16(h + canary::kOffCounter);
    s.hosts = LoadBe16(h + canary::kOffHosts);
    s.seen_ports = uint64_t{1} << ingress_port;
    s.arrivals = 1;
    for (uint32_t i = 0; i < k; ++i) acc[i] = LoadBe32(data + 4 * i);
    ++stats_.allocated;
    ++in_use_;
    stats_.peak_slots = std::max(stats_.peak_slots, in_use_);
  } else if (s.id != id) {
    ++stats_.slot_conflicts;
    return;
  } else if (s.seen_ports >> ingress_port & 1) {
    ++stats_.duplicates;
    return;
  } else {
    s.seen_ports |= uint64_t{1} << ingress_port;
    ++s.arrivals;
    s.counter = static_cast<uint16_t>(s.counter + LoadBe16(h + canary::kOffCounter));
    uint32_t* acc = Cells(s.cells);
    for (uint32_t i = 0; i < k; ++i) acc[i] += LoadBe32(data + 4 * i);  // int32 wraps modulo 2^32
    ++stats_.aggregated;
  }
  // The switch knows its children count: the block is complete when each has sent.
  if (s.arrivals == t->entry.child_ports.size()) Complete(*t, index, out);
}

uint32_t StaticTreeDataplane::TakeCells() {
  if (!free_cells_.empty()) {
    const uint32_t c = free_cells_.back();
    free_cells_.pop_back();
    return c;
  }
  const uint32_t c = static_cast<uint32_t>(pool_.size() / config_.num_elements);
  pool_.resize(pool_.size() + config_.num_elements);
  return c;
}

void StaticTreeDataplane::Complete(Tree& t, uint32_t index, Emitter& out) {
  Slot& s = t.slots[index];
  const uint32_t k = config_.num_elements;
  const size_t body = kCanaryHBytes + size_t{4} * k;
  out_.assign(kEthernetBytes + kIpv4MinBytes + kUdpBytes + body, 0);
  uint8_t* b = out_.data();
  const bool root = t.entry.parent_port < 0;
  std::memset(b, 0xff, 6);  // broadcast MAC: the next hop is a switch or (root) every host below
  std::memcpy(b + 6, config_.switch_mac.data(), 6);
  StoreBe16(b + 12, kEtherTypeIpv4);
  WriteIpv4Udp(b + kEthernetBytes, 0, config_.switch_ip, canary::kIpv4LimitedBroadcast, config_.udp_port,
               config_.udp_port, body);
  uint8_t* h = b + kEthernetBytes + kIpv4MinBytes + kUdpBytes;
  StoreBe32(h + canary::kOffId, s.id);
  StoreBe16(h + canary::kOffCounter, s.counter);
  StoreBe16(h + canary::kOffHosts, s.hosts);
  StoreBe32(h + canary::kOffChildren, t.entry.tree_id);
  h[canary::kOffFlags] = root ? canary::kMulticastBit : 0;
  const uint32_t* acc = Cells(s.cells);
  for (uint32_t i = 0; i < k; ++i) StoreBe32(h + kCanaryHBytes + 4 * i, acc[i]);
  free_cells_.push_back(s.cells);
  s = Slot{};
  --in_use_;
  if (root) {
    ++stats_.results;
    out.EmitMulticast(out_, t.entry.child_ports, config_.pass_latency_ps);
  } else {
    ++stats_.sent_up;
    out.Emit(out_, static_cast<uint16_t>(t.entry.parent_port), config_.pass_latency_ps);
  }
}

std::string StaticTreeDataplane::DumpState() const {
  nlohmann::json trees = nlohmann::json::array();
  for (const Tree& t : trees_)
    trees.push_back({{"tree", t.entry.tree_id}, {"children", t.entry.child_ports}, {"parent_port", t.entry.parent_port}});
  nlohmann::json j = {{"name", "static_tree"},
                      {"trees", trees},
                      {"slots_in_use", in_use_},
                      {"stats", DumpedCounters(stats_, Stats::kCounters)}};
  return j.dump();
}

}  // namespace inasim::p4::statictree
