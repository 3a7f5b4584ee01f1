// Fuzz target: the P4SGD model (p4model/p4sgd). Input byte 0 bit 0 picks the
// mode (paper / public-p4), bit 1 a 16-slot table in paper mode (slot reuse and wrap-around
// within a short input), bit 2 the UDP carriage (encap "udp"), bit 3 with it a
// valid Ethernet/IPv4/UDP header to port 20050 in front of every frame (so the
// fuzzed bytes are the load header and what follows); the rest is a frame
// sequence (fuzz_dataplane.h) on 4 worker ports 0..3 (10.0.0.1.. / 02:00:00:00:00:01..).
#include "fuzz_dataplane.h"
#include "protocols/p4sgd/dataplane/config.h"
#include "protocols/p4sgd/dataplane/p4sgd_dataplane.h"

#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string cfg = std::string(R"({"mode":")") + ((data[0] & 1) ? "public-p4" : "paper") + R"(","num_workers":4)";
  if ((data[0] & 2) && !(data[0] & 1)) cfg += R"(,"slots":16)";  // public-p4 has the P4's fixed 65536
  cfg += R"(,"multicast_ports":[0,1,2,3])";
  const bool udp = data[0] & 4;
  if (udp) cfg += R"(,"encap":"udp","switch_ip":"10.255.0.1","switch_mac":"02:00:0a:ff:00:01")";
  cfg += "," + inasim::fuzz::WorkersJson(4) + "}";
  inasim::p4::p4sgd::P4SGDDataplane dp(inasim::p4::p4sgd::P4SGDConfig::FromJson(cfg));
  std::vector<uint8_t> prefix;
  if (udp && (data[0] & 8)) {
    // Ethernet to the switch, IPv4 (IHL 5) 10.0.0.1 -> 10.255.0.1, UDP 20050 -> 20050.
    prefix = {0x02, 0, 0x0a, 0xff, 0, 0x01, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00,
              0x45, 0, 0, 92, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 255, 0, 1,
              0x4e, 0x52, 0x4e, 0x52, 0, 72, 0, 0};
  }
  inasim::fuzz::Drive(dp, data + 1, size - 1, (data[0] & 0x80) != 0, prefix);
  return 0;
}
