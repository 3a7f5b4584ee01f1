// Many per-key retransmission timers on one ns-3 event: a host agent keeps a
// timer per slot or block (thousands in flight), and scheduling and cancelling
// an ns-3 event for each would cost a heap operation in the simulator per
// packet twice over. Here a timer is an entry in a min-heap of deadlines; a
// stopped or restarted timer leaves its old entry behind, stale (its
// generation is no longer the key's), and stale entries are dropped when they
// reach the top. One ns-3 event is pending at a time, for the earliest live
// deadline. Ties fire in key order.
#pragma once

#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace inasim {

/// Timers keyed by a dense index (`Key`: a slot or block number below the
/// size given to Reset). No allocation per timer beyond the heap's growth.
template <typename Key>
class LazyTimerHeap {
 public:
  /// `keys` timers, none running.
  void Reset(size_t keys) {
    generation_.assign(keys, 0);
    heap_.clear();
  }
  /// (Re)starts `key`'s timer to expire at `deadline_ps`; an earlier start of it is stale.
  void Start(Key key, uint64_t deadline_ps) {
    heap_.push_back({deadline_ps, key, ++generation_[key]});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  /// Stops `key`'s timer (its heap entry becomes stale).
  void Stop(Key key) { ++generation_[key]; }
  /// Stops every timer and the pending event.
  void StopAll() {
    for (uint32_t& g : generation_) ++g;
    heap_.clear();
    event_.Cancel();
  }

  /// The earliest live timer due by `now_ps`, popped into `key`; false when
  /// none is due (stale entries on the way are dropped).
  bool PopDue(uint64_t now_ps, Key& key) {
    while (!heap_.empty()) {
      const Entry top = heap_.front();
      const bool stale = top.generation != generation_[top.key];
      if (!stale && top.deadline_ps > now_ps) return false;
      Pop();
      if (stale) continue;
      key = top.key;
      return true;
    }
    return false;
  }

  /// Schedules `(owner->*on_event)()` at the earliest live deadline, unless
  /// the pending event comes no later (it re-arms when it runs).
  template <class Owner>
  void Arm(uint64_t now_ps, Owner* owner, void (Owner::*on_event)()) {
    while (!heap_.empty() && heap_.front().generation != generation_[heap_.front().key]) Pop();
    if (heap_.empty()) return;
    const uint64_t at = heap_.front().deadline_ps;
    if (event_.IsRunning() && event_at_ <= at) return;
    event_.Cancel();
    event_at_ = at;
    event_ = ns3::Simulator::Schedule(ns3::PicoSeconds(at - now_ps), on_event, owner);
  }
  /// The earliest live deadline (stale entries on top dropped); UINT64_MAX if none.
  uint64_t NextDeadline() {
    while (!heap_.empty() && heap_.front().generation != generation_[heap_.front().key]) Pop();
    return heap_.empty() ? UINT64_MAX : heap_.front().deadline_ps;
  }
  /// Called first by the event's handler: no event is pending any more.
  void Fired() { event_at_ = 0; }
  /// Cancels the pending event (the timers stay; Arm schedules it again).
  void CancelEvent() { event_.Cancel(); }

 private:
  struct Entry {
    uint64_t deadline_ps;
    Key key;
    uint32_t generation;
  };
  /// The heap's order (a min-heap of deadlines, then keys): std::priority_queue
  /// with std::greater, so the firing order is that of the per-protocol heaps
  /// this replaces.
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.deadline_ps != b.deadline_ps ? a.deadline_ps > b.deadline_ps : a.key > b.key;
    }
  };
  void Pop() {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    heap_.pop_back();
  }

  std::vector<uint32_t> generation_;  ///< per key: starts and stops so far
  std::vector<Entry> heap_;
  ns3::EventId event_;
  uint64_t event_at_ = 0;  ///< the pending event's time
};

}  // namespace inasim
