// Fuzz target: the SwitchML model (protocols/switchml/dataplane). Input byte 0 picks the
// mode: bit 0 1024 B packets (four pipes, eleven passes), bit 1 simulated
// ingress/egress drops; the rest is a frame sequence (fuzz_dataplane.h) on 4
// worker ports. Worker 0 is 10.0.0.1 / 02:00:00:00:00:01 on port 0, ...; the
// switch 10.0.0.254 / 02:00:00:00:00:fe, UDP 0xbee0/0xfff0.
#include "fuzz_dataplane.h"
#include "protocols/switchml/dataplane/config.h"
#include "protocols/switchml/dataplane/switchml_dataplane.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string cfg = R"({"switch_mac":"02:00:00:00:00:fe","switch_ip":"10.0.0.254","pool_size":8,"elements_per_packet":)";
  cfg += (data[0] & 1) ? "256" : "64";
  if (data[0] & 2) cfg += R"(,"ingress_drop_probability":0.2,"egress_drop_probability":0.2)";
  cfg += "," + inasim::fuzz::WorkersJson(4) + "}";
  inasim::p4::switchml::SwitchMLDataplane dp(inasim::p4::switchml::SwitchMLConfig::FromJson(cfg));
  inasim::fuzz::Drive(dp, data + 1, size - 1, (data[0] & 0x80) != 0);
  return 0;
}
