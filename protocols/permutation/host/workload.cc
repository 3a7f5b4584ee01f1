// The permutation workload's entry in the protocol registry
// (protocols/permutation/protocol.json): each selected host sends one paced
// UDP flow to its image under a random derangement, from a kernel-bypass
// endpoint (ina/host-endpoint.h) that writes what ns-3's UdpClient did: a
// SeqTsHeader (sequence number, send time in ticks) and zeros, from port
// 49153 to port 9. Nothing is aggregated: "correct" means every flow completed.
#include "ina/fabric.h"
#include "ina/addressing.h"
#include "ina/host-endpoint.h"
#include "ina/protocol-checks.h"
#include "ina/scenario.h"
#include "ina/units.h"
#include "ina/workload.h"
#include "topology/topology.h"

#include "p4model/common/frame.h"

#include "ns3/simulator.h"

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <vector>

namespace inasim::protocols::permutation {
namespace {

using namespace ns3;

constexpr uint16_t kPort = 9;
constexpr uint16_t kSourcePort = 49153;  // the first ephemeral port ns-3 gave UdpClient's socket
constexpr uint32_t kSeqTsBytes = 12;     // ns-3's SeqTsHeader: seq (32 bits), time (64 bits)

/// One flow's sender: `packets` datagrams of `payload` bytes, one every
/// `interval_ps` from the start on, as UdpClient sends them.
class PacedSender {
 public:
  PacedSender(InaNetDevice& nic, uint32_t dst_ip, uint32_t payload, uint64_t packets, uint64_t interval_ps)
      : dst_ip_(dst_ip), packets_(packets), interval_ps_(interval_ps), buf_(payload, 0) {
    endpoint_.Open(nic, kSourcePort, [](const uint8_t*, uint32_t, const DatagramInfo&) {});
  }
  void Start() { Simulator::ScheduleNow(&PacedSender::Send, this); }

 private:
  void Send() {
    p4::StoreBe32(buf_.data(), static_cast<uint32_t>(sent_));
    const uint64_t ticks = static_cast<uint64_t>(Simulator::Now().GetTimeStep());
    p4::StoreBe32(buf_.data() + 4, static_cast<uint32_t>(ticks >> 32));
    p4::StoreBe32(buf_.data() + 8, static_cast<uint32_t>(ticks));
    endpoint_.SendTo(dst_ip_, kPort, buf_.data(), static_cast<uint32_t>(buf_.size()));
    if (++sent_ < packets_) Simulator::Schedule(PicoSeconds(interval_ps_), &PacedSender::Send, this);
  }
  HostEndpoint endpoint_;
  uint32_t dst_ip_;
  uint64_t packets_, interval_ps_;
  uint64_t sent_ = 0;
  std::vector<uint8_t> buf_;
};

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
    if (payload < kSeqTsBytes)
      throw std::invalid_argument(fmt::format("workload.payload_bytes: {} is below the {}-byte sequence/time header",
                                              payload, kSeqTsBytes));
    servers_.resize(hosts.size());
    for (size_t i = 0; i < hosts.size(); ++i) {
      servers_[i] = std::make_unique<HostEndpoint>();
      servers_[i]->Open(c.fabric.device(hosts[i], 0), kPort,
                        [this](const uint8_t*, uint32_t, const DatagramInfo&) { OnRx(); });
    }
    for (size_t i = 0; i < hosts.size(); ++i)
      senders_.push_back(std::make_unique<PacedSender>(c.fabric.device(hosts[i], 0), HostIpv4(hosts[image[i]]),
                                                       payload, packets, interval_ps));
    expected_packets_ = packets * hosts.size();
  }
  void Start(std::function<void()> on_finished) override {
    on_finished_ = std::move(on_finished);
    for (auto& s : senders_) s->Start();
  }
  double Progress() const override { return static_cast<double>(received_packets_) / expected_packets_; }
  void Report(bool finished, WorkloadReport& out) const override;

 private:
  void OnRx() {
    ++received_packets_;
    last_rx_ps_ = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
    if (received_packets_ == expected_packets_ && on_finished_) on_finished_();
  }

  const Scenario& s_;
  size_t flows_;
  std::vector<std::unique_ptr<HostEndpoint>> servers_;
  std::vector<std::unique_ptr<PacedSender>> senders_;
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
