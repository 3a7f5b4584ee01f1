// EgressQueue driven directly, as ns-3's queue-disc tests do: size after each
// operation and the verdict per reason.
#include "congestion/egress_queue.h"

#include <gtest/gtest.h>

using inasim::congestion::EcnUnit;
using inasim::congestion::EgressQueue;
using inasim::congestion::EnqueueVerdict;
using inasim::congestion::PortConfig;

TEST(EgressQueue, DropTailAtBufferBytes) {
  PortConfig c;
  c.buffer_bytes = 3000;
  EgressQueue<int> q(c);
  EXPECT_EQ(q.Enqueue(1, 1500, false), EnqueueVerdict::kEnqueued);
  EXPECT_EQ(q.Enqueue(2, 1500, false), EnqueueVerdict::kEnqueued);
  EXPECT_EQ(q.bytes(), 3000u);
  EXPECT_EQ(q.Enqueue(3, 1, false), EnqueueVerdict::kDroppedBufferFull);
  EXPECT_EQ(q.packets(), 2u);
  EXPECT_EQ(q.counters().dropped_buffer, 1u);
  auto [item, bytes] = q.Dequeue();
  EXPECT_EQ(item, 1);
  EXPECT_EQ(bytes, 1500u);
  EXPECT_EQ(q.Enqueue(4, 1500, false), EnqueueVerdict::kEnqueued);
  EXPECT_EQ(q.Dequeue().first, 2);
  EXPECT_EQ(q.Dequeue().first, 4);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.counters().max_bytes, 3000u);
}

namespace {
/// A port that ECN-marks above `threshold` (in `unit`).
PortConfig Ecn(EcnUnit unit, uint64_t threshold) {
  PortConfig c;
  c.ecn_enabled = true;
  c.ecn_unit = unit;
  c.ecn_threshold = threshold;
  return c;
}
}  // namespace

TEST(EgressQueue, EcnMarksOnlyAboveThresholdInPackets) {
  EgressQueue<int> q(Ecn(EcnUnit::kPackets, 2));
  // Occupancy seen on arrival: 0, 1, 2 -> no mark; 3 -> mark (3 > K=2).
  EXPECT_EQ(q.Enqueue(0, 100, true), EnqueueVerdict::kEnqueued);
  EXPECT_EQ(q.Enqueue(1, 100, true), EnqueueVerdict::kEnqueued);
  EXPECT_EQ(q.Enqueue(2, 100, true), EnqueueVerdict::kEnqueued);
  EXPECT_EQ(q.Enqueue(3, 100, true), EnqueueVerdict::kEnqueuedMarked);
  // Not ECN-capable: never marked, just queued.
  EXPECT_EQ(q.Enqueue(4, 100, false), EnqueueVerdict::kEnqueued);
  EXPECT_EQ(q.counters().marked, 1u);
  q.Dequeue();
  q.Dequeue();
  q.Dequeue();  // occupancy 2 now
  EXPECT_EQ(q.Enqueue(5, 100, true), EnqueueVerdict::kEnqueued);
}

TEST(EgressQueue, EcnThresholdInBytes) {
  EgressQueue<int> q(Ecn(EcnUnit::kBytes, 1000));
  EXPECT_EQ(q.Enqueue(0, 1000, true), EnqueueVerdict::kEnqueued);        // saw 0
  EXPECT_EQ(q.Enqueue(1, 1, true), EnqueueVerdict::kEnqueued);           // saw 1000, not > 1000
  EXPECT_EQ(q.Enqueue(2, 1, true), EnqueueVerdict::kEnqueuedMarked);     // saw 1001
}

TEST(EgressQueue, RingGrowsAndKeepsFifoOrder) {
  PortConfig c;
  c.buffer_bytes = 1 << 30;
  EgressQueue<int> q(c);
  int next_out = 0;
  for (int i = 0; i < 1000; ++i) {
    q.Enqueue(i, 10, false);
    if (i % 3 == 0) {
      EXPECT_EQ(q.Dequeue().first, next_out++);
    }
  }
  while (!q.empty()) EXPECT_EQ(q.Dequeue().first, next_out++);
  EXPECT_EQ(next_out, 1000);
  EXPECT_EQ(q.bytes(), 0u);
}
