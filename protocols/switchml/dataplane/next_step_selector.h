// NextStepSelector (next_step_selector.p4) with the controller's entries as data.
#pragma once

#include "protocols/switchml/dataplane/controls.h"

#include <array>
#include <cstdint>
#include <map>
#include <vector>

namespace inasim::p4::switchml {

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:24
class NextStepSelector {
 public:
  enum class Action {
    recirculate_for_CONSUME1,
    recirculate_for_CONSUME2_same_port_next_pipe,
    recirculate_for_CONSUME3_same_port_next_pipe,
    recirculate_for_HARVEST1,
    recirculate_for_HARVEST2,
    recirculate_for_HARVEST3,
    recirculate_for_HARVEST4,
    recirculate_for_HARVEST5,
    recirculate_for_HARVEST6,
    recirculate_for_HARVEST7,
    finish_consume,
    broadcast,
    retransmit,
    drop,
  };
  /// A controller-installed entry of table next_step (lower priority wins).
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:156
  struct Entry {
    Ternary packet_size;
    Ternary worker_id;
    Ternary packet_type;
    Ternary first_last_flag;
    Ternary map_result;
    int priority;
    Action action;
    uint16_t recirc_port;
  };

  /// Where the packet goes after this ingress pass.
  struct Decision {
    enum class Kind { kDrop, kRecirculate, kMulticast, kUnicast } kind = Kind::kDrop;
    uint16_t port = 0;  ///< recirculation (Tofino) port, or unicast (simulator) port
    uint16_t mgid = 0;
  };

  /// Workers a 1024 B (folded-pipe) job can have: the controller installs the
  /// CONSUME0 -> CONSUME1 entries for worker ids 0..15 only, one per loopback
  /// port of pipe 1 (128 + 4 id), because the folded pipeline puts every
  /// front-panel port of pipes 1..3 in loopback and leaves pipe 0's sixteen
  /// 100G ports for workers (paper section 5: "leaving 16 x 100 Gbps bandwidth
  /// available for workers"). A 1024 B packet of worker 16..31 hits the
  /// priority-8 drop, so a slot with such a worker never completes.
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:93
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:98
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/switchml.py:126
  static constexpr uint32_t kFoldedPipeWorkers = 16;

  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:66
  static constexpr uint16_t kUpstreamHarvest3Port = 448;
  static constexpr uint16_t kPipe2Harvest3Port = 320;

  /// Per pool-index counters of next_step, one set per pipe (the pipe of the
  /// pass's ingress port, as every Counter of the Pipeline exists per pipe).
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:37
  struct Counters {
    uint64_t broadcast = 0, retransmit = 0, recirculate = 0, drop = 0;
  };

  /// `harvest3_port`: the recirculation port of the HARVEST3 pass, 448 as the
  /// controller installs it (see README: pipe 3, which makes elements 128..159
  /// of a 1024 B packet carry the sums of 192..223) or 320 (pipe 2, the pass
  /// the read0/read1 alternation implies).
  explicit NextStepSelector(bool folded_pipe, uint16_t harvest3_port = kUpstreamHarvest3Port) {
    add_default_entries(folded_pipe, harvest3_port);
    index_entries();
  }

  const std::vector<Entry>& entries() const { return entries_; }
  /// Counters of the pool indices that counted anything in `pipe`, by pool
  /// index; pipe -1: summed over the pipes.
  std::map<uint32_t, Counters> counters(int pipe = -1) const;
  /// The counters of one pool index in one pipe (zero if it never counted).
  Counters CountersAt(uint32_t pool_index, int pipe) const {
    return pool_index < counters_.size() ? counters_[pool_index][pipe] : Counters{};
  }

  // Table next_step; `tofino_ingress_port` is this pass's ingress (dev) port.
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/next_step_selector.p4:150
  Decision apply(header_t& hdr, ingress_metadata_t& ig_md, uint16_t tofino_ingress_port);
  /// The entry table next_step picks for these keys (highest priority match), or nullptr (default drop).
  const Entry* Lookup(const switchml_md_h& md) const;

 private:
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:62
  void add_default_entries(bool folded_pipe, uint16_t harvest3_port);
  /// For each (packet_size, packet_type) key, the entries that can match it, in
  /// priority order: the lookup scans a handful instead of every entry, and
  /// still returns the first match of the full ternary key.
  void index_entries();
  static uint32_t Key(uint32_t packet_size, uint32_t packet_type) { return (packet_size & 0x7) << 4 | (packet_type & 0xf); }

  std::vector<Entry> entries_;  // sorted by priority
  // Copies of the candidate entries of every key, key after key, in priority
  // order: key k's are candidates_[candidates_begin_[k] .. candidates_begin_[k + 1]).
  std::vector<Entry> candidates_;
  std::vector<uint16_t> candidates_begin_;
  // [pool_index][pipe], allocated on first count: a 1024 B packet's passes
  // count the same pool index in pipes 0-3, so its counters share two cache
  // lines instead of four far-apart ones. Every count increments one of the
  // four, so the indices that counted anything are those with a nonzero one.
  std::vector<std::array<Counters, kNumPipes>> counters_;
};

}  // namespace inasim::p4::switchml
