#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "datasets/random.hpp"
#include "datasets/seqrec_metrics.hpp"

namespace lobench::data {
namespace {

// Brute force: the full score row, sorted (score desc, id asc), padding and exclusions removed.
std::vector<int32_t> brute_top(const std::vector<float>& h, const std::vector<float>& E, int64_t users, int64_t V,
                               int64_t D, const std::vector<std::vector<int32_t>>& ex) {
  std::vector<int32_t> top;
  for (int64_t u = 0; u < users; ++u) {
    std::vector<std::pair<float, int32_t>> row;
    for (int32_t v = 1; v < V; ++v) {
      if (!ex.empty() && std::count(ex[size_t(u)].begin(), ex[size_t(u)].end(), v)) continue;
      float s = 0;
      for (int64_t d = 0; d < D; ++d) s += h[size_t(u * D + d)] * E[size_t(v * D + d)];
      row.push_back({-s, v});
    }
    std::sort(row.begin(), row.end());
    for (int64_t k = 0; k < kTopK; ++k) top.push_back(row[size_t(k)].second);
  }
  return top;
}

TEST(DatasetsSeqrecMetrics, BlockScoredTopItemsEqualTheFullSort) {
  const int64_t users = 130, V = 1001, D = 8;
  Rng rng(3);
  // Values on a coarse grid (multiples of 1/8, small integers) so every product is exact in float32
  // and the brute force and the blocked GEMM agree to the bit, ties included.
  std::vector<float> h(size_t(users * D)), E(size_t(V * D));
  for (float& x : h) x = float(int64_t(rng.below(9)) - 4) / 8.0f;
  for (float& x : E) x = float(int64_t(rng.below(5)) - 2);
  std::vector<std::vector<int32_t>> ex(static_cast<size_t>(users));
  std::vector<int64_t> off{0};
  std::vector<int32_t> items;
  for (int64_t u = 0; u < users; ++u) {
    for (int k = 0; k < 5; ++k) ex[size_t(u)].push_back(int32_t(1 + rng.below(uint64_t(V - 1))));
    items.insert(items.end(), ex[size_t(u)].begin(), ex[size_t(u)].end());
    off.push_back(int64_t(items.size()));
  }
  const auto want = brute_top(h, E, users, V, D, ex);
  for (int threads : {1, 2})
    for (int64_t bv : {64, 333, 0}) {
      const auto got = top_items(h.data(), users, E.data(), V, D, Exclusions{off, items}, bv, threads);
      EXPECT_EQ(got, want) << bv << " " << threads;
    }
  EXPECT_EQ(top_items(h.data(), users, E.data(), V, D, {}, 100, 2), brute_top(h, E, users, V, D, {}));
}

// A per-item bias on the scores (the SASRec model's --output-bias item) ranks as the widened product
// [h | 1]·[E | b]ᵀ does, exactly (grid values again), for every block size and thread count.
TEST(DatasetsSeqrecMetrics, ABiasOnTheScoresRanksAsTheWidenedProduct) {
  const int64_t users = 70, V = 517, D = 6;
  Rng rng(4);
  std::vector<float> h(size_t(users * D)), E(size_t(V * D)), b(static_cast<size_t>(V));
  for (float& x : h) x = float(int64_t(rng.below(9)) - 4) / 8.0f;
  for (float& x : E) x = float(int64_t(rng.below(5)) - 2);
  for (float& x : b) x = float(int64_t(rng.below(17)) - 8) / 4.0f;
  std::vector<float> hw, Ew;
  for (int64_t u = 0; u < users; ++u) {
    hw.insert(hw.end(), h.begin() + u * D, h.begin() + (u + 1) * D);
    hw.push_back(1.0f);
  }
  for (int64_t v = 0; v < V; ++v) {
    Ew.insert(Ew.end(), E.begin() + v * D, E.begin() + (v + 1) * D);
    Ew.push_back(b[size_t(v)]);
  }
  const auto want = brute_top(hw, Ew, users, V, D + 1, {});
  ASSERT_NE(want, brute_top(h, E, users, V, D, {}));  // the bias changes the ranking
  for (int threads : {1, 2})
    for (int64_t bv : {64, 200, 0})
      EXPECT_EQ(top_items(h.data(), users, E.data(), V, D, {}, bv, threads, b.data()), want) << bv << " " << threads;
}

TEST(DatasetsSeqrecMetrics, HitRateAndNdcgByHand) {
  // Two users, top lists 1..20 and 101..120.
  std::vector<int32_t> top(40);
  std::iota(top.begin(), top.begin() + 20, 1);
  std::iota(top.begin() + 20, top.end(), 101);
  // L = 2: user 0 holds 3 (rank 2) and 10 (rank 9: in top 10 but not top 8); user 1 holds 199, 199.
  const std::vector<int32_t> targets{3, 10, 199, 199};
  const RankingScores s = score_top_items(top, targets, 2, 2, 200);
  EXPECT_DOUBLE_EQ(s.hit_at_8, 0.5);
  EXPECT_DOUBLE_EQ(s.hr_at_10, 0.5);
  const double ideal = 1.0 + 1.0 / std::log2(3.0);
  EXPECT_NEAR(s.ndcg_at_10, 0.5 * (1.0 / std::log2(4.0) + 1.0 / std::log2(11.0)) / ideal, 1e-12);
  EXPECT_NEAR(s.ndcg_at_20, s.ndcg_at_10, 1e-12);  // nothing held between ranks 10 and 20
  // L = 1 at rank 0: NDCG 1; a target outside the top 20: 0.
  const RankingScores one = score_top_items(top, std::vector<int32_t>{1, 150}, 2, 1, 200);
  EXPECT_DOUBLE_EQ(one.ndcg_at_10, 0.5);
  EXPECT_DOUBLE_EQ(one.hr_at_10, 0.5);
  EXPECT_DOUBLE_EQ(one.ndcg_at_20, 0.5);
  EXPECT_THROW(score_top_items(top, targets, 3, 2, 200), std::invalid_argument);
}

// NDCG@20 (S3-Rec's selection metric) counts ranks 10..19, which HR@10 and NDCG@10 do not.
TEST(DatasetsSeqrecMetrics, NdcgAt20CountsRanksTenToNineteen) {
  std::vector<int32_t> top(40);
  std::iota(top.begin(), top.end(), 1);  // user 0: 1..20, user 1: 21..40
  // User 0's item 15 at rank 14; user 1's item 40 at rank 19 and item 23 at rank 2 (L = 2).
  const RankingScores s = score_top_items(top, std::vector<int32_t>{15, 15, 40, 23}, 2, 2, 100);
  EXPECT_DOUBLE_EQ(s.hr_at_10, 0.5);
  const double ideal2 = 1.0 + 1.0 / std::log2(3.0);
  const double user0 = 1.0 / std::log2(16.0), user1 = (1.0 / std::log2(4.0) + 1.0 / std::log2(21.0)) / ideal2;
  EXPECT_NEAR(s.ndcg_at_20, 0.5 * (user0 + user1), 1e-12);
  EXPECT_NEAR(s.ndcg_at_10, 0.5 * (1.0 / std::log2(4.0)) / ideal2, 1e-12);
}

TEST(DatasetsSeqrecMetrics, PopularityBaselineSkipsExclusionsAndPadding) {
  std::vector<int64_t> counts{1000, 5, 9, 7, 1, 0, 3, 2, 8, 4, 6, 10};  // item 0 is padding
  const std::vector<int64_t> off{0, 0, 2};
  const std::vector<int32_t> items{11, 2};
  const auto top = top_popular(counts, 2, Exclusions{off, items});
  std::vector<int32_t> first{11, 2, 8, 3, 10, 1, 9, 6, 7, 4, 5}, second{8, 3, 10, 1, 9, 6, 7, 4, 5};
  first.resize(kTopK, -1);
  second.resize(kTopK, -1);
  EXPECT_EQ(std::vector<int32_t>(top.begin(), top.begin() + kTopK), first);
  EXPECT_EQ(std::vector<int32_t>(top.begin() + kTopK, top.end()), second);
}

}  // namespace
}  // namespace lobench::data
