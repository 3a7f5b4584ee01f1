// The SwitchML model's side of `inasim-p4 check`'s differential runs
// (p4model/common/model_check.h): which function of controls.h mirrors which
// upstream RegisterAction, and which lookup which table, with the action's
// outside reads as the function's parameters.
#include "p4model/common/model_check.h"
#include "p4model/common/pipeline_emitter.h"
#include "protocols/switchml/dataplane/controls.h"
#include "protocols/switchml/dataplane/describe.h"
#include "protocols/switchml/dataplane/next_step_selector.h"
#include "protocols/switchml/dataplane/switchml_dataplane.h"

#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace inasim::p4::switchml {

namespace {
/// The forwarder's flood group and the first rid of its nodes (switchml.py:70-71).
constexpr uint16_t kFloodGroup = 0x8000;
/// Device ports of the pipeline runs' workers: pipe-0 front-panel ports.
constexpr uint16_t kPipelineWorkerPorts[] = {1, 5, 40};
}  // namespace

std::optional<RegisterActionBinding> BindRegisterAction(const std::string& name) {
  using UB = UpdateAndCheckWorkerBitmap;
  using WC = WorkersCounter;
  using EX = Exponents;
  using PR = Processor;
  auto bitmap_pair = [](auto fn) {
    return [fn](uint64_t* c, const uint64_t* in) -> uint64_t {
      worker_bitmap_pair_t p{static_cast<uint32_t>(c[0]), static_cast<uint32_t>(c[1])};
      const uint32_t r = fn(p, static_cast<uint32_t>(in[0]));
      c[0] = p.first;
      c[1] = p.second;
      return r;
    };
  };
  auto count_pair = [](auto fn) {
    return [fn](uint64_t* c, const uint64_t* in) -> uint64_t {
      num_workers_pair_t p{static_cast<uint8_t>(c[0]), static_cast<uint8_t>(c[1])};
      const uint8_t r = fn(p, in);
      c[0] = p.first;
      c[1] = p.second;
      return r;
    };
  };
  auto exp_pair = [](auto fn) {
    return [fn](uint64_t* c, const uint64_t* in) -> uint64_t {
      exponent_pair_t p{static_cast<int8_t>(static_cast<uint8_t>(c[0])), static_cast<int8_t>(static_cast<uint8_t>(c[1]))};
      const int8_t r = fn(p, in);
      c[0] = static_cast<uint8_t>(p.first);
      c[1] = static_cast<uint8_t>(p.second);
      return static_cast<uint8_t>(r);
    };
  };
  auto value_pair = [](auto fn) {
    return [fn](uint64_t* c, const uint64_t* in) -> uint64_t {
      uint32_t first = static_cast<uint32_t>(c[0]), second = static_cast<uint32_t>(c[1]);
      const uint32_t r = fn(PR::value_pair_ref{first, second}, in);
      c[0] = first;
      c[1] = second;
      return r;
    };
  };
  auto i8 = [](uint64_t v) { return static_cast<int8_t>(static_cast<uint8_t>(v)); };
  auto u32 = [](uint64_t v) { return static_cast<uint32_t>(v); };
  static const std::string kBitmap = "ig_md.worker_bitmap";
  if (name == "UpdateAndCheckWorkerBitmap.worker_bitmap_update_set0")
    return RegisterActionBinding{{kBitmap}, bitmap_pair(UB::worker_bitmap_update_set0)};
  if (name == "UpdateAndCheckWorkerBitmap.worker_bitmap_update_set1")
    return RegisterActionBinding{{kBitmap}, bitmap_pair(UB::worker_bitmap_update_set1)};
  if (name == "WorkersCounter.workers_count_action")
    return RegisterActionBinding{{"ig_md.switchml_md.num_workers"}, count_pair([](num_workers_pair_t& p, const uint64_t* in) {
                                   return WC::workers_count_action(p, static_cast<uint8_t>(in[0]));
                                 })};
  if (name == "WorkersCounter.read_workers_count_action")
    return RegisterActionBinding{{}, count_pair([](num_workers_pair_t& p, const uint64_t*) { return WC::read_workers_count_action(p); })};
  if (name == "Exponents.write_read0_register_action")
    return RegisterActionBinding{{"exponent0", "exponent1"}, exp_pair([i8](exponent_pair_t& p, const uint64_t* in) {
                                   return EX::write_read0_register_action(p, i8(in[0]), i8(in[1]));
                                 })};
  if (name == "Exponents.max_read0_register_action")
    return RegisterActionBinding{{"exponent0", "exponent1"}, exp_pair([i8](exponent_pair_t& p, const uint64_t* in) {
                                   return EX::max_read0_register_action(p, i8(in[0]), i8(in[1]));
                                 })};
  if (name == "Exponents.read0_register_action")
    return RegisterActionBinding{{}, exp_pair([](exponent_pair_t& p, const uint64_t*) { return EX::read0_register_action(p); })};
  if (name == "Exponents.read1_register_action")
    return RegisterActionBinding{{}, exp_pair([](exponent_pair_t& p, const uint64_t*) { return EX::read1_register_action(p); })};
  if (name == "Processor.write_read1_register_action")
    return RegisterActionBinding{{"value0", "value1"}, value_pair([u32](PR::value_pair_ref v, const uint64_t* in) {
                                   return PR::write_read1_register_action(v, u32(in[0]), u32(in[1]));
                                 })};
  if (name == "Processor.sum_read1_register_action")
    return RegisterActionBinding{{"value0", "value1"}, value_pair([u32](PR::value_pair_ref v, const uint64_t* in) {
                                   return PR::sum_read1_register_action(v, u32(in[0]), u32(in[1]));
                                 })};
  if (name == "Processor.read0_register_action")
    return RegisterActionBinding{{}, value_pair([](PR::value_pair_ref v, const uint64_t*) { return PR::read0_register_action(v); })};
  if (name == "Processor.read1_register_action")
    return RegisterActionBinding{{}, value_pair([](PR::value_pair_ref v, const uint64_t*) { return PR::read1_register_action(v); })};
  return std::nullopt;
}

std::optional<TableBinding> BindTable(const std::string& name) {
  auto md_of = [](uint64_t packet_type) {
    ingress_metadata_t ig;
    ig.switchml_md.packet_type = static_cast<PacketType>(packet_type);
    return ig;
  };
  if (name == "ReconstructWorkerBitmap.reconstruct_worker_bitmap")
    return TableBinding([](const uint64_t* k) {
      ingress_metadata_t ig;
      ig.switchml_md.worker_id = static_cast<uint16_t>(k[0]);
      ReconstructWorkerBitmap::apply(ig);
      return TableResult{"reconstruct_worker_bitmap_from_worker_id", {ig.worker_bitmap}};
    });
  if (name == "UpdateAndCheckWorkerBitmap.update_and_check_worker_bitmap")
    return TableBinding([md_of](const uint64_t* k) {
      ingress_metadata_t ig = md_of(k[1]);
      ig.switchml_md.pool_index = static_cast<uint16_t>(k[0]);
      ig.port_metadata.ingress_drop_probability = static_cast<uint16_t>(k[2]);
      return TableResult{ActionName(UpdateAndCheckWorkerBitmap::Lookup(ig)), {}};
    });
  if (name == "WorkersCounter.count_workers")
    return TableBinding([md_of](const uint64_t* k) {
      ingress_metadata_t ig = md_of(k[2]);
      ig.switchml_md.num_workers = static_cast<uint8_t>(k[0]);
      ig.switchml_md.map_result = static_cast<uint32_t>(k[1]);
      return TableResult{ActionName(WorkersCounter::Lookup(ig.switchml_md)), {}};
    });
  if (name == "Exponents.exponent_max" || name == "Processor.sum")
    return TableBinding([md_of, name](const uint64_t* k) {
      ingress_metadata_t ig = md_of(k[2]);
      ig.switchml_md.worker_bitmap_before = static_cast<uint32_t>(k[0]);
      ig.switchml_md.map_result = static_cast<uint32_t>(k[1]);
      return TableResult{name == "Processor.sum" ? ActionName(Processor::Lookup(ig.switchml_md))
                                                 : ActionName(Exponents::Lookup(ig.switchml_md)),
                         {}};
    });
  if (name == "NextStepSelector.next_step") {
    auto nss = std::make_shared<NextStepSelector>(/*folded_pipe=*/true);
    return TableBinding([nss](const uint64_t* k) {
      switchml_md_h md;
      md.packet_size = static_cast<PacketSize>(k[0]);
      md.worker_id = static_cast<uint16_t>(k[1]);
      md.packet_type = static_cast<PacketType>(k[2]);
      md.first_last_flag = static_cast<uint8_t>(k[3]);
      md.map_result = static_cast<uint32_t>(k[4]);
      const NextStepSelector::Entry* e = nss->Lookup(md);
      if (!e) return TableResult{"drop", {}};  // const default_action = drop()
      const std::string a = ActionName(e->action);
      if (a == "recirculate_for_CONSUME1" || a.rfind("recirculate_for_HARVEST", 0) == 0)
        return TableResult{a, {e->recirc_port}};
      return TableResult{a, {}};
    });
  }
  return std::nullopt;
}

namespace {

uint64_t Mac(const mac_addr_t& m) {
  uint64_t v = 0;
  for (uint8_t b : m) v = v << 8 | b;
  return v;
}

constexpr uint64_t kAll = ~uint64_t{0};

/// The model's copy of an upstream register cell or Counter index, by the
/// instance path the evaluator gives it (switchml.p4:50-90).
std::optional<std::vector<uint64_t>> ModelCell(const SwitchMLDataplane& dp, const std::string& reg, uint32_t pipe,
                                               uint32_t index) {
  const int p = static_cast<int>(pipe);
  if (reg == "Ingress.update_and_check_worker_bitmap.worker_bitmap") {
    const worker_bitmap_pair_t v = dp.WorkerBitmap(p, index);
    return std::vector<uint64_t>{v.first, v.second};
  }
  if (reg == "Ingress.workers_counter.workers_count") {
    const num_workers_pair_t v = dp.WorkersCount(p, index);
    return std::vector<uint64_t>{v.first, v.second};
  }
  if (reg == "Ingress.exponents.exponents") {
    const exponent_pair_t v = dp.Exponent(p, index);
    return std::vector<uint64_t>{static_cast<uint8_t>(v.first), static_cast<uint8_t>(v.second)};
  }
  static const std::regex value(R"(Ingress\.value(\d\d)\.values)");
  std::smatch m;
  if (std::regex_match(reg, m, value)) {
    const value_pair_t v = dp.Value(p, std::stoi(m[1]), index);
    return std::vector<uint64_t>{v.first, v.second};
  }
  // Direct counters, packets only: by entry (kDefaultActionEntry: the default action's).
  if (reg == "Ingress.udp_receiver.receive_counter") {
    const auto& r = dp.udp_receiver();
    if (index == kDefaultActionEntry) return std::vector<uint64_t>{r.default_counter().packets};
    return index < r.receive_counter().size() ? std::optional(std::vector<uint64_t>{r.receive_counter()[index].packets})
                                              : std::nullopt;
  }
  if (reg == "Ingress.rdma_receiver.rdma_receive_counter") {
    const auto& r = dp.rdma_receiver();
    if (index == kDefaultActionEntry) return std::vector<uint64_t>{r.default_counter().packets};
    return index < r.receive_counter().size() ? std::optional(std::vector<uint64_t>{r.receive_counter()[index].packets})
                                              : std::nullopt;
  }
  // dst_addr's and create_roce_packet's entries are the workers', in id order.
  if (reg == "Egress.udp_sender.send_counter") {
    const auto counts = dp.udp_sender().send_counter();
    const auto it = counts.find(static_cast<uint16_t>(index));
    return std::vector<uint64_t>{it == counts.end() ? 0 : it->second.packets};
  }
  if (reg == "Egress.rdma_sender.rdma_send_counter") {
    const auto& entries = dp.rdma_sender().create_roce_packet();
    return index < entries.size() ? std::optional(std::vector<uint64_t>{entries[index].rdma_send_counter.packets})
                                  : std::nullopt;
  }
  // By QP_INDEX; a UDP packet's (its BTH invalid) is 0 on both sides.
  if (reg == "Ingress.egress_drop_sim.simulated_drop_packet_counter" && pipe == 0) {
    const auto& by_qp = dp.egress_drop_sim().simulated_drop_packet_counter_by_qp;
    const auto it = by_qp.find(index);
    return std::vector<uint64_t>{it == by_qp.end() ? 0 : it->second};
  }
  if (reg == "Ingress.rdma_receiver.receiver_data_register") {
    const RDMAReceiver::receiver_data_t v = dp.rdma_receiver().ReceiverData(index);
    return std::vector<uint64_t>{v.next_sequence_number, v.pool_index};
  }
  const RDMAReceiver& rr = dp.rdma_receiver();
  if (reg == "Ingress.rdma_receiver.rdma_packet_counter") return std::vector<uint64_t>{rr.PacketCount(index)};
  if (reg == "Ingress.rdma_receiver.rdma_message_counter") return std::vector<uint64_t>{rr.MessageCount(index)};
  if (reg == "Ingress.rdma_receiver.rdma_sequence_violation_counter")
    return std::vector<uint64_t>{rr.SequenceViolationCount(index)};
  // The DirectRegister of fill_in_qpn_and_psn: one cell per entry, entries
  // worker by worker as ControllerTables installs them.
  if (reg == "Egress.rdma_sender.psn_register") {
    uint32_t k = 0;
    for (const auto& per_worker : dp.rdma_sender().fill_in_qpn_and_psn())
      for (const auto& e : per_worker)
        if (k++ == index) return std::vector<uint64_t>{e.psn_register};
    return std::nullopt;
  }
  static const std::regex counter(R"(Ingress\.next_step_selector\.(broadcast|retransmit|recirculate|drop)_counter)");
  if (std::regex_match(reg, m, counter)) {
    const NextStepSelector::Counters c = dp.next_step_selector().CountersAt(index, p);
    const std::string kind = m[1];
    return std::vector<uint64_t>{kind == "broadcast"    ? c.broadcast
                                 : kind == "retransmit" ? c.retransmit
                                 : kind == "recirculate" ? c.recirculate
                                                         : c.drop};
  }
  return std::nullopt;
}

/// Every counter the model keeps, by upstream instance path, its packets
/// summed over pipes and indexes (entries, the default action's too).
std::map<std::string, uint64_t> ModelCounterTotals(const SwitchMLDataplane& dp) {
  std::map<std::string, uint64_t> t;
  auto sum = [](const auto& range, auto packets) {
    uint64_t n = 0;
    for (const auto& x : range) n += packets(x);
    return n;
  };
  const auto direct = [](const auto& c) { return c.packets; };
  const auto second = [](const auto& kv) { return kv.second; };
  const UDPReceiver& ur = dp.udp_receiver();
  t["Ingress.udp_receiver.receive_counter"] = ur.default_counter().packets + sum(ur.receive_counter(), direct);
  const RDMAReceiver& rr = dp.rdma_receiver();
  t["Ingress.rdma_receiver.rdma_receive_counter"] = rr.default_counter().packets + sum(rr.receive_counter(), direct);
  t["Ingress.rdma_receiver.rdma_packet_counter"] = sum(rr.packet_counter(), second);
  t["Ingress.rdma_receiver.rdma_message_counter"] = sum(rr.message_counter(), second);
  t["Ingress.rdma_receiver.rdma_sequence_violation_counter"] = sum(rr.sequence_violation_counter(), second);
  t["Egress.udp_sender.send_counter"] = sum(dp.udp_sender().send_counter(), [](const auto& kv) { return kv.second.packets; });
  t["Egress.rdma_sender.rdma_send_counter"] =
      sum(dp.rdma_sender().create_roce_packet(), [](const auto& e) { return e.rdma_send_counter.packets; });
  t["Ingress.egress_drop_sim.simulated_drop_packet_counter"] = sum(dp.egress_drop_sim().simulated_drop_packet_counter_by_qp, second);
  const auto ns = dp.next_step_selector().counters();
  t["Ingress.next_step_selector.broadcast_counter"] = sum(ns, [](const auto& kv) { return kv.second.broadcast; });
  t["Ingress.next_step_selector.retransmit_counter"] = sum(ns, [](const auto& kv) { return kv.second.retransmit; });
  t["Ingress.next_step_selector.recirculate_counter"] = sum(ns, [](const auto& kv) { return kv.second.recirculate; });
  t["Ingress.next_step_selector.drop_counter"] = sum(ns, [](const auto& kv) { return kv.second.drop; });
  return t;
}

/// What the controller installs for `c`, read off the model built from it
/// (its own entries, the ones the declaration check compares with the
/// controller's Python) and the controller's fixed entries.
std::map<std::string, ControllerTable> ControllerTables(const SwitchMLDataplane& dp) {
  const SwitchMLConfig& c = dp.config();
  std::map<std::string, ControllerTable> t;
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/udp_receiver.py:79-150
  auto& receive = t["Ingress.udp_receiver.receive_udp"];
  for (const auto& e : dp.udp_receiver().entries())
    receive.entries.push_back({{{0, 0}, {Mac(e.eth_src), kAll}, {Mac(e.eth_dst), kAll}, {e.ip_src, kAll}, {e.ip_dst, kAll},
                                {e.udp_dst_port.value, e.udp_dst_port.mask}, {0, 0}},
                               "set_bitmap",
                               {e.mgid, static_cast<uint64_t>(e.worker_type), e.worker_id, e.num_workers, e.worker_bitmap}});
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/rdma_receiver.py:94-160
  static const char* const kRoceActions[] = {"only_packet", "only_packet_with_immediate", "first_packet",
                                             "middle_packet", "last_packet", "last_packet_with_immediate", "forward"};
  auto& roce = t["Ingress.rdma_receiver.receive_roce"];
  for (const auto& e : dp.rdma_receiver().entries())
    roce.entries.push_back({{{e.ip_src, kAll}, {e.ip_dst, kAll}, {e.partition_key, kAll}, {e.opcode, kAll},
                             {e.dst_qp.value, e.dst_qp.mask}},
                            kRoceActions[static_cast<int>(e.action)],
                            {e.mgid, static_cast<uint64_t>(e.worker_type), e.worker_id, e.num_workers, e.worker_bitmap,
                             static_cast<uint64_t>(e.packet_size)}});
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/rdma_sender.py:57-170
  // (the DirectRegister's initial PSNs are the binding's, all 0)
  if (c.transport == SwitchMLTransport::kRdma) {
    t["Egress.rdma_sender.switch_mac_and_ip"].default_action =
        ControllerEntry{{}, "set_switch_mac_and_ip", {Mac(c.switch_mac), c.switch_ip, 0, 0}};
    auto& create = t["Egress.rdma_sender.create_roce_packet"];
    auto& qpn = t["Egress.rdma_sender.fill_in_qpn_and_psn"];
    const auto& roce_entries = dp.rdma_sender().create_roce_packet();
    for (uint16_t id = 0; id < roce_entries.size(); ++id)
      if (roce_entries[id].valid)
        create.entries.push_back({{{id, kAll}}, "fill_in_roce_write_fields",
                                  {Mac(roce_entries[id].dest_mac), roce_entries[id].dest_ip, roce_entries[id].rkey}});
    const auto& qpn_entries = dp.rdma_sender().fill_in_qpn_and_psn();
    for (uint16_t id = 0; id < qpn_entries.size(); ++id)
      for (const auto& e : qpn_entries[id])
        qpn.entries.push_back({{{id, kAll}, {e.pool_index.value, e.pool_index.mask}}, "add_qpn_and_psn", {e.qpn}});
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/next_step_selector.py:62-200
  auto& next = t["Ingress.next_step_selector.next_step"];
  for (const auto& e : dp.next_step_selector().entries()) {
    const std::string a = ActionName(e.action);
    std::vector<uint64_t> args;
    if (a == "recirculate_for_CONSUME1" || a.rfind("recirculate_for_HARVEST", 0) == 0) args = {e.recirc_port};
    next.entries.push_back({{{e.packet_size.value, e.packet_size.mask},
                             {e.worker_id.value, e.worker_id.mask},
                             {e.packet_type.value, e.packet_type.mask},
                             {e.first_last_flag.value, e.first_last_flag.mask},
                             {e.map_result.value, e.map_result.mask}},
                            a,
                            args});
  }
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/udp_sender.py:49-110
  t["Egress.udp_sender.switch_mac_and_ip"].default_action =
      ControllerEntry{{}, "set_switch_mac_and_ip", {Mac(c.switch_mac), c.switch_ip}};
  auto& dst = t["Egress.udp_sender.dst_addr"];
  for (const auto& w : c.workers) dst.entries.push_back({{{w.worker_id, kAll}}, "set_dst_addr", {Mac(w.mac), w.ip}});
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/arp_icmp_responder.py:54-134:
  // ARP who-has the switch IP, ICMP echo to it.
  auto& arp = t["Ingress.arp_icmp_responder.arp_icmp"];
  arp.entries.push_back({{{1, kAll}, {0, kAll}, {1, 0xffff}, {c.switch_ip, 0xffffffff}, {0, 0}, {c.switch_ip, 0}},
                         "send_arp_reply",
                         {Mac(c.switch_mac), c.switch_ip}});
  arp.entries.push_back({{{0, kAll}, {1, kAll}, {0, 0}, {c.switch_ip, 0}, {8, 0xff}, {c.switch_ip, 0xffffffff}},
                         "send_icmp_echo_reply",
                         {Mac(c.switch_mac), c.switch_ip}});
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/forwarder.py:54-98,
  // switchml.py:311-325: each port's MAC, broadcast floods, so does a miss.
  auto& fwd = t["Ingress.forwarder.forward"];
  for (const auto& w : c.workers) fwd.entries.push_back({{{Mac(w.mac), kAll}}, "set_egress_port", {w.port}});
  fwd.entries.push_back({{{0xffffffffffff, kAll}}, "flood", {kFloodGroup}});
  fwd.default_action = ControllerEntry{{}, "flood", {kFloodGroup}};
  return t;
}

SwitchMLConfig PipelineConfig(uint8_t workers, uint32_t elements_per_packet, bool rdma = false) {
  SwitchMLConfig c;
  if (rdma) {
    // Four packets per message (first, two middle, last), two queue pairs
    // per worker, initial PSNs 0.
    c.transport = SwitchMLTransport::kRdma;
    c.message_size = 4 * 4 * elements_per_packet;
  }
  c.switch_mac = {0x02, 0, 0, 0, 0, 0xfe};
  c.switch_ip = 0x0a0000fe;
  c.num_workers = workers;
  c.elements_per_packet = elements_per_packet;
  c.forwarding = SwitchMLForwarding::kL2;
  for (uint8_t i = 0; i < workers; ++i) {
    SwitchMLWorker w;
    w.worker_id = i;
    w.port = kPipelineWorkerPorts[i];
    w.dev_port = w.port;
    w.mac = {0x02, 0, 0, 0, 0, static_cast<uint8_t>(i + 1)};
    w.ip = 0x0a000001u + i;
    if (rdma) {
      w.rkey = 0x1000u + i;
      w.qpns_and_psns = {{0x100u + 2u * i, 0}, {0x101u + 2u * i, 0}};
    }
    c.workers.push_back(w);
  }
  return c;
}

/// `v` n times, then each other value once: a field's usual value and the
/// others it can take.
std::vector<uint64_t> Often(uint64_t v, int n, std::vector<uint64_t> others) {
  std::vector<uint64_t> out(static_cast<size_t>(n), v);
  out.insert(out.end(), others.begin(), others.end());
  return out;
}

/// The UDP variants' frame fields for the job `three`.
std::vector<PipelineField> UdpFrameFields(const SwitchMLConfig& three) {
  // Fields drawn so that about half the frames are a worker's SwitchML
  // packet for one of a few slots (so slots complete, and duplicates
  // retransmit), the rest an ARP / ICMP request or a packet with one field
  // off: offsets of headers.p4 (Ethernet 0, IPv4 14, UDP 34, switchml_h 42,
  // exponents 50). `Often(v, n, others)`: v n times, then each other value once.
  const uint64_t sw_mac = Mac(three.switch_mac), sw_ip = three.switch_ip;
  std::vector<uint64_t> src_macs, src_ips;
  for (int k = 0; k < 4; ++k)
    for (const auto& w : three.workers) src_macs.push_back(Mac(w.mac)), src_ips.push_back(w.ip);
  src_macs.push_back(0x020000000077);
  src_ips.push_back(0x0a000077);
  return {
      {0, 6, Often(sw_mac, 16, {0xffffffffffff, Mac(three.workers[1].mac), 0x020000000099}), -1, 0.97},
      {6, 6, src_macs, 0, 0.99},
      {26, 4, src_ips, 0, 0.99},
      // EtherType + IPv4 version/IHL + TOS, or ARP hw type 1, or IPv6
      {12, 4, Often(0x08004500, 16, {0x08004600, 0x08060001, 0x08060001, 0x86dd6000}), -1, 0.99},
      // IPv4 total length + id, or ARP proto 0x0800 and sizes
      {16, 4, {0x01340000, 0x01340000, 0x08000604}, -1, 0.99},
      // IPv4 flags/fragment, TTL, protocol, or ARP opcode 1 / 2
      {20, 4, Often(0x00004011, 16, {0x40004011, 0x00014011, 0x00004001, 0x00010000, 0x00020000}), -1, 0.99},
      {30, 4, Often(sw_ip, 16, {0x0a000002}), -1, 0.97},
      // UDP source and destination ports (or ICMP type, code); ARP's target IP at 38
      // (or RoCEv2's 4791, which a UDP job's program parses and forwards)
      {34, 4, Often(0x1234bee0, 16, {0x1234bee1, 0x1234beef, 0x1234bef0, 0x08001234, 0x00001234, 0xc00012b7, 0xc00012b7}), -1, 0.99},
      {38, 4, {sw_ip, 0x01340000}, -1, 0.75},
      // switchml_h: msg_type and size (256 B, 1024 B, others); pool index; exponents
      // (for RoCE, the BTH opcode: UC RDMA write first, only, only with immediate, send last with immediate)
      {42, 1, Often(0x01, 8, {0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x00, 0x02, 0x11, 0x26, 0x2a, 0x2b, 0x23}), -1, 0.99},
      {48, 2, {0, 0, 0, 0, 0x8000, 0x8000, 1, 5}, -1, 0.99},
      {50, 2, {0x0000, 0x7f80, 0x0102, 0xff01, 0x8080}, -1, 0.75}};
}

/// The RoCE variants' frame fields for the 3-worker job `three`.
std::vector<PipelineField> RoceFrameFields(const SwitchMLConfig& three) {
  const uint64_t sw_mac = Mac(three.switch_mac), sw_ip = three.switch_ip;
  // The RoCE variant's frames: a worker's UC RDMA writes (its IPv4 source
  // and its queue pair's dst_qp together), offsets of headers.p4 (BTH 42,
  // RETH 54, immediate after the RETH or the BTH).
  std::vector<uint64_t> roce_macs, roce_ips, roce_qps;
  for (int k = 0; k < 2; ++k)
    for (const auto& w : three.workers)
      for (uint32_t qp = 0; qp < 2; ++qp) {
        roce_macs.push_back(Mac(w.mac));
        roce_ips.push_back(w.ip);
        roce_qps.push_back(0x800000u | uint32_t{w.worker_id} << 16 | qp);
      }
  roce_macs.push_back(0x020000000077);
  roce_ips.push_back(0x0a000077);
  roce_qps.push_back(0x7f0000);
  std::vector<uint64_t> opcodes;
  for (uint64_t op = 0x26; op <= 0x2b; ++op) opcodes.insert(opcodes.end(), 3, op);
  opcodes.insert(opcodes.end(), {0x0a, 0x24, 0x01});
  return {
      {0, 6, Often(sw_mac, 16, {0xffffffffffff, 0x020000000099}), -1, 0.97},
      {6, 6, roce_macs, 0, 0.99},
      {26, 4, roce_ips, 0, 0.99},
      {47, 3, roce_qps, 0, 0.99},
      {12, 4, Often(0x08004500, 16, {0x08004600, 0x08060001}), -1, 0.99},
      {20, 4, Often(0x00004011, 16, {0x00014011, 0x00004001}), -1, 0.99},
      {30, 4, Often(sw_ip, 16, {0x0a000002}), -1, 0.97},
      {34, 4, Often(0xc00012b7, 16, {0xc00012b8, 0x1234bee0}), -1, 0.99},
      {42, 1, opcodes, -1, 0.99},
      {44, 2, Often(0xffff, 16, {0x1234}), -1, 0.99},
      {51, 3, {0, 1, 2, 3, 0xffffff}, -1, 0.99},
      {62, 4, {0, 2, 4, 6, 1, 0x8000}, -1, 0.99}};
}

}  // namespace

// Whole-pipeline runs: upstream's Ingress and Egress with the controller's
// entries for a job over UDP or RoCE (and its L2 forwarding), against the
// model configured the same, frames from the workers' and other pipe-0 ports.
std::optional<PipelineBinding> BindPipeline() {
  PipelineBinding b = PipelineBinding::Tna();
  const SwitchMLConfig three = PipelineConfig(3, 64);
  // p4lang/p4app-switchML@b5c74a04:dev_root/controller/pre.py:75-128: node
  // id = rid = worker id, its L1 XID the rid; switchml.py:327-337: the flood
  // group 0x8000, rid 0x8000 + port.
  for (const auto& w : three.workers) {
    b.groups[three.multicast_group].emplace_back(w.port, w.worker_id, w.worker_id);
    b.groups[kFloodGroup].emplace_back(w.port, static_cast<uint16_t>(kFloodGroup + w.port),
                                       static_cast<uint16_t>(kFloodGroup + w.port));
  }
  // Loopback: the recirculation ports the controller's next_step entries use
  // (64, 68, and ports of pipes 1-3).
  b.recirculation_ports = {64, 68};
  for (uint16_t p = 128; p < 512; ++p) b.recirculation_ports.push_back(p);
  auto variant = [](std::string name, uint8_t workers, uint32_t elements, bool egress_drops = false,
                    bool rdma = false) {
    SwitchMLConfig c = PipelineConfig(workers, elements, rdma);
    PipelineBinding::Variant v;
    v.name = std::move(name);
    v.tables = ControllerTables(SwitchMLDataplane(c));
    if (egress_drops) {
      // Egress drop probability 1: the controller's int(0xffff * p) in the
      // port metadata of ports 0..287 (drop_simulator.py:64-93); any random
      // draw saturates to 0xffff, so both sides drop every copy.
      c.egress_drop_probability = 1.0;
      for (uint16_t p = 0; p < 288; ++p) v.port_metadata[p] = {0, 0, 0xff, 0xff, 0, 0, 0, 0};
    }
    if (rdma) v.fields = RoceFrameFields(c);  // the UDP variants use the binding's
    v.frame_bytes = rdma ? kEthernetHBytes + kIpv4HBytes + kUdpHBytes + kIbBthHBytes + kIbRethHBytes + kIbImmediateHBytes +
                               4 * elements
                         : kEthernetHBytes + kIpv4HBytes + kUdpHBytes + kSwitchmlHBytes + kExponentsHBytes + 4 * elements;
    v.make = [c] {
      auto dp = std::make_shared<SwitchMLDataplane>(c);
      PipelineModel m;
      m.run = [dp](const std::vector<uint8_t>& frame, uint16_t dev_port) {
        PipelineEmitter out;
        dp->Process(dev_port, inasim::Span<const uint8_t>(frame.data(), frame.size()), 0, out);
        return out.result;
      };
      m.cell = [dp](const std::string& reg, uint32_t pipe, uint32_t index) { return ModelCell(*dp, reg, pipe, index); };
      m.counter_totals = [dp] { return ModelCounterTotals(*dp); };
      return m;
    };
    return v;
  };
  // Three workers (a slot completes with all three; duplicates retransmit),
  // 256 B packets; then 1024 B packets, the folded pipe's eleven passes;
  // then 256 B with every result dropped by the egress drop simulator; then
  // the same three over RoCE. (An
  // ingress drop probability is not compared: upstream's dropped packet
  // falls through to the forwarder, which the model does not follow; README.)
  b.variants = {variant("3 workers, 256 B", 3, 64), variant("3 workers, 1024 B", 3, 256),
                variant("3 workers, 256 B, egress drops", 3, 64, true),
                variant("3 workers over RoCE, 256 B", 3, 64, false, true),
                variant("3 workers over RoCE, 1024 B", 3, 256, false, true),
                variant("3 workers over RoCE, 256 B, egress drops", 3, 64, true, true)};
  b.ports = {kPipelineWorkerPorts[0], kPipelineWorkerPorts[1], kPipelineWorkerPorts[2], 0, 63};
  b.frame_bytes = *b.variants[0].frame_bytes;  // every variant sets its own
  b.fields = UdpFrameFields(three);
  return b;
}

}  // namespace inasim::p4::switchml
