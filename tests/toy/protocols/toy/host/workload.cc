// The toy protocol's entry in the registry (tests/toy/protocols/toy/
// protocol.json): MakeWorkload builds a ToyJob; kChecks tells `validate` what
// the job's constructor would refuse.
#include "ina/protocol-checks.h"
#include "ina/scenario.h"
#include "ina/workload.h"
#include "tests/toy/protocols/toy/host/toy-job.h"

#include <memory>

namespace inasim::protocols::toy {
namespace {

class ToyWorkload final : public Workload {
 public:
  explicit ToyWorkload(const WorkloadContext& c) : s_(c.scenario), job_(c.fabric, c.hosts, c.scenario) {}
  void Start(std::function<void()> on_finished) override { job_.Start(s_.workload.start_ps, std::move(on_finished)); }
  double Progress() const override { return job_.Progress(); }
  void Report(bool finished, WorkloadReport& out) const override { job_.Report(finished, out); }

 private:
  const Scenario& s_;
  ToyJob job_;
};

void CheckPlacement(const Scenario&, const topo::Topology& t, const std::vector<uint32_t>& hosts) {
  ToyJob::CheckPlacement(t, hosts);
}
double StateBytes(const Scenario&, size_t) { return 0; }  // windows bound the hosts' state
void AddWarnings(const Scenario&, const topo::Topology&, std::vector<NamedTimer>&, std::vector<std::string>&) {}
void AddUdpPorts(const Scenario& s, std::vector<std::pair<const char*, uint16_t>>& ports) {
  ports.emplace_back("workload.toy.udp_port", s.workload.spec<ToySpec>().udp_port);
}

}  // namespace

std::unique_ptr<Workload> MakeWorkload(const WorkloadContext& context) {
  return std::make_unique<ToyWorkload>(context);
}

extern const ProtocolChecks kChecks;  // (declared for the registry: external linkage)
const ProtocolChecks kChecks = {&CheckPlacement, &StateBytes, &AddWarnings, &AddUdpPorts};

}  // namespace inasim::protocols::toy
