#include "ina/host-endpoint.h"

#include "ina/addressing.h"
#include "ina/ina-net-device.h"
#include "ina/raw-header.h"
#include "p4model/common/frame.h"

#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/packet.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace inasim {

namespace {
constexpr uint32_t kHeadBytes = p4::kEthernetBytes + p4::kIpv4MinBytes + p4::kUdpBytes;
}

InaNetDevice& HostNic(ns3::Node& host) {
  for (uint32_t i = 0; i < host.GetNDevices(); ++i)
    if (auto* d = dynamic_cast<InaNetDevice*>(ns3::PeekPointer(host.GetDevice(i)))) return *d;
  throw std::runtime_error("node " + std::to_string(host.GetId()) + " has no InaNetDevice");
}

void HostEndpoint::Open(InaNetDevice& nic, uint16_t port, Handler handler) {
  Close();
  if (!nic.BindEndpoint(port, this))
    throw std::runtime_error("host endpoint: UDP port " + std::to_string(port) + " is taken on this host");
  nic_ = &nic;
  port_ = port;
  tx_queue_ = nic.OpenTxQueue(port);
  handler_ = std::move(handler);
}

void HostEndpoint::Close() {
  if (nic_) nic_->UnbindEndpoint(port_);
  nic_ = nullptr;
}

bool HostEndpoint::SendTo(uint32_t dst_ip, uint16_t dst_port, const uint8_t* payload, uint32_t len, uint8_t tos) {
  if (!nic_) return false;
  const uint32_t bytes = kHeadBytes + len;
  if (tx_.size() < bytes) tx_.resize(bytes);
  uint8_t* f = tx_.data();
  MacForIpv4(dst_ip).CopyTo(f);
  nic_->mac().CopyTo(f + 6);
  p4::StoreBe16(f + 12, p4::kEtherTypeIpv4);
  uint8_t* ip = f + p4::kEthernetBytes;
  ip[0] = 0x45;
  ip[1] = tos;
  p4::StoreBe16(ip + 2, static_cast<uint16_t>(p4::kIpv4MinBytes + p4::kUdpBytes + len));
  p4::StoreBe16(ip + 4, nic_->NextIpv4Identification(dst_ip, p4::kIpProtoUdp));
  p4::StoreBe16(ip + 6, 0);  // may fragment, offset 0
  ip[8] = ttl_;
  ip[9] = p4::kIpProtoUdp;
  p4::StoreBe16(ip + 10, 0);
  p4::StoreBe32(ip + 12, nic_->host_ipv4());
  p4::StoreBe32(ip + 16, dst_ip);
  uint8_t* udp = ip + p4::kIpv4MinBytes;
  p4::StoreBe16(udp, port_);
  p4::StoreBe16(udp + 2, dst_port);
  p4::StoreBe16(udp + 4, static_cast<uint16_t>(p4::kUdpBytes + len));
  p4::StoreBe16(udp + 6, 0);
  if (len) std::memcpy(f + kHeadBytes, payload, len);
  if (dst_ip == nic_->host_ipv4()) {
    // To this host (a co-located parameter server): the host stack's
    // loopback, not the wire; delivered as its own event, as a receive is.
    InaNetDevice* nic = nic_;
    ns3::Simulator::ScheduleNow([nic, frame = MakeFrame(f, bytes)] { nic->DeliverLocal(*frame); });
    return true;
  }
  p4::FrameView view;  // hosts never mark, so only the size matters here
  view.frame_bytes = bytes;
  return nic_->EnqueueFrame(MakeFrame(f, bytes), view, InaNetDevice::kNoPort, nic_->SourceAt(p4::kIpProtoUdp, port_),
                            nullptr, tx_queue_);
}

// A frame whose bytes after its first 64 are all zero (background traffic:
// headers, a sequence number, zeros) keeps them as ns-3's zero area, as the
// socket's zero-filled packet did: a queued copy then costs ~100 B of memory,
// not the frame's size (the 1,024-host permutation queues millions).
ns3::Ptr<ns3::Packet> HostEndpoint::MakeFrame(const uint8_t* f, uint32_t bytes) {
  uint32_t end = bytes;
  while (end > RawHeader::kMaxBytes && f[end - 1] == 0) --end;
  if (end > RawHeader::kMaxBytes) return ns3::Create<ns3::Packet>(f, bytes);
  ns3::Ptr<ns3::Packet> p = ns3::Create<ns3::Packet>(bytes - end);
  p->AddHeader(RawHeader(f, end));
  return p;
}

void HostEndpoint::Deliver(const uint8_t* frame, uint32_t frame_bytes) const {
  const uint8_t* ip = frame + p4::kEthernetBytes;
  DatagramInfo info;
  info.tos = ip[1];
  info.src_ip = p4::LoadBe32(ip + 12);
  info.dst_ip = p4::LoadBe32(ip + 16);
  info.src_port = p4::LoadBe16(ip + p4::kIpv4MinBytes);
  info.dst_port = port_;
  // As ns-3's UDP: the payload is what the IPv4 length leaves after the UDP
  // header (the device cut the frame there).
  handler_(frame + kHeadBytes, frame_bytes - kHeadBytes, info);
}

}  // namespace inasim
