#include "datasets/seqrec_metrics.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace lobench::data {

namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A fixed-size best-K list, best first: higher score, then lower item id.
struct TopK {
  float score[kTopK];
  int32_t item[kTopK];
  int count = 0;
  static bool better(float s, int32_t i, float t, int32_t j) { return s > t || (s == t && i < j); }
  void offer(float s, int32_t i) {
    if (count == kTopK && !better(s, i, score[kTopK - 1], item[kTopK - 1])) return;
    int pos = count < kTopK ? count++ : kTopK - 1;
    while (pos > 0 && better(s, i, score[pos - 1], item[pos - 1])) {
      score[pos] = score[pos - 1];
      item[pos] = item[pos - 1];
      --pos;
    }
    score[pos] = s;
    item[pos] = i;
  }
};

bool excluded(const Exclusions& ex, int64_t u, int32_t item) {
  if (ex.empty()) return false;
  for (int64_t k = ex.offsets[size_t(u)]; k < ex.offsets[size_t(u + 1)]; ++k)
    if (ex.items[size_t(k)] == item) return true;
  return false;
}

}  // namespace

std::vector<int32_t> top_items(const float* hidden, int64_t users, const float* table, int64_t V, int64_t D,
                               const Exclusions& exclude, int64_t block_v, int threads, const float* bias) {
  if (users < 0 || V < 2 || D < 1) throw std::invalid_argument("top_items: need users >= 0, V >= 2, D >= 1");
  if (!exclude.empty() && int64_t(exclude.offsets.size()) != users + 1)
    throw std::invalid_argument("top_items: exclusions must have users + 1 offsets");
  const int64_t bv = block_v > 0 ? std::min(block_v, V) : std::min<int64_t>(8192, V);
  constexpr int64_t kUsers = 64;
  std::vector<int32_t> top(size_t(users * kTopK), -1);
  const int64_t chunks = (users + kUsers - 1) / kUsers;
  const int saved = Eigen::nbThreads();
  Eigen::setNbThreads(1);
#pragma omp parallel num_threads(threads)
  {
    RowMat scores(kUsers, bv);
    std::vector<TopK> best(kUsers);
#pragma omp for schedule(dynamic)
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t u0 = c * kUsers, nu = std::min(kUsers, users - u0);
      for (int64_t i = 0; i < nu; ++i) best[size_t(i)].count = 0;
      Eigen::Map<const RowMat> H(hidden + u0 * D, nu, D);
      for (int64_t v0 = 0; v0 < V; v0 += bv) {
        const int64_t nv = std::min(bv, V - v0);
        Eigen::Map<const RowMat> E(table + v0 * D, nv, D);
        scores.topLeftCorner(nu, nv).noalias() = H * E.transpose();
        if (bias) scores.topLeftCorner(nu, nv).rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias + v0, nv);
        if (v0 == 0) scores.col(0).head(nu).setConstant(-std::numeric_limits<float>::infinity());  // padding item
        if (!exclude.empty())
          for (int64_t i = 0; i < nu; ++i)
            for (int64_t k = exclude.offsets[size_t(u0 + i)]; k < exclude.offsets[size_t(u0 + i + 1)]; ++k) {
              const int64_t item = exclude.items[size_t(k)];
              if (item >= v0 && item < v0 + nv) scores(i, item - v0) = -std::numeric_limits<float>::infinity();
            }
        for (int64_t i = 0; i < nu; ++i)
          for (int64_t j = 0; j < nv; ++j)
            if (scores(i, j) != -std::numeric_limits<float>::infinity()) best[size_t(i)].offer(scores(i, j), int32_t(v0 + j));
      }
      for (int64_t i = 0; i < nu; ++i) {
        const TopK& b = best[size_t(i)];
        std::copy(b.item, b.item + b.count, top.begin() + (u0 + i) * kTopK);
      }
    }
  }
  Eigen::setNbThreads(saved);
  return top;
}

std::vector<int32_t> top_popular(std::span<const int64_t> counts, int64_t users, const Exclusions& exclude) {
  const int64_t V = int64_t(counts.size());
  std::vector<int32_t> order(size_t(std::max<int64_t>(V - 1, 0)));
  std::iota(order.begin(), order.end(), 1);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return counts[size_t(a)] > counts[size_t(b)]; });
  std::vector<int32_t> top(size_t(users * kTopK), -1);
  for (int64_t u = 0; u < users; ++u) {
    int64_t k = 0;
    for (size_t i = 0; i < order.size() && k < kTopK; ++i)
      if (!excluded(exclude, u, order[i])) top[size_t(u * kTopK + k++)] = order[i];
  }
  return top;
}

namespace {
// DCG of the held-out items among the first k of a top list, over the ideal DCG of min(#held-out, k).
double ndcg_at(const int32_t* top, const std::vector<int32_t>& held, int64_t k) {
  double dcg = 0, ideal = 0;
  for (int64_t r = 0; r < k; ++r)
    if (std::find(held.begin(), held.end(), top[r]) != held.end()) dcg += 1.0 / std::log2(double(r) + 2.0);
  for (int64_t i = 0; i < std::min<int64_t>(int64_t(held.size()), k); ++i) ideal += 1.0 / std::log2(double(i) + 2.0);
  return dcg / ideal;
}
}  // namespace

RankingScores score_top_items(std::span<const int32_t> top, std::span<const int32_t> targets, int64_t users,
                              int64_t L, int64_t V) {
  if (int64_t(top.size()) != users * kTopK || int64_t(targets.size()) != users * L)
    throw std::invalid_argument("score_top_items: top must be [users, 20] and targets [users, L]");
  RankingScores s;
  s.users = users;
  for (int64_t u = 0; u < users; ++u) {
    std::vector<int32_t> held;
    for (int64_t l = 0; l < L; ++l) {
      const int32_t t = targets[size_t(u * L + l)];
      if (t >= 1 && t < V && std::find(held.begin(), held.end(), t) == held.end()) held.push_back(t);
    }
    if (held.empty()) continue;
    const int32_t* row = top.data() + u * kTopK;
    bool hit8 = false, hit10 = false;
    for (int64_t r = 0; r < 10; ++r) {
      if (std::find(held.begin(), held.end(), row[r]) == held.end()) continue;
      hit10 = true;
      hit8 = hit8 || r < 8;
    }
    s.hit_at_8 += hit8;
    s.hr_at_10 += hit10;
    s.ndcg_at_10 += ndcg_at(row, held, 10);
    s.ndcg_at_20 += ndcg_at(row, held, 20);
  }
  if (users > 0) {
    s.hit_at_8 /= double(users);
    s.hr_at_10 /= double(users);
    s.ndcg_at_10 /= double(users);
    s.ndcg_at_20 /= double(users);
  }
  return s;
}

}  // namespace lobench::data
