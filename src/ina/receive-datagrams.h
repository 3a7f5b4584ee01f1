// The hosts' receive callback: drain a UDP socket, each datagram copied into
// a buffer the host reuses (grown to the largest seen, so no allocation per
// packet once warmed up) and handed to `handle(data, len)`, inlined.
#pragma once

#include "ns3/packet.h"
#include "ns3/socket.h"

#include <cstdint>
#include <vector>

namespace inasim {

template <typename Handle>
void ReceiveDatagrams(ns3::Socket& socket, std::vector<uint8_t>& rx, Handle&& handle) {
  ns3::Ptr<ns3::Packet> p;
  while ((p = socket.Recv())) {
    const uint32_t len = p->GetSize();
    if (rx.size() < len) rx.resize(len);
    p->CopyData(rx.data(), len);
    handle(rx.data(), len);
  }
}

}  // namespace inasim
