// Static trees' scenario keys: the workload.static_tree section of a scenario -> StaticTreeSpec (and workload.send_noise, read as Canary reads it)
// (docs/SCENARIO.md), through the registry (Protocol::parse).
#include "ina/scenario-sections.h"
#include "protocols/canary/host/spec.h"
#include "protocols/static_tree/host/spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace inasim::protocols::static_tree {

using nlohmann::json;
using spec::Reader;

namespace {

void ParseStaticTree(Reader& w, Scenario& s) {
  Reader t = w.Obj("static_tree");
  StaticTreeSpec& st = s.workload.spec<StaticTreeSpec>();
  const uint32_t max_k = (s.links.mtu_bytes - 20 - 8 - 19) / 4;
  st.trees = t.U32("trees", 1, 1, 1024);
  st.random_roots = t.Enum("roots", "spread", {"spread", "random"}) == "random";
  st.elements_per_packet = t.U32("elements_per_packet", std::min<uint32_t>(256, max_k), 1, max_k);
  st.window_blocks = t.U32("window_blocks", 256, 1, 1u << 20);
  st.nic_queue_bytes = t.U32("nic_queue_bytes", 8192, 0, 1u << 30);
  st.slots_per_tree = t.U32("slots_per_tree", 4096, 1, 1u << 20);
  if (st.slots_per_tree & (st.slots_per_tree - 1))
    t.Fail("slots_per_tree", fmt::format("must be a power of two, got {}", st.slots_per_tree));
  if (st.slots_per_tree < st.window_blocks)
    t.Fail("slots_per_tree", fmt::format("must be at least window_blocks ({}): a host's window of blocks must not "
                                         "share a slot, got {}", st.window_blocks, st.slots_per_tree));
  st.pass_latency_ps = t.TimePs("pass_latency_ns", 520, 0, 1e6, kPsPerNs);
  t.Done();
}

}  // namespace

void ParseWorkload(Reader& w, Scenario& s) {
  canary::ParseSendNoise(w, s);
  ParseStaticTree(w, s);
}

}  // namespace inasim::protocols::static_tree
