// ina/jobs.h: how workload.jobs splits the selected hosts, each job's seed,
// and concurrent jobs run as one; ina/job-workload.h: a job as a Workload. The expected groups and seeds are computed
// independently (SplitMix64 in Python), so a change that moves them, and with
// them every multi-job run's data, fails here.
#include "ina/job-workload.h"
#include "ina/jobs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

namespace {

using inasim::ConcurrentJobs;
using inasim::JobSeed;
using inasim::PlaceJobs;
using inasim::SplitHosts;
using Groups = std::vector<std::vector<uint32_t>>;

TEST(Jobs, HostsAreDealtIntoDisjointSortedGroups) {
  std::vector<uint32_t> hosts;
  for (uint32_t h = 0; h < 17; ++h) hosts.push_back(h * 2);
  const Groups groups = SplitHosts(hosts, 4, 7);
  EXPECT_EQ(groups, (Groups{{0, 8, 12, 20, 24}, {6, 16, 26, 30}, {2, 10, 22, 28}, {4, 14, 18, 32}}));
  std::vector<uint32_t> all;
  for (const auto& g : groups) all.insert(all.end(), g.begin(), g.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, hosts);
  EXPECT_NE(groups, SplitHosts(hosts, 4, 8));
  EXPECT_EQ(SplitHosts({0, 1, 2, 3, 4, 5, 6, 7}, 2, 1), (Groups{{1, 2, 4, 7}, {0, 3, 5, 6}}));
  // Contiguous: consecutive ranges of the hosts as given, whatever the seed.
  const Groups ranges = SplitHosts(hosts, 4, 7, true);
  EXPECT_EQ(ranges, SplitHosts(hosts, 4, 8, true));
  EXPECT_EQ(ranges[0], (std::vector<uint32_t>{0, 2, 4, 6, 8}));
  EXPECT_EQ(ranges[3], (std::vector<uint32_t>{26, 28, 30, 32}));
}

TEST(Jobs, EveryJobNeedsTwoHosts) {
  std::vector<uint32_t> hosts(17);
  try {
    SplitHosts(hosts, 9, 7);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "9 jobs need at least 2 hosts each; 17 hosts are selected");
  }
  EXPECT_THROW(PlaceJobs(hosts, 0, 7, false), std::invalid_argument);
}

TEST(Jobs, JobZeroKeepsTheScenarioSeed) {
  EXPECT_EQ(JobSeed(1, 0), 1u);
  EXPECT_EQ(JobSeed(1, 1), 0xf8f5e6933a725420u);
  EXPECT_EQ(JobSeed(1, 2), 0x9529df0f5f17795eu);
  EXPECT_EQ(JobSeed(42, 3), 0x15165747ccd22dd8u);
  EXPECT_EQ(inasim::ConsecutiveJobSeed(42, 3), 45u);
}

TEST(Jobs, OneJobIsTheSelectionAsGiven) {
  const auto one = PlaceJobs({5, 1, 3}, 1, 9, false);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].hosts, (std::vector<uint32_t>{5, 1, 3}));  // selection order, not sorted
  EXPECT_EQ(one[0].seed, 9u);
  const auto two = PlaceJobs({0, 1, 2, 3, 4, 5, 6, 7}, 2, 1, false);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].hosts, (std::vector<uint32_t>{0, 3, 5, 6}));
  EXPECT_EQ(two[1].seed, JobSeed(1, 1));
}

struct FakeJob {
  std::function<void()> on_finished;
  uint64_t started_at = 0;
  double done = 0;
  void Start(uint64_t at_ps) { started_at = at_ps; }
  double progress() const { return done; }
};

TEST(Jobs, ConcurrentJobsFinishOnceAllHave) {
  ConcurrentJobs<FakeJob> jobs;
  int finished = 0;
  jobs.on_finished = [&finished] { ++finished; };
  for (int j = 0; j < 3; ++j) jobs.Add(std::make_unique<FakeJob>());
  jobs.Start(1234);
  EXPECT_EQ(jobs.job(2).started_at, 1234u);
  jobs.job(0).done = 1;
  jobs.job(1).done = 0.5;
  EXPECT_DOUBLE_EQ(jobs.progress(), 0.5);
  jobs.job(0).on_finished();
  jobs.job(2).on_finished();
  EXPECT_EQ(finished, 0);
  jobs.job(1).on_finished();
  EXPECT_EQ(finished, 1);
}

/// A job as JobWorkload sees one: started at a time given, or at its own.
struct FakeRun {
  std::function<void()> on_finished;
  uint64_t started_at = 0;
  void Start(uint64_t at_ps) { started_at = at_ps; }
  double progress() const { return 0.25; }
  void Report(const inasim::Scenario&, bool finished, inasim::WorkloadReport& out) const {
    out.correct = finished;
    out.summary = "fake";
  }
};
struct FakeOwnTimes {
  std::function<void()> on_finished;
  bool started = false;
  void Start() { started = true; }
  double progress() const { return 1; }
  void Report(const inasim::Scenario&, bool, inasim::WorkloadReport&) const {}
};

TEST(JobWorkload, StartsAtWorkloadStartAndForwards) {
  inasim::Scenario s;
  s.workload.start_ps = 5'000'000;
  FakeRun* run = nullptr;
  inasim::JobWorkload<FakeRun> w(s, [&] {
    auto r = std::make_unique<FakeRun>();
    run = r.get();
    return r;
  });
  int done = 0;
  w.Start([&done] { ++done; });
  EXPECT_EQ(run->started_at, 5'000'000u);
  run->on_finished();
  EXPECT_EQ(done, 1);
  EXPECT_DOUBLE_EQ(w.Progress(), 0.25);
  inasim::WorkloadReport out;
  w.Report(false, out);
  EXPECT_FALSE(out.correct);
  EXPECT_EQ(out.summary, "fake");

  FakeOwnTimes* own = nullptr;
  inasim::JobWorkload<FakeOwnTimes> w2(s, [&] {
    auto r = std::make_unique<FakeOwnTimes>();
    own = r.get();
    return r;
  });
  w2.Start([] {});
  EXPECT_TRUE(own->started);
}

TEST(JobWorkload, InvalidArgumentIsAWorkloadError) {
  inasim::Scenario s;
  try {
    inasim::JobWorkload<FakeRun> w(s, []() -> std::unique_ptr<FakeRun> { throw std::invalid_argument("no hosts"); });
    FAIL() << "no exception";
  } catch (const inasim::ScenarioError& e) {
    EXPECT_STREQ(e.what(), "workload: no hosts");
  }
}

}  // namespace
