#include "protocols/switchml/dataplane/next_step_selector.h"

#include <algorithm>

namespace inasim::p4::switchml {
namespace {

// The controller's key encodings: None -> mask 0; sizes 3 bits, types 4 bits,
// flag 8 bits, bitmap result 32 bits, worker id 16 bits.
// p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:237
Ternary Size(PacketSize s) { return Ternary{static_cast<uint32_t>(s), 0x7}; }
Ternary Worker(uint32_t id) { return Ternary{id, 0xffff}; }
Ternary Flag(uint32_t f) { return Ternary{f, 0xff}; }
Ternary Result(uint32_t r) { return Ternary{r, 0xffffffff}; }
constexpr uint32_t kFirst = 0x0;  // Flag.FIRST
constexpr uint32_t kLast = 0x1;   // Flag.LAST

using A = NextStepSelector::Action;

}  // namespace

void NextStepSelector::add_default_entries(bool folded_pipe, uint16_t harvest3_port) {
  // Harvest recirculation (dev) ports; port[3] is 448 upstream.
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:66
  const uint16_t port[8] = {0, 452, 324, harvest3_port, 196, 192, 64, 68};
  const auto T = [](PacketType t) { return Type(t); };
  auto& e = entries_;
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:73
  e.push_back({Size(PacketSize::IBV_MTU_128), kAny, kAny, kAny, kAny, 0, A::drop, 0});
  // 256 B: pipe 0 only.
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:77
  e.push_back({Size(PacketSize::IBV_MTU_256), kAny, T(PacketType::CONSUME0), Flag(kLast), kAny, 1, A::recirculate_for_HARVEST7, port[7]});
  e.push_back({Size(PacketSize::IBV_MTU_256), kAny, T(PacketType::CONSUME0), kAny, Result(0), 2, A::finish_consume, 0});
  e.push_back({Size(PacketSize::IBV_MTU_256), kAny, T(PacketType::CONSUME0), Flag(kFirst), kAny, 3, A::recirculate_for_HARVEST7, port[7]});
  e.push_back({Size(PacketSize::IBV_MTU_256), kAny, T(PacketType::CONSUME0), kAny, kAny, 4, A::drop, 0});
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:86
  e.push_back({Size(PacketSize::IBV_MTU_512), kAny, kAny, kAny, kAny, 5, A::drop, 0});
  if (folded_pipe) {
    // 1024 B: CONSUME0 in the worker's pipe, CONSUME1..3 in pipes 1..3, then 7 harvest passes.
    // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:90
    for (uint32_t i = 0; i < kFoldedPipeWorkers; ++i) {
      e.push_back({Size(PacketSize::IBV_MTU_1024), Worker(i), T(PacketType::CONSUME0), kAny, Result(0), 6,
                   A::recirculate_for_CONSUME1, static_cast<uint16_t>((1 << 7) + i * 4)});
    }
    // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:94
    for (uint32_t i = 0; i < kFoldedPipeWorkers; ++i) {
      e.push_back({Size(PacketSize::IBV_MTU_1024), Worker(i), T(PacketType::CONSUME0), Flag(kFirst), kAny, 7,
                   A::recirculate_for_CONSUME1, static_cast<uint16_t>((1 << 7) + i * 4)});
    }
    // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:99
    e.push_back({Size(PacketSize::IBV_MTU_1024), kAny, T(PacketType::CONSUME0), kAny, kAny, 8, A::drop, 0});
    e.push_back({Size(PacketSize::IBV_MTU_1024), kAny, T(PacketType::CONSUME1), kAny, kAny, 9, A::recirculate_for_CONSUME2_same_port_next_pipe, 0});
    e.push_back({Size(PacketSize::IBV_MTU_1024), kAny, T(PacketType::CONSUME2), kAny, kAny, 10, A::recirculate_for_CONSUME3_same_port_next_pipe, 0});
    // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:109
    e.push_back({Size(PacketSize::IBV_MTU_1024), kAny, T(PacketType::CONSUME3), Flag(kLast), kAny, 11, A::recirculate_for_HARVEST1, port[1]});
    e.push_back({Size(PacketSize::IBV_MTU_1024), kAny, T(PacketType::CONSUME3), kAny, Result(0), 12, A::finish_consume, 0});
    e.push_back({Size(PacketSize::IBV_MTU_1024), kAny, T(PacketType::CONSUME3), Flag(kFirst), kAny, 13, A::recirculate_for_HARVEST1, port[1]});
    e.push_back({Size(PacketSize::IBV_MTU_1024), kAny, T(PacketType::CONSUME3), kAny, kAny, 14, A::drop, 0});
    // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:117
    e.push_back({Size(PacketSize::IBV_MTU_1024), kAny, T(PacketType::HARVEST0), kAny, kAny, 15, A::recirculate_for_HARVEST1, port[1]});
    e.push_back({Size(PacketSize::IBV_MTU_1024), kAny, T(PacketType::HARVEST1), kAny, kAny, 16, A::recirculate_for_HARVEST2, port[2]});
    e.push_back({Size(PacketSize::IBV_MTU_1024), kAny, T(PacketType::HARVEST2), kAny, kAny, 17, A::recirculate_for_HARVEST3, port[3]});
    e.push_back({Size(PacketSize::IBV_MTU_1024), kAny, T(PacketType::HARVEST3), kAny, kAny, 18, A::recirculate_for_HARVEST4, port[4]});
    e.push_back({Size(PacketSize::IBV_MTU_1024), kAny, T(PacketType::HARVEST4), kAny, kAny, 19, A::recirculate_for_HARVEST5, port[5]});
    e.push_back({Size(PacketSize::IBV_MTU_1024), kAny, T(PacketType::HARVEST5), kAny, kAny, 20, A::recirculate_for_HARVEST6, port[6]});
    e.push_back({Size(PacketSize::IBV_MTU_1024), kAny, T(PacketType::HARVEST6), kAny, kAny, 21, A::recirculate_for_HARVEST7, port[7]});
  }
  // Final harvest pass.
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:129
  e.push_back({kAny, kAny, T(PacketType::HARVEST7), Flag(kLast), Result(0), 22, A::broadcast, 0});
  e.push_back({kAny, kAny, T(PacketType::HARVEST7), Flag(kFirst), Result(0), 23, A::drop, 0});
  e.push_back({kAny, kAny, T(PacketType::HARVEST7), Flag(kFirst), kAny, 24, A::retransmit, 0});
  e.push_back({kAny, kAny, T(PacketType::HARVEST7), kAny, kAny, 25, A::drop, 0});
  std::stable_sort(e.begin(), e.end(), [](const Entry& a, const Entry& b) { return a.priority < b.priority; });
}

NextStepSelector::Decision NextStepSelector::apply(header_t& hdr, ingress_metadata_t& ig_md,
                                                   uint16_t tofino_ingress_port) {
  auto& md = ig_md.switchml_md;
  bool count_consume = false, count_broadcast = false, count_retransmit = false, count_recirculate = false,
       count_drop = false;
  Decision d;

  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:42
  auto recirculate_for_consume = [&](PacketType packet_type, uint16_t recirc_port) {
    hdr.d0.valid = false;
    hdr.d1.valid = false;
    d.kind = Decision::Kind::kRecirculate;
    d.port = recirc_port;
    md.packet_type = packet_type;
    count_consume = true;
    count_recirculate = true;
  };
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:57
  auto recirculate_for_harvest = [&](PacketType packet_type, uint16_t recirc_port) {
    d.kind = Decision::Kind::kRecirculate;
    d.port = recirc_port;
    md.packet_type = packet_type;
  };

  const Entry* hit = Lookup(md);
  const Action action = hit ? hit->action : Action::drop;  // const default_action = drop()
  const uint16_t recirc_port = hit ? hit->recirc_port : 0;
  switch (action) {
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:65
    case Action::recirculate_for_CONSUME1: recirculate_for_consume(PacketType::CONSUME1, recirc_port); break;
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:69
    case Action::recirculate_for_CONSUME2_same_port_next_pipe:
      recirculate_for_consume(PacketType::CONSUME2, static_cast<uint16_t>(2 << 7 | (tofino_ingress_port & 0x7f)));
      break;
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:73
    case Action::recirculate_for_CONSUME3_same_port_next_pipe:
      recirculate_for_consume(PacketType::CONSUME3, static_cast<uint16_t>(3 << 7 | (tofino_ingress_port & 0x7f)));
      break;
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:77
    case Action::recirculate_for_HARVEST1: hdr.d0.valid = false; recirculate_for_harvest(PacketType::HARVEST1, recirc_port); break;
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:82
    case Action::recirculate_for_HARVEST2: hdr.d1.valid = false; recirculate_for_harvest(PacketType::HARVEST2, recirc_port); break;
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:87
    case Action::recirculate_for_HARVEST3: hdr.d0.valid = false; recirculate_for_harvest(PacketType::HARVEST3, recirc_port); break;
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:92
    case Action::recirculate_for_HARVEST4: hdr.d1.valid = false; recirculate_for_harvest(PacketType::HARVEST4, recirc_port); break;
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:97
    case Action::recirculate_for_HARVEST5: hdr.d0.valid = false; recirculate_for_harvest(PacketType::HARVEST5, recirc_port); break;
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:102
    case Action::recirculate_for_HARVEST6: hdr.d1.valid = false; recirculate_for_harvest(PacketType::HARVEST6, recirc_port); break;
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:107
    case Action::recirculate_for_HARVEST7: hdr.d0.valid = false; recirculate_for_harvest(PacketType::HARVEST7, recirc_port); break;
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:112
    case Action::finish_consume:
      d.kind = Decision::Kind::kDrop;
      count_consume = true;
      count_drop = true;
      break;
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:118
    case Action::broadcast:
      hdr.d1.valid = false;
      d.kind = Decision::Kind::kMulticast;
      d.mgid = md.mgid;  // level1_exclusion_id = null: no copy excluded
      md.packet_type = PacketType::BROADCAST;
      count_broadcast = true;
      break;
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:131
    case Action::retransmit:
      hdr.d1.valid = false;
      d.kind = Decision::Kind::kUnicast;
      d.port = md.ingress_port;
      md.packet_type = PacketType::RETRANSMIT;
      count_retransmit = true;
      break;
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:143
    case Action::drop:
      d.kind = Decision::Kind::kDrop;
      md.packet_type = PacketType::IGNORE;
      count_drop = true;
      break;
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:189
  if (count_consume || count_drop || count_recirculate || count_broadcast || count_retransmit) {
    if (counters_.empty()) counters_.resize(kRegisterSize);
    const uint32_t idx = md.pool_index & (kRegisterSize - 1);
    Counters& c = counters_[idx][(tofino_ingress_port >> 7) & (kNumPipes - 1)];
    if (count_consume || count_drop) ++c.drop;
    if (count_recirculate) ++c.recirculate;
    if (count_broadcast) ++c.broadcast;
    if (count_retransmit) ++c.retransmit;
  }
  return d;
}

const NextStepSelector::Entry* NextStepSelector::Lookup(const switchml_md_h& md) const {
  const uint32_t key = Key(static_cast<uint32_t>(md.packet_size), static_cast<uint32_t>(md.packet_type));
  const Entry* const last = candidates_.data() + candidates_begin_[key + 1];
  for (const Entry* it = candidates_.data() + candidates_begin_[key]; it != last; ++it) {
    const Entry& e = *it;
    if (e.packet_size.Match(static_cast<uint32_t>(md.packet_size)) && e.worker_id.Match(md.worker_id) &&
        e.packet_type.Match(static_cast<uint32_t>(md.packet_type)) && e.first_last_flag.Match(md.first_last_flag) &&
        e.map_result.Match(md.map_result)) {
      return &e;
    }
  }
  return nullptr;
}

void NextStepSelector::index_entries() {
  candidates_.clear();
  candidates_begin_.assign((8 << 4) + 1, 0);
  for (uint32_t size = 0; size < 8; ++size)
    for (uint32_t type = 0; type < 16; ++type) {
      candidates_begin_[Key(size, type)] = static_cast<uint16_t>(candidates_.size());
      for (const Entry& e : entries_)
        if (e.packet_size.Match(size) && e.packet_type.Match(type)) candidates_.push_back(e);
    }
  candidates_begin_[8 << 4] = static_cast<uint16_t>(candidates_.size());
}

std::map<uint32_t, NextStepSelector::Counters> NextStepSelector::counters(int pipe) const {
  std::map<uint32_t, Counters> out;
  for (uint32_t i = 0; i < counters_.size(); ++i) {
    for (int p = 0; p < kNumPipes; ++p) {
      if (pipe >= 0 && p != pipe) continue;
      const Counters& c = counters_[i][p];
      if (c.broadcast == 0 && c.retransmit == 0 && c.recirculate == 0 && c.drop == 0) continue;
      Counters& o = out[i];
      o.broadcast += c.broadcast;
      o.retransmit += c.retransmit;
      o.recirculate += c.recirculate;
      o.drop += c.drop;
    }
  }
  return out;
}

}  // namespace inasim::p4::switchml
