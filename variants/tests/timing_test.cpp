// lobench's one timing rule (variants/timing.hpp): the stopping rules, the interleaved comparison, the
// calibration of calls per sample.
#include "variants/timing.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace lobench {
namespace {

// A timed run that "takes" the given seconds, one after the other.
std::function<double()> fake_runs(std::vector<double> seconds, int* calls) {
  return [seconds, calls] { return seconds[size_t((*calls)++) % seconds.size()]; };
}

TEST(Timing, FixedCountRunsExactlyThatManyAfterTheWarmUp) {
  int calls = 0;
  const Samples s = collect_samples(fake_runs({0.5}, &calls), 2, RepPolicy::fixed(3));
  EXPECT_EQ(s.seconds.size(), 3u);
  EXPECT_EQ(calls, 5);
}

TEST(Timing, AdaptiveStopsWhenTheSpreadIsSmallAndTheMinimumTimeIsReached) {
  RepPolicy p;  // min 4 reps, 1 s, CV 5 %
  int calls = 0;
  EXPECT_EQ(collect_samples(fake_runs({0.3}, &calls), 0, p).seconds.size(), 4u);  // 1.2 s, CV 0
  calls = 0;
  EXPECT_EQ(collect_samples(fake_runs({0.01}, &calls), 0, p).seconds.size(), 20u);  // never 1 s: max_reps
  calls = 0;
  // A spread above 5 % keeps it going until the total passes max_time_s (30 s).
  EXPECT_EQ(collect_samples(fake_runs({1.0, 2.0}, &calls), 0, p).seconds.size(), 20u);
  p.max_time_s = 6.0;
  calls = 0;
  EXPECT_EQ(collect_samples(fake_runs({1.0, 2.0}, &calls), 0, p).seconds.size(), 4u);  // 6 s
}

TEST(Timing, BudgetRunsUntilTheTimedSecondsAddUp) {
  int calls = 0;
  const Samples s = collect_samples(fake_runs({0.1, 0.3}, &calls), 0, RepPolicy::budget(1.0));
  EXPECT_EQ(s.seconds.size(), 6u);  // 0.1, 0.4, 0.5, 0.8, 0.9, then 1.2: the sixth reaches the budget
  EXPECT_GE(s.total(), 1.0 - 1e-12);
  EXPECT_LT(s.total() - s.seconds.back(), 1.0);  // the last sample was needed
  calls = 0;
  EXPECT_EQ(collect_samples(fake_runs({5.0}, &calls), 0, RepPolicy::budget(1.0)).seconds.size(), 1u);
  EXPECT_DOUBLE_EQ(s.min(), 0.1);
}

TEST(Timing, CallsPerSampleReachesTheTargetWithinItsBounds) {
  EXPECT_EQ(calls_per_sample(1e-3, 0.03, 1000), 30);
  EXPECT_EQ(calls_per_sample(0.1, 0.03, 1000), 1);    // one call already longer than the target
  EXPECT_EQ(calls_per_sample(0.0, 0.03, 1000), 1000);  // a clock too coarse to see it: the bound
  EXPECT_EQ(calls_per_sample(1e-3, 0.03, 0), 1);
}

TEST(Timing, SamplesStatistics) {
  const Samples s{{3.0, 1.0, 2.0, 4.0}};
  EXPECT_DOUBLE_EQ(s.median(), 2.5);
  EXPECT_DOUBLE_EQ(s.min(), 1.0);
  EXPECT_DOUBLE_EQ(s.max(), 4.0);
  EXPECT_DOUBLE_EQ(s.total(), 10.0);
  EXPECT_NEAR(s.cv(), std::sqrt(5.0 / 3.0) / 2.5, 1e-15);
  EXPECT_TRUE(std::isnan(Samples{{1.0}}.cv()));
}

// The benches' interleaved timing follows the one repetition rule: warm-up rounds dropped, then rounds
// until the policy has enough; every round runs each contender once, in order; wall and CPU samples kept.
TEST(Timing, InterleavedContendersFollowTheRepetitionRule) {
  std::string order;
  volatile double sink = 0;
  auto spin = [&sink] {
    for (int i = 0; i < 200000; ++i) sink = sink + 1e-9 * i;
  };
  std::vector<Contender> cs = {{"a", [&] { order += 'a'; spin(); }, {}, {}},
                               {"b", [&] { order += 'b'; }, {}, {}}};
  time_interleaved(cs, 2, RepPolicy::fixed(3));
  EXPECT_EQ(order, "ababababab");  // 2 warm-up rounds and 3 timed, interleaved
  for (const Contender& c : cs) {
    EXPECT_EQ(c.wall.seconds.size(), 3u) << c.name;
    EXPECT_EQ(c.cpu.seconds.size(), 3u) << c.name;
  }
  EXPECT_GT(cs[0].cpu.min(), 0.0);  // the spinning contender used CPU time
  RepPolicy adaptive;
  adaptive.min_reps = 2;
  adaptive.max_reps = 4;
  adaptive.min_time_s = 1e9;  // never enough time: stops at max_reps
  std::vector<Contender> one = {{"a", [] {}, {}, {}}};
  time_interleaved(one, 0, adaptive);
  EXPECT_EQ(one[0].wall.seconds.size(), 4u);
}

}  // namespace
}  // namespace lobench
