// Fuzz target: the PANAMA accelerator (p4model/panama). Input byte 0: bit 0
// IEEE instead of the FPGA adder, bit 1 results echoed per port instead of
// routed, bit 2 a buffer of a few packets per port (overflow); two jobs (JID 7
// on ports 0-3 with 2 trees, JID 9 on ports 2-5) on a 6-port accelerator; the
// rest is a frame sequence (fuzz_dataplane.h).
#include "fuzz_dataplane.h"
#include "protocols/panama/dataplane/config.h"
#include "protocols/panama/dataplane/panama_dataplane.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string result = (data[0] & 2) ? R"("echo")" : R"("routed")";
  std::string cfg = std::string(R"({"num_ports":6,"float_mode":")") + ((data[0] & 1) ? "ieee" : "fpga") + "\"";
  if (data[0] & 4) cfg += R"(,"accelerator_buffer_bytes":38400)";  // 6 ports x 4 slots x 1600 B
  cfg += R"(,"jobs":[{"jid":7,"ports":[0,1,2,3],"trees":2,"result":)" + result +
         R"(},{"jid":9,"ports":[2,3,4,5],"trees":1,"result":[0,1]}]})";
  inasim::p4::panama::PanamaDataplane dp(inasim::p4::panama::PanamaConfig::FromJson(cfg));
  inasim::fuzz::Drive(dp, data + 1, size - 1, (data[0] & 0x80) != 0);
  return 0;
}
