// Small harness for ns-3 integration tests: a fabric plus UDP senders and sinks
// on real host stacks, recording what arrived when.
#pragma once

#include "ina/addressing.h"
#include "ina/fabric.h"
#include "ina/runner.h"
#include "topology/topology.h"

#include "ns3/core-module.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4-header.h"
#include "ns3/socket.h"
#include "ns3/udp-socket-factory.h"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace inasim::testing {

inline constexpr uint64_t kUs = 1'000'000;  // ps

/// The text of the CSV `name` a run produced ("" if it produced none).
inline std::string Table(const RunResult& r, const std::string& name) {
  for (size_t i = 0; i < r.csv_names.size(); ++i)
    if (r.csv_names[i] == name) return r.csv_texts[i];
  return {};
}

/// A CSV's data rows (header dropped), each split at its commas.
inline std::vector<std::vector<std::string>> CsvRows(const std::string& csv) {
  std::vector<std::vector<std::string>> out;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::istringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    out.push_back(std::move(f));
  }
  return out;
}

/// Records every datagram a host receives on one UDP port.
class UdpSink {
 public:
  UdpSink(ns3::Ptr<ns3::Node> node, uint16_t port) {
    socket_ = ns3::Socket::CreateSocket(node, ns3::UdpSocketFactory::GetTypeId());
    socket_->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), port));
    socket_->SetIpRecvTos(true);
    socket_->SetRecvCallback(ns3::MakeCallback(&UdpSink::OnRecv, this));
  }
  std::vector<uint64_t> times_ps;
  std::vector<uint8_t> tos;
  std::vector<std::vector<uint8_t>> payloads;
  std::vector<uint32_t> from_ipv4;  ///< each datagram's source address

 private:
  void OnRecv(ns3::Ptr<ns3::Socket> s) {
    ns3::Ptr<ns3::Packet> p;
    ns3::Address from;
    while ((p = s->RecvFrom(from))) {
      times_ps.push_back(static_cast<uint64_t>(ns3::Simulator::Now().GetPicoSeconds()));
      from_ipv4.push_back(ns3::InetSocketAddress::ConvertFrom(from).GetIpv4().Get());
      ns3::SocketIpTosTag tag;
      tos.push_back(p->PeekPacketTag(tag) ? tag.GetTos() : 0);
      std::vector<uint8_t> b(p->GetSize());
      p->CopyData(b.data(), b.size());
      payloads.push_back(std::move(b));
    }
  }
  ns3::Ptr<ns3::Socket> socket_;
};

/// A UDP sender on one host.
class UdpSender {
 public:
  UdpSender(ns3::Ptr<ns3::Node> node, uint8_t tos = 0) {
    socket_ = ns3::Socket::CreateSocket(node, ns3::UdpSocketFactory::GetTypeId());
    socket_->Bind();
    tos_ = tos;
  }
  /// Sends `count` datagrams of `payload` bytes at `at_ps` (the NIC serialises them).
  void SendAt(uint64_t at_ps, uint32_t dst_host, uint16_t port, uint32_t payload, uint32_t count = 1) {
    ns3::Simulator::Schedule(ns3::PicoSeconds(at_ps), [this, dst_host, port, payload, count] {
      for (uint32_t i = 0; i < count; ++i) {
        std::vector<uint8_t> b(payload, 0);
        p4::StoreBe32(b.data(), i);  // datagram index, so tests can tell which arrived
        auto p = ns3::Create<ns3::Packet>(b.data(), payload);
        if (tos_) {  // as ns-3's TCP does for ECT: the IP layer reads the tag
          ns3::SocketIpTosTag tag;
          tag.SetTos(tos_);
          p->AddPacketTag(tag);
        }
        socket_->SendTo(p, 0, ns3::InetSocketAddress(ns3::Ipv4Address(HostIpv4(dst_host)), port));
      }
    });
  }
  void SendBytesAt(uint64_t at_ps, uint32_t dst_host, uint16_t port, std::vector<uint8_t> bytes) {
    ns3::Simulator::Schedule(ns3::PicoSeconds(at_ps), [this, dst_host, port, bytes] {
      socket_->SendTo(ns3::Create<ns3::Packet>(bytes.data(), static_cast<uint32_t>(bytes.size())), 0,
                      ns3::InetSocketAddress(ns3::Ipv4Address(HostIpv4(dst_host)), port));
    });
  }

 private:
  ns3::Ptr<ns3::Socket> socket_;
  uint8_t tos_ = 0;
};

/// Fixture: picosecond time, a fixed seed, and ns-3 torn down after each test.
class NetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EnsurePicosecondTime();
    ns3::RngSeedManager::SetSeed(1);
    ns3::RngSeedManager::SetRun(0);
  }
  void TearDown() override {
    sinks_.clear();
    senders_.clear();
    ns3::Simulator::Destroy();
    fabric_.reset();
  }
  Fabric& Build(topo::Topology t, const FabricConfig& c = {}) {
    topo_ = std::make_unique<topo::Topology>(std::move(t));
    fabric_ = std::make_unique<Fabric>(*topo_, c);
    return *fabric_;
  }
  UdpSink& Sink(uint32_t host, uint16_t port) {
    sinks_.push_back(std::make_unique<UdpSink>(fabric_->ip_host(host), port));
    return *sinks_.back();
  }
  UdpSender& Sender(uint32_t host, uint8_t tos = 0) {
    senders_.push_back(std::make_unique<UdpSender>(fabric_->ip_host(host), tos));
    return *senders_.back();
  }
  void RunFor(uint64_t ps) {
    ns3::Simulator::Stop(ns3::PicoSeconds(ps));
    ns3::Simulator::Run();
  }
  std::unique_ptr<topo::Topology> topo_;
  std::unique_ptr<Fabric> fabric_;
  std::vector<std::unique_ptr<UdpSink>> sinks_;
  std::vector<std::unique_ptr<UdpSender>> senders_;
};

inline topo::LinkSpec Link(double gbps, uint64_t delay_ps) {
  return topo::LinkSpec{static_cast<uint64_t>(gbps * 1e9), delay_ps};
}

/// A fabric with PFC on (`pfc`) at XOFF 8,000 B and XON 4,000 B: the
/// thresholds the small PFC tests use (a handful of 1,042 B frames).
inline FabricConfig SmallPfc(bool pfc = true) {
  FabricConfig c;
  c.forwarding.pfc_enabled = pfc;
  c.forwarding.pfc_xoff_bytes = 8000;
  c.forwarding.pfc_xon_bytes = 4000;
  return c;
}

}  // namespace inasim::testing
