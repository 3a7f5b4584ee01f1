#include "protocols/switchml/dataplane/rdma.h"

namespace inasim::p4::switchml {

// ---------------------------------------------------------------------------
// RDMAReceiver
// ---------------------------------------------------------------------------

RDMAReceiver::RDMAReceiver(const SwitchMLConfig& c) {
  if (c.transport != SwitchMLTransport::kRdma) return;
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/rdma_receiver.py:118
  constexpr std::pair<IbOpcode, Action> kOpcodeActions[] = {
      {IbOpcode::UC_RDMA_WRITE_ONLY, Action::only_packet},
      {IbOpcode::UC_RDMA_WRITE_ONLY_IMMEDIATE, Action::only_packet_with_immediate},
      {IbOpcode::UC_RDMA_WRITE_FIRST, Action::first_packet},
      {IbOpcode::UC_RDMA_WRITE_MIDDLE, Action::middle_packet},
      {IbOpcode::UC_RDMA_WRITE_LAST, Action::last_packet},
      {IbOpcode::UC_RDMA_WRITE_LAST_IMMEDIATE, Action::last_packet_with_immediate}};
  const PacketSize size = c.elements_per_packet == 256 ? PacketSize::IBV_MTU_1024 : PacketSize::IBV_MTU_256;
  for (const auto& w : c.workers) {
    // p4lang/p4app-switchML@b5c74a04:dev_root/controller/rdma_receiver.py:137
    const Ternary qpn_top_bits{0x800000u | (uint32_t{w.worker_id} & 0xff) << 16, 0xff0000};
    for (const auto& [opcode, action] : kOpcodeActions) {
      entries_.push_back(Entry{w.ip, c.switch_ip, c.partition_key, static_cast<uint8_t>(opcode), qpn_top_bits, action,
                               c.multicast_group, WorkerType::ROCEv2, w.worker_id, c.num_workers,
                               uint32_t{1} << w.worker_id, size});
    }
  }
  rdma_receive_counter_.resize(entries_.size());
  rdma_packet_counter_.assign(kMaxNumQueuePairs, 0);
  rdma_message_counter_.assign(kMaxNumQueuePairs, 0);
  rdma_sequence_violation_counter_.assign(kMaxNumQueuePairs, 0);
}

uint32_t RDMAReceiver::receiver_reset_action(receiver_data_t& value, uint32_t psn, uint32_t pool_index) {
  // PSNs are 24 bits: wrap around.
  value.next_sequence_number = psn == 0x00ffffff ? 0 : psn + 1;
  value.pool_index = pool_index;
  return value.pool_index;  // MSB: error bit; LSBs: the pool index
}

uint32_t RDMAReceiver::receiver_increment_action(receiver_data_t& value, uint32_t psn) {
  if (psn == value.next_sequence_number) {
    // Next pool index, the set bit (bit 0) unchanged; saturating, so that a
    // set error bit stays set.
    value.pool_index = value.pool_index > 0xffffffffu - 2 ? 0xffffffffu : value.pool_index + 2;
    value.next_sequence_number = value.next_sequence_number == 0x00ffffff ? 0 : value.next_sequence_number + 1;
  } else {
    // Error bit: the rest of the message is dropped until a new message
    // (first / only packet) overwrites the cell.
    value.pool_index = 0x80000000u;
  }
  return value.pool_index;
}

std::map<uint32_t, uint64_t> RDMAReceiver::NonZero(const std::vector<uint64_t>& v) {
  std::map<uint32_t, uint64_t> out;
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != 0) out[static_cast<uint32_t>(i)] = v[i];
  return out;
}

const RDMAReceiver::Entry* RDMAReceiver::Lookup(const header_t& hdr) const {
  // One entry can match (the controller's keys differ in the exact fields or
  // the QPN's top bits), so the first match is the match.
  for (const Entry& e : entries_) {
    if (hdr.ipv4.src_addr == e.ip_src && hdr.ib_bth.opcode == e.opcode && hdr.ipv4.dst_addr == e.ip_dst &&
        hdr.ib_bth.partition_key == e.partition_key && e.dst_qp.Match(hdr.ib_bth.dst_qp)) {
      return &e;
    }
  }
  return nullptr;
}

void RDMAReceiver::set_bitmap(header_t& hdr, ingress_metadata_t& ig_md, const Entry& e) {
  auto& md = ig_md.switchml_md;
  ig_md.worker_bitmap = e.worker_bitmap;
  md.num_workers = e.num_workers;
  md.mgid = e.mgid;
  md.worker_type = e.worker_type;
  md.worker_id = e.worker_id;
  md.dst_port = hdr.udp.src_port;
  // RETH is valid on first / only packets; on the others the PHV holds zero
  // here (the model clears every header before parsing) and only first /
  // only results read these fields.
  ig_md.switchml_rdma_md.rdma_addr = hdr.ib_reth.addr;
  md.tsi = hdr.ib_reth.len;
  md.packet_size = e.packet_size;
  md.recirc_port_selector = static_cast<uint16_t>(QpIndex(hdr.ib_bth.dst_qp));
  // Headers not to recirculate. (Their fields stay readable in the PHV: the
  // register actions below still read the BTH's QPN and PSN.)
  hdr.ethernet.valid = false;
  hdr.ipv4.valid = false;
  hdr.udp.valid = false;
  hdr.ib_bth.valid = false;
  hdr.ib_reth.valid = false;
}

void RDMAReceiver::process_immediate(header_t& hdr, ingress_metadata_t& ig_md) {
  auto& md = ig_md.switchml_md;
  md.msg_id = static_cast<uint16_t>(hdr.ib_immediate.immediate >> 16);
  md.e0 = static_cast<int8_t>(hdr.ib_immediate.immediate >> 8 & 0xff);
  md.e1 = static_cast<int8_t>(hdr.ib_immediate.immediate & 0xff);
  hdr.ib_immediate.valid = false;
}

RDMAReceiver::Result RDMAReceiver::apply(header_t& hdr, ingress_metadata_t& ig_md, uint32_t frame_bytes) {
  const Entry* e = Lookup(hdr);
  if (e == nullptr) {
    // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_receiver.p4:294
    ig_md.switchml_md.packet_type = PacketType::IGNORE;
    ++default_counter_.packets;
    default_counter_.bytes += frame_bytes;
    return {};
  }
  auto& counter = rdma_receive_counter_[static_cast<size_t>(e - entries_.data())];
  ++counter.packets;
  counter.bytes += frame_bytes;
  auto& md = ig_md.switchml_md;
  const uint32_t qp_index = QpIndex(hdr.ib_bth.dst_qp);
  const uint32_t psn = hdr.ib_bth.psn;
  const bool immediate = e->action == Action::only_packet_with_immediate ||
                         e->action == Action::last_packet_with_immediate;
  if (immediate) process_immediate(hdr, ig_md);
  set_bitmap(hdr, ig_md, *e);
  const bool first = e->action == Action::only_packet || e->action == Action::only_packet_with_immediate ||
                     e->action == Action::first_packet;
  const bool last = e->action == Action::only_packet || e->action == Action::only_packet_with_immediate ||
                    e->action == Action::last_packet || e->action == Action::last_packet_with_immediate;
  md.first_packet = first;
  md.last_packet = last;
  receiver_data_t& cell = receiver_data_register_.At(qp_index);
  // POOL_INDEX is the RETH's rkey (rdma_receiver.p4:33).
  const uint32_t result =
      first ? receiver_reset_action(cell, psn, hdr.ib_reth.r_key) : receiver_increment_action(cell, psn);
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_receiver.p4:154
  md.pool_index = static_cast<uint16_t>(result & 0x7fff);
  const bool sequence_violation = result >> 31 != 0;
  // Only middle / last packets set drop_ctl from the error bit.
  Result r{true, !first && sequence_violation};
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_receiver.p4:341
  ++rdma_packet_counter_[md.recirc_port_selector];
  if (sequence_violation) ++rdma_sequence_violation_counter_[md.recirc_port_selector];
  else if (last) ++rdma_message_counter_[md.recirc_port_selector];  // message_possibly_received
  return r;
}

// ---------------------------------------------------------------------------
// RDMASender
// ---------------------------------------------------------------------------

RDMASender::RDMASender(const SwitchMLConfig& c)
    : switch_mac_(c.switch_mac), switch_ip_(c.switch_ip), packets_per_message_(c.PacketsPerMessage()) {
  if (c.transport != SwitchMLTransport::kRdma) return;
  for (const auto& w : c.workers) {
    if (w.worker_id >= create_roce_packet_.size()) {
      create_roce_packet_.resize(w.worker_id + 1u);
      fill_in_qpn_and_psn_.resize(w.worker_id + 1u);
    }
    // p4lang/p4app-switchML@b5c74a04:dev_root/controller/rdma_sender.py:118
    RoceEntry& e = create_roce_packet_[w.worker_id];
    e.valid = true;
    e.dest_mac = w.mac;
    e.dest_ip = w.ip;
    e.rkey = w.rkey;
    // Each QPN serves both sets of a message's slots: consecutive pool
    // indices, the set bit masked off.
    // p4lang/p4app-switchML@b5c74a04:dev_root/controller/rdma_sender.py:154
    const uint32_t ppm = packets_per_message_;
    for (size_t index = 0; index < w.qpns_and_psns.size(); ++index) {
      const uint32_t shifted_index = static_cast<uint32_t>(index) * ppm * 2;
      const uint32_t mask = 0x7ffe & ~((ppm - 1) << 1);
      fill_in_qpn_and_psn_[w.worker_id].push_back(
          QpnEntry{Ternary{shifted_index, mask}, w.qpns_and_psns[index].first, w.qpns_and_psns[index].second});
    }
  }
}

uint32_t RDMASender::psn_action(uint32_t& value) {
  const uint32_t read_value = value & 0x00ffffff;  // the 24-bit sequence number
  value = value + 1;
  return read_value;
}

void RDMASender::fill_in_roce_fields(header_t& hdr, const RoceEntry& e, uint16_t worker_id) const {
  hdr.switchml.valid = false;
  hdr.exponents.valid = false;
  hdr.ethernet.valid = true;
  hdr.ethernet.dst_addr = e.dest_mac;
  hdr.ethernet.src_addr = switch_mac_;
  hdr.ethernet.ether_type = kEtherTypeIpv4;
  ipv4_h& v4 = hdr.ipv4;
  v4.valid = true;
  v4.version = 4;
  v4.ihl = 5;
  v4.diffserv = 0x02;
  v4.identification = 0x0001;
  v4.flags = 0b010;
  v4.frag_offset = 0;
  v4.ttl = 64;
  v4.protocol = kIpProtoUdp;
  v4.hdr_checksum = 0;  // the deparser fills it in
  v4.src_addr = switch_ip_;
  v4.dst_addr = e.dest_ip;
  // Base lengths; payload and optional headers are added below.
  v4.total_len = static_cast<uint16_t>(kIbIcrcHBytes + kIbBthHBytes + kUdpHBytes + kIpv4HBytes);
  hdr.udp.valid = true;
  hdr.udp.src_port = static_cast<uint16_t>(0x8000 | (worker_id & 0x7fff));  // consistent per worker
  hdr.udp.dst_port = kUdpPortRocev2;
  hdr.udp.checksum = 0;  // disabled for RoCEv2
  hdr.udp.length = static_cast<uint16_t>(kIbIcrcHBytes + kIbBthHBytes + kUdpHBytes);
  ib_bth_h& bth = hdr.ib_bth;
  bth.valid = true;
  bth.opcode = static_cast<uint8_t>(IbOpcode::UC_RDMA_WRITE_ONLY);
  bth.se = 0;
  bth.migration_req = 1;
  bth.pad_count = 0;
  bth.transport_version = 0;
  bth.partition_key = 0xffff;
  bth.f_res1 = 0;
  bth.b_res1 = 0;
  bth.reserved = 0;
  bth.dst_qp = 0;
  bth.ack_req = 0;
  bth.reserved2 = 0;
  // The ICRC is not added: the ingress packet's stays behind the payload
  // (rdma_sender.p4:113).
}

RDMASender::QpnEntry* RDMASender::LookupQpn(uint16_t worker_id, uint16_t pool_index) {
  if (worker_id >= fill_in_qpn_and_psn_.size()) return nullptr;
  auto& entries = fill_in_qpn_and_psn_[worker_id];
  // The controller's ranges are disjoint and in index order: the entry of
  // pool index p is entry p / (2 ppm) when it matches at all.
  const size_t guess = (pool_index & 0x7fff) / (2u * packets_per_message_);
  if (guess < entries.size() && entries[guess].pool_index.Match(pool_index)) return &entries[guess];
  for (QpnEntry& e : entries)
    if (e.pool_index.Match(pool_index)) return &e;
  return nullptr;
}

void RDMASender::set_opcodes(const switchml_md_h& eg_md, const switchml_rdma_md_h& rdma_md, uint32_t rkey,
                             header_t& hdr) {
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_sender.p4:184
  auto set_rdma = [&] {
    hdr.ib_reth.valid = true;
    hdr.ib_reth.r_key = rkey;
    hdr.ib_reth.len = eg_md.tsi;
    hdr.ib_reth.addr = rdma_md.rdma_addr;
  };
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_sender.p4:179
  auto set_immediate = [&] {
    hdr.ib_immediate.valid = true;
    hdr.ib_immediate.immediate = uint32_t{eg_md.msg_id} << 16 | uint32_t{static_cast<uint8_t>(eg_md.e0)} << 8 |
                                 static_cast<uint8_t>(eg_md.e1);
  };
  auto grow = [&](size_t n) {
    hdr.udp.length = static_cast<uint16_t>(hdr.udp.length + n);
    hdr.ipv4.total_len = static_cast<uint16_t>(hdr.ipv4.total_len + n);
  };
  // const entries (first_packet, last_packet)
  if (eg_md.first_packet && !eg_md.last_packet) {  // set_first (rdma_sender.p4:191)
    hdr.ib_bth.opcode = static_cast<uint8_t>(IbOpcode::UC_RDMA_WRITE_FIRST);
    set_rdma();
    grow(kIbRethHBytes);
  } else if (!eg_md.first_packet && !eg_md.last_packet) {  // set_middle (:199)
    hdr.ib_bth.opcode = static_cast<uint8_t>(IbOpcode::UC_RDMA_WRITE_MIDDLE);
  } else if (!eg_md.first_packet) {  // set_last_immediate (:204)
    hdr.ib_bth.opcode = static_cast<uint8_t>(IbOpcode::UC_RDMA_WRITE_LAST_IMMEDIATE);
    set_immediate();
    grow(kIbImmediateHBytes);
  } else {  // set_only_immediate (:212)
    hdr.ib_bth.opcode = static_cast<uint8_t>(IbOpcode::UC_RDMA_WRITE_ONLY_IMMEDIATE);
    set_rdma();
    set_immediate();
    grow(kIbImmediateHBytes + kIbRethHBytes);
  }
}

bool RDMASender::apply(const switchml_md_h& eg_md, const switchml_rdma_md_h& rdma_md, header_t& hdr) {
  // switch_mac_and_ip: default action only (its address data is read by
  // fill_in_roce_fields from the members).
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_sender.p4:243
  if (eg_md.worker_id >= create_roce_packet_.size() || !create_roce_packet_[eg_md.worker_id].valid) return false;
  const RoceEntry& roce = create_roce_packet_[eg_md.worker_id];
  // fill_in_roce_write_fields (rdma_sender.p4:124)
  fill_in_roce_fields(hdr, roce, eg_md.worker_id);
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_sender.p4:249
  const size_t payload = eg_md.packet_size == PacketSize::IBV_MTU_256    ? 256
                         : eg_md.packet_size == PacketSize::IBV_MTU_1024 ? 1024
                                                                         : 0;
  hdr.ipv4.total_len = static_cast<uint16_t>(hdr.ipv4.total_len + payload);
  hdr.udp.length = static_cast<uint16_t>(hdr.udp.length + payload);
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_sender.p4:259
  // add_qpn_and_psn (rdma_sender.p4:158). A miss (no NoAction data) leaves
  // QPN 0 and PSN 0, which no worker QP accepts.
  if (QpnEntry* q = LookupQpn(eg_md.worker_id, eg_md.pool_index)) {
    hdr.ib_bth.dst_qp = q->qpn;
    hdr.ib_bth.psn = psn_action(q->psn_register);
  } else {
    hdr.ib_bth.psn = 0;
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/p4/rdma_sender.p4:262
  set_opcodes(eg_md, rdma_md, roce.rkey, hdr);
  return true;
}

}  // namespace inasim::p4::switchml
