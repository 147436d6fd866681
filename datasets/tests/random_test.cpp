#include "datasets/alias_table.hpp"
#include "datasets/random.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace lobench::data {
namespace {

TEST(DatasetsRandom, StreamsAreDeterministicAndKeyed) {
  Rng a(stream_key(1, 2, 3)), b(stream_key(1, 2, 3)), c(stream_key(1, 2, 4)), d(stream_key(2, 2, 3));
  for (int i = 0; i < 10; ++i) {
    const uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
    EXPECT_NE(x, d.next());
  }
}

TEST(DatasetsRandom, DistributionMeans) {
  Rng rng(stream_key(7, 0, 0));
  const int n = 200000;
  double u = 0, p = 0, pbig = 0, g = 0;
  uint64_t below_max = 0;
  for (int i = 0; i < n; ++i) {
    u += rng.uniform();
    p += static_cast<double>(rng.poisson(3.5));
    pbig += static_cast<double>(rng.poisson(100.0));
    g += static_cast<double>(rng.geometric(4.0));
    below_max = std::max(below_max, rng.below(10));
  }
  EXPECT_NEAR(u / n, 0.5, 0.005);
  EXPECT_NEAR(p / n, 3.5, 0.03);       // sd of the mean: sqrt(3.5/2e5) = 0.004
  EXPECT_NEAR(pbig / n, 100.0, 0.1);   // sd 0.022
  EXPECT_NEAR(g / n, 4.0, 0.06);       // sd sqrt(20/2e5) = 0.01
  EXPECT_EQ(below_max, 9u);
  EXPECT_EQ(rng.poisson(0.0), 0);
}

TEST(DatasetsAliasTable, ReproducesTheDistribution) {
  const std::vector<double> w = {5, 0, 1, 2, 0.5, 1.5};  // sum 10
  const AliasTable t(w);
  double sum = 0;
  for (uint32_t i = 0; i < w.size(); ++i) {
    EXPECT_NEAR(t.probability(i), w[i] / 10.0, 1e-6) << i;
    sum += t.probability(i);
  }
  EXPECT_NEAR(sum, 1.0, 1e-9);
  Rng rng(stream_key(3, 0, 0));
  std::vector<int> counts(w.size(), 0);
  const int n = 400000;
  for (int i = 0; i < n; ++i) ++counts[t.sample(rng)];
  EXPECT_EQ(counts[1], 0);
  for (size_t i = 0; i < w.size(); ++i) {
    const double p = w[i] / 10.0;
    EXPECT_NEAR(counts[i] / double(n), p, 5 * std::sqrt(p * (1 - p) / n) + 1e-9) << i;
  }
}

TEST(DatasetsAliasTable, RejectsBadWeights) {
  EXPECT_THROW(AliasTable(std::vector<double>{}), std::invalid_argument);
  EXPECT_THROW(AliasTable(std::vector<double>{0, 0}), std::invalid_argument);
  EXPECT_THROW(AliasTable(std::vector<double>{1, -1}), std::invalid_argument);
  EXPECT_THROW(AliasTable(std::vector<double>{1, NAN}), std::invalid_argument);
}

TEST(DatasetsAliasTable, ZipfWeights) {
  const auto w = zipf_weights(4, 2.0);
  EXPECT_DOUBLE_EQ(w[0], 1.0);
  EXPECT_DOUBLE_EQ(w[1], 0.25);
  EXPECT_DOUBLE_EQ(w[3], 1.0 / 16);
}

}  // namespace
}  // namespace lobench::data
