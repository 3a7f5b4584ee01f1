// One egress port's queue: drop-tail buffer in bytes, ECN CE decision above a
// threshold K, counters. The device owns the wire; this owns the waiting room.
// Items are kept in a power-of-two ring so the hot path never allocates once the
// ring has grown to the port's working size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace inasim::congestion {

enum class EcnUnit : uint8_t { kPackets, kBytes };

/// Per-port buffer, ECN and PFC settings (identical for every port of a class).
struct PortConfig {
  uint64_t buffer_bytes = 4ull << 20;   ///< drop-tail limit of waiting bytes
  bool ecn_enabled = false;
  EcnUnit ecn_unit = EcnUnit::kPackets;
  uint64_t ecn_threshold = 65;          ///< K: mark when occupancy found on arrival is > K
  bool pfc_enabled = false;
  uint64_t pfc_xoff_bytes = 256 << 10;  ///< per ingress port: send PAUSE above this
  uint64_t pfc_xon_bytes = 128 << 10;   ///< per ingress port: send RESUME below this
  /// Credit-based link-level flow control (SST merlin's): the upstream
  /// transmitter of every switch ingress holds `credit_bytes` of credit, sends
  /// a frame only with its bytes in credit, and gets them back once the frame
  /// (and all the switch made of it) has left the switch.
  bool credit_enabled = false;
  uint64_t credit_bytes = 32 << 10;
  /// Host NICs only: the kernel stack and every kernel-bypass endpoint get a
  /// transmit queue of their own, served round robin a frame at a time (as a
  /// multi-queue NIC arbitrates its send queues); false: one FIFO for all.
  bool tx_queue_per_endpoint = false;
};

/// What Enqueue decided, counted by reason like ns-3's QueueDisc::Stats.
enum class EnqueueVerdict : uint8_t { kEnqueued, kEnqueuedMarked, kDroppedBufferFull };

struct QueueCounters {
  uint64_t enqueued = 0;
  uint64_t dropped_buffer = 0;
  uint64_t marked = 0;
  uint64_t max_bytes = 0;
};

template <typename Item>
class EgressQueue {
 public:
  explicit EgressQueue(PortConfig config = {}) : config_(config) { ring_.resize(16); }

  void set_config(const PortConfig& c) { config_ = c; }
  const PortConfig& config() const { return config_; }

  /// Decides drop / mark / accept for an arriving frame of `bytes`; `ect` tells
  /// whether the frame may be CE-marked instead of waiting silently. On
  /// kEnqueuedMarked the caller must set CE on the frame it passed in.
  EnqueueVerdict Enqueue(Item item, uint32_t bytes, bool ect) {
    if (bytes_ + bytes > config_.buffer_bytes) {
      ++counters_.dropped_buffer;
      return EnqueueVerdict::kDroppedBufferFull;
    }
    bool mark = false;
    if (config_.ecn_enabled && ect) {
      const uint64_t occupancy = config_.ecn_unit == EcnUnit::kPackets ? size_ : bytes_;
      mark = occupancy > config_.ecn_threshold;
    }
    if (size_ == ring_.size()) Grow();
    ring_[(head_ + size_) & (ring_.size() - 1)] = Slot{std::move(item), bytes};
    ++size_;
    bytes_ += bytes;
    ++counters_.enqueued;
    if (bytes_ > counters_.max_bytes) counters_.max_bytes = bytes_;
    if (mark) ++counters_.marked;
    return mark ? EnqueueVerdict::kEnqueuedMarked : EnqueueVerdict::kEnqueued;
  }

  /// Item at the head (valid while !empty()).
  Item& front() { return ring_[head_].item; }
  /// The head item's byte count (valid while !empty()).
  uint32_t front_bytes() const { return ring_[head_].bytes; }
  /// The item the last successful Enqueue stored.
  Item& back() { return ring_[(head_ + size_ - 1) & (ring_.size() - 1)].item; }

  /// Removes the head item; returns it with its byte count.
  std::pair<Item, uint32_t> Dequeue() {
    Slot& s = ring_[head_];
    std::pair<Item, uint32_t> out{std::move(s.item), s.bytes};
    s.item = Item{};
    head_ = (head_ + 1) & (ring_.size() - 1);
    --size_;
    bytes_ -= out.second;
    return out;
  }

  bool empty() const { return size_ == 0; }
  uint32_t packets() const { return static_cast<uint32_t>(size_); }
  uint64_t bytes() const { return bytes_; }
  const QueueCounters& counters() const { return counters_; }

 private:
  struct Slot {
    Item item{};
    uint32_t bytes = 0;
  };
  void Grow() {
    std::vector<Slot> bigger(ring_.size() * 2);
    for (size_t i = 0; i < size_; ++i) bigger[i] = std::move(ring_[(head_ + i) & (ring_.size() - 1)]);
    ring_ = std::move(bigger);
    head_ = 0;
  }

  PortConfig config_;
  std::vector<Slot> ring_;
  size_t head_ = 0;
  size_t size_ = 0;
  uint64_t bytes_ = 0;
  QueueCounters counters_;
};

}  // namespace inasim::congestion
