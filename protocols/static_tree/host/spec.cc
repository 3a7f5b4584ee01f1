// Static trees' scenario keys: the workload.static_tree section of a scenario -> StaticTreeSpec (and workload.send_noise, read as Canary reads it)
// (docs/SCENARIO.md), through the registry (Protocol::parse).
#include "ina/scenario-sections.h"
#include "common/spec_fields.h"
#include "protocols/canary/host/spec.h"
#include "protocols/static_tree/host/spec.h"
#include "protocols/static_tree/dataplane/keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace inasim::protocols::static_tree {

using nlohmann::json;
using spec::Reader;

namespace {

// IPv4 20 + UDP 8 + the (Canary-format) header 19 bytes, then 4k bytes of data.
uint32_t MaxK(const Scenario& s) { return (s.links.mtu_bytes - 20 - 8 - 19) / 4; }

using StaticTreeSection = spec::Section<StaticTreeSpec, Scenario>;

// Within the slots, a host's window of blocks (the power of two is the shared key's check).
void CheckWindowFits(const StaticTreeSpec& st, Reader& t) {
  if (st.slots_per_tree < st.window_blocks)
    t.Fail("slots_per_tree", fmt::format("must be at least window_blocks ({}): a host's window of blocks must not "
                                         "share a slot, got {}", st.window_blocks, st.slots_per_tree));
}

// The keys shared with inasim-p4's replay config: protocols/static_tree/dataplane/keys.h.
const StaticTreeSection& StaticTree() {
  static const StaticTreeSection section = [] {
    StaticTreeSection t("workload.static_tree", "Static reduction trees (canary-fgcs24 §5.2)");
    t.U32("trees", &StaticTreeSpec::trees, 1, 1, 1024, "",
          "Number of trees (block g uses tree g mod N); more than there are candidate roots is an error.")
        .Enum("roots", &StaticTreeSpec::random_roots, "spread", {{"spread", false}, {"random", true}},
              "Where the trees are rooted among the switches of the lowest tier that reaches every host: `spread` "
              "evenly (deterministic), `random` a seeded uniform draw of distinct switches (canary-fgcs24 §5.2 "
              "roots its static trees at random; another `seed`, other roots). `tree_roots` in the results names "
              "them.");
    p4::statictree::keys::ElementsPerPacket(t, &StaticTreeSpec::elements_per_packet)
        .MaxFrom([](const Scenario& s) -> uint64_t { return MaxK(s); }, "(mtu - 47) / 4")
        .DefaultFrom([](const StaticTreeSpec&, const Scenario& s) { return std::min<uint32_t>(256, MaxK(s)); },
                     "`256` (the bound if lower)")
        .U32("window_blocks", &StaticTreeSpec::window_blocks, 256, 1, 1u << 20, "blocks",
             "Outstanding blocks per host, as a sliding window: a host sends block g only when every block up to "
             "g − window_blocks has its result, so the blocks in flight never share a slot (several trees finish "
             "blocks out of order).")
        .U32("nic_queue_bytes", &StaticTreeSpec::nic_queue_bytes, 8192, 0, 1u << 30, "bytes",
             "As `workload.canary.nic_queue_bytes` (the same host agent).");
    p4::statictree::keys::SlotsPerTree(t, &StaticTreeSpec::slots_per_tree)
        .Allowed("a power of two >= window_blocks, 1 .. 2^20")
        .Check(CheckWindowFits);
    p4::statictree::keys::PassLatency(t, &StaticTreeSpec::pass_latency_ps);
    return t;
  }();
  return section;
}

}  // namespace

void ParseWorkload(Reader& w, Scenario& s) {
  canary::ParseSendNoise(w, s);
  StaticTree().ParseObject(w, "static_tree", s.workload.spec<StaticTreeSpec>(), s);
}

std::vector<const spec::Doc*> WorkloadSections() { return {&StaticTree(), &canary::SendNoiseSection()}; }

}  // namespace inasim::protocols::static_tree
