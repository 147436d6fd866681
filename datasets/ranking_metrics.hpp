// Ranking metrics of XMC from top-k predicted label lists (pyxclib's definitions, as ELMO reports them):
//
//   P@k     = mean_i (1/k) Σ_{r≤k} y_i(pred_ir)
//   nDCG@k  = mean_i DCG@k_i / IDCG@k_i,  DCG@k_i = Σ_{r≤k} y_i(pred_ir) / log2(r+1),
//             IDCG@k_i = Σ_{r≤min(k,|y_i|)} 1 / log2(r+1)
//   PSP@k   = [Σ_i Σ_{r≤k} y_i(pred_ir) · w(pred_ir)] / [Σ_i Σ_{top min(k,|y_i|) true labels by w} w]
//             with w = inverse propensity (propensity.hpp): a ratio of sums over rows, not a mean of
//             per-row ratios (the 1/k and 1/rows factors cancel).
//
// Means run over all rows; a row without true labels contributes 0 to P@k and nDCG@k (as in pyxclib).
// Predictions: row-major [rows, k_stored], best first. An id outside [0, num_labels) is "no prediction"
// (a miss), and an id repeated within a row's top k counts only once.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "datasets/sparse_dataset.hpp"

namespace lobench::data {

inline constexpr int64_t kDefaultKs[] = {1, 3, 5};

struct RankingMetrics {
  std::vector<int64_t> ks;
  std::vector<double> precision;  // P@k per entry of ks, in [0, 1]
  std::vector<double> ndcg;       // nDCG@k
  std::vector<double> psp;        // PSP@k (empty without inverse propensities)
  int64_t rows = 0;
};

// topk: [truth.rows(), k_stored]; every k in ks must lie in [1, k_stored]. inverse_propensity: empty
// (no PSP) or num_labels entries. Throws std::invalid_argument on mismatched sizes.
RankingMetrics ranking_metrics(std::span<const int32_t> topk, int64_t k_stored, const LabelSets& truth,
                               int64_t num_labels, std::span<const double> inverse_propensity = {},
                               std::span<const int64_t> ks = std::span<const int64_t>(kDefaultKs));

// The k highest scores of each row of a dense row-major [rows, cols] score matrix, best first; ties go
// to the lower id, NaN ranks below every number. Returns [rows, min(k, cols)].
std::vector<int32_t> top_k(std::span<const float> scores, int64_t rows, int64_t cols, int64_t k);

}  // namespace lobench::data
