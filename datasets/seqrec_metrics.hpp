// Ranking metrics of sequential recommendation over the full catalogue, scored in vocabulary blocks:
// a [users, V] score matrix is never formed. For each user the top K = 20 items (the padding item 0
// never counts; optionally the user's own history is excluded, as S3-Rec's full ranking does) are
// kept while the blocks of V stream past, ties broken by the lower item id.
//
//   Hit@8   1 if any of the user's L held-out items is in its top 8 (the Cut BCE paper's multi-label
//           Hit@8; for L = 1 the usual HR@8);
//   HR@10   the same with the top 10;
//   NDCG@10 Σ over held-out items ranked r < 10 of 1/log2(r + 2), divided by the ideal
//           Σ_{i < min(#held-out, 10)} 1/log2(i + 2) (for L = 1 the usual 1/log2(rank + 2));
//   NDCG@20 the same over the top 20 (what S3-Rec's code selects its epoch by);
// each averaged over users. Duplicate held-out ids count once; ids outside [1, V) are ignored.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace lobench::data {

constexpr int64_t kTopK = 20;

struct RankingScores {
  double hit_at_8 = 0, hr_at_10 = 0, ndcg_at_10 = 0, ndcg_at_20 = 0;
  int64_t users = 0;
};

// Per-user items to leave out of the ranking (CSR: items of user u are items[offsets[u] .. offsets[u+1])).
struct Exclusions {
  std::span<const int64_t> offsets;
  std::span<const int32_t> items;
  bool empty() const { return offsets.empty(); }
};

// top [users, K] from hidden [users, D] · tableᵀ [V, D] (+ bias [V] on every user's scores, when given):
// blocks of block_v items (0: 8192), users in chunks of 64 per thread (the working set is
// threads·64·block_v floats). Threads take user chunks, so the result does not depend on their number.
std::vector<int32_t> top_items(const float* hidden, int64_t users, const float* table, int64_t V, int64_t D,
                               const Exclusions& exclude, int64_t block_v, int threads, const float* bias = nullptr);

// top [users, K] of a popularity ranking (`counts` [V], higher first), skipping excluded items.
std::vector<int32_t> top_popular(std::span<const int64_t> counts, int64_t users, const Exclusions& exclude);

// Metrics from top [users, K] and held-out targets [users, L].
RankingScores score_top_items(std::span<const int32_t> top, std::span<const int32_t> targets, int64_t users,
                              int64_t L, int64_t V);

}  // namespace lobench::data
