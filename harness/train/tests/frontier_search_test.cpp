// The frontier search on planted metrics with a known answer: flat (with a little seed noise) at and
// above a planted number of mantissa bits F, far below it; the search must return exactly F, also with
// a non-monotone blip one bit above F, a lucky seed one bit below it, and F at either end of the range.
#include "harness/train/frontier_search.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace lobench::train {
namespace {

const std::vector<uint64_t> kSeeds = {0, 1, 2};

// 0.60 (± 0.001 by seed) from F bits on, 0.40 below: with the baseline 0.60 ± 0.001 and k = 2, floor
// 0.005, the threshold is 0.595.
double planted(int m, uint64_t seed, int F) { return (m >= F ? 0.60 : 0.40) + 0.001 * (double(seed) - 1.0); }

FrontierBaseline baseline() { return frontier_baseline({0.599, 0.600, 0.601}, 2.0, 0.005); }

TEST(FrontierSearch, BaselineToleranceIsKStdWithAFloor) {
  const FrontierBaseline b = baseline();
  EXPECT_DOUBLE_EQ(b.mean, 0.600);
  EXPECT_NEAR(b.std, 0.001, 1e-12);
  EXPECT_DOUBLE_EQ(b.tolerance, 0.005);  // 2 x 0.001 is below the floor
  EXPECT_NEAR(frontier_baseline({0.5, 0.6, 0.7}, 2.0, 0.005).tolerance, 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(frontier_baseline({0.5}, 2.0, 0.01).tolerance, 0.01);  // one seed: the floor
  EXPECT_THROW(frontier_baseline({}, 2.0, 0.0), std::invalid_argument);
  EXPECT_THROW(frontier_baseline({0.5, std::nan("")}, 2.0, 0.0), std::invalid_argument);
}

TEST(FrontierSearch, FindsThePlantedFrontierEverywhereInTheRange) {
  const double threshold = baseline().threshold();
  for (int lo : {1, 2}) {
    for (int hi : {lo, lo + 1, 7, 10, 23}) {
      for (int F = lo; F <= hi; ++F) {
        const LineSearch r = search_line([F](int m, uint64_t s) { return planted(m, s, F); }, lo, hi, kSeeds, threshold);
        ASSERT_EQ(r.frontier, F) << "range " << lo << "-" << hi;
        EXPECT_NEAR(r.metric_at, 0.60, 1e-12);
        EXPECT_NEAR(r.std_at, 0.001, 1e-12);
        EXPECT_EQ(r.seeds_at, 3);
        if (F > lo) {
          EXPECT_NEAR(r.metric_below, 0.40, 1e-12);  // one bit below, over every seed
          EXPECT_EQ(r.cells.at(F - 1).size(), kSeeds.size());
        } else {
          EXPECT_TRUE(std::isnan(r.metric_below));
        }
        // Bisection, not a scan: at most the probes and the boundary's three bits on every seed.
        int bisection = 0;
        for (int span = hi - lo + 1; span > 1; span = (span + 1) / 2) ++bisection;
        EXPECT_LE(r.runs(), 2 + bisection + 3 * int64_t(kSeeds.size())) << "range " << lo << "-" << hi << ", F " << F;
      }
      // Nothing in the range keeps the metric: no frontier.
      const LineSearch none = search_line([hi](int m, uint64_t s) { return planted(m, s, hi + 1); }, lo, hi, kSeeds,
                                          threshold);
      EXPECT_EQ(none.frontier, -1);
      EXPECT_TRUE(std::isnan(none.metric_at));
    }
  }
}

// A non-monotone blip: the bit just above the frontier fails on every seed (the bisection may land on
// it), yet the fewest bits that keep the metric are still F.
TEST(FrontierSearch, ABlipOneBitAboveDoesNotHideTheFrontier) {
  const double threshold = baseline().threshold();
  for (int hi : {6, 7, 10, 12}) {
    for (int F = 1; F + 1 <= hi; ++F) {
      const auto metric = [F](int m, uint64_t s) { return m == F + 1 ? 0.40 : planted(m, s, F); };
      const LineSearch r = search_line(metric, 1, hi, kSeeds, threshold);
      ASSERT_EQ(r.frontier, F) << "range 1-" << hi << ", blip at " << F + 1;
    }
  }
}

// One seed passes one bit below the frontier (a lucky run): the bisection may stop there, but the mean
// of the seeds does not pass, so the frontier stays F.
TEST(FrontierSearch, ALuckySeedBelowIsNotTheFrontier) {
  const double threshold = baseline().threshold();
  for (int F = 2; F <= 10; ++F) {
    const auto metric = [F](int m, uint64_t s) { return m == F - 1 && s == 0 ? 0.60 : planted(m, s, F); };
    const LineSearch r = search_line(metric, 1, 10, kSeeds, threshold);
    ASSERT_EQ(r.frontier, F);
    EXPECT_NEAR(r.metric_below, (0.60 + 0.40 + 0.401) / 3, 1e-12);
  }
}

TEST(FrontierSearch, ANonFiniteMetricFails) {
  const double threshold = baseline().threshold();
  const auto metric = [](int m, uint64_t s) {
    return m < 6 ? std::numeric_limits<double>::quiet_NaN() : planted(m, s, 1);
  };
  EXPECT_EQ(search_line(metric, 1, 10, kSeeds, threshold).frontier, 6);
  EXPECT_THROW(search_line(metric, 5, 4, kSeeds, threshold), std::invalid_argument);
  EXPECT_THROW(search_line(metric, 1, 4, {}, threshold), std::invalid_argument);
}

TEST(FrontierSearch, PredictedRunsCountTheProbesAndTheBoundary) {
  EXPECT_EQ(predicted_line_runs(1, 10, 3), 1 + 4 + 3 * 2 + 1);
  EXPECT_EQ(predicted_line_runs(1, 1, 3), 1 + 0 + 1 * 2);
  EXPECT_EQ(predicted_line_runs(1, 10, 1), 1 + 4 + 1);
}

}  // namespace
}  // namespace lobench::train
