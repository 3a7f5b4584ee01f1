// SwitchML's parameter-server baseline (switchml-nsdi21.txt:458, :472; its
// Algorithm 1 is the switch's: docs/research/baselines.md §6): "as many PS
// processes (each using 8 cores) as workers", each aggregating one shard of
// the tensor in software and answering every worker, on dedicated machines
// or co-located with the workers. The paper's PS code is not public; ours
// runs the very SwitchML program the switches run (the p4model, one instance
// per PS: the same slots, the same arithmetic, the same retransmission
// answers) on a host, behind DPDK lcores with the workers' packet cost:
//
//   - the workers (their DPDK threads as without a PS) send slot g's packets
//     to PS g mod n: all workers agree on a slot's server, and every thread's
//     slots spread over all of them (the paper: "uniformly sharded");
//   - a packet reaches one of the PS's `ps_cores` lcores by its slot (each
//     core owns a share of the server's slots, no shared state, as the
//     workers shard theirs), which processes it at `core_gbps` and buffers
//     the program's answers: one unicast per worker where the switch
//     multicasts.
#pragma once

#include "ina/host-endpoint.h"
#include "protocols/switchml/host/dpdk-lcore.h"

#include "ns3/application.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace inasim {

class InaNetDevice;
namespace p4 {
class Dataplane;
}
namespace p4::switchml {
struct SwitchMLConfig;
}

class SwitchMLParameterServer : public ns3::Application {
 public:
  static ns3::TypeId GetTypeId();
  SwitchMLParameterServer();
  ~SwitchMLParameterServer() override;
  /// `program`: the switch program's configuration (its workers: the worker
  /// hosts); `servers`: how many parameter servers share the slots.
  void Setup(InaNetDevice& nic, const p4::switchml::SwitchMLConfig& program, const DpdkLcoreConfig& lcore,
             uint32_t cores, uint32_t servers);
  uint64_t packets() const { return packets_; }
  const DpdkLcoreCounters& lcore(uint32_t core) const { return lcores_[core]->counters(); }
  uint32_t cores() const { return static_cast<uint32_t>(lcores_.size()); }

 protected:
  void DoDispose() override;

 private:
  class Replies;
  void StartApplication() override {}
  void StopApplication() override;
  void OnDatagram(const uint8_t* b, uint32_t len, const DatagramInfo& d);
  void Process(const uint8_t* frame, uint32_t len);

  HostEndpoint endpoint_;
  std::unique_ptr<p4::Dataplane> program_;
  std::vector<uint32_t> worker_ips_;  ///< by program port (ahead of replies_, which refers to it)
  std::unique_ptr<Replies> replies_;
  std::vector<std::unique_ptr<DpdkLcore>> lcores_;
  std::vector<uint8_t> frame_;         ///< the rx ring entry being built (sender prefix + payload)
  std::vector<uint8_t> switch_frame_;  ///< the frame the switch would have seen, handed to the program
  uint64_t packets_ = 0;
  uint32_t own_ip_ = 0;
  uint32_t servers_ = 1;
};

}  // namespace inasim
