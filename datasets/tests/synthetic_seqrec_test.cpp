#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "datasets/synthetic_seqrec.hpp"

namespace lobench::data {
namespace {

TEST(DatasetsSyntheticSeqrec, YambdaShapeAtScaleOne) {
  const SyntheticSeqrecConfig c = yambda_like(1.0, 0);
  EXPECT_EQ(c.users, 9074);
  EXPECT_EQ(c.items + 1, 876939);  // with the padding item
  EXPECT_EQ(c.mean_length, 5120.0);
}

TEST(DatasetsSyntheticSeqrec, SeededThreadIndependentAndShaped) {
  SyntheticSeqrecConfig c = yambda_like(0.02, 5);
  const SequenceDataset a = generate_synthetic_seqrec(c, 1), b = generate_synthetic_seqrec(c, 2);
  EXPECT_EQ(a.items, b.items);
  EXPECT_EQ(a.offsets, b.offsets);
  c.seed = 6;
  EXPECT_NE(generate_synthetic_seqrec(c, 2).items, a.items);
  EXPECT_EQ(a.num_users(), 181);
  const double mean = double(a.num_interactions()) / double(a.num_users());
  EXPECT_NEAR(mean, c.mean_length, 0.25 * c.mean_length);
  for (int32_t i : a.items) {
    ASSERT_GE(i, 1);
    ASSERT_LE(i, c.items);
  }
  for (int64_t u = 0; u < a.num_users(); ++u) EXPECT_GE(int64_t(a.sequence(u).size()), c.min_length);
  // Power law: the most popular id (1) is far above the median item.
  std::vector<int64_t> count(size_t(c.items + 1), 0);
  for (int32_t i : a.items) ++count[size_t(i)];
  std::vector<int64_t> sorted(count.begin() + 1, count.end());
  std::sort(sorted.begin(), sorted.end());
  EXPECT_GT(count[1], 20 * std::max<int64_t>(1, sorted[sorted.size() / 2]));
}

// The learnable signal: predicting each user's last item by the 8 items most frequent in that user's
// own history beats the 8 most popular items overall by a wide margin, and does not without signal.
double personal_over_popular(const SequenceDataset& d) {
  std::vector<int64_t> global(size_t(d.num_items + 1), 0);
  for (int32_t i : d.items) ++global[size_t(i)];
  std::vector<int32_t> order(size_t(d.num_items));
  for (int32_t i = 0; i < d.num_items; ++i) order[size_t(i)] = i + 1;
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return global[size_t(a)] > global[size_t(b)]; });
  const std::vector<int32_t> popular(order.begin(), order.begin() + 8);
  int64_t personal_hits = 0, popular_hits = 0;
  for (int64_t u = 0; u < d.num_users(); ++u) {
    const auto s = d.sequence(u);
    std::map<int32_t, int64_t> freq;
    for (size_t t = 0; t + 1 < s.size(); ++t) ++freq[s[t]];
    std::vector<std::pair<int64_t, int32_t>> ranked;
    for (const auto& [item, n] : freq) ranked.push_back({-n, item});
    std::sort(ranked.begin(), ranked.end());
    const int32_t next = s.back();
    for (size_t k = 0; k < std::min<size_t>(8, ranked.size()); ++k) personal_hits += ranked[k].second == next;
    popular_hits += std::count(popular.begin(), popular.end(), next);
  }
  return double(personal_hits) / double(std::max<int64_t>(1, popular_hits));
}

TEST(DatasetsSyntheticSeqrec, NextItemIsPredictableBeyondPopularity) {
  SyntheticSeqrecConfig c = yambda_like(0.05, 1);
  EXPECT_GT(personal_over_popular(generate_synthetic_seqrec(c, 2)), 1.5);
  c.signal = 0.0;
  EXPECT_LT(personal_over_popular(generate_synthetic_seqrec(c, 2)), 1.2);
}

TEST(DatasetsSyntheticSeqrec, RejectsBadConfigurations) {
  EXPECT_THROW(yambda_like(0.0, 0), std::invalid_argument);
  EXPECT_THROW(yambda_like(2.0, 0), std::invalid_argument);
  SyntheticSeqrecConfig c = yambda_like(0.01, 0);
  c.clusters_per_user = c.clusters + 1;
  EXPECT_THROW(generate_synthetic_seqrec(c), std::invalid_argument);
  c = yambda_like(0.01, 0);
  c.signal = 1.5;
  EXPECT_THROW(generate_synthetic_seqrec(c), std::invalid_argument);
}

}  // namespace
}  // namespace lobench::data
