// The SwitchML program's RoCEv2 path: RDMAReceiver (ingress, rdma_receiver.p4)
// and RDMASender (egress, rdma_sender.p4), with the entries the controller
// installs for RDMA workers (controller/rdma_receiver.py, rdma_sender.py).
#pragma once

#include "p4model/common/frame.h"
#include "p4model/common/register.h"
#include "protocols/switchml/dataplane/config.h"
#include "protocols/switchml/dataplane/controls.h"
#include "protocols/switchml/dataplane/types.h"

#include <cstdint>
#include <map>
#include <vector>

namespace inasim::p4::switchml {

/// Packets and bytes of a direct or indexed counter cell.
struct PacketByteCounter {
  uint64_t packets = 0, bytes = 0;
};

/// QP_INDEX: the worker id (dst_qp[20:16]) ++ the worker's queue pair (dst_qp[8:0]).
// p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_receiver.p4:30
inline uint32_t QpIndex(uint32_t dst_qp) {
  return ((dst_qp >> 16) & ((1u << kMaxNumWorkersLog2) - 1)) << kMaxNumQueuePairsPerWorkerLog2 |
         (dst_qp & ((1u << kMaxNumQueuePairsPerWorkerLog2) - 1));
}

/// The switch's QPN a worker writes to for its queue pair `qp`: bit 23 set,
/// the worker id in bits 23..16, the queue pair below.
// p4lang/p4app-switchML@b5c74a04:dev_root/controller/rdma_receiver.py:137
inline uint32_t SwitchQpn(uint16_t worker_id, uint32_t qp) {
  return 0x800000u | (uint32_t{worker_id} & 0xff) << 16 | (qp & 0xffff);
}

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_receiver.p4:42
class RDMAReceiver {
 public:
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_receiver.p4:323
  enum class Action {
    only_packet,
    only_packet_with_immediate,
    first_packet,
    middle_packet,
    last_packet,
    last_packet_with_immediate,
    forward
  };
  /// One controller entry of receive_roce (six per worker, one per opcode).
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/rdma_receiver.py:118
  struct Entry {
    uint32_t ip_src, ip_dst;
    uint16_t partition_key;
    uint8_t opcode;
    Ternary dst_qp;
    Action action;
    // set_bitmap action data
    uint16_t mgid;
    WorkerType worker_type;
    uint16_t worker_id;
    uint8_t num_workers;
    uint32_t worker_bitmap;
    PacketSize packet_size;
  };
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_receiver.p4:37
  struct receiver_data_t {
    uint32_t next_sequence_number = 0;
    uint32_t pool_index = 0;
  };
  struct Result {
    bool hit = false;   ///< an entry matched (else forward())
    bool drop = false;  ///< drop_ctl[0:0] = result[31:31] (middle/last packets out of sequence)
  };

  explicit RDMAReceiver(const SwitchMLConfig& c);

  /// Table receive_roce, then the per-queue-pair counters.
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_receiver.p4:337
  Result apply(header_t& hdr, ingress_metadata_t& ig_md, uint32_t frame_bytes);

  const std::vector<Entry>& entries() const { return entries_; }
  const std::vector<PacketByteCounter>& receive_counter() const { return rdma_receive_counter_; }
  const PacketByteCounter& default_counter() const { return default_counter_; }
  /// The indexed counters, by QP_INDEX (only the ones ever counted).
  std::map<uint32_t, uint64_t> packet_counter() const { return NonZero(rdma_packet_counter_); }
  std::map<uint32_t, uint64_t> message_counter() const { return NonZero(rdma_message_counter_); }
  std::map<uint32_t, uint64_t> sequence_violation_counter() const { return NonZero(rdma_sequence_violation_counter_); }
  receiver_data_t ReceiverData(uint32_t qp_index) const { return receiver_data_register_.Peek(qp_index); }
  /// One queue pair's count of the three indexed counters (0 if none).
  uint64_t PacketCount(uint32_t qp_index) const { return At(rdma_packet_counter_, qp_index); }
  uint64_t MessageCount(uint32_t qp_index) const { return At(rdma_message_counter_, qp_index); }
  uint64_t SequenceViolationCount(uint32_t qp_index) const { return At(rdma_sequence_violation_counter_, qp_index); }

  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_receiver.p4:61
  static uint32_t receiver_reset_action(receiver_data_t& value, uint32_t psn, uint32_t pool_index);
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_receiver.p4:81
  static uint32_t receiver_increment_action(receiver_data_t& value, uint32_t psn);

 private:
  static std::map<uint32_t, uint64_t> NonZero(const std::vector<uint64_t>& v);
  static uint64_t At(const std::vector<uint64_t>& v, uint32_t i) { return i < v.size() ? v[i] : 0; }
  const Entry* Lookup(const header_t& hdr) const;
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_receiver.p4:118
  static void set_bitmap(header_t& hdr, ingress_metadata_t& ig_md, const Entry& e);
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_receiver.p4:158
  static void process_immediate(header_t& hdr, ingress_metadata_t& ig_md);

  std::vector<Entry> entries_;
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_receiver.p4:50
  std::vector<PacketByteCounter> rdma_receive_counter_;
  PacketByteCounter default_counter_;
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_receiver.p4:52
  Register<receiver_data_t> receiver_data_register_{kMaxNumQueuePairs};
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_receiver.p4:53
  std::vector<uint64_t> rdma_packet_counter_, rdma_message_counter_, rdma_sequence_violation_counter_;
};

// p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_sender.p4:20
class RDMASender {
 public:
  /// create_roce_packet's entry for a worker (fill_in_roce_write_fields).
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/rdma_sender.py:118
  struct RoceEntry {
    bool valid = false;
    mac_addr_t dest_mac{};
    uint32_t dest_ip = 0;
    uint32_t rkey = 0;
    PacketByteCounter rdma_send_counter;  // direct counter
  };
  /// fill_in_qpn_and_psn's entry: worker, pool-index range, QPN and the
  /// entry's direct PSN register.
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/rdma_sender.py:154
  struct QpnEntry {
    Ternary pool_index;
    uint32_t qpn = 0;
    uint32_t psn_register = 0;  // DirectRegister<bit<32>>
  };

  explicit RDMASender(const SwitchMLConfig& c);

  /// Builds the RoCE header stack for `eg_md`; false when create_roce_packet
  /// missed (the copy is dropped, see README).
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_sender.p4:241
  bool apply(const switchml_md_h& eg_md, const switchml_rdma_md_h& rdma_md, header_t& hdr);
  void CountSend(uint16_t worker_id, size_t bytes) {
    auto& c = create_roce_packet_[worker_id].rdma_send_counter;  // apply() hit it
    ++c.packets;
    c.bytes += bytes;
  }
  const std::vector<RoceEntry>& create_roce_packet() const { return create_roce_packet_; }
  const std::vector<std::vector<QpnEntry>>& fill_in_qpn_and_psn() const { return fill_in_qpn_and_psn_; }

  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_sender.p4:145
  static uint32_t psn_action(uint32_t& value);

 private:
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_sender.p4:52
  void fill_in_roce_fields(header_t& hdr, const RoceEntry& e, uint16_t worker_id) const;
  QpnEntry* LookupQpn(uint16_t worker_id, uint16_t pool_index);
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_sender.p4:221
  static void set_opcodes(const switchml_md_h& eg_md, const switchml_rdma_md_h& rdma_md, uint32_t rkey,
                          header_t& hdr);

  // switch_mac_and_ip's default action data.
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/rdma_sender.py:63
  mac_addr_t switch_mac_;
  uint32_t switch_ip_;
  uint32_t packets_per_message_;
  // Exact match on worker_id, stored flat by worker id (ids are < 32).
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_sender.p4:130
  std::vector<RoceEntry> create_roce_packet_;
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_sender.p4:163
  std::vector<std::vector<QpnEntry>> fill_in_qpn_and_psn_;
};

/// Bytes of the RoCE headers rdma_sender emits for a packet that is the
/// first / last of its message: Ethernet, IPv4, UDP, BTH, then the RETH on
/// first packets and the immediate on last ones.
inline size_t RoceEgressHeaderBytes(bool first_packet, bool last_packet) {
  return kEthernetHBytes + kIpv4HBytes + kUdpHBytes + kIbBthHBytes + (first_packet ? kIbRethHBytes : 0) +
         (last_packet ? kIbImmediateHBytes : 0);
}

}  // namespace inasim::p4::switchml
