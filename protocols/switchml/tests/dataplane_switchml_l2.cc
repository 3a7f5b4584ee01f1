// SwitchML's regular-traffic path with `forwarding` "l2": the ARP/ICMP
// responder and the forwarder (p4lang/p4app-switchML@b5c74a04:dev_root/p4/
// arp_icmp_responder.p4, forwarder.p4, with the controller's entries). Every
// expected frame is built here byte by byte from those actions.
#include "protocols/switchml/dataplane/switchml_dataplane.h"
#include "tests/common/recording_emitter.h"
#include "tests/common/test_bytes.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace sml = inasim::p4::switchml;
using namespace inasim::testing;

namespace {

using Out = Emitted;
const std::array<uint8_t, 6> kSwitchMac = {0x02, 0x00, 0x00, 0x00, 0x00, 0xfe};
const std::array<uint8_t, 6> kStranger = {0x02, 0x00, 0x00, 0x00, 0x00, 0x77};
constexpr uint32_t kSwitchIp = 0x0a0000fe;
std::array<uint8_t, 6> WorkerMac(int w) { return {0x02, 0x00, 0x00, 0x00, 0x00, uint8_t(w + 1)}; }

/// Three workers on simulator ports 10, 11, 12; `forwarding` as given.
sml::SwitchMLDataplane Switch(const std::string& forwarding, const std::string& extra = "") {
  return sml::SwitchMLDataplane(sml::SwitchMLConfig::FromJson(
      R"({"switch_mac":"02:00:00:00:00:fe","switch_ip":"10.0.0.254","forwarding":")" + forwarding + "\"" + extra +
      R"(,"workers":[{"id":0,"port":10,"mac":"02:00:00:00:00:01","ip":"10.0.0.1"},
                     {"id":1,"port":11,"mac":"02:00:00:00:00:02","ip":"10.0.0.2"},
                     {"id":2,"port":12,"mac":"02:00:00:00:00:03","ip":"10.0.0.3"}]})"));
}

/// An ARP request (hw 1, proto IPv4, lengths 6/4) from `mac`/`ip` for `target`.
Bytes ArpRequest(const std::array<uint8_t, 6>& mac, uint32_t ip, uint32_t target) {
  Bytes b(6, 0xff);
  PutMac(b, mac);
  Put16(b, 0x0806);
  Put16(b, 1);
  Put16(b, 0x0800);
  b.push_back(6);
  b.push_back(4);
  Put16(b, 1);
  PutMac(b, mac);
  Put32(b, ip);
  for (int i = 0; i < 6; ++i) b.push_back(0);
  Put32(b, target);
  for (int i = 0; i < 18; ++i) b.push_back(0);  // Ethernet padding to 60 bytes
  return b;
}

std::vector<Out> Send(sml::SwitchMLDataplane& dp, uint16_t port, const Bytes& b, bool* claimed = nullptr) {
  RecordingEmitter rec;
  const inasim::p4::FrameView v = inasim::p4::ParseFrame(b.data(), std::min<size_t>(b.size(), 64), uint32_t(b.size()));
  if (claimed) *claimed = dp.Claims(v);
  dp.Process(port, inasim::Span<const uint8_t>(b.data(), b.size()), 0, rec);
  return rec.out;
}

TEST(SwitchMLL2, ArpRequestForTheSwitchIsAnsweredToTheAsker) {
  auto dp = Switch("l2");
  // Worker 1 asks who has 10.0.0.254 (arp_icmp_responder.py:61-97 entry).
  const Bytes req = ArpRequest(WorkerMac(1), 0x0a000002, kSwitchIp);
  bool claimed = false;
  const auto o = Send(dp, 11, req, &claimed);
  EXPECT_TRUE(claimed);
  // send_arp_reply (:40-51): Ethernet to the asker from the switch, opcode 2,
  // target = the asker, sender = the switch; the padding untouched.
  Bytes want = req;
  for (int i = 0; i < 6; ++i) want[i] = WorkerMac(1)[i], want[6 + i] = kSwitchMac[i];
  want[21] = 2;
  for (int i = 0; i < 6; ++i) want[22 + i] = kSwitchMac[i], want[32 + i] = WorkerMac(1)[i];
  Put32(&want[28], kSwitchIp);
  Put32(&want[38], 0x0a000002);
  // The forwarder then matches the new destination (worker 1's MAC -> port 11),
  // overriding send_back's port with the same one: one unicast copy.
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].kind, Out::kUnicast);
  EXPECT_EQ(o[0].port, 11);
  EXPECT_EQ(o[0].bytes, want);
  EXPECT_EQ(dp.stats().arp_replies, 1u);
}

TEST(SwitchMLL2, ArpFromAnUnknownMacIsAnsweredAndFlooded) {
  auto dp = Switch("l2");
  // The reply's destination (the asker) misses `forward`: flood(0x8000) on
  // top of send_back's unicast (both set for the traffic manager).
  const auto o = Send(dp, 12, ArpRequest(kStranger, 0x0a000063, kSwitchIp));
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].kind, Out::kUnicast);
  EXPECT_EQ(o[0].port, 12);
  EXPECT_EQ(o[1].kind, Out::kMulticast);
  EXPECT_EQ(o[1].ports, (std::vector<uint16_t>{10, 11}));  // the ingress port's node pruned
  EXPECT_EQ(o[1].bytes, o[0].bytes);
  // An ARP request for another address is not answered: flooded as is.
  const Bytes other = ArpRequest(WorkerMac(0), 0x0a000001, 0x0a000002);
  const auto f = Send(dp, 10, other);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, Out::kMulticast);
  EXPECT_EQ(f[0].ports, (std::vector<uint16_t>{11, 12}));
  EXPECT_EQ(f[0].bytes, other);
  EXPECT_EQ(dp.stats().arp_replies, 1u);
}

TEST(SwitchMLL2, IcmpEchoToTheSwitchIsAnsweredWithChecksumZero) {
  auto dp = Switch("l2");
  Bytes req;
  PutMac(req, kSwitchMac);
  PutMac(req, WorkerMac(2));
  Put16(req, 0x0800);
  // IPv4 (protocol 1, total length 28); its 8 "UDP" bytes become the ICMP
  // echo request: type 8, code 0, checksum 0xabcd, id 0x1234, sequence 1.
  PutIpv4Udp(req, {0x0a000003, kSwitchIp, 0, 0, 0, 0x1111, 0, 64, 0, /*ICMP*/ 1}, 0);
  const uint8_t icmp[8] = {8, 0, 0xab, 0xcd, 0x12, 0x34, 0x00, 0x01};
  std::copy(std::begin(icmp), std::end(icmp), req.begin() + 34);
  const auto o = Send(dp, 12, req);
  // send_icmp_echo_reply (:53-64): MACs and IPs swapped (the IPv4 checksum
  // stays valid), type 0, ICMP checksum 0 (upstream does not recompute it).
  Bytes want = req;
  for (int i = 0; i < 6; ++i) want[i] = WorkerMac(2)[i], want[6 + i] = kSwitchMac[i];
  Put32(&want[26], kSwitchIp);
  Put32(&want[30], 0x0a000003);
  want[34] = 0;
  want[36] = want[37] = 0;
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].port, 12);
  EXPECT_EQ(o[0].bytes, want);
  EXPECT_EQ(Checksum(o[0].bytes.data() + 14, 20), 0);  // the IPv4 header sum still checks
  EXPECT_EQ(dp.stats().icmp_replies, 1u);
}

TEST(SwitchMLL2, OtherTrafficIsSwitchedByDestinationMac) {
  auto dp = Switch("l2", R"(,"forward":[{"mac":"02:00:00:00:00:77","port":30}],"flood_ports":[10,11,12,30])");
  Bytes f;
  PutMac(f, kStranger);
  PutMac(f, WorkerMac(0));
  Put16(f, 0x0800);
  PutIpv4Udp(f, {0x0a000001, 0x0a000063, 5000, 6000}, 4);
  Put32(f, 0xdeadbeef);
  // set_egress_port: the listed MAC's port, the frame untouched.
  auto o = Send(dp, 10, f);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].kind, Out::kUnicast);
  EXPECT_EQ(o[0].port, 30);
  EXPECT_EQ(o[0].bytes, f);
  // The configured entries replace the workers': worker 2's MAC now floods.
  for (int i = 0; i < 6; ++i) f[i] = WorkerMac(2)[i];
  o = Send(dp, 30, f);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].ports, (std::vector<uint16_t>{10, 11, 12}));
  EXPECT_EQ(dp.stats().l2_flooded, 1u);
  EXPECT_EQ(dp.stats().l2_unicast, 1u);
}

TEST(SwitchMLL2, RoutedModeHandsRegularFramesToTheFabric) {
  auto dp = Switch("routed");
  bool claimed = true;
  const Bytes req = ArpRequest(WorkerMac(1), 0x0a000002, kSwitchIp);
  Send(dp, 11, req, &claimed);
  EXPECT_FALSE(claimed);
  const auto o = Send(dp, 11, req);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].kind, Out::kRouted);
  EXPECT_EQ(o[0].bytes, req);
  EXPECT_EQ(dp.stats().arp_replies, 0u);
}

TEST(SwitchMLL2, ConfigErrorsNameTheKey) {
  for (const char* bad : {R"(,"forward":[{"mac":"02:00:00:00:00:77"}])", R"(,"forward":[{"mac":"zz","port":1}])",
                          R"(,"forward":[{"mac":"02:00:00:00:00:77","port":70000}])", R"(,"flood_ports":[1,-1])",
                          R"(,"forward":[{"mac":"02:00:00:00:00:77","port":1,"vlan":2}])"}) {
    try {
      Switch("l2", bad);
      ADD_FAILURE() << bad;
    } catch (const std::invalid_argument& e) {
      const std::string m = e.what();
      EXPECT_TRUE(m.find("forward[0]") != std::string::npos || m.find("flood_ports[1]") != std::string::npos) << m;
    }
  }
  EXPECT_THROW(Switch("bridged"), std::invalid_argument);
}

}  // namespace
