// Conformance tests of the SwitchML model's RoCEv2 path (rdma_receiver.p4,
// rdma_sender.p4 and the controller's entries, p4lang/p4app-switchML@b5c74a04).
// Expected packets are built here byte by byte from the P4 header layouts
// (headers.p4:82-115); the model's serializer is never used for an expectation.
#include "protocols/switchml/dataplane/switchml_dataplane.h"
#include "tests/common/recording_emitter.h"
#include "tests/common/test_bytes.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sml = inasim::p4::switchml;
using namespace inasim::testing;

namespace {

constexpr Picoseconds kPass = 520'000;
using Out = inasim::testing::Emitted;
using Recorder = inasim::testing::RecordingEmitter;

std::array<uint8_t, 6> Mac(uint8_t last) { return {0x02, 0x00, 0x00, 0x00, 0x00, last}; }
uint32_t Ip(uint8_t last) { return 0x0a000000u | last; }
const std::array<uint8_t, 6> kSwitchMac = {0x02, 0x00, 0x00, 0x00, 0x00, 0xfe};
constexpr uint32_t kSwitchIp = 0x0a0000fe;
constexpr uint16_t kPortBase = 10;
constexpr uint32_t kIcrc = 0xdeadbeef;  // the worker NIC's ICRC; the switch carries it through

// Opcodes (types.p4:70).
constexpr uint8_t kFirst = 0x26, kMiddle = 0x27, kLast = 0x28, kLastImm = 0x29, kOnly = 0x2a, kOnlyImm = 0x2b;
constexpr uint8_t kSendOnly = 0x24;

// Worker w's queue pair q toward the switch, and the switch's toward w.
uint32_t SwitchQpn(int w, uint32_t q) { return 0x800000u | uint32_t(w) << 16 | q; }
uint32_t WorkerQpn(int w, uint32_t q) { return 0x100 * uint32_t(w + 1) + q; }
uint32_t WorkerPsn0(int w, uint32_t q) { return 1000 * uint32_t(w + 1) + 10 * q; }
uint32_t Rkey(int w) { return 0x5000 + uint32_t(w); }

// n workers, `qps` queue pairs each, messages of `ppm` 256 B packets.
sml::SwitchMLConfig RdmaConfig(int n, uint32_t ppm, uint32_t qps) {
  sml::SwitchMLConfig c;
  c.switch_mac = kSwitchMac;
  c.switch_ip = kSwitchIp;
  c.num_workers = uint8_t(n);
  c.elements_per_packet = 64;
  c.transport = sml::SwitchMLTransport::kRdma;
  c.message_size = ppm * 256;
  for (int i = 0; i < n; ++i) {
    sml::SwitchMLWorker w{uint16_t(i), uint16_t(kPortBase + i), Mac(uint8_t(i + 1)), Ip(uint8_t(i + 1)), Rkey(i), {}};
    for (uint32_t q = 0; q < qps; ++q) w.qpns_and_psns.emplace_back(WorkerQpn(i, q), WorkerPsn0(i, q));
    c.workers.push_back(w);
  }
  return c;
}

struct RocePacket {
  uint8_t opcode = kOnlyImm;
  uint32_t dst_qp = 0;
  uint32_t psn = 0;
  bool reth = false, imm = false;
  uint64_t addr = 0;
  uint32_t rkey = 0, len = 0;
  uint32_t immediate = 0;
  std::vector<int32_t> values;  // 64
};

bool HasReth(uint8_t op) { return op == kFirst || op == kOnly || op == kOnlyImm; }
bool HasImm(uint8_t op) { return op == kLastImm || op == kOnlyImm || op == 0x23 || op == 0x25; }

// Ethernet / IPv4 / UDP 4791 / BTH / [RETH] / [immediate] / data / ICRC.
Bytes Frame(const std::array<uint8_t, 6>& dst_mac, const std::array<uint8_t, 6>& src_mac, const Ipv4Udp& ip,
            const RocePacket& p, const std::vector<uint32_t>& data) {
  Bytes b;
  PutMac(b, dst_mac);
  PutMac(b, src_mac);
  Put16(b, 0x0800);
  const size_t l4 = 12 + (HasReth(p.opcode) ? 16 : 0) + (HasImm(p.opcode) ? 4 : 0) + data.size() * 4 + 4;
  PutIpv4Udp(b, ip, l4);
  b.push_back(p.opcode);
  b.push_back(0x40);  // se 0, migration_req 1, pad 0, tver 0
  Put16(b, 0xffff);   // partition key
  Put32(b, p.dst_qp & 0xffffff);
  Put32(b, p.psn & 0xffffff);
  if (HasReth(p.opcode)) {
    Put32(b, uint32_t(p.addr >> 32));
    Put32(b, uint32_t(p.addr));
    Put32(b, p.rkey);
    Put32(b, p.len);
  }
  if (HasImm(p.opcode)) Put32(b, p.immediate);
  for (uint32_t v : data) Put32(b, v);
  Put32(b, kIcrc);
  return b;
}

Bytes WorkerFrame(int w, const RocePacket& p) {
  std::vector<uint32_t> data(p.values.begin(), p.values.end());
  return Frame(kSwitchMac, Mac(uint8_t(w + 1)), {Ip(uint8_t(w + 1)), kSwitchIp, uint16_t(50000 + w), 4791, 0, 0x0011,
                                                 0x4000, 64, 0x02},
               p, data);
}

// The switch's write to worker `to` (rdma_sender.p4:52-239).
Bytes ResultFrame(int to, uint8_t opcode, uint32_t qpn, uint32_t psn, uint64_t addr, uint32_t len,
                  uint32_t immediate, const std::vector<uint32_t>& sum) {
  RocePacket r;
  r.opcode = opcode;
  r.dst_qp = qpn;
  r.psn = psn;
  r.addr = addr;
  r.rkey = Rkey(to);
  r.len = len;
  r.immediate = immediate;
  return Frame(Mac(uint8_t(to + 1)), kSwitchMac,
               {kSwitchIp, Ip(uint8_t(to + 1)), uint16_t(0x8000 | to), 4791, 0, 0x0001, 0x4000, 64, 0x02}, r, sum);
}

std::vector<int32_t> Values(int w, int packet) {
  std::vector<int32_t> v(64);
  for (int i = 0; i < 64; ++i) v[size_t(i)] = (w + 1) * 100000 + packet * 1000 + i * 7 - (i == 5 ? 2000000000 : 0);
  return v;
}

void Send(sml::SwitchMLDataplane& dp, Recorder& rec, int w, const RocePacket& p) {
  const Bytes b = WorkerFrame(w, p);
  dp.Process(uint16_t(kPortBase + w), inasim::Span<const uint8_t>(b.data(), b.size()), 0, rec);
}

// Worker w's packet k of a message on its queue pair q with pool index base
// `rkey_pool` (the RETH rkey: slot << 1 | set).
RocePacket MessagePacket(int w, uint32_t q, uint32_t k, uint32_t ppm, uint32_t rkey_pool, uint32_t psn0) {
  RocePacket p;
  p.opcode = ppm == 1 ? kOnlyImm : k == 0 ? kFirst : k + 1 == ppm ? kLastImm : kMiddle;
  p.dst_qp = SwitchQpn(w, q);
  p.psn = psn0 + k;
  p.addr = 0x7f0000001000ull + 0x10000ull * uint64_t(w);
  p.rkey = rkey_pool;
  p.len = ppm * 256;
  p.immediate = 0x00420000u;  // msg id 0x42, exponents 0
  p.values = Values(w, int(k));
  return p;
}

}  // namespace

// A 4-packet message from two workers: each
// packet is its own slot (pool index = rkey + 2k), and the last worker's
// packet k comes back to both workers as packet k of an RDMA write on their
// own queue pair, with the PSNs counting from the controller's initial PSN.
TEST(SwitchMLRdma, FourPacketMessageFromTwoWorkersComesBackAsWritesOnEachWorkersQp) {
  constexpr uint32_t kPpm = 4, kQp = 3;
  sml::SwitchMLDataplane dp(RdmaConfig(2, kPpm, 8));
  const uint32_t pool = kQp * kPpm * 2 | 1;  // message 3's slots, set 1
  for (uint32_t k = 0; k < kPpm; ++k) {
    Recorder rec;
    const RocePacket a = MessagePacket(0, kQp, k, kPpm, pool, 77);
    const RocePacket b = MessagePacket(1, kQp, k, kPpm, pool, 900);
    Send(dp, rec, 0, a);
    ASSERT_TRUE(rec.out.empty()) << "packet " << k;
    Send(dp, rec, 1, b);
    ASSERT_EQ(rec.out.size(), 2u) << "packet " << k;
    const auto sum = Sum({a.values, b.values});
    const uint8_t op = k == 0 ? kFirst : k + 1 == kPpm ? kLastImm : kMiddle;
    for (int to = 0; to < 2; ++to) {
      const Out& o = rec.out[size_t(to)];
      EXPECT_EQ(o.port, kPortBase + to);
      EXPECT_EQ(o.latency, 2 * kPass);
      // RETH of the triggering (worker 1's) first packet, rkey of the receiver;
      // immediate: msg id, e0, e1 (exponents of int32 data stay 0).
      const Bytes want = ResultFrame(to, op, WorkerQpn(to, kQp), WorkerPsn0(to, kQp) + k, b.addr, b.len,
                                     0x00420000u, sum);
      EXPECT_EQ(o.bytes, want) << "packet " << k << " to worker " << to;
    }
    // Slot of packet k: pool index rkey + 2k (rdma_receiver.p4:89).
    const uint32_t idx = pool + 2 * k;
    EXPECT_EQ(dp.WorkerBitmap(0, idx >> 1).second, 3u);
  }
  const auto state = nlohmann::json::parse(dp.DumpState())["rdma"];
  const std::string qi0 = std::to_string((0 << 9) | kQp), qi1 = std::to_string((1 << 9) | kQp);
  EXPECT_EQ(state["rdma_packet_counter"][qi0], kPpm);
  EXPECT_EQ(state["rdma_message_counter"][qi1], 1);
  EXPECT_EQ(state["receiver_data_register"][qi1][0], 900 + kPpm);  // next PSN
  EXPECT_EQ(state["rdma_send_counter"]["0"]["packets"], kPpm);
  EXPECT_EQ(state["rdma_send_counter"]["1"]["psn_register"][kQp], WorkerPsn0(1, kQp) + kPpm);
  EXPECT_EQ(dp.stats().broadcasts, kPpm);
}

// A single-packet message: ONLY_IMMEDIATE in, ONLY_IMMEDIATE out with RETH
// and immediate; the exponents the worker put in the immediate are maxed.
TEST(SwitchMLRdma, OnlyPacketCarriesRethAndImmediateWithMaxExponents) {
  sml::SwitchMLDataplane dp(RdmaConfig(2, 1, 4));
  Recorder rec;
  RocePacket a = MessagePacket(0, 2, 0, 1, 2 * 2, 5);
  a.immediate = 0x1234u << 16 | uint32_t(uint8_t(-3)) << 8 | 7;
  RocePacket b = MessagePacket(1, 2, 0, 1, 2 * 2, 6);
  b.immediate = 0x1234u << 16 | uint32_t(uint8_t(4)) << 8 | uint8_t(-9);
  Send(dp, rec, 0, a);
  Send(dp, rec, 1, b);
  ASSERT_EQ(rec.out.size(), 2u);
  const auto sum = Sum({a.values, b.values});
  const uint32_t imm = 0x1234u << 16 | 4u << 8 | 7u;  // max(-3, 4), max(7, -9)
  EXPECT_EQ(rec.out[0].bytes, ResultFrame(0, kOnlyImm, WorkerQpn(0, 2), WorkerPsn0(0, 2), b.addr, 256, imm, sum));
  EXPECT_EQ(rec.out[1].bytes, ResultFrame(1, kOnlyImm, WorkerQpn(1, 2), WorkerPsn0(1, 2), b.addr, 256, imm, sum));
}

// A PSN gap mid-message sets the error bit: that packet and every later one of
// the message are dropped before aggregation, even the one the gap skipped;
// the next message's first packet clears it.
TEST(SwitchMLRdma, PsnGapDropsTheRestOfTheMessageUntilTheNextFirstPacket) {
  constexpr uint32_t kPpm = 4;
  sml::SwitchMLDataplane dp(RdmaConfig(2, kPpm, 2));
  Recorder rec;
  Send(dp, rec, 0, MessagePacket(0, 1, 0, kPpm, 8, 100));  // psn 100
  Send(dp, rec, 0, MessagePacket(0, 1, 2, kPpm, 8, 100));  // psn 102: gap
  Send(dp, rec, 0, MessagePacket(0, 1, 1, kPpm, 8, 100));  // psn 101: in sequence, but the error bit is set
  EXPECT_EQ(dp.stats().rdma_sequence_drops, 2u);
  EXPECT_EQ(dp.stats().consumed, 1u);
  EXPECT_EQ(dp.WorkerBitmap(0, (8 + 2) >> 1).first, 0u);  // packet 1's slot untouched
  EXPECT_EQ(dp.WorkerBitmap(0, (8 + 4) >> 1).first, 0u);  // packet 2's
  const auto state = nlohmann::json::parse(dp.DumpState())["rdma"];
  EXPECT_EQ(state["rdma_sequence_violation_counter"]["1"], 2);
  // psn 101 was the expected one: the PSN moved on and the pool index grew
  // by 2, but the error bit stays set (saturating add).
  EXPECT_EQ(state["receiver_data_register"]["1"][0], 102);
  EXPECT_EQ(state["receiver_data_register"]["1"][1], 0x80000002u);
  // Retransmitted message: first packet resets the cell, the rest aggregate.
  for (uint32_t k = 0; k < kPpm; ++k) Send(dp, rec, 0, MessagePacket(0, 1, k, kPpm, 8, 200));
  EXPECT_EQ(dp.stats().rdma_sequence_drops, 2u);
  EXPECT_EQ(dp.WorkerBitmap(0, (8 + 6) >> 1).first, 1u);
  EXPECT_TRUE(rec.out.empty());
}

// What receive_roce does not match is forwarded: SEND opcodes, another
// partition key, a QPN without the worker's top bits, an unknown source.
TEST(SwitchMLRdma, ReceiveRoceMissesAreForwarded) {
  sml::SwitchMLDataplane dp(RdmaConfig(2, 1, 2));
  Recorder rec;
  RocePacket p = MessagePacket(0, 0, 0, 1, 0, 1);
  p.opcode = kSendOnly;
  Send(dp, rec, 0, p);
  p = MessagePacket(0, 0, 0, 1, 0, 1);
  p.dst_qp = 0x010000;  // top bits not 0x80 | id
  Send(dp, rec, 0, p);
  p = MessagePacket(0, 0, 0, 1, 0, 1);
  p.dst_qp = SwitchQpn(1, 0);  // worker 1's QPN from worker 0's IP
  Send(dp, rec, 0, p);
  ASSERT_EQ(rec.out.size(), 3u);
  for (const Out& o : rec.out) EXPECT_EQ(o.kind, Out::kRouted);
  EXPECT_EQ(dp.stats().forwarded, 3u);
  EXPECT_EQ(dp.stats().consumed, 0u);
}

// RoCEv2 frames are claimed only when the job is RDMA; UDP jobs leave them to
// the fabric.
TEST(SwitchMLRdma, RoceClaimedOnlyByRdmaJobs) {
  const Bytes b = WorkerFrame(0, MessagePacket(0, 0, 0, 1, 0, 1));
  const auto view = inasim::p4::ParseFrame(b.data(), b.size(), uint32_t(b.size()));
  sml::SwitchMLDataplane rdma(RdmaConfig(2, 1, 1));
  EXPECT_TRUE(rdma.Claims(view));
  sml::SwitchMLConfig udp = RdmaConfig(2, 1, 1);
  udp.transport = sml::SwitchMLTransport::kUdp;
  sml::SwitchMLDataplane plain(udp);
  EXPECT_FALSE(plain.Claims(view));
}

// The controller refuses message sizes that are not a power-of-two number of
// packets (rdma_sender.py:140); JSON names the key.
TEST(SwitchMLRdma, ConfigChecksMessageSizeAndQueuePairs) {
  auto c = RdmaConfig(2, 4, 2);
  c.message_size = 3 * 256;
  EXPECT_THROW(c.Validate(), std::invalid_argument);
  c = RdmaConfig(2, 4, 2);
  c.workers[1].qpns_and_psns.clear();
  EXPECT_THROW(c.Validate(), std::invalid_argument);
  const std::string json =
      R"({"switch_mac":"02:00:00:00:00:fe","switch_ip":"10.0.0.254","transport":"rdma","message_size":1024,)"
      R"("workers":[{"id":0,"port":1,"mac":"02:00:00:00:00:01","ip":"10.0.0.1","rkey":7,"qpns":[[256,5],[257,9]]},)"
      R"({"id":1,"port":2,"mac":"02:00:00:00:00:02","ip":"10.0.0.2","rkey":8,"qpns":[[512,0]]}]})";
  const auto parsed = sml::SwitchMLConfig::FromJson(json);
  EXPECT_EQ(parsed.transport, sml::SwitchMLTransport::kRdma);
  EXPECT_EQ(parsed.PacketsPerMessage(), 4u);
  EXPECT_EQ(parsed.workers[0].qpns_and_psns[1], std::make_pair(257u, 9u));
  try {
    sml::SwitchMLConfig::FromJson(R"({"switch_mac":"02:00:00:00:00:fe","switch_ip":"10.0.0.254","transport":"rdma",)"
                                  R"("message_size":1024,"workers":[{"id":0,"port":1,"mac":"02:00:00:00:00:01",)"
                                  R"("ip":"10.0.0.1","qpns":[[256]]}]})");
    FAIL() << "a one-element qpns pair was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("qpns[0]"), std::string::npos) << e.what();
  }
}

// Bad packets never crash the RoCE path: every prefix of a FIRST, a LAST with
// immediate and an ONLY with both is either dropped as truncated (shorter
// than its headers and 256 B of data) or, whole, aggregated; and a frame of
// the right length with garbage after the BTH is handled the same way.
TEST(SwitchMLRdma, TruncatedAndGarbledRoceFramesAreDroppedNotCrashed) {
  sml::SwitchMLDataplane dp(RdmaConfig(2, 4, 2));
  Recorder rec;
  uint64_t whole = 0, truncated = 0;
  for (const uint8_t op : {kFirst, kLastImm, kOnlyImm}) {
    RocePacket p = MessagePacket(0, 1, 0, 4, 8, 10);
    p.opcode = op;
    const Bytes full = WorkerFrame(0, p);
    const size_t need = 14 + 20 + 8 + 12 + (HasReth(op) ? 16 : 0) + (HasImm(op) ? 4 : 0) + 256;
    for (size_t len = 0; len <= full.size(); ++len) {
      const uint64_t before = dp.stats().malformed_dropped;
      dp.Process(kPortBase, inasim::Span<const uint8_t>(full.data(), len), 0, rec);
      if (len < need) {
        EXPECT_EQ(dp.stats().malformed_dropped, before + 1) << int(op) << " " << len;
      }
      whole += len >= need;
      truncated += len < need;
    }
    Bytes garbled = full;
    for (size_t i = 14 + 20 + 8 + 12; i < garbled.size(); ++i) garbled[i] = uint8_t(i * 37 + 11);
    dp.Process(kPortBase, inasim::Span<const uint8_t>(garbled.data(), garbled.size()), 0, rec);
  }
  EXPECT_GT(whole, 0u);
  EXPECT_EQ(dp.stats().malformed_dropped, truncated);
  EXPECT_EQ(dp.stats().processed, whole + truncated + 3);  // + the three garbled frames
}
