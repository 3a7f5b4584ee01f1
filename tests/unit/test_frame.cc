#include "p4model/common/frame.h"
#include "ina/frame-fingerprint.h"

#include <gtest/gtest.h>

#include <algorithm>
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

// ------------------------------------------------------------ fingerprint

namespace {
uint64_t HashOf(const std::vector<uint8_t>& f, uint64_t time_ps, uint32_t n = 64) {
  const uint32_t len = static_cast<uint32_t>(f.size());
  return inasim::FingerprintFrame(0, time_ps, len, f.data(), std::min(n, len));
}
}  // namespace

TEST(Fingerprint, EveryHashedFieldMatters) {
  const auto f = UdpFrame();
  const uint64_t base = HashOf(f, 1000);
  EXPECT_NE(base, HashOf(f, 1001));  // time
  for (size_t i = 0; i < f.size(); ++i) {  // each leading byte, also a last partial word's
    auto g = f;
    g[i] ^= 0x01;
    EXPECT_NE(base, HashOf(g, 1000)) << "byte " << i;
  }
  auto longer = f;
  longer.push_back(0);  // same leading bytes, zero padding looks alike: the length tells them apart
  EXPECT_NE(base, HashOf(longer, 1000));
}

TEST(Fingerprint, BytesBeyondTheHeadAreNotHashed) {
  std::vector<uint8_t> a(100, 7), b(100, 7);
  b[80] = 8;
  EXPECT_EQ(HashOf(a, 5), HashOf(b, 5));
  b[63] = 8;
  EXPECT_NE(HashOf(a, 5), HashOf(b, 5));
}

TEST(Fingerprint, OrderOfFramesAndOfDevicesMatters) {
  const auto f = UdpFrame();
  auto g = f;
  g[40] = 0x11;
  const auto len = static_cast<uint32_t>(f.size());
  using inasim::FingerprintFrame;
  const uint64_t fg = FingerprintFrame(FingerprintFrame(0, 7, len, f.data(), len), 7, len, g.data(), len);
  const uint64_t gf = FingerprintFrame(FingerprintFrame(0, 7, len, g.data(), len), 7, len, f.data(), len);
  EXPECT_NE(fg, gf);
  using inasim::FingerprintCombine;
  EXPECT_NE(FingerprintCombine(FingerprintCombine(0, 0, fg, 2), 1, gf, 2),
            FingerprintCombine(FingerprintCombine(0, 0, gf, 2), 1, fg, 2));
  EXPECT_NE(FingerprintCombine(0, 0, fg, 2), FingerprintCombine(0, 0, fg, 3));
}
