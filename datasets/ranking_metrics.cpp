#include "datasets/ranking_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace lobench::data {

RankingMetrics ranking_metrics(std::span<const int32_t> topk, int64_t k_stored, const LabelSets& truth,
                               int64_t num_labels, std::span<const double> inverse_propensity,
                               std::span<const int64_t> ks) {
  const int64_t rows = truth.rows();
  if (k_stored < 1) throw std::invalid_argument("ranking_metrics: k_stored must be >= 1");
  if (static_cast<int64_t>(topk.size()) != rows * k_stored) {
    throw std::invalid_argument(fmt::format("ranking_metrics: {} predictions for {} rows x k {}", topk.size(),
                                            rows, k_stored));
  }
  const bool with_psp = !inverse_propensity.empty();
  if (with_psp && static_cast<int64_t>(inverse_propensity.size()) != num_labels) {
    throw std::invalid_argument("ranking_metrics: inverse_propensity must have num_labels entries");
  }
  for (int64_t k : ks) {
    if (k < 1 || k > k_stored) throw std::invalid_argument(fmt::format("ranking_metrics: k = {} outside [1, {}]", k, k_stored));
  }
  const int64_t kmax = ks.empty() ? 0 : *std::max_element(ks.begin(), ks.end());
  std::vector<double> discount(static_cast<size_t>(kmax) + 1, 0.0), ideal(static_cast<size_t>(kmax) + 1, 0.0);
  for (int64_t r = 1; r <= kmax; ++r) {
    discount[r] = 1.0 / std::log2(static_cast<double>(r) + 1.0);
    ideal[r] = ideal[r - 1] + discount[r];
  }

  const size_t nk = ks.size();
  std::vector<double> hits_sum(nk, 0), ndcg_sum(nk, 0), psp_num(nk, 0), psp_den(nk, 0);
  std::vector<double> w_true;
  std::vector<int32_t> seen;
  // hit[r] / whit[r]: 1 / w for a hit at rank r, 0 for a miss (reset per row).
  std::vector<double> hit(static_cast<size_t>(kmax) + 1), whit(static_cast<size_t>(kmax) + 1);
  for (int64_t i = 0; i < rows; ++i) {
    const auto y = truth.row(i);
    const auto is_true = [&](int32_t id) { return std::binary_search(y.begin(), y.end(), id); };
    std::fill(hit.begin(), hit.end(), 0.0);
    std::fill(whit.begin(), whit.end(), 0.0);
    seen.clear();
    for (int64_t r = 1; r <= kmax; ++r) {
      const int32_t id = topk[i * k_stored + (r - 1)];
      if (id < 0 || id >= num_labels) continue;
      if (std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
      seen.push_back(id);
      if (is_true(id)) {
        hit[r] = 1.0;
        if (with_psp) whit[r] = inverse_propensity[id];
      }
    }
    if (with_psp) {
      w_true.clear();
      for (int32_t id : y) {
        if (id >= 0 && id < num_labels) w_true.push_back(inverse_propensity[id]);
      }
      std::sort(w_true.begin(), w_true.end(), std::greater<>());
    }
    for (size_t j = 0; j < nk; ++j) {
      const int64_t k = ks[j];
      double h = 0, dcg = 0, wh = 0;
      for (int64_t r = 1; r <= k; ++r) {
        h += hit[r];
        dcg += hit[r] * discount[r];
        wh += whit[r];
      }
      hits_sum[j] += h / static_cast<double>(k);
      const int64_t m = std::min<int64_t>(k, static_cast<int64_t>(y.size()));
      if (m > 0) ndcg_sum[j] += dcg / ideal[m];
      if (with_psp) {
        psp_num[j] += wh;
        for (int64_t r = 0; r < std::min<int64_t>(k, static_cast<int64_t>(w_true.size())); ++r) psp_den[j] += w_true[r];
      }
    }
  }
  RankingMetrics m;
  m.rows = rows;
  m.ks.assign(ks.begin(), ks.end());
  for (size_t j = 0; j < nk; ++j) {
    m.precision.push_back(rows > 0 ? hits_sum[j] / static_cast<double>(rows) : 0.0);
    m.ndcg.push_back(rows > 0 ? ndcg_sum[j] / static_cast<double>(rows) : 0.0);
    if (with_psp) m.psp.push_back(psp_den[j] > 0 ? psp_num[j] / psp_den[j] : 0.0);
  }
  return m;
}

std::vector<int32_t> top_k(std::span<const float> scores, int64_t rows, int64_t cols, int64_t k) {
  if (rows < 0 || cols < 0 || k < 0 || static_cast<int64_t>(scores.size()) != rows * cols) {
    throw std::invalid_argument("top_k: scores must hold rows x cols values and k must be >= 0");
  }
  const int64_t kk = std::min(k, cols);
  std::vector<int32_t> out(static_cast<size_t>(rows * kk));
  std::vector<int32_t> idx(static_cast<size_t>(cols));
  for (int64_t i = 0; i < rows; ++i) {
    const float* s = scores.data() + i * cols;
    std::iota(idx.begin(), idx.end(), 0);
    std::partial_sort(idx.begin(), idx.begin() + kk, idx.end(),
                      [s](int32_t a, int32_t b) {
                        const bool na = std::isnan(s[a]), nb = std::isnan(s[b]);
                        if (na != nb) return nb;
                        if (!na && s[a] != s[b]) return s[a] > s[b];
                        return a < b;
                      });
    std::copy(idx.begin(), idx.begin() + kk, out.begin() + i * kk);
  }
  return out;
}

}  // namespace lobench::data
