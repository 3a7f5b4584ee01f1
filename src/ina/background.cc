#include "ina/background.h"

#include "congestion/flow_stats.h"
#include "congestion/load_balancer.h"

#include "ns3/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace inasim {

using nlohmann::json;

namespace {
/// PANAMA's short/long split (40 MB), scaled with the flow sizes.
uint64_t LongFlowBytes(const BackgroundFlowsSpec& b) {
  return static_cast<uint64_t>(std::llround(40e6 * b.size_scale));
}
}  // namespace

std::vector<uint32_t> SelectHosts(const HostSelection& sel, uint32_t nh, uint64_t seed,
                                  const std::vector<uint32_t>& workload_hosts) {
  if (sel.others) {
    std::vector<uint8_t> used(nh, 0);
    for (uint32_t h : workload_hosts) used[h] = 1;
    std::vector<uint32_t> out;
    for (uint32_t h = 0; h < nh; ++h)
      if (!used[h]) out.push_back(h);
    return out;
  }
  if (!sel.list.empty()) return sel.list;
  const uint32_t n = sel.count ? sel.count : nh;
  std::vector<uint32_t> out(n);
  switch (sel.placement) {
    case Placement::kFirst:
      for (uint32_t i = 0; i < n; ++i) out[i] = i;
      break;
    case Placement::kSpread:
      for (uint32_t i = 0; i < n; ++i) out[i] = static_cast<uint32_t>(uint64_t{i} * nh / n);
      break;
    case Placement::kRandom: {
      // Partial Fisher-Yates over SplitMix64: platform-independent for a seed.
      std::vector<uint32_t> all(nh);
      for (uint32_t i = 0; i < nh; ++i) all[i] = i;
      uint64_t state = seed ^ 0x5eed5eed5eed5eedULL;
      for (uint32_t i = 0; i < n; ++i) {
        state += 0x9e3779b97f4a7c15ULL;
        const uint64_t r = congestion::Mix64(state);
        const uint32_t j = i + static_cast<uint32_t>(r % (nh - i));
        std::swap(all[i], all[j]);
      }
      out.assign(all.begin(), all.begin() + n);
      std::sort(out.begin(), out.end());
      break;
    }
  }
  return out;
}

uint64_t IdealFctPs(const Fabric& fabric, uint32_t src, uint32_t dst, uint64_t bytes, uint32_t mss) {
  const uint64_t wire_overhead = fabric.device(src, 0).wire_overhead();
  const uint32_t syn = 20 + 40 + 14;  // IP + TCP with SYN options + Ethernet
  const auto first = static_cast<uint32_t>(std::min<uint64_t>(bytes, mss) + congestion::kTcpSegmentHeaderBytes);
  uint64_t bottleneck = 0;
  const uint64_t handshake = 2 * fabric.IdleOneWayPs(src, dst, syn, 0, &bottleneck);
  const uint64_t first_segment = fabric.IdleOneWayPs(src, dst, first);
  const uint64_t segments = (bytes + mss - 1) / mss;
  const uint64_t total = bytes + segments * (congestion::kTcpSegmentHeaderBytes + wire_overhead);
  const double rest_ps = static_cast<double>(total - (first + wire_overhead)) * 8e12 / static_cast<double>(bottleneck);
  return handshake + first_segment + static_cast<uint64_t>(std::llround(rest_ps));
}

namespace {
// Seed offsets of the background's host selections: placement "random"
// draws a different subset for each part than for the workload.
constexpr uint64_t kFlowHostsSeedOffset = 0xb6f1;
constexpr uint64_t kCongestionHostsSeedOffset = 0xc0c0;
}  // namespace

BackgroundHosts SelectBackgroundHosts(const Scenario& s, uint32_t nh, const std::vector<uint32_t>& workload_hosts) {
  BackgroundHosts h;
  const BackgroundFlowsSpec& b = s.background.flows;
  if (b.enabled && b.list.empty()) h.flows = SelectHosts(b.hosts, nh, s.seed + kFlowHostsSeedOffset, workload_hosts);
  if (b.enabled && !b.list.empty())
    for (const auto& f : b.list)
      for (const uint32_t x : {f.src, f.dst})
        if (std::find(h.flows.begin(), h.flows.end(), x) == h.flows.end()) h.flows.push_back(x);
  const CongestionSpec& c = s.background.congestion;
  if (c.enabled) h.congestion = SelectHosts(c.hosts, nh, s.seed + kCongestionHostsSeedOffset, workload_hosts);
  return h;
}

Background::Background(const Scenario& s, Fabric& fabric, const std::vector<uint32_t>& workload_hosts)
    : s_(s), fabric_(fabric) {
  const uint32_t nh = fabric.topology().num_hosts();
  auto node_of = [&fabric](uint32_t h) { return fabric.ip_host(h); };
  auto address_of = [&fabric](uint32_t h) { return fabric.host_address(h); };
  // A host is vertex h with exactly one link: its NIC is port 0.
  auto backlog_of = [&fabric](uint32_t h) -> congestion::HostTxBacklog* { return &fabric.device(h, 0); };
  BackgroundHosts hosts = SelectBackgroundHosts(s, nh, workload_hosts);
  if (s.background.flows.enabled) {
    const BackgroundFlowsSpec& b = s.background.flows;
    poisson_.hosts = std::move(hosts.flows);
    poisson_.load = b.load;
    poisson_.host_rate_bps = s.links.host_rate_gbps * 1e9;
    poisson_.start_ps = b.start_ps;
    poisson_.stop_ps = b.stop_ps;
    poisson_.seed = s.seed;
    if (b.list.empty()) {
      specs_ = congestion::GeneratePoissonFlows(poisson_, *b.sizes);
      if (b.only != "all") {
        // The same draws as "all" (so the classes add up to it), one class kept.
        const uint64_t split = LongFlowBytes(b);
        const bool keep_long = b.only == "long";
        specs_.erase(std::remove_if(specs_.begin(), specs_.end(),
                                    [&](const congestion::FlowSpec& f) { return (f.bytes >= split) != keep_long; }),
                     specs_.end());
      }
    } else {
      specs_ = b.list;  // poisson_.hosts: the list's endpoints (SelectBackgroundHosts)
    }
    if (!specs_.empty()) {
      flows_ = std::make_unique<congestion::TcpFlowSet>(specs_, b.tcp, node_of, address_of);
      flows_->SetHostBacklogs(backlog_of);
    }
    if (s.outputs.tcp_trace.enabled) InstallTcpTrace(s.outputs.tcp_trace);
  }
  if (s.background.congestion.enabled) {
    const CongestionSpec& c = s.background.congestion;
    congestion::UniformCongestionConfig cc;
    congestion_hosts_ = std::move(hosts.congestion);
    cc.hosts = congestion_hosts_;
    cc.message_bytes = c.message_bytes;
    cc.payload_bytes = c.payload_bytes;
    cc.rate_bps = (c.rate_gbps > 0 ? c.rate_gbps : s.links.host_rate_gbps) * 1e9;
    cc.wire_overhead_bytes = s.links.wire_overhead_bytes;
    cc.start_ps = c.start_ps;
    cc.stop_ps = c.stop_ps ? c.stop_ps : UINT64_MAX;
    cc.seed = s.seed;
    cc.port = c.udp_port;
    cc.socket_buffer_bytes = c.socket_buffer_bytes;
    cc.permutation = c.permutation;
    congestion_ = std::make_unique<congestion::UniformCongestion>(
        cc, [&fabric](uint32_t h) -> InaNetDevice& { return fabric.device(h, 0); });
  }
}

void Background::InstallTcpTrace(const congestion::TcpTraceSpec& spec) {
  const std::vector<uint64_t>& wanted = spec.flows;
  for (size_t i = 0; i < wanted.size(); ++i)
    if (wanted[i] >= specs_.size())
      throw ScenarioError(fmt::format("outputs.tcp_trace.flows[{}]: no flow {} (this run has {} background flows{})", i,
                                      wanted[i], specs_.size(),
                                      specs_.empty() ? "" : fmt::format(", numbered 0..{} in flows.csv", specs_.size() - 1)));
  tcp_trace_ = std::make_unique<congestion::TcpTrace>(spec);
  if (!flows_) return;
  flows_->on_sender = [t = tcp_trace_.get()](size_t flow, ns3::Ptr<ns3::TcpSocketBase> socket,
                                             ns3::Ptr<ns3::TcpCongestionOps> cc) {
    if (t->Wants(flow)) t->Attach(flow, socket, cc);
  };
}

void Background::Install(std::function<void()> on_flows_done) {
  if (flows_) {
    flows_->on_all_done = std::move(on_flows_done);
    flows_->Install();
  } else if (on_flows_done) {
    ns3::Simulator::ScheduleNow(on_flows_done);  // no flow was drawn: nothing to wait for
  }
  if (congestion_) congestion_->Install();
}

void Background::Stop() {
  if (congestion_) congestion_->Stop();
}

double Background::flow_progress() const {
  if (!flows_ || flows_->flows().empty()) return 1.0;
  return static_cast<double>(flows_->completed()) / static_cast<double>(flows_->flows().size());
}

uint64_t Background::payload_delivered() const {
  uint64_t bytes = congestion_ ? congestion_->bytes_received() : 0;
  if (flows_)
    for (const congestion::FlowState& f : flows_->flows()) bytes += f.received_bytes;
  return bytes;
}

void Background::Report(json& r, std::vector<std::string>& csv_names, std::vector<std::string>& csv_texts,
                        std::string& summary) const {
  json& bg = r["background"];
  bg = json::object();
  if (s_.background.flows.enabled) {
    const BackgroundFlowsSpec& b = s_.background.flows;
    std::vector<congestion::FlowRecord> done;
    std::string csv = "flow,src,dst,bytes,start_s,end_s,fct_s,ideal_fct_s,slowdown\n";
    uint64_t bytes_done = 0, incomplete = 0;
    if (flows_) {
      for (size_t i = 0; i < flows_->flows().size(); ++i) {
        const congestion::FlowState& f = flows_->flows()[i];
        const uint64_t ideal = IdealFctPs(fabric_, f.spec.src, f.spec.dst, f.spec.bytes, b.tcp.segment_bytes);
        if (f.end_ps) {
          const uint64_t fct = f.end_ps - f.spec.start_ps;
          done.push_back({f.spec.bytes, fct * 1e-12, ideal * 1e-12});
          bytes_done += f.spec.bytes;
          csv += fmt::format("{},{},{},{},{:.12f},{:.12f},{:.12f},{:.12f},{:.6f}\n", i, f.spec.src, f.spec.dst,
                             f.spec.bytes, f.spec.start_ps * 1e-12, f.end_ps * 1e-12, fct * 1e-12, ideal * 1e-12,
                             static_cast<double>(fct) / static_cast<double>(ideal));
        } else {
          ++incomplete;
          csv += fmt::format("{},{},{},{},{:.12f},,,{:.12f},\n", i, f.spec.src, f.spec.dst, f.spec.bytes,
                             f.spec.start_ps * 1e-12, ideal * 1e-12);
        }
      }
    }
    const bool listed = !b.list.empty();
    double listed_bytes = 0;
    for (const auto& f : specs_) listed_bytes += static_cast<double>(f.bytes);
    const double mean_size = listed ? listed_bytes / static_cast<double>(specs_.size()) : b.sizes->Mean();
    bg["flows"] = {
        {"hosts", poisson_.hosts.size()},
        {"size_distribution", listed ? "list" : b.size_distribution},
        {"mean_size_bytes", mean_size},
        {"target_load", listed ? json() : json(b.load)},
        {"offered_load", listed ? json() : json(congestion::RealizedLoad(specs_, poisson_))},
        {"arrival_rate_per_s", listed ? json() : json(congestion::PoissonArrivalRate(poisson_, *b.sizes))},
        {"flows", specs_.size()},
        {"completed", done.size()},
        {"incomplete", incomplete},
        {"completed_bytes", bytes_done},
        {"tcp_variant", b.tcp.variant},
        {"tcp_small_queue_bytes", b.tcp.small_queue_bytes},
        {"tsq_throttles", flows_ ? flows_->tsq_throttles() : 0},
        {"cwnd_growth_withheld", flows_ ? flows_->cwnd_growth_withheld() : 0},
        {"retransmission_timeouts", flows_ ? flows_->retransmission_timeouts() : 0},
        {"size_scale", b.size_scale},
        {"only", b.only},
        {"long_flow_bytes", LongFlowBytes(b)},
        {"fct", congestion::FctReport(done, LongFlowBytes(b))},
    };
    csv_names.push_back("flows.csv");
    csv_texts.push_back(std::move(csv));
    if (tcp_trace_) {
      r["outputs"]["tcp_trace"] = tcp_trace_->Report();
      csv_names.push_back("tcp_trace.csv");
      csv_texts.push_back(tcp_trace_->Csv());
    }
    const json fct = bg["flows"]["fct"]["all"];
    summary += fmt::format("background: {} {} flows ({}), {} completed, {} incomplete", specs_.size(), b.tcp.variant,
                           listed ? std::string("listed")
                                  : fmt::format("{:.1f} % load offered of {:.0f} % target",
                                                100 * congestion::RealizedLoad(specs_, poisson_), 100 * b.load),
                           done.size(), incomplete);
    if (!done.empty() && fct["slowdown"].is_object())
      summary += fmt::format("; slowdown mean {:.2f}, p99 {:.2f}", fct["slowdown"]["mean"].get<double>(),
                             fct["slowdown"]["p99"].get<double>());
    summary += "\n";
  }
  if (congestion_) {
    const CongestionSpec& c = s_.background.congestion;
    const double sent = static_cast<double>(congestion_->bytes_sent());
    bg["congestion"] = {
        {"hosts", congestion_hosts_.size()},
        {"message_bytes", c.message_bytes},
        {"messages_started", congestion_->messages_started()},
        {"messages_sent", congestion_->messages_sent()},
        {"payload_bytes_sent", congestion_->bytes_sent()},
        {"payload_bytes_received", congestion_->bytes_received()},
        {"delivered_fraction", sent > 0 ? static_cast<double>(congestion_->bytes_received()) / sent : 0.0},
        {"last_send_s", congestion_->last_send_ps() * 1e-12},
        {"socket_buffer_bytes", c.socket_buffer_bytes},
        {"peers", c.permutation ? "permutation" : "uniform"},
        {"sender_blocked", congestion_->blocked()},
    };
    summary += fmt::format("congestion: {} hosts, {} messages of {} B started, {:.1f} % of {} payload bytes delivered\n",
                           congestion_hosts_.size(), congestion_->messages_started(), c.message_bytes,
                           sent > 0 ? 100.0 * static_cast<double>(congestion_->bytes_received()) / sent : 0.0,
                           congestion_->bytes_sent());
  }
}

}  // namespace inasim
