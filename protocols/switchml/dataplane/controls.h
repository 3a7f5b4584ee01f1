// One class per P4 control of the SwitchML UDP path. Registers are
// p4::Register (p4model/common/register.h), register actions are small named
// functions, const tables are arrays of entries, matched first-to-last (the P4
// const-entries order is their priority).
#pragma once

#include "p4model/common/register.h"
#include "protocols/switchml/dataplane/types.h"

#include <array>
#include <cstdint>
#include <vector>

namespace inasim::p4::switchml {

/// A ternary key field: matches when (key & mask) == (value & mask).
struct Ternary {
  uint32_t value = 0;
  uint32_t mask = 0;
  constexpr bool Match(uint32_t key) const { return (key & mask) == (value & mask); }
};
inline constexpr Ternary kAny{0, 0};
inline constexpr Ternary Exact(uint32_t v, uint32_t mask) { return Ternary{v, mask}; }
inline constexpr Ternary Type(PacketType t) { return Ternary{static_cast<uint32_t>(t), 0xf}; }

/// For each 4-bit packet_type, the entries of a const table whose packet_type
/// key can match it, in table order (copies, built at compile time). Every
/// table here keys on packet_type, so a lookup scans only these few; the first
/// full match among them is the first full match of the whole table.
template <typename Entry, size_t N>
struct EntriesByType {
  Entry entries[16][N]{};
  size_t count[16]{};
  struct Range {
    const Entry* first;
    const Entry* last;
    const Entry* begin() const { return first; }
    const Entry* end() const { return last; }
  };
  /// The candidate entries for packet type t.
  constexpr Range of(PacketType t) const {
    const auto i = static_cast<uint8_t>(t) & 0xf;
    return Range{entries[i], entries[i] + count[i]};
  }
};
template <typename Entry, size_t N>
constexpr EntriesByType<Entry, N> IndexByType(const Entry (&entries)[N]) {
  EntriesByType<Entry, N> by{};
  for (uint32_t t = 0; t < 16; ++t)
    for (size_t i = 0; i < N; ++i)
      if (entries[i].packet_type.Match(t)) by.entries[t][by.count[t]++] = entries[i];
  return by;
}

// ============================================================================
// bitmap_checker.p4
// ============================================================================

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/bitmap_checker.p4:20
class ReconstructWorkerBitmap {
 public:
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/bitmap_checker.p4:23
  static void reconstruct_worker_bitmap_from_worker_id(ingress_metadata_t& ig_md, uint32_t bitmap) {
    ig_md.worker_bitmap = bitmap;
  }
  // Table reconstruct_worker_bitmap: worker_id &&& 0x1f -> 1 << worker_id (32
  // const entries, generated here rather than listed).
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/bitmap_checker.p4:27
  static void apply(ingress_metadata_t& ig_md) {
    reconstruct_worker_bitmap_from_worker_id(ig_md, uint32_t{1} << (ig_md.switchml_md.worker_id & 0x1f));
  }
};

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/bitmap_checker.p4:75
class UpdateAndCheckWorkerBitmap {
 public:
  enum class Action { update_worker_bitmap_set0_action, update_worker_bitmap_set1_action, drop, simulate_drop, NoAction };
  struct Entry {
    Ternary pool_index;
    Ternary packet_type;
    Ternary ingress_drop_probability;
    Action action;
  };
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/bitmap_checker.p4:138
  static constexpr Entry kEntries[] = {
      {kAny, Type(PacketType::CONSUME0), Exact(0xffff, 0xffff), Action::simulate_drop},
      {Exact(0, 1), Type(PacketType::CONSUME0), kAny, Action::update_worker_bitmap_set0_action},
      {Exact(1, 1), Type(PacketType::CONSUME0), kAny, Action::update_worker_bitmap_set1_action},
      {Exact(0, 1), Type(PacketType::CONSUME1), kAny, Action::update_worker_bitmap_set0_action},
      {Exact(1, 1), Type(PacketType::CONSUME1), kAny, Action::update_worker_bitmap_set1_action},
      {Exact(0, 1), Type(PacketType::CONSUME2), kAny, Action::update_worker_bitmap_set0_action},
      {Exact(1, 1), Type(PacketType::CONSUME2), kAny, Action::update_worker_bitmap_set1_action},
      {Exact(0, 1), Type(PacketType::CONSUME3), kAny, Action::update_worker_bitmap_set0_action},
      {Exact(1, 1), Type(PacketType::CONSUME3), kAny, Action::update_worker_bitmap_set1_action},
  };
  static constexpr auto kEntriesByType = IndexByType(kEntries);

  // Register worker_bitmap: one pair per slot, indexed by pool_index[14:1].
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/bitmap_checker.p4:82
  Register<worker_bitmap_pair_t> worker_bitmap{kNumSlots};

  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/bitmap_checker.p4:84
  static uint32_t worker_bitmap_update_set0(worker_bitmap_pair_t& value, uint32_t worker_bitmap) {
    const uint32_t return_value = value.first;
    value.first = value.first | worker_bitmap;
    value.second = value.second & ~worker_bitmap;
    return return_value;
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/bitmap_checker.p4:92
  static uint32_t worker_bitmap_update_set1(worker_bitmap_pair_t& value, uint32_t worker_bitmap) {
    const uint32_t return_value = value.second;
    value.first = value.first & ~worker_bitmap;
    value.second = value.second | worker_bitmap;
    return return_value;
  }

  /// Returns true when the packet is to be dropped (drop_ctl[0:0] = 1).
  // Table update_and_check_worker_bitmap
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/bitmap_checker.p4:125
  bool apply(ingress_metadata_t& ig_md) {
    switch (Lookup(ig_md)) {
      case Action::update_worker_bitmap_set0_action:
        update_worker_bitmap_set0_action(ig_md);
        return false;
      case Action::update_worker_bitmap_set1_action:
        update_worker_bitmap_set1_action(ig_md);
        return false;
      case Action::drop:
      case Action::simulate_drop:
        simulate_drop(ig_md);
        return true;
      case Action::NoAction:
        return false;
    }
    return false;
  }
  /// The action table update_and_check_worker_bitmap picks (first matching entry).
  static Action Lookup(const ingress_metadata_t& ig_md) {
    const auto& md = ig_md.switchml_md;
    for (const Entry& e : kEntriesByType.of(md.packet_type)) {
      if (e.pool_index.Match(md.pool_index) && e.packet_type.Match(static_cast<uint32_t>(md.packet_type)) &&
          e.ingress_drop_probability.Match(ig_md.port_metadata.ingress_drop_probability)) {
        return e.action;
      }
    }
    return Action::NoAction;  // const default_action = NoAction
  }

 private:
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/bitmap_checker.p4:100
  static void drop(ingress_metadata_t& ig_md) { ig_md.switchml_md.packet_type = PacketType::IGNORE; }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/bitmap_checker.p4:106
  static void simulate_drop(ingress_metadata_t& ig_md) { drop(ig_md); }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/bitmap_checker.p4:110
  static void check_worker_bitmap_action(ingress_metadata_t& ig_md) {
    ig_md.switchml_md.map_result = ig_md.switchml_md.worker_bitmap_before & ig_md.worker_bitmap;
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/bitmap_checker.p4:115
  void update_worker_bitmap_set0_action(ingress_metadata_t& ig_md) {
    ig_md.switchml_md.worker_bitmap_before =
        worker_bitmap_update_set0(worker_bitmap.At(ig_md.switchml_md.pool_index >> 1), ig_md.worker_bitmap);
    check_worker_bitmap_action(ig_md);
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/bitmap_checker.p4:120
  void update_worker_bitmap_set1_action(ingress_metadata_t& ig_md) {
    ig_md.switchml_md.worker_bitmap_before =
        worker_bitmap_update_set1(worker_bitmap.At(ig_md.switchml_md.pool_index >> 1), ig_md.worker_bitmap);
    check_worker_bitmap_action(ig_md);
  }
};

// ============================================================================
// workers_counter.p4
// ============================================================================

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/workers_counter.p4:20
class WorkersCounter {
 public:
  enum class Action {
    single_worker_count_action,
    single_worker_read_action,
    count_workers_action,
    read_count_workers_action,
    NoAction
  };
  struct Entry {
    Ternary num_workers;
    Ternary map_result;
    Ternary packet_type;
    Action action;
  };
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/workers_counter.p4:84
  static constexpr Entry kEntries[] = {
      {Exact(1, 0xff), Exact(0, 0xffffffff), Type(PacketType::CONSUME0), Action::single_worker_count_action},
      {Exact(1, 0xff), Exact(0, 0xffffffff), Type(PacketType::CONSUME1), Action::single_worker_count_action},
      {Exact(1, 0xff), Exact(0, 0xffffffff), Type(PacketType::CONSUME2), Action::single_worker_count_action},
      {Exact(1, 0xff), Exact(0, 0xffffffff), Type(PacketType::CONSUME3), Action::single_worker_count_action},
      {Exact(1, 0xff), kAny, Type(PacketType::CONSUME0), Action::single_worker_read_action},
      {Exact(1, 0xff), kAny, Type(PacketType::CONSUME1), Action::single_worker_read_action},
      {Exact(1, 0xff), kAny, Type(PacketType::CONSUME2), Action::single_worker_read_action},
      {Exact(1, 0xff), kAny, Type(PacketType::CONSUME3), Action::single_worker_read_action},
      {kAny, Exact(0, 0xffffffff), Type(PacketType::CONSUME0), Action::count_workers_action},
      {kAny, Exact(0, 0xffffffff), Type(PacketType::CONSUME1), Action::count_workers_action},
      {kAny, Exact(0, 0xffffffff), Type(PacketType::CONSUME2), Action::count_workers_action},
      {kAny, Exact(0, 0xffffffff), Type(PacketType::CONSUME3), Action::count_workers_action},
      {kAny, kAny, Type(PacketType::CONSUME0), Action::read_count_workers_action},
      {kAny, kAny, Type(PacketType::CONSUME1), Action::read_count_workers_action},
      {kAny, kAny, Type(PacketType::CONSUME2), Action::read_count_workers_action},
      {kAny, kAny, Type(PacketType::CONSUME3), Action::read_count_workers_action},
  };
  static constexpr auto kEntriesByType = IndexByType(kEntries);

  // Register workers_count: one pair per (slot, set), indexed by pool_index.
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/workers_counter.p4:25
  Register<num_workers_pair_t> workers_count{kRegisterSize};

  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/workers_counter.p4:27
  static uint8_t workers_count_action(num_workers_pair_t& value, uint8_t num_workers) {
    const uint8_t read_value = value.first;
    if (value.first == 0) {
      value.first = static_cast<uint8_t>(num_workers - 1);
    } else {
      value.first = static_cast<uint8_t>(value.first - 1);
    }
    return read_value;
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/workers_counter.p4:41
  static uint8_t read_workers_count_action(num_workers_pair_t& value) { return value.first; }

  // Table count_workers
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/workers_counter.p4:71
  void apply(ingress_metadata_t& ig_md) {
    auto& md = ig_md.switchml_md;
    switch (Lookup(md)) {
      case Action::single_worker_count_action: single_worker_count_action(md); return;
      case Action::single_worker_read_action: single_worker_read_action(md); return;
      case Action::count_workers_action: count_workers_action(md); return;
      case Action::read_count_workers_action: read_count_workers_action(md); return;
      case Action::NoAction: return;
    }
  }
  /// The action table count_workers picks (first matching entry).
  static Action Lookup(const switchml_md_h& md) {
    for (const Entry& e : kEntriesByType.of(md.packet_type)) {
      if (e.num_workers.Match(md.num_workers) && e.map_result.Match(md.map_result) &&
          e.packet_type.Match(static_cast<uint32_t>(md.packet_type))) {
        return e.action;
      }
    }
    return Action::NoAction;  // const default_action = NoAction
  }

 private:
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/workers_counter.p4:47
  void count_workers_action(switchml_md_h& md) {
    md.first_last_flag = workers_count_action(workers_count.At(md.pool_index), md.num_workers);
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/workers_counter.p4:51
  void single_worker_count_action(switchml_md_h& md) {
    workers_count_action(workers_count.At(md.pool_index), md.num_workers);
    md.first_last_flag = 1;
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/workers_counter.p4:58
  static void single_worker_read_action(switchml_md_h& md) { md.first_last_flag = 0; }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/workers_counter.p4:63
  void read_count_workers_action(switchml_md_h& md) {
    md.first_last_flag = read_workers_count_action(workers_count.At(md.pool_index));
  }
};

// ============================================================================
// exponents.p4
// ============================================================================

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/exponents.p4:25
class Exponents {
 public:
  enum class Action { write_read0_action, max_read0_action, read0_action, read1_action, NoAction };
  struct Entry {
    Ternary worker_bitmap_before;
    Ternary map_result;
    Ternary packet_type;
    Action action;
  };
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/exponents.p4:96
  static constexpr Entry kEntries[] = {
      {Exact(0, 0xffffffff), kAny, Type(PacketType::CONSUME0), Action::write_read0_action},
      {kAny, Exact(0, 0xffffffff), Type(PacketType::CONSUME0), Action::max_read0_action},
      {kAny, kAny, Type(PacketType::CONSUME0), Action::read0_action},
      {kAny, kAny, Type(PacketType::HARVEST7), Action::read1_action},
  };
  static constexpr auto kEntriesByType = IndexByType(kEntries);

  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/exponents.p4:32
  Register<exponent_pair_t> exponents{kRegisterSize};

  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/exponents.p4:35
  static int8_t write_read0_register_action(exponent_pair_t& value, int8_t exponent0, int8_t exponent1) {
    value.first = exponent0;
    value.second = exponent1;
    return value.first;
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/exponents.p4:48
  static int8_t max_read0_register_action(exponent_pair_t& value, int8_t exponent0, int8_t exponent1) {
    value.first = value.first > exponent0 ? value.first : exponent0;  // signed int<8> max
    value.second = value.second > exponent1 ? value.second : exponent1;
    return value.first;
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/exponents.p4:61
  static int8_t read0_register_action(exponent_pair_t& value) { return value.first; }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/exponents.p4:72
  static int8_t read1_register_action(exponent_pair_t& value) { return value.second; }

  /// exponent0/1 in; max_exponent0/1 out. An output the chosen action does not
  /// write keeps its previous value (see README: P4 `out` semantics).
  // Table exponent_max
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/exponents.p4:82
  void apply(int8_t exponent0, int8_t exponent1, int8_t& max_exponent0, int8_t& max_exponent1,
             const ingress_metadata_t& ig_md) {
    const auto& md = ig_md.switchml_md;
    const Action action = Lookup(md);
    if (action == Action::NoAction) return;
    {
      auto& cell = exponents.At(md.pool_index);
      switch (action) {
        // p4lang/p4app-switchML@b5c74a04:dev_root/p4/exponents.p4:43
        case Action::write_read0_action: max_exponent0 = write_read0_register_action(cell, exponent0, exponent1); return;
        // p4lang/p4app-switchML@b5c74a04:dev_root/p4/exponents.p4:56
        case Action::max_read0_action: max_exponent0 = max_read0_register_action(cell, exponent0, exponent1); return;
        // p4lang/p4app-switchML@b5c74a04:dev_root/p4/exponents.p4:67
        case Action::read0_action: max_exponent0 = read0_register_action(cell); return;
        // p4lang/p4app-switchML@b5c74a04:dev_root/p4/exponents.p4:78
        case Action::read1_action: max_exponent1 = read1_register_action(cell); return;
        case Action::NoAction: return;
      }
    }
  }
  /// The action table exponent_max picks (first matching entry).
  static Action Lookup(const switchml_md_h& md) {
    for (const Entry& e : kEntriesByType.of(md.packet_type)) {
      if (e.worker_bitmap_before.Match(md.worker_bitmap_before) && e.map_result.Match(md.map_result) &&
          e.packet_type.Match(static_cast<uint32_t>(md.packet_type))) {
        return e.action;
      }
    }
    return Action::NoAction;  // const default_action = NoAction
  }
};

// ============================================================================
// processor.p4
// ============================================================================

// One Processor instance: a pair of values (d0.dXX, d1.dXX) per pool index.
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/processor.p4:25
class Processor {
 public:
  enum class Action { write_read1_action, sum_read1_action, read0_action, read1_action, NoAction };
  struct Entry {
    Ternary worker_bitmap_before;
    Ternary map_result;
    Ternary packet_type;
    Action action;
  };
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/processor.p4:96
  static constexpr Entry kEntries[] = {
      {Exact(0, 0xffffffff), kAny, Type(PacketType::CONSUME0), Action::write_read1_action},
      {Exact(0, 0xffffffff), kAny, Type(PacketType::CONSUME1), Action::write_read1_action},
      {Exact(0, 0xffffffff), kAny, Type(PacketType::CONSUME2), Action::write_read1_action},
      {Exact(0, 0xffffffff), kAny, Type(PacketType::CONSUME3), Action::write_read1_action},
      {kAny, Exact(0, 0xffffffff), Type(PacketType::CONSUME0), Action::sum_read1_action},
      {kAny, Exact(0, 0xffffffff), Type(PacketType::CONSUME1), Action::sum_read1_action},
      {kAny, Exact(0, 0xffffffff), Type(PacketType::CONSUME2), Action::sum_read1_action},
      {kAny, Exact(0, 0xffffffff), Type(PacketType::CONSUME3), Action::sum_read1_action},
      {kAny, kAny, Type(PacketType::CONSUME0), Action::read1_action},
      {kAny, kAny, Type(PacketType::CONSUME1), Action::read1_action},
      {kAny, kAny, Type(PacketType::CONSUME2), Action::read1_action},
      {kAny, kAny, Type(PacketType::CONSUME3), Action::read1_action},
      {kAny, kAny, Type(PacketType::HARVEST0), Action::read1_action},
      {kAny, kAny, Type(PacketType::HARVEST1), Action::read0_action},
      {kAny, kAny, Type(PacketType::HARVEST2), Action::read1_action},
      {kAny, kAny, Type(PacketType::HARVEST3), Action::read0_action},
      {kAny, kAny, Type(PacketType::HARVEST4), Action::read1_action},
      {kAny, kAny, Type(PacketType::HARVEST5), Action::read0_action},
      {kAny, kAny, Type(PacketType::HARVEST6), Action::read1_action},
      {kAny, kAny, Type(PacketType::HARVEST7), Action::read0_action},
  };
  static constexpr auto kEntriesByType = IndexByType(kEntries);

  /// The action the sum table picks for this packet (same for all 32 instances).
  static Action Lookup(const switchml_md_h& md) {
    for (const Entry& e : kEntriesByType.of(md.packet_type)) {
      if (e.worker_bitmap_before.Match(md.worker_bitmap_before) && e.map_result.Match(md.map_result) &&
          e.packet_type.Match(static_cast<uint32_t>(md.packet_type))) {
        return e.action;
      }
    }
    return Action::NoAction;  // const default_action
  }

  // Register values: each instance's (value00.values .. value31.values) is one
  // column of its pipe's ValueRegisters below, one ValueRow per pool index.
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/processor.p4:32

  /// One cell (a value_pair_t) of a `values` register, as references to its two
  /// halves: a ValueRow keeps the 32 instances' `first`s and `second`s as two
  /// arrays, so the loops in apply_all() are plain vector adds.
  struct value_pair_ref {
    uint32_t& first;
    uint32_t& second;
  };

  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/processor.p4:35
  static uint32_t write_read1_register_action(value_pair_ref value, uint32_t value0, uint32_t value1) {
    value.first = value0;
    value.second = value1;
    return value.second;
  }
  // Modular 32-bit addition (bit<32> wraps).
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/processor.p4:48
  static uint32_t sum_read1_register_action(value_pair_ref value, uint32_t value0, uint32_t value1) {
    value.first = value.first + value0;
    value.second = value.second + value1;
    return value.second;
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/processor.p4:61
  static uint32_t read0_register_action(value_pair_ref value) { return value.first; }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/processor.p4:72
  static uint32_t read1_register_action(value_pair_ref value) { return value.second; }

  /// One instance's table sum, with the action already looked up and `value`
  /// its register cell at md.pool_index. Outputs not written keep their value.
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/processor.p4:82
  static void apply(Action action, uint32_t value0, uint32_t value1, uint32_t& value0_out, uint32_t& value1_out,
                    value_pair_ref value) {
    switch (action) {
      // p4lang/p4app-switchML@b5c74a04:dev_root/p4/processor.p4:43
      case Action::write_read1_action: value1_out = write_read1_register_action(value, value0, value1); return;
      // p4lang/p4app-switchML@b5c74a04:dev_root/p4/processor.p4:56
      case Action::sum_read1_action: value1_out = sum_read1_register_action(value, value0, value1); return;
      // p4lang/p4app-switchML@b5c74a04:dev_root/p4/processor.p4:67
      case Action::read0_action: value0_out = read0_register_action(value); return;
      // p4lang/p4app-switchML@b5c74a04:dev_root/p4/processor.p4:78
      case Action::read1_action: value1_out = read1_register_action(value); return;
      case Action::NoAction: return;
    }
  }

  /// The registers of the 32 instances value00..value31 of one pipe: row[i] is
  /// value<i>.values[pool_index]. Upstream declares 32 separate
  /// Register<value_pair_t, pool_index_t>(register_size); every pass addresses
  /// all 32 with the same pool index and the same action, so the model stores
  /// them pool-index-major: a packet's 32 pairs are one 256 B row (4 adjacent
  /// cache lines) instead of 32 lines in 32 arrays 128 KiB apart.
  struct ValueRow {
    std::array<uint32_t, kNumProcessors> first{};   ///< value<i>.values[pool_index].first
    std::array<uint32_t, kNumProcessors> second{};  ///< value<i>.values[pool_index].second
    value_pair_ref operator[](int i) { return {first[i], second[i]}; }
    value_pair_t Get(int i) const { return {first[i], second[i]}; }
  };
  using ValueRegisters = Register<ValueRow>;

  /// value00.apply(hdr.d0.d00, hdr.d1.d00, ...) .. value31.apply(...) (switch.p4
  /// applies the 32 instances one after the other, each on its own pair of data
  /// fields). Same result as calling apply() per instance; the action is
  /// switched on once so each case is one loop the compiler can vectorize.
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/switchml.p4:149
  static void apply_all(Action action, ValueRow& values, data_h& d0, data_h& d1) {
    switch (action) {
      case Action::write_read1_action:
        for (int i = 0; i < kNumProcessors; ++i) d1.d[i] = write_read1_register_action(values[i], d0.d[i], d1.d[i]);
        return;
      case Action::sum_read1_action:
        for (int i = 0; i < kNumProcessors; ++i) d1.d[i] = sum_read1_register_action(values[i], d0.d[i], d1.d[i]);
        return;
      case Action::read0_action:
        for (int i = 0; i < kNumProcessors; ++i) d0.d[i] = read0_register_action(values[i]);
        return;
      case Action::read1_action:
        for (int i = 0; i < kNumProcessors; ++i) d1.d[i] = read1_register_action(values[i]);
        return;
      case Action::NoAction: return;
    }
  }
};

}  // namespace inasim::p4::switchml
