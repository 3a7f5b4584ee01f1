#include "congestion/uniform-congestion.h"

#include "ina/addressing.h"
#include "ina/ina-net-device.h"

#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace inasim::congestion {

using namespace ns3;

namespace {
double Uniform01(std::mt19937_64& g) { return static_cast<double>(g() >> 11) * 0x1.0p-53; }
constexpr uint8_t kUdp = 17;
uint64_t NowPs() { return static_cast<uint64_t>(Simulator::Now().GetPicoSeconds()); }
}  // namespace

UniformCongestion::UniformCongestion(const UniformCongestionConfig& config,
                                     std::function<InaNetDevice&(uint32_t)> nic_of)
    : config_(config), nic_of_(std::move(nic_of)), zeros_(config.payload_bytes, 0) {
  if (config_.hosts.size() < 2) throw std::invalid_argument("uniform congestion needs at least 2 hosts");
  if (config_.message_bytes == 0 || config_.payload_bytes == 0 || !(config_.rate_bps > 0))
    throw std::invalid_argument("uniform congestion: message, payload and rate must be positive");
}

void UniformCongestion::Install() {
  hosts_.resize(config_.hosts.size());
  for (size_t i = 0; i < hosts_.size(); ++i) {
    HostState& h = hosts_[i];
    h.host = config_.hosts[i];
    h.index = static_cast<uint32_t>(i);
    // One stream per host, keyed by host id: adding a host never changes another's peers.
    h.rng.seed(config_.seed * 0xd1342543de82ef95ULL + h.host * 0x9e3779b97f4a7c15ULL + 0xc0ffee);
    InaNetDevice& nic = nic_of_(h.host);
    h.rx = std::make_unique<HostEndpoint>();
    h.rx->Open(nic, config_.port,
               [this](const uint8_t*, uint32_t len, const DatagramInfo&) { bytes_received_ += len; });
    h.tx = std::make_unique<HostEndpoint>();
    h.tx->Open(nic, config_.source_port, [](const uint8_t*, uint32_t, const DatagramInfo&) {});
    if (config_.socket_buffer_bytes > 0)
      h.nic_queued = nic.TrackSourcePort(kUdp, config_.source_port, config_.socket_buffer_bytes,
                                         config_.socket_buffer_bytes / 2, [this, i]() { Wake(i); });
    // Start within one packet time, so hosts are not in lock step.
    const double gap = (config_.payload_bytes + 28.0 + 14 + config_.wire_overhead_bytes) * 8e12 / config_.rate_bps;
    const auto offset = static_cast<uint64_t>(Uniform01(h.rng) * gap);
    h.next = Simulator::Schedule(PicoSeconds(config_.start_ps + offset), &UniformCongestion::SendNext, this, i);
  }
}

void UniformCongestion::Stop() {
  stopped_ = true;
  for (HostState& h : hosts_) h.next.Cancel();
}

void UniformCongestion::SendNext(size_t i) {
  HostState& h = hosts_[i];
  const uint64_t now = NowPs();
  if (stopped_ || now >= config_.stop_ps) return;
  if (h.nic_queued && *h.nic_queued >= config_.socket_buffer_bytes) {
    h.waiting = true;  // sendto() blocks; Wake() resumes at line rate
    ++blocked_;
    return;
  }
  if (h.left == 0) {
    const auto n = static_cast<uint32_t>(config_.hosts.size());
    uint32_t j;
    if (config_.permutation) {
      j = PermutationPeer(config_.seed, n, h.round++, h.index, rounds_);
    } else {
      j = static_cast<uint32_t>(Uniform01(h.rng) * (n - 1));
      if (j >= h.index) ++j;  // any host but itself
    }
    h.peer = HostIpv4(config_.hosts[j]);
    h.left = config_.message_bytes;
    ++messages_started_;
  }
  const auto len = static_cast<uint32_t>(std::min<uint64_t>(h.left, config_.payload_bytes));
  h.tx->SendTo(h.peer, config_.port, zeros_.data(), len);
  h.left -= len;
  bytes_sent_ += len;
  last_send_ps_ = now;
  if (h.left == 0) ++messages_sent_;
  const auto gap = static_cast<uint64_t>(
      std::ceil((len + 28.0 + 14 + config_.wire_overhead_bytes) * 8e12 / config_.rate_bps));
  h.next = Simulator::Schedule(PicoSeconds(gap), &UniformCongestion::SendNext, this, i);
}

uint32_t UniformCongestion::PermutationPeer(uint64_t seed, uint32_t n, uint64_t round, uint32_t i,
                                           std::vector<std::vector<uint32_t>>& rounds) {
  while (rounds.size() <= round) {
    // A random order of the hosts (Fisher-Yates), closed into a cycle: host
    // order[k] sends to order[k + 1]. Every n-cycle is equally likely (n
    // rotations of each), nobody sends to itself and everybody receives from
    // exactly one host.
    const uint64_t r = rounds.size();
    std::mt19937_64 g(seed * 0x9e3779b97f4a7c15ULL + r * 0xd1342543de82ef95ULL + 0x7065726dULL);
    std::vector<uint32_t> order(n);
    for (uint32_t k = 0; k < n; ++k) order[k] = k;
    for (uint32_t k = n - 1; k > 0; --k) {
      const auto j = std::min(k, static_cast<uint32_t>(Uniform01(g) * (k + 1)));  // 0 .. k
      std::swap(order[k], order[j]);
    }
    std::vector<uint32_t> peer(n);
    for (uint32_t k = 0; k < n; ++k) peer[order[k]] = order[(k + 1) % n];
    rounds.push_back(std::move(peer));
  }
  return rounds[round][i];
}

void UniformCongestion::Wake(size_t i) {
  HostState& h = hosts_[i];
  if (!h.waiting) return;
  h.waiting = false;
  SendNext(i);
}

}  // namespace inasim::congestion
