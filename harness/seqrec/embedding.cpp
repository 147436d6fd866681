#include "harness/seqrec/embedding.hpp"

#include <algorithm>

namespace lobench::seqrec {

Embedding::Embedding(ParameterSet& params, const std::string& name, ParamRef items, int64_t V, int64_t N, int64_t D)
    : V_(V), N_(N), D_(D), items_(items) {
  pos_ = params.add(name + ".positions", N * D, /*decay=*/true);
}

void Embedding::forward(const ParameterSet& params, const int32_t* ids, int64_t B, float* x, int threads) const {
  const float* E = params.value(items_);
  const float* P = params.value(pos_);
  const int64_t D = D_, R = B * N_;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t r = 0; r < R; ++r) {
    float* xr = x + r * D;
    const int32_t id = ids[r];
    if (id == 0) {
      std::fill_n(xr, D, 0.0f);
      continue;
    }
    const float* e = E + int64_t(id) * D;
    const float* p = P + (r % N_) * D;
    for (int64_t d = 0; d < D; ++d) xr[d] = e[d] + p[d];
  }
}

void Embedding::backward(ParameterSet& params, const int32_t* ids, int64_t B, const float* dx, int threads) const {
  float* dE = params.grad(items_);
  float* dP = params.grad(pos_);
  const int64_t D = D_, R = B * N_;
  constexpr int64_t kCols = 16;
  const int64_t blocks = (D + kCols - 1) / kCols;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t d0 = blk * kCols, d1 = std::min(D, d0 + kCols);
    for (int64_t r = 0; r < R; ++r) {
      const int32_t id = ids[r];
      if (id == 0) continue;
      const float* g = dx + r * D;
      float* e = dE + int64_t(id) * D;
      float* p = dP + (r % N_) * D;
      for (int64_t d = d0; d < d1; ++d) {
        e[d] += g[d];
        p[d] += g[d];
      }
    }
  }
}

}  // namespace lobench::seqrec
