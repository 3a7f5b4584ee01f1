// The toy protocol's hosts: every worker streams its tensor through the one
// switch its hosts share (ToyDataplane), `window_packets` packets in flight,
// and checks every result element against the exact sum. No loss recovery:
// a lost packet stalls the run, which then ends by the time limit, not finished.
#pragma once

#include "ina/host-endpoint.h"
#include "ina/tensor-data.h"
#include "ina/workload.h"
#include "tests/toy/protocols/toy/host/spec.h"
#include "topology/topology.h"

#include "ns3/application.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace inasim {

class Fabric;
class ToyJob;

/// One collective (iteration) as the hosts saw it.
struct ToyIteration {
  uint64_t start_ps = UINT64_MAX, end_ps = 0;  ///< first worker's start, last worker's end
  uint32_t workers_done = 0;
  uint64_t elements_checked = 0, mismatches = 0;
};

class ToyWorker : public ns3::Application {
 public:
  static ns3::TypeId GetTypeId();
  void Setup(ToyJob* job, uint32_t rank, InaNetDevice& nic, uint32_t switch_ip);
  /// Starts iteration `it` now.
  void Begin(uint32_t it);

 private:
  void StartApplication() override {}
  void StopApplication() override;
  void DoDispose() override;
  void Send(uint64_t packet);
  void Handle(const uint8_t* payload, uint32_t bytes);

  ToyJob* job_ = nullptr;
  uint32_t rank_ = 0;
  uint32_t iteration_ = 0;
  uint64_t received_ = 0;  ///< results of this iteration
  uint64_t checked_ = 0, mismatches_ = 0;  ///< of this iteration's results
  HostEndpoint endpoint_;
  uint32_t switch_ip_ = 0;
  std::vector<uint8_t> tx_;
};

class ToyJob {
 public:
  /// Throws ScenarioError when the hosts do not share one switch.
  static void CheckPlacement(const topo::Topology& t, const std::vector<uint32_t>& hosts);
  ToyJob(Fabric& fabric, const std::vector<uint32_t>& hosts, const Scenario& s);

  void Start(uint64_t at_ps, std::function<void()> on_finished);
  double Progress() const;
  void Report(bool finished, WorkloadReport& out) const;

  // For the workers.
  const ToySpec& spec() const { return spec_; }
  uint64_t packets() const { return packets_; }
  uint64_t elements() const { return elements_; }
  const TensorData& data(uint32_t it) const { return data_[it]; }
  void WorkerStarted(uint32_t it, uint64_t now_ps);
  /// Worker `rank` got every result of iteration `it`, having checked `checked` elements.
  void WorkerDone(uint32_t rank, uint32_t it, uint64_t now_ps, uint64_t checked, uint64_t mismatches);

 private:
  void InstallSwitch(Fabric& fabric, const std::vector<uint32_t>& hosts);

  const Scenario& s_;
  const ToySpec& spec_;
  uint64_t elements_ = 0, packets_ = 0;
  std::vector<TensorData> data_;  ///< per iteration
  std::vector<ToyIteration> iterations_;
  std::vector<ns3::Ptr<ToyWorker>> workers_;
  uint32_t switch_id_ = 0;
  std::function<void()> on_finished_;
};

}  // namespace inasim
