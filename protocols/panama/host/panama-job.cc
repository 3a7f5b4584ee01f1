#include "protocols/panama/host/panama-job.h"

#include "ina/addressing.h"
#include "ina/background.h"
#include "ina/fabric.h"
#include "ina/jobs.h"
#include "ina/shared-program.h"
#include "protocols/ring/host/ring-allreduce.h"
#include "topology/split_mix64.h"
#include "p4model/common/frame.h"
#include "protocols/panama/dataplane/panama_dataplane.h"
#include "protocols/panama/dataplane/tree_switch.h"

#include "ns3/log.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/trace-source-accessor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>

namespace inasim {

NS_LOG_COMPONENT_DEFINE("PanamaWorker");

using namespace ns3;
namespace pn = p4::panama;

namespace {

uint64_t NowPs() { return static_cast<uint64_t>(Simulator::Now().GetPicoSeconds()); }

/// DSCP 56 (panama §5 (1)) with ECT(0), so switches mark CE instead of only
/// dropping (§4.2.2).
constexpr uint8_t kAggregationTos = pn::kAggregationDscp << 2 | 0x2;

}  // namespace

// ------------------------------------------------------------------ PanamaWorker
NS_OBJECT_ENSURE_REGISTERED(PanamaWorker);

TypeId PanamaWorker::GetTypeId() {
  static TypeId tid = TypeId("inasim::PanamaWorker")
                          .SetParent<Application>()
                          .SetGroupName("Inasim")
                          .AddTraceSource("Window", "A result arrived: (tree, VID, cwnd after Fig. 5's update)",
                                          MakeTraceSourceAccessor(&PanamaWorker::window_trace_),
                                          "inasim::PanamaWorker::WindowTracedCallback")
                          .AddTraceSource("Timeout",
                                          "A tree made no progress for timeout_us with packets in flight "
                                          "(reported once per tree); args: JID, tree",
                                          MakeTraceSourceAccessor(&PanamaWorker::timeout_trace_),
                                          "inasim::TimeoutTracedCallback");
  return tid;
}

void PanamaWorker::Setup(PanamaJob* owner, uint32_t rank, InaNetDevice& nic) {
  owner_ = owner;
  nic_ = &nic;
  spec_ = &owner->spec();
  rank_ = rank;
  congestion::PanamaWindowConfig wc;
  wc.initial_cwnd = spec_->initial_cwnd;
  wc.initial_ssthresh = spec_->initial_ssthresh;
  wc.initial_alpha = spec_->initial_alpha;
  wc.g = spec_->g;
  wc.reset_ecn_count_per_window = spec_->reset_ecn_count_per_window;
  wc.increase_in_marked_windows = spec_->increase_in_marked_windows;
  wc.cut_once_per_flight = spec_->cut_once_per_flight;
  trees_.assign(spec_->trees, Tree(congestion::PanamaWindow(wc)));
  tracing_ = spec_->window_trace && rank == 0;
}

void PanamaWorker::DoDispose() {
  endpoint_.Close();
  Application::DoDispose();
}

void PanamaWorker::StartApplication() {
  if (endpoint_.is_open()) return;  // opened by an iteration that began first at the same instant
  endpoint_.Open(*nic_, spec_->udp_port,
                 [this](const uint8_t* b, uint32_t len, const DatagramInfo& d) { Handle(b, len, d.tos); });
}

void PanamaWorker::StopApplication() {
  running_ = false;
  Simulator::Cancel(timeout_event_);
  endpoint_.Close();
}

void PanamaWorker::BeginCollective(uint32_t c) {
  if (!endpoint_.is_open()) StartApplication();
  collective_ = c;
  running_ = true;
  const uint64_t p = owner_->layout().UnitsOf(c);
  const uint32_t n = spec_->trees;
  owner_->record(c).start_ps[rank_] = NowPs();
  outstanding_ = p;
  const uint64_t first = owner_->layout().FirstUnitOf(c);
  for (uint32_t t = 0; t < n; ++t) {
    Tree& tr = trees_[t];
    tr.next = first + (t + n - first % n) % n;  // first packet index >= first with index mod n == t
    tr.end = first + p;
    tr.last_progress_ps = NowPs();
    // PANAMA-<quorum>: vectors already summed without this worker are done.
    for (; tr.next < tr.skip_below && tr.next < tr.end; tr.next += n) --outstanding_;
  }
  if (outstanding_ == 0) {  // the whole collective went by without it
    running_ = false;
    owner_->WorkerCollectiveDone(rank_, collective_);
    return;
  }
  if (spec_->round_robin_in_order) {
    SendInOrder();
  } else {
    for (uint32_t t = 0; t < n; ++t) TrySend(t);
  }
  ArmTimeoutCheck();
}

void PanamaWorker::Pump(uint32_t t) {
  if (spec_->round_robin_in_order) {
    SendInOrder();
  } else {
    TrySend(t);
  }
}

uint32_t PanamaWorker::Allowed(const Tree& tr) const {
  return spec_->congestion_control ? tr.window.Allowed()
                                   : spec_->FixedWindow(static_cast<uint32_t>(&tr - trees_.data()));
}

void PanamaWorker::SendOn(Tree& tr) {
  SendPacket(tr.next);
  tr.next += spec_->trees;
  ++tr.in_flight;
  if (tracing_) tr.sent_ps.push_back(NowPs());
}

void PanamaWorker::TrySend(uint32_t t) {
  Tree& tr = trees_[t];
  while (tr.in_flight < Allowed(tr) && tr.next < tr.end) SendOn(tr);
}

void PanamaWorker::SendInOrder() {
  // §4.1: "p5 is only sent after the preceding packets have been sent to other
  // trees". The next packet in round-robin order is the smallest unsent one
  // over the trees (each tree's next is its own residue mod N; skipped
  // PANAMA-<quorum> packets have moved past); a tree whose window is full
  // holds every packet after it.
  const uint32_t n = spec_->trees;
  while (running_) {
    Tree* head = nullptr;
    for (uint32_t t = 0; t < n; ++t) {
      Tree& tr = trees_[t];
      if (tr.next < tr.end && (head == nullptr || tr.next < head->next)) head = &tr;
    }
    if (head == nullptr || head->in_flight >= Allowed(*head)) return;
    SendOn(*head);
  }
}

void PanamaWorker::SendPacket(uint64_t g) {
  const uint32_t n = spec_->trees;
  const CollectiveLayout::Unit u = owner_->layout().Locate(g);
  const auto count = static_cast<uint32_t>(u.count);
  const uint64_t total = owner_->total_packets();
  tx_.assign(pn::kPanamaHeaderBytes + 4 * count, 0);
  uint8_t* h = tx_.data();
  p4::StoreBe16(h + pn::kOffJid, spec_->jid);
  h[pn::kOffTid] = static_cast<uint8_t>(g % n);
  h[pn::kOffFlags] = g + n >= total ? pn::kFinFlag : 0;  // the tree's last packet of the run
  p4::StoreBe32(h + pn::kOffVid, static_cast<uint32_t>(g / n));
  p4::StoreBe16(h + pn::kOffWndCap, 0xffff);  // the accelerators lower it to their share
  owner_->data(u.collective).FillBe32(rank_, u.first_element, count, h + pn::kPanamaHeaderBytes);
  owner_->NoteSent(g, rank_);
  endpoint_.SendTo(PanamaGroupIpv4(spec_->jid, static_cast<uint32_t>(g % n)), spec_->udp_port, tx_.data(),
                   static_cast<uint32_t>(tx_.size()), kAggregationTos);
  ++counters_.packets_sent;
}

void PanamaWorker::Handle(const uint8_t* p, uint32_t len, uint8_t tos) {
  const uint32_t n = spec_->trees;
  if (len < pn::kPanamaHeaderBytes || p4::LoadBe16(p + pn::kOffJid) != spec_->jid || p[pn::kOffTid] >= n) {
    ++counters_.unexpected_results;
    return;
  }
  const uint32_t t = p[pn::kOffTid];
  const uint64_t g = uint64_t{p4::LoadBe32(p + pn::kOffVid)} * n + t;
  Tree& tr = trees_[t];
  // PANAMA-<quorum>: the accelerators summed vector g without this worker (it
  // was behind). Results come in VID order on a tree, so every earlier packet
  // of the tree has had its result: g is the next one this worker would send,
  // now or in an iteration it has not begun (it may be computing). It is
  // checked like any result and never sent (it would be stale).
  if (spec_->quorum < 1 && tr.in_flight == 0 && g >= tr.next && g >= tr.skip_below &&
      g < owner_->total_packets()) {
    CheckAndCount(g, p, len);
    ++counters_.skipped;
    tr.skip_below = g + n;
    tr.last_progress_ps = NowPs();
    if (!running_ || g != tr.next || g >= tr.end) return;  // BeginCollective skips it
    tr.next += n;
    Pump(t);
    ResultDone();
    return;
  }
  // In flight on this tree: sent (below next) and not yet acknowledged, which
  // in VID order are the last in_flight packets sent (results come back in
  // order: one path per tree).
  const uint64_t oldest = tr.next - uint64_t{tr.in_flight} * n;
  if (!running_ || tr.in_flight == 0 || g != oldest) {
    ++counters_.unexpected_results;
    return;
  }
  CheckAndCount(g, p, len);
  --tr.in_flight;
  tr.last_progress_ps = NowPs();
  const bool marked = (tos & 0x3) == 0x3;
  counters_.results_marked += marked;
  const uint16_t cap = p4::LoadBe16(p + pn::kOffWndCap);
  counters_.min_wnd_cap = std::min<uint32_t>(counters_.min_wnd_cap, cap);
  const uint64_t hits = tr.window.cap_hits();
  tr.window.OnResult(marked, cap, tr.in_flight);
  counters_.cap_hits += tr.window.cap_hits() - hits;
  counters_.cwnd_sum += tr.window.cwnd();
  window_trace_(t, static_cast<uint32_t>(g / n), tr.window.cwnd());
  if (tracing_) TraceResult(t, g, marked);
  Pump(t);
  ResultDone();
}

void PanamaWorker::TraceResult(uint32_t t, uint64_t g, bool marked) {
  Tree& tr = trees_[t];
  const uint64_t now = NowPs();
  const uint64_t sent = tr.sent_ps.empty() ? now : tr.sent_ps.front();
  if (!tr.sent_ps.empty()) tr.sent_ps.pop_front();
  const auto& w = tr.window;
  fmt::format_to(std::back_inserter(owner_->window_trace_rows()), "{:.9f},{},{},{},{},{:.6g},{:.6g},{:.6g},{},{},{:.3f}\n",
                 now * 1e-12, spec_->jid, owner_->record(collective_).iteration, t, g / spec_->trees, w.cwnd(), w.ssthresh(), w.alpha(),
                 marked ? 1 : 0, tr.in_flight, (now - sent) * 1e-6);
}

void PanamaWorker::CheckAndCount(uint64_t g, const uint8_t* p, uint32_t len) {
  const uint32_t count = (len - static_cast<uint32_t>(pn::kPanamaHeaderBytes)) / 4;
  const uint64_t bad = owner_->CheckResult(g, p + pn::kPanamaHeaderBytes, count);
  const CollectiveLayout::Unit u = owner_->layout().Locate(g);
  const uint64_t expected_count = u.count;
  CollectiveRecord& rec = owner_->record(u.collective);
  rec.elements_checked += count;
  rec.mismatches += bad + (count != expected_count ? expected_count : 0);
  counters_.elements_checked += count;
  counters_.mismatches += bad;
  ++counters_.results;
}

void PanamaWorker::ResultDone() {
  if (--outstanding_ != 0) return;
  running_ = false;
  Simulator::Cancel(timeout_event_);
  owner_->WorkerCollectiveDone(rank_, collective_);
}

void PanamaWorker::ArmTimeoutCheck() {
  Simulator::Cancel(timeout_event_);
  timeout_event_ = Simulator::Schedule(PicoSeconds(spec_->timeout_ps), &PanamaWorker::CheckTimeouts, this);
}

void PanamaWorker::CheckTimeouts() {
  if (!running_) return;
  const uint64_t now = NowPs();
  for (size_t t = 0; t < trees_.size(); ++t) {
    Tree& tr = trees_[t];
    if (tr.in_flight > 0 && !tr.timed_out && now - tr.last_progress_ps >= spec_->timeout_ps) {
      tr.timed_out = true;  // reported once per tree; the run ends at the time limit
      ++counters_.timeouts;
      timeout_trace_(spec_->jid, t);
      NS_LOG_WARN("job " << spec_->jid << " rank " << rank_ << ": tree " << t << " made no progress for timeout_us");
    }
  }
  ArmTimeoutCheck();
}

bool PanamaJobSet::KeyFrame(const p4::FrameView& view, inasim::Span<const uint8_t> frame, FrameKey& key) const {
  if (!view.ipv4 || !view.l4 || view.protocol != p4::kIpProtoUdp || view.dscp != pn::kAggregationDscp) return false;
  if (frame.size() < size_t{view.l4_payload_offset} + pn::kPanamaHeaderBytes) return false;
  const uint8_t* h = frame.data() + view.l4_payload_offset;
  const uint16_t jid = p4::LoadBe16(h + pn::kOffJid);
  for (const auto& job : jobs_) {
    if (job->jid() != jid) continue;
    const uint32_t trees = job->spec().trees;
    key.kind = IsPanamaGroupIpv4(view.dst_ip) ? "update" : "result";
    key.job = jid;
    key.id = uint64_t{p4::LoadBe32(h + pn::kOffVid)} * trees + h[pn::kOffTid];
    key.aux = h[pn::kOffTid];
    return true;
  }
  return false;
}

// --------------------------------------------------------------------- PanamaJob
PanamaJob::PanamaJob(Fabric& fabric, const std::vector<uint32_t>& hosts, DataPattern pattern, uint64_t seed,
                     const PanamaSpec& spec, uint16_t jid, const std::vector<uint64_t>& elements,
                     uint32_t iterations, uint64_t compute_gap_ps, const ScheduleSpec& schedule)
    : spec_(spec),
      hosts_(hosts),
      layout_(elements, spec.elements_per_packet, iterations),
      scheduled_(schedule.given),
      fabric_(&fabric) {
  const uint32_t n = static_cast<uint32_t>(hosts.size());
  const topo::Topology& topology = fabric.topology();
  spec_.jid = jid;
  spec_.jobs.clear();
  schedule_ = IterationSchedule::Of(schedule, n, layout_.elements().size(), compute_gap_ps, seed);
  trees_ = BuildJobTrees(topology, spec_, hosts);
  rank_of_vertex_.assign(topology.num_vertices(), ~0u);
  for (uint32_t r = 0; r < n; ++r) rank_of_vertex_[hosts[r]] = r;
  records_ = IterationRecords(n, iterations, layout_.elements());
  // Each collective its own values (same rank weights): a stale result is wrong data.
  const TensorData job_data(DType::kFloat32, pattern, seed, n);
  for (uint32_t c = 0; c < records_.size(); ++c) data_.push_back(job_data.ForIteration(c));
  for (uint32_t r = 0; r < n; ++r) {
    auto w = CreateObject<PanamaWorker>();
    fabric.host(hosts[r])->AddApplication(w);
    w->Setup(this, r, fabric.device(hosts[r], 0));
    workers_.push_back(w);
  }
}

PanamaJob::~PanamaJob() = default;

std::vector<topo::AggregationTree> PanamaJob::BuildJobTrees(const topo::Topology& topology, const PanamaSpec& spec,
                                                            const std::vector<uint32_t>& hosts) {
  // §4.1: trees through different roots; with fewer candidate roots than
  // trees (one rack: only the ToR) the roots repeat and the trees differ only
  // by TID (§3 (2): "a single ToR switch if all workers are in the same rack").
  std::vector<uint32_t> roots;
  if (spec.tree_roots.empty()) {
    std::vector<uint32_t> common;
    try {
      common = topo::CommonRoots(topology, hosts);
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(fmt::format("workload.hosts: panama: {}", e.what()));
    }
    for (uint32_t t = 0; t < spec.trees; ++t)
      roots.push_back(common[spec.trees <= common.size() ? uint64_t{t} * common.size() / spec.trees
                                                         : t % common.size()]);
  } else {
    for (const std::string& name : spec.tree_roots) {
      uint32_t v = topology.num_hosts();
      while (v < topology.num_vertices() && topology.node(v).name != name) ++v;
      if (v == topology.num_vertices())
        throw ScenarioError(fmt::format("workload.panama.tree_roots: no switch named \"{}\"", name));
      roots.push_back(v);
    }
  }
  std::vector<topo::AggregationTree> trees;
  for (uint32_t root : roots) {
    try {
      trees.push_back(topo::BuildTree(topology, root, hosts));
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(fmt::format("workload.panama.{}: tree rooted at {}: {}",
                                      spec.tree_roots.empty() ? "trees" : "tree_roots", topology.node(root).name,
                                      e.what()));
    }
  }
  return trees;
}

void PanamaJob::CheckAccelerators(const topo::Topology& topology,
                                  const std::vector<const std::vector<topo::AggregationTree>*>& job_trees) {
  for (size_t j = 0; j < job_trees.size(); ++j) {
    std::map<uint32_t, std::vector<uint16_t>> children;  // switch -> the job's children there
    for (const topo::AggregationTree& tree : *job_trees[j])
      for (uint32_t v : tree.vertices()) {
        if (topology.is_host(v)) continue;
        if (topology.ports(v).size() > pn::kMaxPorts)
          throw ScenarioError(fmt::format("workload.protocol: panama puts an accelerator on every switch of a tree, "
                                          "and {} has {} ports; the accelerator model takes at most {}",
                                          topology.node(v).name, topology.ports(v).size(), pn::kMaxPorts));
        std::vector<uint16_t> mine = tree.child_ports[v];
        std::sort(mine.begin(), mine.end());
        const auto [it, fresh] = children.emplace(v, mine);
        if (!fresh && it->second != mine)
          throw ScenarioError(fmt::format(
              "workload.panama.trees: switch {} has different children in different trees of job {}; the "
              "accelerator keeps one ports bitmap per job (panama §5 (2)): use fewer trees",
              topology.node(v).name, j));
      }
  }
}

void PanamaJob::InstallAccelerators(Fabric& fabric, const std::vector<PanamaJob*>& jobs) {
  std::vector<const std::vector<topo::AggregationTree>*> job_trees;
  for (const PanamaJob* job : jobs) job_trees.push_back(&job->trees_);
  CheckAccelerators(fabric.topology(), job_trees);
  const PanamaSpec& run = jobs.front()->spec_;  // accelerator parameters are the run's, not per job
  for (PanamaJob* job : jobs) {
    std::vector<uint32_t> switches;
    for (const auto& tree : job->trees_)
      for (uint32_t v : tree.vertices())
        if (!fabric.topology().is_host(v)) switches.push_back(v);
    std::sort(switches.begin(), switches.end());
    switches.erase(std::unique(switches.begin(), switches.end()), switches.end());
    for (uint32_t v : switches) job->JoinAccelerator(fabric, v, run);
  }
}

void PanamaJob::JoinAccelerator(Fabric& fabric, uint32_t v, const PanamaSpec& run) {
  const topo::Topology& topology = fabric.topology();
  const uint32_t ports = static_cast<uint32_t>(topology.ports(v).size());
  std::vector<pn::TreeRoute> routes(trees_.size());
  for (uint32_t t = 0; t < trees_.size(); ++t) {
    if (!trees_[t].contains(v)) continue;
    routes[t].parent_port = trees_[t].parent_port[v];
    for (uint16_t p : trees_[t].child_ports[v]) {
      const uint32_t child = topology.ports(v)[p].peer;
      const uint32_t ip = topology.is_host(child) ? HostIpv4(child) : 0;
      routes[t].children.push_back({p, ip, ip ? MacBytesOfIpv4(ip) : std::array<uint8_t, 6>{}});
    }
  }
  const pn::PanamaJob job = AcceleratorJob(topology, v);
  pn::PanamaTreeSwitch& program = InstallOrJoin<pn::PanamaTreeSwitch>(
      fabric.switch_node(v - topology.num_hosts()),
      [&] {
        pn::TreeSwitchConfig c;
        c.accelerator.num_ports = ports;
        c.accelerator.float_mode = run.ieee_float ? pn::FloatMode::kIeee : pn::FloatMode::kFpga;
        c.accelerator.latency.mode = run.latency_table1 ? pn::LatencyMode::kTable1 : pn::LatencyMode::kEquation;
        c.accelerator.buffer_bytes = run.accelerator_buffer_bytes;
        c.accelerator.claim_all_traffic = false;  // other traffic keeps the switch's own forwarding
        c.accelerator.jobs.push_back(job);
        c.routes.push_back(routes);
        return std::make_unique<pn::PanamaTreeSwitch>(std::move(c));
      },
      [&](pn::PanamaTreeSwitch& installed) { installed.AddJob(job, routes); });
  accelerators_[v] = &program.accelerator();
  if (spec_.quorum < 1) {
    // PANAMA-<quorum>: this accelerator's partial sums of our JID are counted here
    // (after those of the jobs that joined it before).
    auto earlier = std::move(program.mutable_accelerator().on_partial_aggregate);
    program.mutable_accelerator().on_partial_aggregate =
        [earlier = std::move(earlier), jid = spec_.jid, self = this, v](uint16_t j, uint8_t tid, uint32_t vid,
                                                                         inasim::Span<const uint16_t> in) {
          if (earlier) earlier(j, tid, vid, in);
          if (j == jid) self->RecordPartial(v, tid, vid, in);
        };
  }
}

pn::PanamaJob PanamaJob::AcceleratorJob(const topo::Topology& topology, uint32_t v) const {
  pn::PanamaJob pj;
  pj.jid = spec_.jid;
  for (const topo::AggregationTree& tree : trees_) {
    if (!tree.contains(v)) continue;
    // One Ports_bitmap per job per accelerator (§5 (2)): the same in every tree (CheckAccelerators).
    pj.ports_bitmap = 0;
    for (uint16_t p : tree.child_ports[v]) pj.ports_bitmap |= uint64_t{1} << p;
  }
  pj.quorum = spec_.quorum;
  if (pj.quorum < 1) {
    // The quorum's weights: the job's workers behind each child port (the
    // same in every tree through this switch: the bitmap is).
    pj.port_workers.assign(topology.ports(v).size(), 0);
    for (uint32_t t = 0; t < trees_.size(); ++t) {
      if (!trees_[t].contains(v)) continue;
      for (uint16_t p : trees_[t].child_ports[v]) pj.port_workers[p] = SubtreeWorkers(t, topology.ports(v)[p].peer);
      break;
    }
  }
  pj.num_trees = static_cast<uint32_t>(trees_.size());
  pj.result = pn::ResultRoute::kRouted;
  return pj;
}

const pn::PanamaDataplane* PanamaJob::accelerator(uint32_t v) const {
  const auto it = accelerators_.find(v);
  return it == accelerators_.end() ? nullptr : it->second;
}

void PanamaJob::Start(uint64_t at_ps) {
  const uint64_t now = NowPs(), start = std::max(at_ps, now);
  for (uint32_t r = 0; r < workers_.size(); ++r) {
    workers_[r]->SetStartTime(PicoSeconds(0));
    Simulator::Schedule(PicoSeconds(schedule_->StartOf(r, 0, start) - now), &PanamaWorker::BeginCollective,
                        workers_[r], 0u);
  }
}

std::vector<IterationStart> PanamaJob::IterationStarts(uint32_t job) const {
  return scheduled_ ? schedule_->Starts(job, hosts_) : std::vector<IterationStart>{};
}

double PanamaJob::progress() const {
  const uint64_t total = total_packets() * workers_.size();
  return total ? static_cast<double>(results_total_) / static_cast<double>(total) : 1.0;
}

uint32_t PanamaJob::SubtreeWorkers(uint32_t tree, uint32_t v) const {
  const topo::Topology& topology = fabric_->topology();
  if (topology.is_host(v)) return 1;
  uint32_t n = 0;
  for (uint16_t p : trees_[tree].child_ports[v]) n += SubtreeWorkers(tree, topology.ports(v)[p].peer);
  return n;
}

void PanamaJob::RecordPartial(uint32_t v, uint8_t tid, uint32_t vid, inasim::Span<const uint16_t> ports) {
  ++partial_aggregations_;
  const uint64_t g = uint64_t{vid} * trees_.size() + tid;
  partial_ports_[g].emplace_back(v, std::vector<uint16_t>(ports.begin(), ports.end()));
}

void PanamaJob::ExcludeBelow(uint32_t tree, uint32_t v, std::vector<uint8_t>& in) const {
  const topo::Topology& topology = fabric_->topology();
  if (topology.is_host(v)) {
    in[rank_of_vertex_[v]] = 0;
    return;
  }
  for (uint16_t p : trees_[tree].child_ports[v]) ExcludeBelow(tree, topology.ports(v)[p].peer, in);
}

std::vector<uint8_t> PanamaJob::HintedContributors(uint64_t g) const {
  const auto sit = senders_.find(g);
  if (sit == senders_.end()) return {};
  std::vector<uint8_t> in = sit->second;
  const auto pit = partial_ports_.find(g);
  if (pit == partial_ports_.end()) return in;
  const uint32_t t = static_cast<uint32_t>(g % trees_.size());
  const topo::Topology& topology = fabric_->topology();
  for (const auto& [v, ports] : pit->second)
    for (uint16_t p : trees_[t].child_ports[v])
      if (std::find(ports.begin(), ports.end(), p) == ports.end()) ExcludeBelow(t, topology.ports(v)[p].peer, in);
  return in;
}

void PanamaJob::NoteSent(uint64_t g, uint32_t rank) {
  if (spec_.quorum >= 1) return;
  std::vector<uint8_t>& sent = senders_[g];
  if (sent.empty()) sent.assign(num_workers(), 0);
  sent[rank] = 1;
}

uint32_t PanamaJob::ReduceAt(const TensorData& data, uint32_t tree, uint32_t v, uint64_t element,
                             const std::vector<uint8_t>* in) {
  const topo::Topology& topology = fabric_->topology();
  if (topology.is_host(v)) {
    const uint32_t rank = rank_of_vertex_[v];
    return !in || (*in)[rank] ? data.Value(rank, element) : 0;  // a worker left out adds +0
  }
  const uint32_t ports = static_cast<uint32_t>(topology.ports(v).size());
  std::vector<uint32_t> leaves(ports, 0);  // +0 outside the bitmap (fp_datapath.v:278-285)
  for (uint16_t p : trees_[tree].child_ports[v]) leaves[p] = ReduceAt(data, tree, topology.ports(v)[p].peer, element, in);
  const pn::AdderTree adder(ports, spec_.ieee_float ? pn::FloatMode::kIeee : pn::FloatMode::kFpga);
  return adder.Reduce(inasim::Span<const uint32_t>(leaves.data(), leaves.size()));
}

std::vector<uint32_t> PanamaJob::TreeOrderSum(uint64_t g, uint64_t count, const std::vector<uint8_t>* in) {
  const uint32_t t = static_cast<uint32_t>(g % trees_.size());
  const CollectiveLayout::Unit u = layout_.Locate(g);
  const TensorData& data = data_[u.collective];
  const uint64_t first = u.first_element;
  std::vector<uint32_t> values(count);
  for (uint64_t i = 0; i < count; ++i) values[i] = ReduceAt(data, t, trees_[t].root, first + i, in);
  return values;
}

PanamaJob::QuorumWalk PanamaJob::QuorumHolds(uint32_t tree, uint32_t v, const std::vector<uint8_t>& in) const {
  const topo::Topology& topology = fabric_->topology();
  if (topology.is_host(v)) return {true, in[rank_of_vertex_[v]] != 0, 1};
  QuorumWalk w{true, false, 0};
  uint32_t have = 0;
  for (uint16_t p : trees_[tree].child_ports[v]) {
    const QuorumWalk c = QuorumHolds(tree, topology.ports(v)[p].peer, in);
    w.ok = w.ok && c.ok;
    w.workers += c.workers;
    if (c.any) have += c.workers, w.any = true;
  }
  // As the accelerator weighs its ports (panama_dataplane.cc: need = ceil(quorum x workers)).
  const auto need = static_cast<uint32_t>(std::ceil(spec_.quorum * static_cast<double>(w.workers) - 1e-9));
  w.ok = w.ok && (!w.any || have >= need);
  return w;
}

bool PanamaJob::Explains(uint64_t g, const uint8_t* values, uint32_t count, const std::vector<uint8_t>& in,
                         std::vector<uint32_t>& want) {
  // The quorum at every switch of the tree, then the first value (cheap), then
  // every value bit for bit in the adder order over `in`.
  const uint32_t t = static_cast<uint32_t>(g % trees_.size());
  const CollectiveLayout::Unit u = layout_.Locate(g);
  const TensorData& data = data_[u.collective];
  const uint64_t first = u.first_element;
  if (!QuorumHolds(t, trees_[t].root, in).ok || ReduceAt(data, t, trees_[t].root, first, &in) != p4::LoadBe32(values))
    return false;
  want = TreeOrderSum(g, count, &in);
  for (uint32_t i = 0; i < count; ++i)
    if (p4::LoadBe32(values + 4 * i) != want[i]) return false;
  return true;
}

bool PanamaJob::ResolveContributors(uint64_t g, const uint8_t* values, uint32_t count, std::vector<uint32_t>& want) {
  // The result header names no contributors. Workers that had not sent g when
  // its result came are out; among the senders, search the smallest sets left
  // out (k = 0, 1, ...) that keep the quorum at every switch of the tree and
  // whose adder-order sum is the result, bit for bit. With per-rank weighted
  // data two different sets give different sums.
  const auto sit = senders_.find(g);
  if (sit == senders_.end()) return false;
  std::vector<uint32_t> senders;
  for (uint32_t r = 0; r < sit->second.size(); ++r)
    if (sit->second[r]) senders.push_back(r);
  // First the set the accelerators' records name: checked like any other (the
  // quorum rule at every switch, the adder-order sum bit for bit), so a wrong
  // record or a wrong sum cannot pass; it spares the search below, which a
  // job of tens of workers leaving several out would exhaust.
  if (const std::vector<uint8_t> hint = HintedContributors(g); !hint.empty() && Explains(g, values, count, hint, want))
    return true;
  uint64_t candidates = 0;
  for (uint32_t k = 0; k <= senders.size(); ++k) {
    std::vector<uint32_t> pick(k);  // indices into senders, increasing
    for (uint32_t i = 0; i < k; ++i) pick[i] = i;
    while (true) {
      if (++candidates > kMaxQuorumCandidates) return false;
      std::vector<uint8_t> in = sit->second;
      for (uint32_t i : pick) in[senders[i]] = 0;
      if (Explains(g, values, count, in, want)) return true;
      // Next k-combination of senders.
      int i = static_cast<int>(k) - 1;
      while (i >= 0 && pick[i] == senders.size() - k + i) --i;
      if (i < 0) break;
      ++pick[i];
      for (uint32_t j = i + 1; j < k; ++j) pick[j] = pick[j - 1] + 1;
    }
  }
  return false;
}

PanamaJob::Expected& PanamaJob::ExpectedValues(uint64_t g, const uint8_t* values, uint32_t count) {
  auto it = expected_.find(g);
  if (it != expected_.end()) return it->second;
  Expected e{{}, num_workers()};
  const CollectiveLayout::Unit u = layout_.Locate(g);
  const TensorData& data = data_[u.collective];
  const uint64_t first = u.first_element;
  if (data.exact_in_float() && data.CountMismatchesBe32(first, count, values) == 0) {
    // Every worker's values, exactly (a quorum met by all): no search.
    e.values.resize(count);
    for (uint32_t i = 0; i < count; ++i) e.values[i] = p4::LoadBe32(values + 4 * i);
  } else if (spec_.quorum >= 1) {
    e.values = TreeOrderSum(g, count, nullptr);
  } else if (!ResolveContributors(g, values, count, e.values)) {
    ++quorum_unresolved_;  // no set of senders the quorum allows sums to this:
    e.values.clear();      // no expected values, so every value counts as wrong
  }
  return expected_.emplace(g, std::move(e)).first->second;
}

uint64_t PanamaJob::CheckResult(uint64_t g, const uint8_t* values, uint32_t count) {
  ++results_total_;
  const CollectiveLayout::Unit u = layout_.Locate(g);
  const TensorData& data = data_[u.collective];
  const uint64_t first = u.first_element;
  if (data.exact_in_float() && spec_.quorum >= 1) return data.CountMismatchesBe32(first, count, values);
  // Uniform data (the adder order matters) or PANAMA-<quorum> (a partial sum).
  Expected& want = ExpectedValues(g, values, count);
  uint64_t bad = 0;
  for (uint32_t i = 0; i < count; ++i)
    bad += i >= want.values.size() || p4::LoadBe32(values + 4 * i) != want.values[i];
  if (--want.checks_left == 0) {
    expected_.erase(g);
    senders_.erase(g);
    partial_ports_.erase(g);
  }
  return bad;
}

void PanamaJob::WorkerCollectiveDone(uint32_t rank, uint32_t c) {
  const uint64_t now = NowPs();
  records_[c].end_ps[rank] = now;
  if (c + 1 < records_.size()) {
    Simulator::Schedule(PicoSeconds(schedule_->StartOf(rank, c + 1, now) - now), &PanamaWorker::BeginCollective,
                        workers_[rank], c + 1);
    return;
  }
  if (++workers_done_ == workers_.size() && on_finished) on_finished();
}

// ------------------------------------------------------------------ PanamaJobSet
double PanamaJobSet::ArrivalRateForLoad(const PanamaClusterSpec& spec, size_t pool_hosts, double host_rate_gbps) {
  // Offered aggregation load: each worker sends its gradient once per
  // iteration (in-network aggregation), so the jobs arriving at rate lambda
  // put lambda x E[workers] x iterations x E[gradient bytes] x 8 bits per
  // second on the pool's host links, whose capacity is hosts x rate.
  double mean_bytes = 0;
  for (const DnnModel& m : spec.models) mean_bytes += ScaledGradientBytes(m, spec.scale);
  mean_bytes /= static_cast<double>(spec.models.size());
  const double mean_workers = 0.5 * (spec.min_workers + spec.max_workers);
  return spec.load * static_cast<double>(pool_hosts) * host_rate_gbps * 1e9 /
         (8.0 * mean_workers * spec.iterations * mean_bytes);
}

uint64_t PanamaJobSet::ScaledGradientBytes(const DnnModel& m, double scale) {
  return std::max<uint64_t>(4, static_cast<uint64_t>(std::llround(m.GradientBytes() * scale / 4)) * 4);
}

std::vector<PanamaClusterJob> PanamaJobSet::PlaceCluster(const topo::Topology& topology,
                                                        const PanamaClusterSpec& spec,
                                                        const std::vector<uint32_t>& pool, double host_rate_gbps,
                                                        uint64_t seed) {
  if (spec.max_workers > pool.size())
    throw ScenarioError(fmt::format("workload.panama.cluster.max_workers: {} workers, but the cluster has {} hosts "
                                    "(workload.hosts)", spec.max_workers, pool.size()));
  const double rate = spec.load > 0 ? ArrivalRateForLoad(spec, pool.size(), host_rate_gbps) : spec.arrival_rate_per_s;
  topo::SplitMix64 rng(seed ^ 0x636c757374657221ULL);  // "cluster!": a stream of its own
  std::vector<PanamaClusterJob> jobs;
  // Per host, its slots (one job each; a GPU): the controller's estimate of
  // when each is free (seconds) and the job that held it last.
  const uint32_t slots = spec.slots_per_host;
  std::vector<double> free_at(size_t{topology.num_hosts()} * slots, 0.0);
  std::vector<int64_t> last_job(size_t{topology.num_hosts()} * slots, -1);
  auto earliest_slot = [&](uint32_t h) {
    size_t best = size_t{h} * slots;
    for (size_t k = best + 1; k < size_t{h + 1} * slots; ++k)
      if (free_at[k] < free_at[best]) best = k;
    return best;
  };
  double t = static_cast<double>(spec.start_ps) / 1e12;
  for (uint32_t j = 0; j < spec.jobs; ++j) {
    PanamaClusterJob job;
    if (j > 0) t += -std::log1p(-rng.NextUnit()) / rate;  // Poisson arrivals
    if (spec.window_ps && t * 1e12 >= static_cast<double>(spec.start_ps + spec.window_ps)) break;
    job.arrival_ps = static_cast<uint64_t>(std::llround(t * 1e12));
    const uint32_t w = spec.min_workers + static_cast<uint32_t>(rng.Next() % (spec.max_workers - spec.min_workers + 1));
    const DnnModel& m = spec.models[rng.Next() % spec.models.size()];
    job.model = std::string(m.name);
    // Scaled alike, so the ratio of communication to computation is the model's.
    job.bytes = ScaledGradientBytes(m, spec.scale);
    job.compute_ps = static_cast<uint64_t>(std::llround(m.ComputeSeconds() * spec.scale * 1e12));
    const double estimate =
        spec.iterations * (static_cast<double>(job.compute_ps) / 1e12 + 2.0 * job.bytes * 8 / (host_rate_gbps * 1e9));
    // Hosts with a free slot (by the estimate), grouped by rack; racks with
    // the most free slots first, and in a rack the hosts with the most (with
    // one slot per host: racks with the most free hosts, in host order).
    auto free_slots = [&](uint32_t h) {
      uint32_t n = 0;
      for (size_t k = size_t{h} * slots; k < size_t{h + 1} * slots; ++k) n += free_at[k] <= t;
      return n;
    };
    std::map<uint32_t, std::vector<uint32_t>> free_by_rack;
    std::map<uint32_t, uint32_t> rack_free_slots;
    for (uint32_t h : pool)
      if (const uint32_t n = free_slots(h)) {
        free_by_rack[topology.tor_of(h)].push_back(h);
        rack_free_slots[topology.tor_of(h)] += n;
      }
    size_t free_count = 0;
    for (const auto& [rack, hs] : free_by_rack) free_count += hs.size();
    if (free_count >= w) {
      std::vector<std::pair<uint32_t, std::vector<uint32_t>*>> racks;
      for (auto& [rack, hs] : free_by_rack) racks.emplace_back(rack, &hs);
      std::stable_sort(racks.begin(), racks.end(), [&](const auto& a, const auto& b) {
        return rack_free_slots[a.first] > rack_free_slots[b.first];
      });
      for (auto& [rack, hs] : racks) {
        std::stable_sort(hs->begin(), hs->end(), [&](uint32_t a, uint32_t b) { return free_slots(a) > free_slots(b); });
        for (uint32_t h : *hs)
          if (job.hosts.size() < w) job.hosts.push_back(h);
      }
    } else {
      std::vector<uint32_t> order = pool;
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return free_at[earliest_slot(a)] < free_at[earliest_slot(b)];
      });
      job.hosts.assign(order.begin(), order.begin() + w);
    }
    std::sort(job.hosts.begin(), job.hosts.end());
    double start = t;
    for (uint32_t h : job.hosts) start = std::max(start, free_at[earliest_slot(h)]);
    std::set<uint32_t> racks;
    for (uint32_t h : job.hosts) {
      racks.insert(topology.tor_of(h));
      const size_t k = earliest_slot(h);
      if (last_job[k] >= 0) job.after.push_back(static_cast<size_t>(last_job[k]));
      last_job[k] = j;
      free_at[k] = start + estimate;
    }
    std::sort(job.after.begin(), job.after.end());
    job.after.erase(std::unique(job.after.begin(), job.after.end()), job.after.end());
    job.racks = static_cast<uint32_t>(racks.size());
    jobs.push_back(std::move(job));
  }
  return jobs;
}

PanamaJobSet::PanamaJobSet(Fabric& fabric, const Scenario& s, const std::vector<uint32_t>& workload_hosts)
    : pool_hosts_(workload_hosts.size()) {
  const PanamaSpec& ps = s.workload.spec<PanamaSpec>();
  const uint32_t nh = fabric.topology().num_hosts();
  std::vector<PanamaJob*> all;
  if (ps.cluster.jobs && ps.cluster.allreduce == PanamaClusterSpec::Allreduce::kRing) {
    // Ring-AllReduce (§7's baseline): the same arrivals, models and placement,
    // each job a host ring over its workers in rank order.
    if (s.workload.data == DataPattern::kUniform)
      throw ScenarioError("workload.data: \"uniform\" fp32 sums depend on the adder order; the ring cluster checks "
                          "exact sums (use \"hashed\" or \"ones\")");
    cluster_ = PlaceCluster(fabric.topology(), ps.cluster, workload_hosts, s.links.host_rate_gbps, s.seed);
    RingConfig rc = RingConfigOf(s);
    for (size_t i = 0; i < cluster_.size(); ++i) {
      const PanamaClusterJob& cj = cluster_[i];
      ns3::NodeContainer nodes;
      std::vector<ns3::Ipv4Address> addrs;
      for (uint32_t h : cj.hosts) {
        nodes.Add(fabric.host(h));
        addrs.push_back(fabric.host_address(h));
      }
      rc.udp_port = static_cast<uint16_t>(ps.udp_port + i);  // a host may hold several jobs' ranks in turn
      try {
        rings_.push_back(std::make_unique<RingAllreduce>(nodes, addrs, std::vector<uint64_t>{cj.bytes / 4},
                                                         DType::kFloat32, s.workload.data,
                                                         ConsecutiveJobSeed(s.seed, i), rc, ps.cluster.iterations,
                                                         cj.compute_ps, static_cast<uint16_t>(s.links.mtu_bytes)));
        rings_.back()->SetHosts(cj.hosts);
      } catch (const std::invalid_argument& e) {
        throw ScenarioError(fmt::format("workload.panama.cluster: job {}: {}", i, e.what()));
      }
      start_ps_.push_back(cj.arrival_ps);
    }
  } else if (ps.cluster.jobs) {
    cluster_ = PlaceCluster(fabric.topology(), ps.cluster, workload_hosts, s.links.host_rate_gbps, s.seed);
    for (size_t i = 0; i < cluster_.size(); ++i) {
      const PanamaClusterJob& cj = cluster_[i];
      PanamaSpec spec = ps;
      spec.udp_port = static_cast<uint16_t>(ps.udp_port + i);  // a host may hold several jobs' workers in turn
      try {
        jobs_.push_back(std::make_unique<PanamaJob>(fabric, cj.hosts, s.workload.data, ConsecutiveJobSeed(s.seed, i),
                                                    spec, static_cast<uint16_t>(ps.jid + i),
                                                    std::vector<uint64_t>{cj.bytes / 4}, ps.cluster.iterations,
                                                    cj.compute_ps));
      } catch (const std::invalid_argument& e) {
        throw ScenarioError(fmt::format("workload.panama.cluster: job {}: {}", i, e.what()));
      }
      all.push_back(jobs_.back().get());
      start_ps_.push_back(cj.arrival_ps);
    }
  } else {
    std::vector<PanamaJobSpec> jobs = ps.jobs;
    if (jobs.empty()) {  // one job: workload.hosts, bytes, iterations
      PanamaJobSpec one;
      one.bytes = s.workload.bytes;
      one.iterations = s.workload.iterations;
      one.start_ps = s.workload.start_ps;
      one.compute_gap_ps = s.workload.compute_gap_ps;
      jobs.push_back(one);
    }
    const std::vector<std::vector<uint32_t>> job_hosts = FixedJobHosts(s, nh, workload_hosts);
    for (size_t i = 0; i < jobs.size(); ++i) {
      const std::vector<uint32_t>& hosts = job_hosts[i];
      // One job of workload.* may run workload.schedule; workload.panama.jobs' have one collective each.
      const ScheduleSpec& schedule = ps.jobs.empty() ? s.workload.schedule : ScheduleSpec{};
      try {
        jobs_.push_back(std::make_unique<PanamaJob>(fabric, hosts, s.workload.data, ConsecutiveJobSeed(s.seed, i),
                                                    ps, static_cast<uint16_t>(ps.jid + i),
                                                    CollectiveElements(schedule, jobs[i].bytes), jobs[i].iterations,
                                                    jobs[i].compute_gap_ps, schedule));
      } catch (const std::invalid_argument& e) {
        throw ScenarioError(fmt::format("workload: {}", e.what()));
      }
      all.push_back(jobs_.back().get());
      start_ps_.push_back(jobs[i].start_ps);
    }
  }
  if (!all.empty()) {
    try {
      PanamaJob::InstallAccelerators(fabric, all);
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(fmt::format("workload: {}", e.what()));
    }
  }
  const size_t n = count();
  dependents_.assign(n, {});
  waiting_on_.assign(n, 0);
  for (size_t j = 0; j < cluster_.size(); ++j) {
    waiting_on_[j] = cluster_[j].after.size();
    for (size_t a : cluster_[j].after) dependents_[a].push_back(j);
  }
  started_ps_.assign(n, 0);
  ended_ps_.assign(n, 0);
  started_.assign(n, 0);
  ended_.assign(n, 0);
  for (size_t j = 0; j < jobs_.size(); ++j) jobs_[j]->on_finished = [this, j] { JobDone(j); };
  for (size_t j = 0; j < rings_.size(); ++j) rings_[j]->on_finished = [this, j] { JobDone(j); };
}

PanamaJobSet::~PanamaJobSet() = default;

std::vector<std::vector<uint32_t>> PanamaJobSet::FixedJobHosts(const Scenario& s, uint32_t nh,
                                                             const std::vector<uint32_t>& workload_hosts) {
  const PanamaSpec& ps = s.workload.spec<PanamaSpec>();
  if (ps.jobs.empty()) return {workload_hosts};
  std::vector<std::vector<uint32_t>> out;
  std::vector<uint8_t> used(nh, 0);
  for (size_t i = 0; i < ps.jobs.size(); ++i) {
    const HostSelection& sel = ps.jobs[i].hosts;
    for (uint32_t h : sel.list)
      if (h >= nh)
        throw ScenarioError(fmt::format("workload.panama.jobs[{}].hosts: host {} does not exist (the topology has {} "
                                        "hosts)", i, h, nh));
    if (sel.count > nh)
      throw ScenarioError(fmt::format("workload.panama.jobs[{}].hosts.count: {} hosts asked for, the topology has {}",
                                      i, sel.count, nh));
    out.push_back(SelectHosts(sel, nh, ConsecutiveJobSeed(s.seed, i)));
    for (uint32_t h : out.back()) {
      if (used[h])
        throw ScenarioError(fmt::format("workload.panama.jobs[{}].hosts: host {} is already a worker of another "
                                        "job (jobs need disjoint hosts)", i, h));
      used[h] = 1;
    }
  }
  return out;
}

void PanamaJobSet::CheckPlacement(const topo::Topology& topology, const Scenario& s,
                                  const std::vector<uint32_t>& workload_hosts) {
  const PanamaSpec& ps = s.workload.spec<PanamaSpec>();
  std::vector<std::vector<uint32_t>> job_hosts;
  if (ps.cluster.jobs) {
    if (ps.cluster.allreduce == PanamaClusterSpec::Allreduce::kRing && s.workload.data == DataPattern::kUniform)
      throw ScenarioError("workload.data: \"uniform\" fp32 sums depend on the adder order; the ring cluster checks "
                          "exact sums (use \"hashed\" or \"ones\")");
    for (PanamaClusterJob& cj : PlaceCluster(topology, ps.cluster, workload_hosts, s.links.host_rate_gbps, s.seed))
      job_hosts.push_back(std::move(cj.hosts));
    if (ps.cluster.allreduce == PanamaClusterSpec::Allreduce::kRing) return;  // host rings: no accelerators
  } else {
    job_hosts = FixedJobHosts(s, topology.num_hosts(), workload_hosts);
  }
  std::vector<std::vector<topo::AggregationTree>> trees;
  for (const std::vector<uint32_t>& hosts : job_hosts) trees.push_back(PanamaJob::BuildJobTrees(topology, ps, hosts));
  std::vector<const std::vector<topo::AggregationTree>*> job_trees;
  for (const auto& t : trees) job_trees.push_back(&t);
  PanamaJob::CheckAccelerators(topology, job_trees);
}

void PanamaJobSet::Start() {
  for (size_t j = 0; j < count(); ++j)
    if (waiting_on_[j] == 0) StartJob(j, start_ps_[j]);
}

void PanamaJobSet::StartJob(size_t j, uint64_t at_ps) {
  started_ps_[j] = at_ps;
  started_[j] = 1;
  if (!rings_.empty()) {
    const uint64_t now = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
    rings_[j]->Start(at_ps > now ? at_ps - now : 0);  // relative to now
  } else {
    jobs_[j]->Start(at_ps);
  }
}

void PanamaJobSet::JobDone(size_t j) {
  const uint64_t now = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
  ended_ps_[j] = now;
  ended_[j] = 1;
  // The jobs that waited for these hosts: each starts once all its predecessors are done.
  for (size_t d : dependents_[j])
    if (--waiting_on_[d] == 0) StartJob(d, std::max(start_ps_[d], now));
  if (++jobs_done_ == count() && on_finished) on_finished();
}

double PanamaJobSet::progress() const {
  double p = 0;
  for (const auto& j : jobs_) p += j->progress();
  for (const auto& r : rings_) p += r->progress();
  return p / static_cast<double>(count());
}

}  // namespace inasim
