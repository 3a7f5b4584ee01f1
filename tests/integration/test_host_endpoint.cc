// The kernel-bypass host endpoint (src/ina/host-endpoint.h): the frames it
// writes are, byte for byte and at the same times, the frames the host's
// ns-3 UDP socket wrote (the wire of every run stays as it was, issue 28);
// it receives its port's datagrams with their headers' fields and leaves
// every other frame to the ns-3 stack.
#include "net_harness.h"

#include "ina/host-endpoint.h"
#include "ina/ina-net-device.h"

#include <stdexcept>

using namespace inasim;
using namespace inasim::testing;

namespace {

struct SentFrame {
  uint64_t at_ps;
  std::vector<uint8_t> bytes;
};

class HostEndpointTest : public NetTest {
 protected:
  /// Every frame host `h`'s NIC starts on the wire, with its bytes.
  std::vector<SentFrame>& Capture(uint32_t h) {
    captured_.emplace_back();
    auto* out = &captured_.back();
    fabric_->device(h, 0).TraceConnectWithoutContext(
        "TxStart", ns3::MakeCallback(&HostEndpointTest::OnTx).Bind(out));
    return *out;
  }
  static void OnTx(std::vector<SentFrame>* out, ns3::Ptr<const ns3::Packet> p, uint64_t) {
    std::vector<uint8_t> b(p->GetSize());
    p->CopyData(b.data(), b.size());
    out->push_back({static_cast<uint64_t>(ns3::Simulator::Now().GetPicoSeconds()), std::move(b)});
  }
  /// Two datagrams to host 1, one to host 2 (TOS 0x0a), one more to host 1,
  /// and a limited broadcast, from host 0's ns-3 socket or its endpoint.
  std::vector<SentFrame> SendSequence(bool endpoint) {
    Build(topo::BuildSingleRack(3, Link(100, 1 * kUs)));
    std::vector<SentFrame>& frames = Capture(0);
    const std::vector<uint8_t> a = {1, 2, 3, 4, 5}, b(300, 0x5a);
    struct Item {
      uint32_t dst;
      const std::vector<uint8_t>* payload;
      uint8_t tos;
    };
    const std::vector<Item> items = {{HostIpv4(1), &a, 0},
                                     {HostIpv4(1), &b, 0},
                                     {HostIpv4(2), &a, 0x0a},
                                     {HostIpv4(1), &a, 0},
                                     {0xffffffffu, &b, 0}};
    HostEndpoint ep;
    ns3::Ptr<ns3::Socket> socket;
    if (endpoint) {
      ep.Open(fabric_->device(0, 0), 4000, [](const uint8_t*, uint32_t, const DatagramInfo&) {});
    } else {
      socket = ns3::Socket::CreateSocket(fabric_->ip_host(0), ns3::UdpSocketFactory::GetTypeId());
      socket->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), 4000));
      socket->SetAllowBroadcast(true);
    }
    ns3::Simulator::Schedule(ns3::PicoSeconds(3 * kUs), [&] {
      for (const Item& it : items) {
        if (endpoint) {
          ep.SendTo(it.dst, 5000, it.payload->data(), static_cast<uint32_t>(it.payload->size()), it.tos);
        } else {
          ns3::InetSocketAddress to(ns3::Ipv4Address(it.dst), 5000);
          to.SetTos(it.tos);
          socket->SendTo(ns3::Create<ns3::Packet>(it.payload->data(), static_cast<uint32_t>(it.payload->size())), 0,
                         to);
        }
      }
    });
    RunFor(20 * kUs);
    if (socket) socket->Close();
    return frames;
  }
  std::deque<std::vector<SentFrame>> captured_;
};

TEST_F(HostEndpointTest, WritesTheFramesTheNs3SocketWroteAtTheSameTimes) {
  const std::vector<SentFrame> socket_frames = SendSequence(false);
  TearDown();
  SetUp();
  const std::vector<SentFrame> endpoint_frames = SendSequence(true);
  ASSERT_EQ(socket_frames.size(), 5u);
  ASSERT_EQ(endpoint_frames.size(), socket_frames.size());
  for (size_t i = 0; i < socket_frames.size(); ++i) {
    EXPECT_EQ(endpoint_frames[i].at_ps, socket_frames[i].at_ps) << "frame " << i;
    EXPECT_EQ(endpoint_frames[i].bytes, socket_frames[i].bytes) << "frame " << i;
  }
  // What those bytes are: identification per destination (0, 1 to host 1;
  // 0 to host 2; 2 to host 1 again), the TOS, TTL 64, no checksums.
  const auto id = [&](size_t i) { return p4::LoadBe16(endpoint_frames[i].bytes.data() + 14 + 4); };
  EXPECT_EQ(id(0), 0);
  EXPECT_EQ(id(1), 1);
  EXPECT_EQ(id(2), 0);
  EXPECT_EQ(id(3), 2);
  EXPECT_EQ(endpoint_frames[2].bytes[14 + 1], 0x0a);
  EXPECT_EQ(endpoint_frames[0].bytes[14 + 8], 64);
  EXPECT_EQ(p4::LoadBe16(endpoint_frames[0].bytes.data() + 14 + 10), 0);
  EXPECT_EQ(p4::LoadBe32(endpoint_frames[4].bytes.data() + 14 + 16), 0xffffffffu);
}

TEST_F(HostEndpointTest, ReceivesItsPortWithTheHeadersFieldsAndLeavesTheRestToTheStack) {
  Build(topo::BuildSingleRack(2, Link(100, 1 * kUs)));
  std::vector<std::vector<uint8_t>> got;
  std::vector<DatagramInfo> infos;
  HostEndpoint ep;
  ep.Open(fabric_->device(1, 0), 6000, [&](const uint8_t* p, uint32_t len, const DatagramInfo& d) {
    got.emplace_back(p, p + len);
    infos.push_back(d);
  });
  UdpSink& other_port = Sink(1, 6001);
  HostEndpoint sender;
  sender.Open(fabric_->device(0, 0), 7000, [](const uint8_t*, uint32_t, const DatagramInfo&) {});
  const std::vector<uint8_t> a = {9, 8, 7};
  ns3::Simulator::Schedule(ns3::PicoSeconds(kUs), [&] {
    sender.SendTo(HostIpv4(1), 6000, a.data(), 3, 0x02);
    sender.SendTo(HostIpv4(1), 6001, a.data(), 3);
    sender.SendTo(HostIpv4(1), 6000, a.data(), 2);
    sender.SendTo(HostIpv4(0), 6000, a.data(), 3);  // not for host 1: never reaches it
  });
  RunFor(20 * kUs);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], a);
  EXPECT_EQ(got[1], std::vector<uint8_t>(a.begin(), a.begin() + 2));
  EXPECT_EQ(infos[0].src_ip, HostIpv4(0));
  EXPECT_EQ(infos[0].dst_ip, HostIpv4(1));
  EXPECT_EQ(infos[0].src_port, 7000);
  EXPECT_EQ(infos[0].dst_port, 6000);
  EXPECT_EQ(infos[0].tos, 0x02);
  // (Limited broadcasts are accepted too: a switch forwards them only under
  // a program that replicates them, Canary's, whose goldens cover them.)
  ASSERT_EQ(other_port.payloads.size(), 1u);  // the ns-3 socket on another port still gets its datagram
  EXPECT_EQ(other_port.payloads[0], a);
}

TEST_F(HostEndpointTest, AClosedPortGoesBackToTheStackAndATakenPortIsRefused) {
  Build(topo::BuildSingleRack(2, Link(100, 1 * kUs)));
  HostEndpoint ep, again;
  ep.Open(fabric_->device(1, 0), 6000, [](const uint8_t*, uint32_t, const DatagramInfo&) {});
  EXPECT_THROW(again.Open(fabric_->device(1, 0), 6000, [](const uint8_t*, uint32_t, const DatagramInfo&) {}),
               std::runtime_error);
  ep.Close();
  UdpSink& sink = Sink(1, 6000);
  Sender(0).SendAt(kUs, 1, 6000, 100);
  RunFor(20 * kUs);
  EXPECT_EQ(sink.payloads.size(), 1u);
}

/// The order host 0's NIC put 8 frames on the wire, each named by its sender
/// (A, B: two endpoints; S: the ns-3 stack's UDP socket) and its number:
/// A sends 4, B 2 and the socket 2, all at once.
std::string WireOrder(const std::vector<SentFrame>& frames) {
  std::string order;
  for (const SentFrame& f : frames) {
    const uint8_t* udp = f.bytes.data() + 14 + 20;
    const uint16_t port = static_cast<uint16_t>(udp[0] << 8 | udp[1]);
    order += port == 4000 ? 'A' : port == 4001 ? 'B' : 'S';
    order += static_cast<char>('0' + udp[8]);
    order += ' ';
  }
  return order;
}

TEST_F(HostEndpointTest, EachEndpointAndTheStackHaveATransmitQueueServedRoundRobin) {
  for (const bool per_endpoint : {true, false}) {
    FabricConfig c;
    c.host_port.tx_queue_per_endpoint = per_endpoint;
    Build(topo::BuildSingleRack(2, Link(100, 1 * kUs)), c);
    std::vector<SentFrame>& frames = Capture(0);
    HostEndpoint a, b;
    a.Open(fabric_->device(0, 0), 4000, [](const uint8_t*, uint32_t, const DatagramInfo&) {});
    b.Open(fabric_->device(0, 0), 4001, [](const uint8_t*, uint32_t, const DatagramInfo&) {});
    auto socket = ns3::Socket::CreateSocket(fabric_->ip_host(0), ns3::UdpSocketFactory::GetTypeId());
    socket->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), 4002));
    ns3::Simulator::Schedule(ns3::PicoSeconds(3 * kUs), [&] {
      uint8_t n[1000] = {};
      for (uint8_t i = 1; i <= 4; ++i) a.SendTo(HostIpv4(1), 5000, &(n[0] = i), sizeof n);
      for (uint8_t i = 1; i <= 2; ++i) b.SendTo(HostIpv4(1), 5000, &(n[0] = i), sizeof n);
      for (uint8_t i = 1; i <= 2; ++i)
        socket->SendTo(ns3::Create<ns3::Packet>(&(n[0] = i), sizeof n), 0,
                       ns3::InetSocketAddress(ns3::Ipv4Address(HostIpv4(1)), 5000));
    });
    RunFor(20 * kUs);
    socket->Close();
    // A1 finds the wire idle; then the stack's queue (0), A's, B's in turn,
    // each queue a frame at a time; shared: one FIFO in the order sent.
    EXPECT_EQ(WireOrder(frames), per_endpoint ? "A1 S1 A2 B1 S2 A3 B2 A4 " : "A1 A2 A3 A4 B1 B2 S1 S2 ")
        << (per_endpoint ? "per_endpoint" : "shared");
    // The NIC's counters add its queues up: 7 frames waited, at most all 7 at once.
    const auto q = fabric_->device(0, 0).queue_counters();
    EXPECT_EQ(q.enqueued, 7u);
    EXPECT_EQ(q.max_bytes, 7u * (1000 + 8 + 20 + 14));
    captured_.clear();
    ns3::Simulator::Destroy();
  }
}

}  // namespace
