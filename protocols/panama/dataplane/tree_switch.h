// PanamaTreeSwitch: a switch of PANAMA's aggregation trees (panama §3 (2),
// §4.1): the accelerator (PanamaDataplane) on the switch, with what leaves it
// as a routed frame steered along the job's trees instead of the switch's
// unicast table. The paper's controller installs, per job and tree, the
// switch's parent and children; a result climbs to the parent until the
// root, which sends it down to every child, and each switch on the way down
// copies it to its children. The last hop to a worker carries the worker's
// own address: the tree's group address is rewritten (MAC, IPv4 destination,
// IPv4 checksum), as the simulated hosts take no multicast.
#pragma once

#include "p4model/common/dataplane.h"
#include "protocols/panama/dataplane/config.h"
#include "protocols/panama/dataplane/panama_dataplane.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace inasim::p4::panama {

/// One tree of a job at this switch.
struct TreeRoute {
  struct Child {
    uint16_t port = 0;
    uint32_t host_ip = 0;                  ///< the worker's IPv4 when the child is a host, 0 for a switch
    std::array<uint8_t, 6> host_mac{};     ///< its MAC (host children)
  };
  int32_t parent_port = -1;  ///< -1 at the root
  std::vector<Child> children;  ///< none: the tree does not pass this switch
};

/// The accelerator plus steering: `routes[j][tid]` for the j-th job of the
/// accelerator's configuration (jobs without routes are not steered).
struct TreeSwitchConfig {
  PanamaConfig accelerator;
  std::vector<std::vector<TreeRoute>> routes;

  /// Throws std::invalid_argument ("panama config: ...") naming the route.
  void Validate() const;
  /// PanamaConfig::FromJson's format, where a job may also give its trees here:
  /// "tree_routes":[{"parent_port":2,"children":[{"port":0,"ip":"10.0.0.1",
  /// "mac":"02:00:0a:00:00:01"},{"port":1}]}, ...] (one entry per TID; a child
  /// without "ip" / "mac" is a switch; "parent_port" -1 or absent at the root;
  /// {} for a tree that does not pass this switch).
  static TreeSwitchConfig FromJson(const std::string& text);
  /// Whether a configuration text asks for steering (any job has "tree_routes").
  static bool HasRoutes(const std::string& text);
};

class PanamaTreeSwitch final : public Dataplane, private Emitter {
 public:
  explicit PanamaTreeSwitch(TreeSwitchConfig config);

  std::string Name() const override { return "panama"; }
  bool Claims(const FrameView& f) const override { return accelerator_.Claims(f); }
  void Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds now, Emitter& out) override;
  std::string DumpState() const override { return accelerator_.DumpState(); }

  /// Controller action: one more job sharing this switch, with its trees here
  /// (PanamaDataplane::AddJob). Throws std::invalid_argument as the constructor.
  void AddJob(const PanamaJob& job, std::vector<TreeRoute> routes);

  const PanamaDataplane& accelerator() const { return accelerator_; }
  PanamaDataplane& mutable_accelerator() { return accelerator_; }

 private:
  /// One tree's route as the packet path reads it.
  struct Steering {
    int32_t parent_port = -1;
    std::vector<TreeRoute::Child> children;
    std::vector<uint8_t> is_child;  ///< by port; empty: not on this tree
  };
  void AddRoutes(const std::vector<TreeRoute>& routes);
  void Emit(inasim::Span<const uint8_t> frame, uint16_t port, Picoseconds latency) override;
  void EmitMulticast(inasim::Span<const uint8_t> frame, inasim::Span<const uint16_t> ports,
                     Picoseconds latency) override;
  void EmitRouted(inasim::Span<const uint8_t> frame, Picoseconds latency) override;
  /// The tree of the frame's JID and TID at this switch, or nullptr.
  const Steering* SteeringOf(inasim::Span<const uint8_t> frame, const FrameView& v) const;
  /// The last hop: the frame to `child`'s own address, IPv4 checksum redone.
  void EmitToHost(inasim::Span<const uint8_t> frame, const FrameView& v, const TreeRoute::Child& child,
                  Picoseconds latency);

  PanamaDataplane accelerator_;
  std::vector<uint16_t> jids_;                 ///< per job: its JID
  std::vector<std::vector<Steering>> routes_;  ///< per job, per TID
  Emitter* out_ = nullptr;
  uint16_t ingress_ = 0;
  std::vector<uint8_t> scratch_;
};

}  // namespace inasim::p4::panama
