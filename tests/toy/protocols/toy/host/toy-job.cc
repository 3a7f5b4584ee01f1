#include "tests/toy/protocols/toy/host/toy-job.h"

#include "ina/addressing.h"
#include "ina/collective-table.h"
#include "ina/fabric.h"
#include "ina/units.h"
#include "tests/toy/protocols/toy/dataplane/toy_dataplane.h"

#include "ns3/packet.h"
#include "ns3/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace inasim {

namespace ty = p4::toy;
using ns3::Simulator;

namespace {
uint64_t NowPs() { return static_cast<uint64_t>(Simulator::Now().GetPicoSeconds()); }
}  // namespace

// --- the worker ----------------------------------------------------------------

ns3::TypeId ToyWorker::GetTypeId() {
  static ns3::TypeId tid = ns3::TypeId("inasim::ToyWorker").SetParent<ns3::Application>().SetGroupName("Inasim");
  return tid;
}

void ToyWorker::Setup(ToyJob* job, uint32_t rank, InaNetDevice& nic, uint32_t switch_ip) {
  job_ = job;
  rank_ = rank;
  switch_ip_ = switch_ip;
  const uint32_t k = job->spec().elements_per_packet;
  tx_.assign(ty::kToyHeaderBytes + size_t{4} * k, 0);
  // A kernel-bypass port on the host's NIC (ina/host-endpoint.h).
  endpoint_.Open(nic, job->spec().udp_port, [this](const uint8_t* b, uint32_t len, const DatagramInfo&) {
    if (len == tx_.size()) Handle(b, len);  // else not a result of this job's size
  });
}

void ToyWorker::StopApplication() { endpoint_.Close(); }

void ToyWorker::DoDispose() {
  endpoint_.Close();
  ns3::Application::DoDispose();
}

void ToyWorker::Begin(uint32_t it) {
  iteration_ = it;
  received_ = 0;
  job_->WorkerStarted(it, NowPs());
  const uint64_t window = std::min<uint64_t>(job_->spec().window_packets, job_->packets());
  for (uint64_t p = 0; p < window; ++p) Send(p);
}

// Packet p of the iteration carries elements [p k, p k + k); the last one is
// padded with zeros (they add nothing and are not checked).
void ToyWorker::Send(uint64_t p) {
  const uint32_t k = job_->spec().elements_per_packet;
  const uint64_t first = p * k, count = std::min<uint64_t>(k, job_->elements() - first);
  std::fill(tx_.begin(), tx_.end(), 0);
  p4::StoreBe32(tx_.data(), static_cast<uint32_t>(uint64_t{iteration_} * job_->packets() + p));
  tx_[4] = ty::kKindContribution;
  job_->data(iteration_).FillBe32(rank_, first, count, tx_.data() + ty::kToyHeaderBytes);
  endpoint_.SendTo(switch_ip_, job_->spec().udp_port, tx_.data(), static_cast<uint32_t>(tx_.size()));
}

void ToyWorker::Handle(const uint8_t* h, uint32_t) {
  const uint64_t seq = p4::LoadBe32(h), base = uint64_t{iteration_} * job_->packets();
  if (h[4] != ty::kKindResult || seq < base || seq >= base + job_->packets()) return;
  const uint64_t p = seq - base, k = job_->spec().elements_per_packet;
  const uint64_t first = p * k, count = std::min<uint64_t>(k, job_->elements() - first);
  checked_ += count;
  mismatches_ += job_->data(iteration_).CountMismatchesBe32(first, count, h + ty::kToyHeaderBytes);
  if (p + job_->spec().window_packets < job_->packets()) Send(p + job_->spec().window_packets);
  if (++received_ < job_->packets()) return;
  job_->WorkerDone(rank_, iteration_, NowPs(), checked_, mismatches_);
  checked_ = mismatches_ = 0;
}

// --- the job ---------------------------------------------------------------------

void ToyJob::CheckPlacement(const topo::Topology& t, const std::vector<uint32_t>& hosts) {
  for (uint32_t h : hosts)
    if (t.tor_of(h) != t.tor_of(hosts[0]))
      throw ScenarioError(fmt::format("workload.hosts: the toy protocol aggregates on one switch, but host {} is "
                                      "under {} and host {} under {}",
                                      hosts[0], t.node(t.tor_of(hosts[0])).name, h, t.node(t.tor_of(h)).name));
  if (hosts.size() > 64) throw ScenarioError("workload.hosts: the toy switch takes at most 64 workers");
}

ToyJob::ToyJob(Fabric& fabric, const std::vector<uint32_t>& hosts, const Scenario& s)
    : s_(s), spec_(s.workload.spec<ToySpec>()) {
  CheckPlacement(fabric.topology(), hosts);
  elements_ = s.workload.bytes / 4;
  packets_ = (elements_ + spec_.elements_per_packet - 1) / spec_.elements_per_packet;
  if (packets_ * s.workload.iterations >= (1ull << 32))
    throw ScenarioError("workload.bytes: the toy header's 32-bit sequence numbers cannot count that many packets");
  const TensorData first(DType::kInt32, s.workload.data, s.seed, static_cast<uint32_t>(hosts.size()));
  for (uint32_t it = 0; it < s.workload.iterations; ++it) data_.push_back(first.ForIteration(it));
  iterations_.resize(s.workload.iterations);
  InstallSwitch(fabric, hosts);
  for (uint32_t rank = 0; rank < hosts.size(); ++rank) {
    auto w = ns3::CreateObject<ToyWorker>();
    fabric.host(hosts[rank])->AddApplication(w);
    w->Setup(this, rank, fabric.device(hosts[rank], 0), SwitchIpv4(switch_id_));
    workers_.push_back(w);
  }
}

void ToyJob::InstallSwitch(Fabric& fabric, const std::vector<uint32_t>& hosts) {
  const topo::Topology& t = fabric.topology();
  switch_id_ = t.tor_of(hosts[0]) - t.num_hosts();
  ty::ToyConfig c;
  c.switch_ip = SwitchIpv4(switch_id_);
  c.switch_mac = MacBytesOfIpv4(c.switch_ip);
  for (uint32_t h : hosts) c.worker_ports.push_back(t.ports(h).at(0).peer_port);
  c.udp_port = spec_.udp_port;
  c.elements_per_packet = spec_.elements_per_packet;
  c.slots = spec_.window_packets;
  c.pass_latency_ps = spec_.pass_latency_ps;
  fabric.switch_node(switch_id_).SetDataplane(std::make_unique<ty::ToyDataplane>(c));
}

void ToyJob::Start(uint64_t at_ps, std::function<void()> on_finished) {
  on_finished_ = std::move(on_finished);
  for (auto& w : workers_) {
    ToyWorker* p = ns3::PeekPointer(w);
    Simulator::Schedule(ns3::PicoSeconds(at_ps), [p] { p->Begin(0); });
  }
}

double ToyJob::Progress() const {
  double done = 0;
  for (const ToyIteration& it : iterations_) done += it.workers_done;
  return done / static_cast<double>(iterations_.size() * workers_.size());
}

void ToyJob::WorkerStarted(uint32_t it, uint64_t now_ps) {
  iterations_[it].start_ps = std::min(iterations_[it].start_ps, now_ps);
}

void ToyJob::WorkerDone(uint32_t rank, uint32_t it, uint64_t now_ps, uint64_t checked, uint64_t mismatches) {
  ToyIteration& r = iterations_[it];
  r.end_ps = std::max(r.end_ps, now_ps);
  r.elements_checked += checked;
  r.mismatches += mismatches;
  if (it + 1 < iterations_.size()) workers_[rank]->Begin(it + 1);
  if (++r.workers_done == workers_.size() && it + 1 == iterations_.size()) on_finished_();
}

// results.json's "workload" and collectives.csv through the shared table: one
// row per iteration, verdict over every worker's every element.
void ToyJob::Report(bool finished, WorkloadReport& out) const {
  const uint32_t n = static_cast<uint32_t>(workers_.size());
  CollectiveTable table;
  table.AddJob(n, iterations_.size());
  for (uint32_t it = 0; it < iterations_.size(); ++it) {
    const ToyIteration& r = iterations_[it];
    if (r.workers_done < n) {
      table.AddUnfinished(0, r.elements_checked, r.mismatches);
      continue;
    }
    CollectiveRow row;
    row.iteration = it;
    row.start_ps = r.start_ps;
    row.end_ps = r.end_ps;
    row.bytes = s_.workload.bytes;
    row.elements_checked = r.elements_checked;
    row.mismatches = r.mismatches;
    row.correct = r.mismatches == 0 && r.elements_checked == uint64_t{n} * elements_;
    table.Add(row);
  }
  out.payload_delivered = 2 * uint64_t{n} * s_.workload.bytes * table.completed();
  out.correct = finished && table.correct();
  out.workload = table.CoreJson({"toy", "iteration", s_.workload.bytes, iterations_.size(), table.completed()},
                                out.correct);
  out.AddCsv("collectives.csv", table.Csv());
  out.summary += fmt::format("toy allreduce of {} over {} hosts: {} per collective (x{} iterations)\n",
                             HumanBytes(s_.workload.bytes), n, HumanTime(table.mean_duration_s()), table.completed());
  out.summary += fmt::format("  result: {} - {} elements checked against the exact sum, {} mismatches\n",
                             VerdictWord(out.correct, s_.workload.data), table.elements_checked(), table.mismatches());
}

}  // namespace inasim
