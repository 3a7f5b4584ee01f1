// The SwitchML model hosted by the ns-3 switch: workers on real UDP sockets
// send one slot's packets through the fabric; the switch (knowing nothing of
// SwitchML) hands them to the model, which multicasts the exact sums back,
// one copy per worker with that worker's addresses, after its pipeline passes.
#include "net_harness.h"

#include "p4model/switchml/config.h"
#include "p4model/switchml/switchml_dataplane.h"

#include <array>

using namespace inasim;
using namespace inasim::testing;
namespace sml = inasim::p4::switchml;

namespace {

constexpr uint32_t kSwitchIp = 0x0afffffe;  // 10.255.255.254: not a host
constexpr uint16_t kWorkerPortBase = 20000;

std::array<uint8_t, 6> MacOf(uint32_t ip) {
  std::array<uint8_t, 6> m{};
  MacForIpv4(ip).CopyTo(m.data());
  return m;
}

/// switchml_h (msg_type 0, 256 B) + exponents + 64 big-endian int32.
std::vector<uint8_t> Payload(uint32_t slot, const std::vector<int32_t>& values) {
  std::vector<uint8_t> b(10 + 4 * values.size(), 0);
  b[0] = 0x01;  // msg_type 0 | size 256 B
  b[1] = 3;     // job
  p4::StoreBe32(&b[2], 0xabc);
  p4::StoreBe16(&b[6], static_cast<uint16_t>(slot & 0x3fff));
  for (size_t i = 0; i < values.size(); ++i) p4::StoreBe32(&b[10 + 4 * i], static_cast<uint32_t>(values[i]));
  return b;
}

class SwitchMLOnNs3 : public NetTest {};

TEST_F(SwitchMLOnNs3, ThreeWorkersGetTheExactSumThroughTheFabric) {
  constexpr int kWorkers = 3;
  Fabric& f = Build(topo::BuildSingleRack(kWorkers, Link(100, 1 * kUs)));
  sml::SwitchMLConfig c;
  c.switch_ip = kSwitchIp;
  c.switch_mac = MacOf(kSwitchIp);
  c.num_workers = kWorkers;
  c.packet_size = 256;
  for (int w = 0; w < kWorkers; ++w)
    c.workers.push_back({static_cast<uint16_t>(w), topo_->ports(static_cast<uint32_t>(w)).at(0).peer_port,
                         MacOf(HostIpv4(static_cast<uint32_t>(w))), HostIpv4(static_cast<uint32_t>(w))});
  f.switch_node(0).SetDataplane(std::make_unique<sml::SwitchMLDataplane>(c));

  std::vector<std::vector<int32_t>> data(kWorkers, std::vector<int32_t>(64));
  for (int w = 0; w < kWorkers; ++w)
    for (int i = 0; i < 64; ++i) data[w][i] = (w + 1) * 1000 + i - (w == 2 ? 0x7fffffff : 0);
  // Every result copy carries the UDP ports of the packet that completed the
  // slot, swapped (upstream behaviour): so, as with the client library, every
  // worker uses the same UDP port, and the result arrives on it.
  std::vector<ns3::Ptr<ns3::Socket>> tx;
  for (int w = 0; w < kWorkers; ++w) {
    auto s = ns3::Socket::CreateSocket(f.host(static_cast<uint32_t>(w)), ns3::UdpSocketFactory::GetTypeId());
    s->SetAttribute("IpTtl", ns3::UintegerValue(64));
    ASSERT_EQ(s->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), kWorkerPortBase)), 0);
    tx.push_back(s);
    const auto bytes = Payload(5, data[w]);
    ns3::Simulator::Schedule(ns3::PicoSeconds(w * 200'000), [s, bytes, w] {
      s->SendTo(ns3::Create<ns3::Packet>(bytes.data(), static_cast<uint32_t>(bytes.size())), 0,
                ns3::InetSocketAddress(ns3::Ipv4Address(kSwitchIp), static_cast<uint16_t>(0xbee0 + w)));
    });
  }
  RunFor(100 * kUs);

  auto* dp = dynamic_cast<sml::SwitchMLDataplane*>(f.switch_node(0).dataplane());
  ASSERT_NE(dp, nullptr);
  EXPECT_EQ(dp->stats().broadcasts, 1u);
  EXPECT_EQ(dp->last_passes(), 2u);  // 256 B: CONSUME0, then HARVEST7 for the completing packet
  EXPECT_EQ(f.switch_node(0).counters().dataplane_in, 3u);
  EXPECT_EQ(f.switch_node(0).counters().dataplane_out, 3u);
  for (int w = 0; w < kWorkers; ++w) {
    ns3::Ptr<ns3::Packet> p = tx[w]->Recv();
    ASSERT_TRUE(p) << "worker " << w << " got no result";
    std::vector<uint8_t> b(p->GetSize());
    p->CopyData(b.data(), b.size());
    ASSERT_EQ(b.size(), 10u + 256);
    EXPECT_EQ(p4::LoadBe16(&b[6]) & 0x3fff, 5u);  // the same slot
    for (int i = 0; i < 64; ++i) {
      const uint32_t sum = static_cast<uint32_t>(data[0][i]) + static_cast<uint32_t>(data[1][i]) +
                           static_cast<uint32_t>(data[2][i]);  // int32 wraps modulo 2^32
      ASSERT_EQ(p4::LoadBe32(&b[10 + 4 * i]), sum) << "worker " << w << " element " << i;
    }
    EXPECT_FALSE(tx[w]->Recv());  // exactly one copy each
  }
}

}  // namespace
