// One class per switch control. `Ingress` is the Ingress control of
// RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4 (its only non-empty control); `PaperSwitch`
// is Algorithm 2 of the paper (p4sgd §3.3, §4.2), written the same way: each
// register array is a p4::Register (p4model/common/register.h), each
// read-modify-write a named static register action, tables const data.
#pragma once

#include "p4model/common/register.h"
#include "protocols/p4sgd/dataplane/types.h"

#include <array>
#include <cstdint>
#include <vector>

namespace inasim::p4::p4sgd {

/// The eight value registers of one index (value_s1..value_s8), held as one
/// row: a pass touches one 32-byte row instead of eight arrays.
using ValueRow = std::array<uint32_t, kValues>;

// ============================================================================
// p4fpga.p4: control Ingress
// ============================================================================

/// What the ingress decided for the traffic manager (ig_tm_md). Tofino drops a
/// packet for which ingress set neither a unicast port nor a multicast group.
struct TmDecision {
  enum class Kind { kDrop, kUnicast, kMulticast } kind = Kind::kDrop;
  uint16_t ucast_egress_port = 0;  ///< device port
  uint16_t mcast_grp_a = 0;
};

// RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:251
class Ingress {
 public:
  /// Why apply() took the path it took (model-only; for stats and tests).
  enum class Path {
    kNoBitmap,    ///< bitmap 0 after bitmap_mapping: nothing executes, dropped
    kSeqRejected, ///< seq_check false: nothing else executes, dropped
    kFulfilled,   ///< first contribution and n_node % NODE_SIZE == 0: multicast(1)
    kEcho,        ///< duplicate and n_node % NODE_SIZE == 0: send(ingress_port), values untouched
    kPartial,     ///< n_node % NODE_SIZE != 0: send(192) with the state fields
  };

  // --- locals of the control (p4fpga.p4:273-284) ----------------------------
  struct Locals {
    uint8_t slot = 0;          // p4fpga.p4:273 bit<1> slot
    bool add_0 = false;        // p4fpga.p4:275
    bool add_1 = false;        // p4fpga.p4:276
    bool clr_0 = false;        // p4fpga.p4:277
    bool clr_1 = false;        // p4fpga.p4:278
    uint32_t bitmap = 0;       // p4fpga.p4:280 bit<BITMAP_WIDTH> bitmap
    uint32_t status0 = 0;      // p4fpga.p4:282
    uint32_t status1 = 0;      // p4fpga.p4:283
    uint32_t n_node = 0;       // p4fpga.p4:284 bit<COUNTER_WIDTH> n_node
  };

  explicit Ingress(uint32_t node_size = kNodeSize, bool seq_sup = kSeqSup) : node_size_(node_size), seq_sup_(seq_sup) {}

  // --- register actions -------------------------------------------------------

  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:132 value_<s><i>_add (VALUE_REG macro,
  // instantiated at :287-303): register += value; result = register (bit<32>, wraps).
  static uint32_t value_add(uint32_t& register_data, uint32_t value) {
    register_data = register_data + value;
    return register_data;
  }
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:142 value_<s><i>_clr: result = register; register = 0.
  static uint32_t value_clr(uint32_t& register_data) {
    const uint32_t result = register_data;
    register_data = 0;
    return result;
  }
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:310 count_0 (and :331 count_1): +1, result the new value.
  static uint32_t count(uint32_t& register_data) {
    register_data = register_data + 1;
    return register_data;
  }
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:320 get_counter_0 (and :341 get_counter_1).
  static uint32_t get_counter(uint32_t& register_data) { return register_data; }
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:353 node_map_merge_0 (and :377 node_map_merge_1):
  // result = register & bitmap (non-zero: this sender was already seen); register |= bitmap.
  static uint32_t node_map_merge(uint32_t& register_data, uint32_t bitmap) {
    const uint32_t temp = register_data & bitmap;
    register_data = register_data | bitmap;
    return temp;
  }
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:364 node_map_clear_0 (and :388 node_map_clear_1):
  // result = ~register & bitmap; register &= ~bitmap.
  static uint32_t node_map_clear(uint32_t& register_data, uint32_t bitmap) {
    const uint32_t temp = ~register_data & bitmap;
    register_data = register_data & ~bitmap;
    return temp;
  }
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:460-476 seq_check. With SEQ_SUP defined
  // (:4, the default): accept when seq_no > register (unsigned) or seq_no == 0,
  // and store seq_no. Without it (:463-475 compiled out): always store, accept.
  static bool seq_check(uint32_t& register_data, uint32_t seq_no, bool seq_sup = kSeqSup) {
    if (!seq_sup || seq_no > register_data || seq_no == 0) {
      register_data = seq_no;
      return true;
    }
    return false;
  }

  // --- actions ----------------------------------------------------------------

  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:262
  static void send(TmDecision& tm, uint16_t port) {
    tm.kind = TmDecision::Kind::kUnicast;
    tm.ucast_egress_port = port;
  }
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:267
  static void multicast(TmDecision& tm, uint16_t mcast_grp) {
    tm.kind = TmDecision::Kind::kMulticast;
    tm.mcast_grp_a = mcast_grp;
  }
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:398
  static void get_bitmap(Locals& l, uint32_t map) { l.bitmap = map; }
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:403
  static void use_default_bitmap(Locals& l, const payload_t& hdr) { l.bitmap = hdr.bitmap; }

  // --- table bitmap_mapping -----------------------------------------------------

  /// Key (hdr.load.bitmap exact, ig_intr_md.ingress_port exact) -> get_bitmap(map).
  struct BitmapMappingEntry {
    uint32_t bitmap;
    uint16_t ingress_port;
    uint32_t map;
  };
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:408 table bitmap_mapping; const entries
  // :418-451 (a zero bitmap from device port 4k -> bit k, from 128 + 4(k-16) ->
  // bit k), default use_default_bitmap (:452).
  static constexpr BitmapMappingEntry kBitmapMappingEntries[32] = {
      {0, 0, 1u << 0},     {0, 4, 1u << 1},     {0, 8, 1u << 2},     {0, 12, 1u << 3},    // :419-422
      {0, 16, 1u << 4},    {0, 20, 1u << 5},    {0, 24, 1u << 6},    {0, 28, 1u << 7},    // :423-426
      {0, 32, 1u << 8},    {0, 36, 1u << 9},    {0, 40, 1u << 10},   {0, 44, 1u << 11},   // :427-430
      {0, 48, 1u << 12},   {0, 52, 1u << 13},   {0, 56, 1u << 14},   {0, 60, 1u << 15},   // :431-434
      {0, 128, 1u << 16},  {0, 132, 1u << 17},  {0, 136, 1u << 18},  {0, 140, 1u << 19},  // :435-438
      {0, 144, 1u << 20},  {0, 148, 1u << 21},  {0, 152, 1u << 22},  {0, 156, 1u << 23},  // :439-442
      {0, 160, 1u << 24},  {0, 164, 1u << 25},  {0, 168, 1u << 26},  {0, 172, 1u << 27},  // :443-446
      {0, 176, 1u << 28},  {0, 180, 1u << 29},  {0, 184, 1u << 30},  {0, 188, 1u << 31},  // :447-450
  };
  static void bitmap_mapping_apply(Locals& l, const payload_t& hdr, uint16_t ingress_port) {
    if (const BitmapMappingEntry* e = bitmap_mapping_lookup(hdr.bitmap, ingress_port)) {
      get_bitmap(l, e->map);
      return;
    }
    use_default_bitmap(l, hdr);
  }
  /// The entry bitmap_mapping hits for these keys, or nullptr (default use_default_bitmap).
  static const BitmapMappingEntry* bitmap_mapping_lookup(uint32_t bitmap, uint16_t ingress_port) {
    for (const BitmapMappingEntry& e : kBitmapMappingEntries)
      if (e.bitmap == bitmap && e.ingress_port == ingress_port) return &e;
    return nullptr;
  }

  // --- apply --------------------------------------------------------------------

  /// RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:479-612 for a parsed load header (the
  /// parser only gets here when hdr.load is valid, :481). `ingress_port` is a
  /// Tofino device port. Rewrites `hdr` and returns the TM decision.
  TmDecision apply(payload_t& hdr, uint16_t ingress_port, Locals& l, Path& path);

  // --- registers ------------------------------------------------------------------

  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:287-294 VALUE_REG(0, 1..8): value_01_reg..value_08_reg
  Register<ValueRow> value_reg_0{kIndexSize};
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:296-303 VALUE_REG(1, 1..8): value_11_reg..value_18_reg
  Register<ValueRow> value_reg_1{kIndexSize};
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:306 counter_reg_0
  Register<uint32_t> counter_reg_0{kIndexSize};
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:327 counter_reg_1
  Register<uint32_t> counter_reg_1{kIndexSize};
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:349 node_map_reg_0
  Register<uint32_t> node_map_reg_0{kIndexSize};
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:373 node_map_reg_1
  Register<uint32_t> node_map_reg_1{kIndexSize};
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:456 seq_reg, indexed by ingress port
  // (PortId_t, 9 bits; a 256-cell register uses the low 8).
  Register<uint32_t> seq_reg{kSeqRegSize};

  uint32_t node_size() const { return node_size_; }
  bool seq_sup() const { return seq_sup_; }

 private:
  uint32_t node_size_;  // p4fpga.p4:19 NODE_SIZE
  bool seq_sup_;        // p4fpga.p4:4 #define SEQ_SUP
};

// ============================================================================
// p4sgd §3.3 Algorithm 2: the latency-centric switch (paper mode)
// ============================================================================

/// The paper's switch: "the switch only maintains one copy of the aggregated
/// activations ... two sets of counters ... two sets of bitmaps ... to detect
/// duplicates" (p4sgd §3.3); "each ... is mapped directly to a Tofino register
/// array ... 64K (16 bits indices)" (p4sgd §4.2). Our text of the paper lacks
/// the listing of Algorithm 2; the rules below follow §3.3's prose, and the
/// choices it leaves open are listed in README "Paper mode: choices".
/// Every register is accessed at most once per packet, in the order below.
class PaperSwitch {
 public:
  enum class Path {
    kBadBitmap,         ///< bitmap not exactly one configured worker bit: dropped
    kAggregated,        ///< first contribution, not yet complete: absorbed (dropped)
    kCompleted,         ///< first contribution that completes: full result multicast
    kAggResend,         ///< duplicate contribution, complete: full result back to the sender
    kAggDuplicateEarly, ///< duplicate contribution, not complete: dropped
    kAcked,             ///< first acknowledgement, not the last: absorbed (dropped)
    kReleased,          ///< last acknowledgement: slot cleared, ack-complete multicast
    kAckResend,         ///< duplicate ack after release: ack-complete back to the sender
    kAckDuplicateEarly, ///< duplicate ack before release: dropped
  };

  PaperSwitch(uint32_t num_workers, uint32_t slots)
      : num_workers_(num_workers),
        full_mask_(num_workers >= 32 ? ~0u : (1u << num_workers) - 1),
        agg_value(slots), agg_cnt(slots), ack_cnt(slots), agg_bm(slots), ack_bm(slots) {}

  // --- register actions -------------------------------------------------------

  // p4sgd §3.3 "two sets of bitmaps ... maintained to detect duplicates":
  // result = register & bitmap (non-zero: duplicate); register |= bitmap.
  static uint32_t bitmap_merge(uint32_t& register_data, uint32_t bitmap) {
    const uint32_t temp = register_data & bitmap;
    register_data |= bitmap;
    return temp;
  }
  // Our choice (README): a worker's first aggregation packet of a new operation
  // in the slot clears its bit of the acknowledgement bitmap (left set by the
  // previous operation so that a late duplicate ack is still recognised).
  static void ack_bitmap_clear(uint32_t& register_data, uint32_t bitmap) { register_data &= ~bitmap; }
  // The aggregation bitmap read by an ack; cleared by the last ack (the
  // operation's state is cleared only "when the switch receives
  // acknowledgements from all workers", p4sgd §3.3). Returns the old value.
  static uint32_t agg_bitmap_read_or_clear(uint32_t& register_data, bool release) {
    const uint32_t old = register_data;
    if (release) register_data = 0;
    return old;
  }
  // p4sgd §3.3 "two sets of counters ... the number of received activations
  // and acknowledgement": +1 on a first packet, result the new value; else read.
  static uint32_t counter_add_or_read(uint32_t& register_data, bool first) {
    if (first) register_data = register_data + 1;
    return register_data;
  }
  // The counter of acknowledgements: +1 on a first ack; reset by the last one
  // (the slot's operation is over). Returns the count including this ack.
  static uint32_t ack_counter_add(uint32_t& register_data, uint32_t num_workers) {
    register_data = register_data + 1;
    const uint32_t n = register_data;
    if (n >= num_workers) register_data = 0;
    return n;
  }
  // The aggregation counter, reset by the last ack.
  static void counter_clear(uint32_t& register_data) { register_data = 0; }
  // p4sgd §3.3 "one copy of the aggregated activations": int32 lanes added
  // modulo 2^32; result the new sums.
  static void value_add(ValueRow& row, const std::array<uint32_t, kValues>& in, std::array<uint32_t, kValues>& out) {
    for (uint32_t i = 0; i < kValues; ++i) out[i] = row[i] = row[i] + in[i];
  }
  static void value_read(const ValueRow& row, std::array<uint32_t, kValues>& out) { out = row; }
  // p4sgd §3.3 "it can safely clear the aggregation result".
  static void value_clear(ValueRow& row) { row.fill(0); }

  /// Processes one parsed packet: rewrites `hdr` (values of a result, the
  /// ack-complete flag of a confirmation), returns the path taken. `flags` is
  /// byte 0 of the frame (kAckFlag, kAckCompleteFlag), updated in place.
  Path apply(payload_t& hdr, uint8_t& flags);

  /// A valid sender bitmap: exactly one bit, of a configured worker.
  bool ValidBitmap(uint32_t bm) const { return bm != 0 && (bm & (bm - 1)) == 0 && (bm & full_mask_) == bm; }
  uint32_t num_workers() const { return num_workers_; }
  uint32_t full_mask() const { return full_mask_; }

 private:
  uint32_t num_workers_;
  uint32_t full_mask_;

 public:
  // --- registers (p4sgd §4.2 "mapped directly to a Tofino register array") ---
  Register<ValueRow> agg_value;  ///< the one copy of the aggregate
  Register<uint32_t> agg_cnt;    ///< activations received
  Register<uint32_t> ack_cnt;    ///< acknowledgements received
  Register<uint32_t> agg_bm;     ///< who contributed
  Register<uint32_t> ack_bm;     ///< who acknowledged
};

}  // namespace inasim::p4::p4sgd
