#include "protocols/switchml/host/switchml-ps.h"

#include "ina/addressing.h"
#include "ina/ina-net-device.h"
#include "p4model/common/frame.h"
#include "protocols/switchml/dataplane/config.h"
#include "protocols/switchml/dataplane/switchml_dataplane.h"

#include "ns3/simulator.h"

#include <algorithm>
#include <stdexcept>

namespace inasim {

namespace {
constexpr uint16_t kSwitchUdpPort = 48864;  // 0xbee0: the workers send to the "switch" port
constexpr uint32_t kHeadBytes = p4::kEthernetBytes + p4::kIpv4MinBytes + p4::kUdpBytes;
constexpr uint32_t kPrefix = 6;  // the sender's IPv4 address and UDP port, ahead of its payload in the rx ring
}  // namespace

/// The program's answers: each copy it sends out of a worker's port becomes
/// a unicast to that worker, buffered on the lcore that handled the packet.
/// (SwitchML's program emits one copy per port with that worker's addresses;
/// a multicast, were one emitted, goes to each port's worker.)
class SwitchMLParameterServer::Replies : public p4::Emitter {
 public:
  explicit Replies(const std::vector<uint32_t>& worker_ips) : worker_ips_(worker_ips) {}
  DpdkLcore* lcore = nullptr;
  void Emit(Span<const uint8_t> frame, uint16_t, p4::Picoseconds) override {
    if (frame.size() >= kHeadBytes) Send(frame, p4::LoadBe32(frame.data() + p4::kEthernetBytes + 16));
  }
  void EmitMulticast(Span<const uint8_t> frame, Span<const uint16_t> ports, p4::Picoseconds) override {
    if (frame.size() < kHeadBytes) return;
    for (const uint16_t port : ports)
      if (port < worker_ips_.size()) Send(frame, worker_ips_[port]);
  }
  void EmitRouted(Span<const uint8_t>, p4::Picoseconds) override {}  // not SwitchML's: a PS drops it

 private:
  void Send(Span<const uint8_t> frame, uint32_t dst_ip) {
    const uint8_t* udp = frame.data() + p4::kEthernetBytes + p4::kIpv4MinBytes;
    lcore->Buffer(dst_ip, p4::LoadBe16(udp + 2), frame.data() + kHeadBytes,
                  static_cast<uint32_t>(frame.size() - kHeadBytes));
  }
  const std::vector<uint32_t>& worker_ips_;
};

// Registered at load time, so `inasim trace-sources` lists it before any run.
NS_OBJECT_ENSURE_REGISTERED(SwitchMLParameterServer);

ns3::TypeId SwitchMLParameterServer::GetTypeId() {
  static ns3::TypeId tid = ns3::TypeId("inasim::SwitchMLParameterServer")
                               .SetParent<ns3::Application>()
                               .SetGroupName("Inasim")
                               .AddConstructor<SwitchMLParameterServer>();
  return tid;
}

SwitchMLParameterServer::SwitchMLParameterServer() : replies_(std::make_unique<Replies>(worker_ips_)) {}
SwitchMLParameterServer::~SwitchMLParameterServer() = default;

void SwitchMLParameterServer::Setup(InaNetDevice& nic, const p4::switchml::SwitchMLConfig& program,
                                    const DpdkLcoreConfig& lcore, uint32_t cores, uint32_t servers) {
  servers_ = std::max(1u, servers);
  own_ip_ = program.switch_ip;
  for (const auto& w : program.workers) worker_ips_.push_back(w.ip);
  program_ = std::make_unique<p4::switchml::SwitchMLDataplane>(program);
  endpoint_.Open(nic, kSwitchUdpPort,
                 [this](const uint8_t* b, uint32_t len, const DatagramInfo& d) { OnDatagram(b, len, d); });
  for (uint32_t c = 0; c < std::max(1u, cores); ++c) {
    auto l = std::make_unique<DpdkLcore>();
    DpdkLcore* raw = l.get();
    l->Configure(lcore, &endpoint_, [this, raw](const uint8_t* b, uint32_t len) {
      replies_->lcore = raw;
      Process(b, len);
    });
    lcores_.push_back(std::move(l));
  }
}

void SwitchMLParameterServer::StopApplication() {
  for (auto& l : lcores_) l->Cancel();
}

void SwitchMLParameterServer::DoDispose() {
  StopApplication();
  endpoint_.Close();
  ns3::Application::DoDispose();
}

// Flow Director by slot: bytes 6..7 of the SwitchML header (pool index, bit
// 15 the set) pick the core. This server's slots are g = j + n q; a worker
// thread's run of them has consecutive q, which q mod cores spreads, but
// with more servers than a thread has slots per core the runs are short and
// start at the same residue (16 servers, 8 cores: q = 8t .. 8t+3), so
// q / cores (the run) shifts them: (q + q / cores) mod cores.
void SwitchMLParameterServer::OnDatagram(const uint8_t* b, uint32_t len, const DatagramInfo& d) {
  if (len < 8) return;
  const uint32_t slot = p4::LoadBe16(b + 6) & 0x7fff;
  frame_.resize(kPrefix + len);
  p4::StoreBe32(frame_.data(), d.src_ip);
  p4::StoreBe16(frame_.data() + 4, d.src_port);
  std::copy(b, b + len, frame_.data() + kPrefix);
  const uint32_t q = slot / servers_, cores = static_cast<uint32_t>(lcores_.size());
  lcores_[(q + q / cores) % cores]->OnRx(frame_.data(), static_cast<uint32_t>(frame_.size()));
}

// The frame the switch would have seen, through the switch's program.
void SwitchMLParameterServer::Process(const uint8_t* b, uint32_t len) {
  if (len < kPrefix) return;
  const uint32_t src_ip = p4::LoadBe32(b);
  const auto it = std::find(worker_ips_.begin(), worker_ips_.end(), src_ip);
  if (it == worker_ips_.end()) return;
  const auto port = static_cast<uint16_t>(it - worker_ips_.begin());
  const uint32_t payload = len - kPrefix;
  std::vector<uint8_t>& f = switch_frame_;  // reused: no allocation per packet once warm
  f.resize(kHeadBytes + payload);
  MacForIpv4(own_ip_).CopyTo(f.data());
  MacForIpv4(src_ip).CopyTo(f.data() + 6);
  p4::StoreBe16(f.data() + 12, p4::kEtherTypeIpv4);
  p4::WriteIpv4Udp(f.data() + p4::kEthernetBytes, 0, src_ip, own_ip_, p4::LoadBe16(b + 4), kSwitchUdpPort, payload);
  std::copy(b + kPrefix, b + len, f.data() + kHeadBytes);
  ++packets_;
  const p4::FrameView view = p4::ParseFrame(f.data(), f.size(), static_cast<uint32_t>(f.size()));
  if (!program_->Claims(view)) return;
  program_->Process(port, Span<const uint8_t>(f.data(), f.size()),
                    static_cast<uint64_t>(ns3::Simulator::Now().GetPicoSeconds()), *replies_);
}

}  // namespace inasim
