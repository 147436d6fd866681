#include "harness/sweep/yardstick.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace lobench::sweep {
namespace {

TEST(LocalYardstick, SamplesLastAboutOneStepWithinThreeToThirtyMilliseconds) {
  // 1 GFLOP at 100 GFLOP/s: a 10 ms step, so 10 ms samples
  EXPECT_DOUBLE_EQ(local_sample_seconds(1e9, 100), 0.01);
  // a 50 µs step: the shortest sample the timer and the scheduler leave meaningful, 3 ms
  EXPECT_DOUBLE_EQ(local_sample_seconds(5e6, 100), 0.003);
  // a 2 s step: 30 ms samples, as before the rule (longer would only cost)
  EXPECT_DOUBLE_EQ(local_sample_seconds(2e11, 100), 0.03);
  // work or rate unknown (NaN, zero): the longest
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_DOUBLE_EQ(local_sample_seconds(nan, 100), 0.03);
  EXPECT_DOUBLE_EQ(local_sample_seconds(1e9, nan), 0.03);
  EXPECT_DOUBLE_EQ(local_sample_seconds(1e9, 0), 0.03);
  EXPECT_DOUBLE_EQ(local_sample_seconds(0, 100), 0.03);
}

}  // namespace
}  // namespace lobench::sweep
