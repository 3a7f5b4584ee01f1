// ina/iteration-schedule.h: when each rank may start each collective of a
// training step. Worked example (times in us): compute 100, after 5, buckets
// ready at 20, 50, 100. Rank 0's buckets take 40 us each, so bucket 1 waits
// for bucket 0 (ends 60 > ready 50), bucket 2 starts at its ready time 100;
// the step's last bucket ends at 140 > compute end 100, so the next step
// starts at 140 + 5 = 145. Rank 1's buckets take 5 us: each starts when ready,
// the last ends at 105, and the next step starts at max(100, 105) + 5 = 110.
#include "ina/iteration-schedule.h"

#include <gtest/gtest.h>

#include <cmath>
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

namespace {

using inasim::ComputeFactor;

TEST(IterationSchedule, AStragglerComputesAndFillsItsBucketsFactorTimesSlower) {
  // Worked example: compute 100 us, buckets ready at 20 and 100 us, rank 1 a
  // straggler x 1.5: its buckets are ready at 30 and 150 us, and its next
  // iteration waits for its 150 us of compute; rank 0 is untouched.
  ScheduleSpec spec;
  spec.given = true;
  spec.compute_ps = 100 * kUs;
  spec.ready_ps = {20 * kUs, 100 * kUs};
  spec.straggler_ranks = {1};
  spec.straggler_factor = 1.5;
  IterationSchedule s = IterationSchedule::Of(spec, 2, 2, 0, 7);
  EXPECT_EQ(s.StartOf(0, 0, 0), 20 * kUs);
  EXPECT_EQ(s.StartOf(0, 1, 25 * kUs), 100 * kUs);
  EXPECT_EQ(s.StartOf(0, 2, 101 * kUs), 101 * kUs + 20 * kUs);  // compute ended at 100, the bucket at 101
  EXPECT_EQ(s.StartOf(1, 0, 0), 30 * kUs);
  EXPECT_EQ(s.StartOf(1, 1, 35 * kUs), 150 * kUs);
  EXPECT_EQ(s.StartOf(1, 2, 151 * kUs), 151 * kUs + 30 * kUs);
  const auto starts = s.Starts(0, {10, 11});
  EXPECT_EQ(starts[0].compute_ps, 100 * kUs);
  EXPECT_EQ(starts[2].compute_ps, 150 * kUs);  // rank 1's first iteration
}

TEST(IterationSchedule, JitterIsSeededNormalAroundTheMean) {
  ScheduleSpec spec;
  spec.given = true;
  spec.jitter_cv = 0.05;
  // Deterministic per (seed, rank, iteration), different across ranks and seeds.
  EXPECT_EQ(ComputeFactor(spec, 3, 2, 9), ComputeFactor(spec, 3, 2, 9));
  EXPECT_NE(ComputeFactor(spec, 3, 2, 9), ComputeFactor(spec, 4, 2, 9));
  EXPECT_NE(ComputeFactor(spec, 3, 2, 9), ComputeFactor(spec, 3, 1, 9));
  // 64 ranks x 500 iterations: mean 1 and standard deviation 0.05, each within 3 standard errors.
  double sum = 0, sq = 0;
  const int n = 64 * 500;
  for (uint32_t r = 0; r < 64; ++r)
    for (uint32_t it = 0; it < 500; ++it) {
      const double f = ComputeFactor(spec, 1, r, it);
      sum += f, sq += f * f;
    }
  const double mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
  EXPECT_NEAR(mean, 1.0, 3 * 0.05 / std::sqrt(n));
  EXPECT_NEAR(sd, 0.05, 3 * 0.05 / std::sqrt(2.0 * n));
  const double jitter_only = ComputeFactor(spec, 1, 5, 3);
  spec.straggler_ranks = {5};
  spec.straggler_factor = 2;
  EXPECT_DOUBLE_EQ(ComputeFactor(spec, 1, 5, 3), 2 * jitter_only);  // on top of the jitter

}

TEST(IterationSchedule, AStragglerBeyondTheRanksIsRefusedNamingTheKey) {
  ScheduleSpec spec;
  spec.given = true;
  spec.straggler_ranks = {0, 8};
  spec.straggler_factor = 2;
  try {
    (void)IterationSchedule::Of(spec, 8, 1, 0, 1);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "workload.schedule.stragglers.ranks[1]: rank 8, but the job has 8 ranks (0..7)");
  }
}

}  // namespace

namespace {

// `after` (in us): bucket 0 ready 20 after the start; collective 1 ready 10
// after the rank's compute (100) ends; collective 2 ready 5 after collective
// 1 ends; collective 3 ready 200 after collective 0 ends. Rank 0's
// collectives take 10, 5, 5 and 10 us: 0 runs 20-30, 1 waits for the compute
// (110-115), 2 for 1's end + 5 (120-125), 3 for 0's end + 200 (230-240); the
// next step starts at max(240, 100) and its bucket 0 at 260.
TEST(IterationSchedule, ACollectiveWaitsForTheComputeOrAnEarlierCollectivesEnd) {
  using inasim::kAfterCompute;
  using inasim::kAfterStart;
  ScheduleSpec spec;
  spec.given = true;
  spec.compute_ps = 100 * kUs;
  spec.ready_ps = {20 * kUs, 10 * kUs, 5 * kUs, 200 * kUs};
  spec.after = {kAfterStart, kAfterCompute, 1, 0};
  spec.straggler_ranks = {1};
  spec.straggler_factor = 2;
  IterationSchedule s = IterationSchedule::Of(spec, 2, 4, 0, 1);
  EXPECT_EQ(s.StartOf(0, 0, 0), 20 * kUs);
  EXPECT_EQ(s.StartOf(0, 1, 30 * kUs), 110 * kUs);
  EXPECT_EQ(s.StartOf(0, 2, 115 * kUs), 120 * kUs);
  EXPECT_EQ(s.StartOf(0, 3, 125 * kUs), 230 * kUs);
  EXPECT_EQ(s.StartOf(0, 4, 240 * kUs), 260 * kUs);
  // Rank 1 computes x 2 (200 us), its waits after the compute too: 200 + 20.
  EXPECT_EQ(s.StartOf(1, 0, 0), 40 * kUs);
  EXPECT_EQ(s.StartOf(1, 1, 50 * kUs), 220 * kUs);
  // Only an earlier collective can be waited for.
  EXPECT_THROW(IterationSchedule(1, 0, 0, {0, 0}, {}, {kAfterStart, 1}), std::invalid_argument);
  EXPECT_THROW(IterationSchedule(1, 0, 0, {0}, {}, {0}), std::invalid_argument);
}

}  // namespace

namespace {

// Communicators: a collective's groups are its communicator's partition, or
// every rank in one group; a partition must hold every rank exactly once.
TEST(IterationSchedule, CommunicatorsArePartitionsOfTheRanks) {
  ScheduleSpec spec;
  spec.given = true;
  spec.communicator_names = {"tp"};
  spec.communicator_groups = {{{0, 1}, {2, 3}}};
  spec.communicator = {ScheduleSpec::kWorld, 0};
  EXPECT_TRUE(spec.has_communicators());
  EXPECT_EQ(inasim::GroupsOf(spec, 0, 4), (std::vector<std::vector<uint32_t>>{{0, 1, 2, 3}}));
  EXPECT_EQ(inasim::GroupsOf(spec, 1, 4), (std::vector<std::vector<uint32_t>>{{0, 1}, {2, 3}}));
  EXPECT_NO_THROW(inasim::CheckCommunicators(spec, 4));
  try {
    inasim::CheckCommunicators(spec, 5);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "workload.schedule.communicators.tp: rank 4 is in 0 groups; a communicator puts every "
                           "rank of the job (0..4) in exactly one");
  }
  spec.communicator = {ScheduleSpec::kWorld, ScheduleSpec::kWorld};
  EXPECT_FALSE(spec.has_communicators());
}

}  // namespace
