#include "p4model/common/frame.h"

#include <gtest/gtest.h>

#include <vector>

using namespace inasim::p4;

namespace {
// Ethernet + IPv4 (10.0.0.1 -> 10.0.0.2, DSCP 56, ECT(0)) + UDP 4791 -> 48879.
std::vector<uint8_t> UdpFrame() {
  std::vector<uint8_t> f = {
      0x02, 0x00, 0x0a, 0x00, 0x00, 0x02, 0x02, 0x00, 0x0a, 0x00, 0x00, 0x01, 0x08, 0x00,  // eth
      0x45, 0xe2, 0x00, 0x20, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,              // ip
      0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02,                                      // addrs
      0x12, 0xb7, 0xbe, 0xef, 0x00, 0x0c, 0x00, 0x00,                                      // udp
      0xde, 0xad, 0xbe, 0xef};
  return f;
}
}  // namespace

TEST(Frame, ParsesEthernetIpv4Udp) {
  auto f = UdpFrame();
  const FrameView v = ParseFrame(f.data(), f.size(), static_cast<uint32_t>(f.size()));
  EXPECT_TRUE(v.ipv4);
  EXPECT_TRUE(v.l4);
  EXPECT_EQ(v.dscp, 56);
  EXPECT_EQ(v.ecn, 2);
  EXPECT_EQ(v.protocol, kIpProtoUdp);
  EXPECT_EQ(v.src_ip, 0x0a000001u);
  EXPECT_EQ(v.dst_ip, 0x0a000002u);
  EXPECT_EQ(v.src_port, 4791);
  EXPECT_EQ(v.dst_port, 0xbeef);
  EXPECT_EQ(v.l4_payload_offset, 42);
  EXPECT_EQ(v.frame_bytes, f.size());
}

TEST(Frame, TruncatedFramesNeverReadPastTheEnd) {
  auto f = UdpFrame();
  for (size_t len = 0; len < f.size(); ++len) {
    // Copy into an exact-size buffer so a read past `len` would be caught by ASan.
    std::vector<uint8_t> cut(f.begin(), f.begin() + len);
    const FrameView v = ParseFrame(cut.data(), len, static_cast<uint32_t>(len));
    EXPECT_EQ(v.ipv4, len >= 34) << len;
    EXPECT_EQ(v.l4, len >= 38) << len;
  }
}

TEST(Frame, RejectsNonIpv4AndBadHeaderLength) {
  auto f = UdpFrame();
  f[12] = 0x86;
  f[13] = 0xdd;  // IPv6 ethertype
  EXPECT_FALSE(ParseFrame(f.data(), f.size(), 0).ipv4);
  f = UdpFrame();
  f[14] = 0x44;  // IHL 4 < 5
  EXPECT_FALSE(ParseFrame(f.data(), f.size(), 0).ipv4);
  f = UdpFrame();
  f[14] = 0x65;  // version 6
  EXPECT_FALSE(ParseFrame(f.data(), f.size(), 0).ipv4);
}

TEST(Frame, Ipv4ChecksumMatchesRfc1071Example) {
  // The classic example header (checksum 0xb861).
  uint8_t ip[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                    0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  EXPECT_EQ(Ipv4HeaderChecksum(ip, 20), 0xb861);
  StoreBe16(ip + 10, 0xb861);
  EXPECT_EQ(Ipv4HeaderChecksum(ip, 20), 0);  // verifying a correct header gives 0
}
