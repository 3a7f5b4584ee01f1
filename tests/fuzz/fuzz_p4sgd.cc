// Fuzz target: the P4SGD model (p4model/p4sgd). Input byte 0 bit 0 picks the
// mode (paper / public-p4), bit 1 a 16-slot table in paper mode (slot reuse and wrap-around
// within a short input); the rest is a frame sequence (fuzz_dataplane.h) on 4
// worker ports 0..3 (10.0.0.1.. / 02:00:00:00:00:01..).
#include "fuzz_dataplane.h"
#include "p4model/p4sgd/config.h"
#include "p4model/p4sgd/p4sgd_dataplane.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string cfg = std::string(R"({"mode":")") + ((data[0] & 1) ? "public-p4" : "paper") + R"(","num_workers":4)";
  if ((data[0] & 2) && !(data[0] & 1)) cfg += R"(,"slots":16)";  // public-p4 has the P4's fixed 65536
  cfg += R"(,"multicast_ports":[0,1,2,3])";
  cfg += "," + inasim::fuzz::WorkersJson(4) + "}";
  inasim::p4::p4sgd::P4SGDDataplane dp(inasim::p4::p4sgd::P4SGDConfig::FromJson(cfg));
  inasim::fuzz::Drive(dp, data + 1, size - 1, (data[0] & 0x80) != 0);
  return 0;
}
