// ina/iteration-schedule.h: when each rank may start each collective of a
// training step. Worked example (times in us): compute 100, after 5, buckets
// ready at 20, 50, 100. Rank 0's buckets take 40 us each, so bucket 1 waits
// for bucket 0 (ends 60 > ready 50), bucket 2 starts at its ready time 100;
// the step's last bucket ends at 140 > compute end 100, so the next step
// starts at 140 + 5 = 145. Rank 1's buckets take 5 us: each starts when ready,
// the last ends at 105, and the next step starts at max(100, 105) + 5 = 110.
#include "ina/iteration-schedule.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using inasim::IterationSchedule;
using inasim::ScheduleSpec;

constexpr uint64_t kUs = 1'000'000;  // ps

TEST(IterationSchedule, BucketsStartWhenReadyAndAfterTheOneBefore) {
  IterationSchedule s(2, 100 * kUs, 5 * kUs, {20 * kUs, 50 * kUs, 100 * kUs});
  // Rank 0: 40 us per bucket.
  EXPECT_EQ(s.StartOf(0, 0, 0), 20 * kUs);
  EXPECT_EQ(s.StartOf(0, 1, 60 * kUs), 60 * kUs);    // ready at 50, bucket 0 ended at 60
  EXPECT_EQ(s.StartOf(0, 2, 100 * kUs), 100 * kUs);  // bucket 1 ended at 100 = its ready time
  EXPECT_EQ(s.StartOf(0, 3, 140 * kUs), 145 * kUs + 20 * kUs);  // step 1 at 145, its bucket 0 ready 20 later
  // Rank 1: 5 us per bucket.
  EXPECT_EQ(s.StartOf(1, 0, 0), 20 * kUs);
  EXPECT_EQ(s.StartOf(1, 1, 25 * kUs), 50 * kUs);
  EXPECT_EQ(s.StartOf(1, 2, 55 * kUs), 100 * kUs);
  EXPECT_EQ(s.StartOf(1, 3, 105 * kUs), 110 * kUs + 20 * kUs);
  const auto starts = s.Starts(7, {11, 12});
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_EQ(starts[1].start_ps, 145 * kUs);
  EXPECT_EQ(starts[3].start_ps, 110 * kUs);
  EXPECT_EQ(starts[3].host, 12u);
  EXPECT_EQ(starts[3].job, 7u);
}

TEST(IterationSchedule, ComputeLongerThanTheBucketsSetsTheStep) {
  IterationSchedule s(1, 100 * kUs, 0, {0});
  EXPECT_EQ(s.StartOf(0, 0, 3 * kUs), 3 * kUs);   // the workload's start
  EXPECT_EQ(s.StartOf(0, 1, 10 * kUs), 103 * kUs);  // the bucket ended at 10, the compute at 103
}

TEST(IterationSchedule, WithoutAScheduleTensorsBackToBackAndTheGapBetweenIterations) {
  IterationSchedule s = IterationSchedule::Of(ScheduleSpec{}, 1, 3, 50 * kUs);
  EXPECT_EQ(s.StartOf(0, 0, 0), 0u);
  EXPECT_EQ(s.StartOf(0, 1, 7 * kUs), 7 * kUs);
  EXPECT_EQ(s.StartOf(0, 2, 9 * kUs), 9 * kUs);
  EXPECT_EQ(s.StartOf(0, 3, 12 * kUs), 62 * kUs);
  EXPECT_EQ(s.StartOf(0, 4, 70 * kUs), 70 * kUs);
}

TEST(IterationSchedule, OutOfOrderIsAnError) {
  IterationSchedule s(1, 0, 0, {0, 0});
  EXPECT_THROW(s.StartOf(0, 2, 0), std::logic_error);
  EXPECT_THROW(IterationSchedule(1, 0, 0, {}), std::invalid_argument);
}

}  // namespace
