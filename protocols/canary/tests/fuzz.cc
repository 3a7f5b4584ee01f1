// Fuzz target: the Canary model (p4model/canary). Input byte 0 picks the
// descriptor table (bit 0: 16 entries, so ids collide; else 4096), the
// timeout mechanism (bit 1: the prototype's clock scan) and the index (bit 2:
// direct); the rest is a frame sequence (fuzz_dataplane.h) on up to 256 ports
// of a 64-port switch (ports >= 64 must be refused, not indexed).
#include "fuzz_dataplane.h"
#include "protocols/canary/dataplane/canary_dataplane.h"
#include "protocols/canary/dataplane/config.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string cfg = R"({"num_ports":64,"elements_per_packet":8,"timeout_us":0.3,"table_size":)";
  cfg += (data[0] & 1) ? "16" : "4096";
  if (data[0] & 2) cfg += R"(,"timeout_mode":"clock_scan","clock_period_ns":50,"scan_entries_per_clock":4)";
  if (data[0] & 4) cfg += R"(,"index_hash":"direct")";
  cfg += "}";
  inasim::p4::canary::CanaryDataplane dp(inasim::p4::canary::CanaryConfig::FromJson(cfg));
  inasim::fuzz::Drive(dp, data + 1, size - 1, (data[0] & 0x80) != 0);
  return 0;
}
