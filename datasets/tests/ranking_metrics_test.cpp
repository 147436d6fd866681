#include "datasets/ranking_metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace lobench::data {
namespace {

LabelSets truth_of(const std::vector<std::vector<int32_t>>& rows) {
  LabelSets t;
  for (const auto& r : rows) {
    t.ids.insert(t.ids.end(), r.begin(), r.end());
    t.offsets.push_back(t.nnz());
  }
  return t;
}

TEST(DatasetsRankingMetrics, HandComputedExample) {
  // V = 6. Truth: row0 {0, 2}, row1 {1}, row2 {} (no labels: counts as 0 in P and nDCG).
  // Top-5: row0 [2, 3, 5, 0, 4]  hits at ranks 1 and 4
  //        row1 [4, 1, 1, -1, 9] hit at rank 2; the repeated 1 and the ids -1, 9 are misses
  //        row2 [0, 1, 2, 3, 4]  nothing to hit
  const LabelSets truth = truth_of({{0, 2}, {1}, {}});
  const std::vector<int32_t> top = {2, 3, 5, 0, 4, /**/ 4, 1, 1, -1, 9, /**/ 0, 1, 2, 3, 4};
  // Inverse propensities w = [1, 2, 3, 4, 5, 6].
  const std::vector<double> w = {1, 2, 3, 4, 5, 6};
  const RankingMetrics m = ranking_metrics(top, 5, truth, 6, w);
  ASSERT_EQ(m.ks, (std::vector<int64_t>{1, 3, 5}));
  EXPECT_EQ(m.rows, 3);
  // P@1 = (1 + 0 + 0) / 3;  P@3 = (1/3 + 1/3 + 0) / 3 = 2/9;  P@5 = (2/5 + 1/5 + 0) / 3 = 0.2.
  EXPECT_NEAR(m.precision[0], 1.0 / 3, 1e-12);
  EXPECT_NEAR(m.precision[1], 2.0 / 9, 1e-12);
  EXPECT_NEAR(m.precision[2], 0.2, 1e-12);
  // nDCG@1: row0 1/1, row1 0 -> 1/3.
  // nDCG@3: row0 DCG = 1/log2(2) = 1, IDCG over min(3, 2) = 2 ranks = 1 + 1/log2(3) = 1.630930 -> 0.613147;
  //         row1 DCG = 1/log2(3) = 0.630930, IDCG = 1 -> 0.630930; mean (0.613147 + 0.630930 + 0) / 3 = 0.414692.
  // nDCG@5: row0 DCG = 1 + 1/log2(5) = 1.430677 -> 1.430677 / 1.630930 = 0.877215; row1 as before;
  //         mean (0.877215 + 0.630930) / 3 = 0.502715.
  EXPECT_NEAR(m.ndcg[0], 1.0 / 3, 1e-12);
  EXPECT_NEAR(m.ndcg[1], 0.414692315, 1e-8);
  EXPECT_NEAR(m.ndcg[2], 0.502715023, 1e-8);
  // PSP@1: numerator row0 w(2) = 3; denominator best true label per row: row0 max(w0, w2) = 3, row1 w1 = 2 -> 3/5.
  // PSP@3: numerator 3 (row0, label 2) + 2 (row1, label 1) = 5; denominator row0 3 + 1, row1 2 = 6 -> 5/6.
  // PSP@5: numerator 3 + 1 (row0 label 0 at rank 4) + 2 = 6; denominator 6 -> 1.
  ASSERT_EQ(m.psp.size(), 3u);
  EXPECT_NEAR(m.psp[0], 0.6, 1e-12);
  EXPECT_NEAR(m.psp[1], 5.0 / 6, 1e-12);
  EXPECT_NEAR(m.psp[2], 1.0, 1e-12);
}

TEST(DatasetsRankingMetrics, PerfectAndEmptyPredictions) {
  const LabelSets truth = truth_of({{1, 3, 4}, {0}});
  const std::vector<int32_t> perfect = {3, 4, 1, /**/ 0, 2, 5};
  const std::vector<int64_t> ks = {1, 2, 3};
  const RankingMetrics m = ranking_metrics(perfect, 3, truth, 6, {}, ks);
  EXPECT_TRUE(m.psp.empty());
  EXPECT_DOUBLE_EQ(m.precision[0], 1.0);
  EXPECT_DOUBLE_EQ(m.precision[2], (1.0 + 1.0 / 3) / 2);  // row1 has one label: at most 1/3 at k = 3
  for (double v : m.ndcg) EXPECT_NEAR(v, 1.0, 1e-12);       // nDCG is 1 for an ideal ranking
  const std::vector<int32_t> none = {-1, -1, -1, 6, 7, 8};
  const RankingMetrics z = ranking_metrics(none, 3, truth, 6, {}, ks);
  for (double v : z.precision) EXPECT_EQ(v, 0.0);
  for (double v : z.ndcg) EXPECT_EQ(v, 0.0);
}

TEST(DatasetsRankingMetrics, SizeErrors) {
  const LabelSets truth = truth_of({{1}});
  const std::vector<int32_t> top = {1, 2};
  EXPECT_THROW(ranking_metrics(top, 3, truth, 6), std::invalid_argument);  // 2 != 1 x 3
  const std::vector<int64_t> k5 = {5};
  EXPECT_THROW(ranking_metrics(top, 2, truth, 6, {}, k5), std::invalid_argument);  // k > k_stored
  const std::vector<double> w = {1, 2};
  EXPECT_THROW(ranking_metrics(top, 2, truth, 6, w, std::vector<int64_t>{1}), std::invalid_argument);
}

TEST(DatasetsRankingMetrics, TopKFromScores) {
  const float nan = std::nanf("");
  const std::vector<float> scores = {0.1f, 0.9f, 0.5f, 0.9f,  //
                                     nan, -1.0f, -2.0f, nan};
  const auto top = top_k(scores, 2, 4, 3);
  EXPECT_EQ(top, (std::vector<int32_t>{1, 3, 2, /**/ 1, 2, 0}));  // column ids; ties by lower id; NaN last
  EXPECT_EQ(top_k(scores, 2, 4, 10).size(), 8u);                  // k capped at cols
  EXPECT_THROW(top_k(scores, 3, 4, 1), std::invalid_argument);
}

}  // namespace
}  // namespace lobench::data
