// Fuzz target: the PANAMA accelerator (protocols/panama/dataplane). Input
// byte 0: bit 0 IEEE instead of the FPGA adder, bit 1 results echoed per port
// instead of routed, bit 2 a buffer of a few packets per port (overflow), bit
// 3 the accelerator of a tree switch (PanamaTreeSwitch: JID 7's tree 0 up to
// port 5 from children 0 (a worker) and 1-3, tree 1 rooted here; JID 9's tree
// 0 up to port 1); two jobs (JID 7 on ports 0-3 with 2 trees, JID 9 on ports
// 2-5) on a 6-port accelerator; the rest is a frame sequence (fuzz_dataplane.h).
#include "fuzz_dataplane.h"
#include "protocols/panama/dataplane/config.h"
#include "protocols/panama/dataplane/panama_dataplane.h"
#include "protocols/panama/dataplane/tree_switch.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string result = (data[0] & 2) ? R"("echo")" : R"("routed")";
  std::string cfg = std::string(R"({"num_ports":6,"float_mode":")") + ((data[0] & 1) ? "ieee" : "fpga") + "\"";
  if (data[0] & 4) cfg += R"(,"accelerator_buffer_bytes":38400)";  // 6 ports x 4 slots x 1600 B
  const bool tree_switch = (data[0] & 8) != 0;
  const std::string routes7 =
      tree_switch ? R"(,"tree_routes":[{"parent_port":5,"children":[{"port":0,"ip":"10.0.0.1","mac":"02:00:0a:00:00:01"},)"
                    R"({"port":1},{"port":2},{"port":3}]},{"children":[{"port":0},{"port":1},{"port":2},{"port":3}]}])"
                  : "";
  const std::string routes9 = tree_switch ? R"(,"tree_routes":[{"parent_port":1,"children":[{"port":4},{"port":5}]}])" : "";
  cfg += R"(,"jobs":[{"jid":7,"ports":[0,1,2,3],"trees":2,"result":)" + result + routes7 +
         R"(},{"jid":9,"ports":[2,3,4,5],"trees":1,"result":[0,1])" + routes9 + "}]}";
  if (tree_switch) {
    inasim::p4::panama::PanamaTreeSwitch dp(inasim::p4::panama::TreeSwitchConfig::FromJson(cfg));
    inasim::fuzz::Drive(dp, data + 1, size - 1, (data[0] & 0x80) != 0);
  } else {
    inasim::p4::panama::PanamaDataplane dp(inasim::p4::panama::PanamaConfig::FromJson(cfg));
    inasim::fuzz::Drive(dp, data + 1, size - 1, (data[0] & 0x80) != 0);
  }
  return 0;
}
