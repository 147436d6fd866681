#include "datasets/propensity.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace lobench::data {
namespace {

TEST(DatasetsPropensity, HandComputedValues) {
  // N = 100, A = 0.55, B = 1.5:
  //   C = (ln 100 - 1) * 2.5^0.55 = 3.605170186 * 1.655262990 = 5.967504781
  //   N_l = 1:  (1 + 1.5)^-0.55 = 1 / 2.5^0.55, so 1/p = 1 + (ln 100 - 1) = ln 100 = 4.605170186 exactly
  //   N_l = 0:  1.5^-0.55 = 0.800110201 -> 1/p = 1 + 5.967504781 * 0.800110201 = 5.774661451
  //   N_l = 10: 11.5^-0.55 = 0.260985385 -> 1/p = 2.557431533, p = 0.391017311
  //   N_l = 99: 100.5^-0.55 = 0.079215226 -> 1/p = 1.472717240, p = 0.679016971
  const std::vector<int64_t> freq = {1, 0, 10, 99};
  const auto w = inverse_propensities(freq, 100);
  EXPECT_NEAR(w[0], std::log(100.0), 1e-12);
  EXPECT_NEAR(w[1], 5.774661451, 1e-8);
  EXPECT_NEAR(w[2], 2.557431533, 1e-8);
  EXPECT_NEAR(w[3], 1.472717240, 1e-8);
  const auto p = propensities(freq, 100);
  EXPECT_NEAR(p[2], 0.391017311, 1e-8);
  EXPECT_NEAR(p[3], 0.679016971, 1e-8);
  for (size_t l = 0; l < p.size(); ++l) EXPECT_DOUBLE_EQ(p[l] * w[l], 1.0);
  // Rarer labels have smaller propensities.
  EXPECT_LT(p[1], p[0]);
  EXPECT_LT(p[0], p[2]);
}

TEST(DatasetsPropensity, OtherConstantsAndErrors) {
  // A = 0.6, B = 2.6 (Amazon sets), N = 1000, N_l = 1: 1/p = 1 + (ln 1000 - 1) * (3.6/3.6)^0.6 = ln 1000.
  const std::vector<int64_t> one = {1};
  EXPECT_NEAR(inverse_propensities(one, 1000, {0.6, 2.6})[0], std::log(1000.0), 1e-12);
  // N_l = 1 always gives ln N whatever A and B: (B+1)^A (1+B)^-A = 1.
  EXPECT_NEAR(inverse_propensities(one, 5000, {0.5, 0.4})[0], std::log(5000.0), 1e-12);
  EXPECT_THROW(propensities(one, 2), std::invalid_argument);
  EXPECT_THROW(propensities(std::vector<int64_t>{-1}, 100), std::invalid_argument);
  EXPECT_THROW(propensities(one, 100, {0.55, 0.0}), std::invalid_argument);
}

}  // namespace
}  // namespace lobench::data
