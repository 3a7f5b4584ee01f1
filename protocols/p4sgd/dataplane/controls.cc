#include "protocols/p4sgd/dataplane/controls.h"

namespace inasim::p4::p4sgd {

TmDecision Ingress::apply(payload_t& hdr, uint16_t ingress_port, Locals& l, Path& path) {
  TmDecision tm;
  l = Locals{};
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:484-488
  l.slot = hdr.slot & 1;
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:490
  bitmap_mapping_apply(l, hdr, ingress_port);
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:492 `bitmap != 0 && seq_check.execute(port)`:
  // && short-circuits, so seq_reg is untouched when the bitmap is 0. With no
  // egress port or group set, the traffic manager drops the packet.
  if (l.bitmap == 0) {
    path = Path::kNoBitmap;
    return tm;
  }
  if (!seq_check(seq_reg.At(ingress_port), hdr.seq_no, seq_sup_)) {
    path = Path::kSeqRejected;
    return tm;
  }
  const uint32_t index = hdr.index;
  if (l.slot == 0) {
    // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:496-497
    l.status0 = node_map_merge(node_map_reg_0.At(index), l.bitmap);
    l.status1 = node_map_clear(node_map_reg_1.At(index), l.bitmap);
    if (l.status0 == 0) {  // p4fpga.p4:498 "haven't aggregated"
      l.n_node = count(counter_reg_0.At(index));  // :500
      l.add_0 = true;                             // :501
    } else {
      l.n_node = get_counter(counter_reg_0.At(index));  // :505
    }
    if (l.n_node % node_size_ == 0) {  // p4fpga.p4:508 "fulfilled"
      if (l.status0 == 0) {
        l.clr_1 = true;                        // :512
        multicast(tm, kMulticastGroup);        // :513
        path = Path::kFulfilled;
      } else {
        send(tm, ingress_port);                // :517
        path = Path::kEcho;
      }
    } else {
      send(tm, kPartialDevPort);               // :522
      hdr.counter_state = l.n_node;            // :524
      hdr.map_state = l.status0;               // :525
      hdr.slot_state = l.slot;                 // :526
      path = Path::kPartial;
    }
  } else {
    // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:531-532
    l.status0 = node_map_clear(node_map_reg_0.At(index), l.bitmap);
    l.status1 = node_map_merge(node_map_reg_1.At(index), l.bitmap);
    if (l.status1 == 0) {  // p4fpga.p4:533
      l.n_node = count(counter_reg_1.At(index));  // :535
      l.add_1 = true;                             // :536
    } else {
      l.n_node = get_counter(counter_reg_1.At(index));  // :540
    }
    if (l.n_node % node_size_ == 0) {  // p4fpga.p4:543
      if (l.status1 == 0) {
        l.clr_0 = true;                        // :547
        multicast(tm, kMulticastGroup);        // :548
        path = Path::kFulfilled;
      } else {
        send(tm, ingress_port);                // :552
        path = Path::kEcho;
      }
    } else {
      send(tm, kPartialDevPort);               // :557
      hdr.counter_state = l.n_node;            // :559
      hdr.map_state = l.status1;               // :560
      hdr.slot_state = l.slot;                 // :561
      path = Path::kPartial;
    }
  }
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:565-586: slot-0 values, add (result into
  // the packet) or clear (result discarded).
  if (l.add_0) {
    ValueRow& row = value_reg_0.At(index);
    for (uint32_t i = 0; i < kValues; ++i) hdr.value[i] = value_add(row[i], hdr.value[i]);
  } else if (l.clr_0) {
    ValueRow& row = value_reg_0.At(index);
    for (uint32_t i = 0; i < kValues; ++i) value_clr(row[i]);
  }
  // RC4ML/P4FPGA@6dfbdf2:p4/p4fpga.p4:588-609: the same for slot 1.
  if (l.add_1) {
    ValueRow& row = value_reg_1.At(index);
    for (uint32_t i = 0; i < kValues; ++i) hdr.value[i] = value_add(row[i], hdr.value[i]);
  } else if (l.clr_1) {
    ValueRow& row = value_reg_1.At(index);
    for (uint32_t i = 0; i < kValues; ++i) value_clr(row[i]);
  }
  return tm;
}

PaperSwitch::Path PaperSwitch::apply(payload_t& hdr, uint8_t& flags) {
  // p4sgd §3.3 the bitmap field "is a bitmap with the source worker's index set to one".
  const uint32_t bm = hdr.bitmap;
  if (!ValidBitmap(bm)) return Path::kBadBitmap;
  // p4sgd §3.3 "the aggregation slot index in the P4 switch"; §4.2 16-bit index.
  const uint32_t index = hdr.index;

  if ((flags & kAckFlag) == 0) {
    // Aggregation (p4sgd §3.3, Algorithm 3 line 5: "indicates that the packet is
    // intended for aggregation").
    const bool first = bitmap_merge(agg_bm.At(index), bm) == 0;
    if (first) ack_bitmap_clear(ack_bm.At(index), bm);
    const uint32_t n = counter_add_or_read(agg_cnt.At(index), first);
    const bool complete = n >= num_workers_;
    if (first) {
      value_add(agg_value.At(index), hdr.value, hdr.value);
      // Complete: the packet, now carrying the full aggregate, is multicast
      // (p4sgd §3.1 "broadcasts a network packet containing [it] to all the
      // workers"; §4.2 "the Tofino packet replication engine").
      return complete ? Path::kCompleted : Path::kAggregated;
    }
    // A retransmission (p4sgd §3.3 "the workers retransmit packets in the event
    // of packet drops"): the worker lost the result, so it gets the one copy.
    if (!complete) return Path::kAggDuplicateEarly;
    value_read(agg_value.At(index), hdr.value);
    return Path::kAggResend;
  }

  // Acknowledgement (p4sgd §3.3 "a second round of communication ... to
  // acknowledge the reception of the full activation vector").
  const bool first = bitmap_merge(ack_bm.At(index), bm) == 0;
  if (first) {
    const uint32_t n = ack_counter_add(ack_cnt.At(index), num_workers_);
    // p4sgd §3.3 "Only when the switch receives acknowledgements from all
    // workers for an operation, it can safely clear the aggregation result."
    const bool release = n >= num_workers_;
    agg_bitmap_read_or_clear(agg_bm.At(index), release);
    if (!release) return Path::kAcked;
    counter_clear(agg_cnt.At(index));
    value_clear(agg_value.At(index));
    // p4sgd §3.3 the ack-complete field "is a placeholder for the switch to
    // signal that it has received all acknowledgement"; multicast to all.
    flags |= kAckCompleteFlag;
    return Path::kReleased;
  }
  // A retransmitted ack (its confirmation was lost, Algorithm 3 lines 26-34):
  // the slot was released iff this worker's aggregation bit is gone (the last
  // ack cleared it; the worker cannot have aggregated again before it is
  // confirmed).
  const uint32_t agg = agg_bitmap_read_or_clear(agg_bm.At(index), false);
  if ((agg & bm) != 0) return Path::kAckDuplicateEarly;
  flags |= kAckCompleteFlag;
  return Path::kAckResend;
}

}  // namespace inasim::p4::p4sgd
