// StaticTreeDataplane: the baseline Canary is compared with (canary-fgcs24
// §5.2 "In-Network, N static trees"): every switch of a reduction tree knows,
// per tree, how many children it has, which ports they are on and which port
// leads to its parent (SHARP / SwitchML / ATP with one tree; PANAMA with N
// trees and blocks assigned round robin). No public program is modelled: this
// is the generic static-tree switch the paper simulates, written as a small
// pure C++ dataplane behind the same seam as the Canary model.
//
// Wire format: Ethernet / IPv4 / UDP to port 45503, then the Canary header
// layout (protocols/canary/dataplane/types.h, 19 bytes) and k big-endian int32 elements:
//   id       block id (slot = id & (slots_per_tree - 1))
//   counter  hosts reduced into this packet
//   hosts    hosts in the reduction
//   children the tree id
//   flags    multicast bit set: the result, going down
// Reduce: a slot per (tree, id) counts packets from its children (a port
// bitmap drops duplicates); when every child has sent, a non-root emits the
// partial sum out of its parent port and frees the slot, the root turns it into
// the result and multicasts it to its children (IPv4 destination
// 255.255.255.255 so every host stack accepts it). Broadcast: a result from the
// parent is multicast, unmodified, to the tree's child ports. The switch keeps
// no state for the broadcast (the tree is static). No loss recovery: a lost
// packet stalls its block (see README).
#pragma once

#include "protocols/canary/dataplane/types.h"
#include "p4model/common/counters.h"
#include "p4model/common/dataplane.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace inasim::p4::statictree {

/// UDP destination port of static-tree packets (next to Canary's 45501).
inline constexpr uint16_t kStaticTreeUdpPort = 45503;

struct TreeEntry {
  uint32_t tree_id = 0;
  std::vector<uint16_t> child_ports;  ///< ascending
  int32_t parent_port = -1;           ///< -1: this switch is the tree's root
};

struct StaticTreeConfig {
  uint32_t switch_ip = 0;               ///< source of the packets this switch builds
  canary::mac_addr_t switch_mac{};
  uint32_t num_ports = 64;              ///< <= 64 (the duplicate bitmap)
  uint16_t udp_port = kStaticTreeUdpPort;
  uint32_t num_elements = 256;          ///< k
  uint32_t slots_per_tree = 4096;       ///< power of two
  uint64_t pass_latency_ps = 520'000;
  std::vector<TreeEntry> trees;
  /// Throws std::invalid_argument naming the problem.
  void Validate() const;
  /// inasim-p4's JSON configuration (program.cc); validated.
  static StaticTreeConfig FromJson(const std::string& text);
};

class StaticTreeDataplane : public Dataplane {
 public:
  struct Stats {
    uint64_t processed = 0;
    uint64_t malformed_dropped = 0;  ///< claimed but too short / inconsistent lengths
    uint64_t unknown_tree = 0;       ///< tree id this switch is not part of: dropped
    uint64_t not_a_child = 0;        ///< reduce packet from a port that is no child of the tree: dropped
    uint64_t allocated = 0;          ///< first packet of a block
    uint64_t aggregated = 0;         ///< later packets of a block
    uint64_t sent_up = 0;            ///< partial sums to the parent
    uint64_t results = 0;            ///< root: results multicast down
    uint64_t broadcasts = 0;         ///< results from the parent multicast down
    uint64_t duplicates = 0;         ///< a child sent the same block twice: dropped
    uint64_t slot_conflicts = 0;     ///< another block holds the slot: dropped
    uint64_t not_from_parent = 0;    ///< result from a port that is not the parent: dropped
    uint64_t peak_slots = 0;         ///< most slots in use at once
    /// All in the dump; the static-tree report shows each switch's work and
    /// peak (CSV) and sums only the drops a healthy tree never has.
    static constexpr uint8_t kCsvAndDump = Shown::kDump | Shown::kCsv;
    static constexpr StatCounter<Stats> kCounters[] = {
        {"processed", &Stats::processed},
        {"malformed_dropped", &Stats::malformed_dropped},
        {"unknown_tree", &Stats::unknown_tree},
        {"not_a_child", &Stats::not_a_child},
        {"allocated", &Stats::allocated, kCsvAndDump},
        {"aggregated", &Stats::aggregated, kCsvAndDump},
        {"sent_up", &Stats::sent_up, kCsvAndDump},
        {"results", &Stats::results, kCsvAndDump},
        {"broadcasts", &Stats::broadcasts, kCsvAndDump},
        {"duplicates", &Stats::duplicates, Shown::kEverywhere},
        {"slot_conflicts", &Stats::slot_conflicts, Shown::kEverywhere},
        {"not_from_parent", &Stats::not_from_parent},
        {"peak_slots", &Stats::peak_slots, kCsvAndDump}};
  };

  explicit StaticTreeDataplane(StaticTreeConfig config);
  std::string Name() const override { return "static_tree"; }
  bool Claims(const FrameView& frame) const override;
  void Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds now, Emitter& out) override;
  std::string DumpState() const override;

  /// Controller action: the trees of another job sharing this switch, after
  /// those installed (as if the configuration had listed them). Throws
  /// std::invalid_argument as the constructor (a tree id given twice, ...).
  void AddTrees(const std::vector<TreeEntry>& trees);

  const StaticTreeConfig& config() const { return config_; }
  const Stats& stats() const { return stats_; }
  uint64_t slots_in_use() const { return in_use_; }
  /// Accumulator cells the model holds: k per slot ever in use at once (a
  /// pool shared by the trees), not slots_per_tree x k per tree.
  uint64_t accumulator_cells() const { return pool_.size(); }

 private:
  struct Slot {
    bool valid = false;
    uint32_t id = 0;
    uint16_t counter = 0;
    uint16_t hosts = 0;
    uint64_t seen_ports = 0;
    uint32_t arrivals = 0;
    uint32_t cells = 0;  ///< while valid: its k accumulator cells in pool_ (in units of k)
  };
  struct Tree {
    TreeEntry entry;
    uint64_t child_mask = 0;
    std::vector<Slot> slots;  ///< slots_per_tree, allocated by the tree's first packet
  };
  void AddTree(const TreeEntry& e);
  Tree* FindTree(uint32_t tree_id);
  void Complete(Tree& t, uint32_t slot_index, Emitter& out);
  /// The k cells of a slot being allocated: a freed slot's, else new ones.
  uint32_t TakeCells();
  uint32_t* Cells(uint32_t cells) { return pool_.data() + size_t{cells} * config_.num_elements; }

  StaticTreeConfig config_;
  std::vector<Tree> trees_;
  Stats stats_;
  uint64_t in_use_ = 0;
  // Switch memory holds slots_per_tree x k cells per tree; the model keeps
  // cells only for the slots in use, so N jobs x M trees on a 64-switch
  // fabric cost their in-flight blocks, not 4 MiB per tree per switch
  // (32 jobs x 4 trees at 1,024 hosts: ~11 GB). Nothing reads a free
  // slot's cells and an allocation writes all k, so results do not change.
  std::vector<uint32_t> pool_;
  std::vector<uint32_t> free_cells_;
  std::vector<uint8_t> out_;
};

}  // namespace inasim::p4::statictree
