// The permutation workload's entry in the protocol registry
// (protocols/permutation/protocol.json): each selected host sends one paced
// UDP flow (ns-3's UdpClient) to its image under a random derangement;
// UdpServer receives. Nothing is aggregated: "correct" means every flow completed.
#include "ina/fabric.h"
#include "ina/protocol-checks.h"
#include "ina/scenario.h"
#include "ina/units.h"
#include "ina/workload.h"
#include "topology/topology.h"

#include "ns3/core-module.h"
#include "ns3/udp-client.h"
#include "ns3/udp-server.h"

#include <fmt/format.h>

#include <cmath>

namespace inasim::protocols::permutation {
namespace {

using namespace ns3;

class PermutationWorkload final : public Workload {
 public:
  explicit PermutationWorkload(const WorkloadContext& c) : s_(c.scenario), flows_(c.hosts.size()) {
    const std::vector<uint32_t>& hosts = c.hosts;
    const std::vector<uint32_t> image = topo::RandomDerangement(static_cast<uint32_t>(hosts.size()), s_.seed);
    const uint32_t payload = s_.workload.payload_bytes;
    const uint64_t packets = (s_.workload.flow_bytes + payload - 1) / payload;
    const double rate = (s_.workload.rate_gbps > 0 ? s_.workload.rate_gbps : s_.links.host_rate_gbps) * 1e9;
    const uint64_t wire = uint64_t{payload} + 28 + 14 + s_.links.wire_overhead_bytes;
    const auto interval_ps = static_cast<uint64_t>(std::ceil(wire * 8e12 / rate));
    for (uint32_t h : hosts) {
      auto server = CreateObject<UdpServer>();
      server->SetAttribute("Port", UintegerValue(9));
      c.fabric.host(h)->AddApplication(server);
      server->TraceConnectWithoutContext("Rx", MakeCallback(&PermutationWorkload::OnRx, this));
      servers_.push_back(server);
    }
    for (size_t i = 0; i < hosts.size(); ++i) {
      auto client = CreateObject<UdpClient>();
      client->SetAttribute("RemoteAddress", AddressValue(c.fabric.host_address(hosts[image[i]])));
      client->SetAttribute("RemotePort", UintegerValue(9));
      client->SetAttribute("MaxPackets", UintegerValue(packets));
      client->SetAttribute("Interval", TimeValue(PicoSeconds(interval_ps)));
      client->SetAttribute("PacketSize", UintegerValue(payload));
      c.fabric.host(hosts[i])->AddApplication(client);
    }
    expected_packets_ = packets * hosts.size();
  }
  void Start(std::function<void()> on_finished) override { on_finished_ = std::move(on_finished); }
  double Progress() const override { return static_cast<double>(received_packets_) / expected_packets_; }
  void Report(bool finished, WorkloadReport& out) const override;

 private:
  void OnRx(Ptr<const Packet>) {
    ++received_packets_;
    last_rx_ps_ = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
    if (received_packets_ == expected_packets_ && on_finished_) on_finished_();
  }

  const Scenario& s_;
  size_t flows_;
  std::vector<Ptr<UdpServer>> servers_;
  uint64_t expected_packets_ = 0;
  uint64_t received_packets_ = 0;
  uint64_t last_rx_ps_ = 0;
  std::function<void()> on_finished_;
};

void PermutationWorkload::Report(bool finished, WorkloadReport& out) const {
  out.payload_delivered = received_packets_ * s_.workload.payload_bytes;
  out.correct = finished;
  // The core keys that apply to it (docs/SCENARIO.md): no collectives, no values checked.
  out.workload = {{"type", "permutation"},
                  {"protocol", "permutation"},
                  {"ranks", flows_},
                  {"jobs", 1},
                  {"correct", out.correct},
                  {"flows", flows_},
                  {"flow_bytes", s_.workload.flow_bytes},
                  {"payload_bytes", s_.workload.payload_bytes},
                  {"packets_expected", expected_packets_},
                  {"packets_received", received_packets_},
                  {"complete", received_packets_ == expected_packets_},
                  {"last_rx_s", PsToS(last_rx_ps_)},
                  {"payload_delivered_bytes", out.payload_delivered}};
  out.summary += fmt::format("permutation: {} flows of {} -> {} of {} packets delivered, last at {}\n", flows_,
                             HumanBytes(s_.workload.flow_bytes), received_packets_, expected_packets_,
                             HumanTime(PsToS(last_rx_ps_)));
}

}  // namespace

std::unique_ptr<Workload> MakeWorkload(const WorkloadContext& context) {
  return std::make_unique<PermutationWorkload>(context);
}

namespace {

// Every selected host sends and receives one flow: nothing to refuse.
void CheckPlacement(const Scenario&, const topo::Topology&, const std::vector<uint32_t>&) {}
double StateBytes(const Scenario&, size_t) { return 0; }
void AddWarnings(const Scenario&, const topo::Topology&, std::vector<NamedTimer>&, std::vector<std::string>&) {}

void AddUdpPorts(const Scenario&, std::vector<std::pair<const char*, uint16_t>>& ports) {
  ports.emplace_back("the permutation's UDP port", 9);
}

}  // namespace

extern const ProtocolChecks kChecks;  // (declared for the registry: external linkage)
const ProtocolChecks kChecks = {&CheckPlacement, &StateBytes, &AddWarnings, &AddUdpPorts};

}  // namespace inasim::protocols::permutation
