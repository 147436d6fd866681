#include "harness/seqrec/layer_norm.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace lobench::seqrec {

LayerNorm::LayerNorm(ParameterSet& params, const std::string& name, int64_t D, int64_t max_rows, float eps)
    : D_(D), max_rows_(max_rows), eps_(eps) {
  gamma_ = params.add(name + ".gain", D, /*decay=*/false);
  beta_ = params.add(name + ".shift", D, /*decay=*/false);
}

void LayerNorm::allocate(CountingAllocator& alloc) {
  xhat_ = Buffer<float>(alloc, max_rows_ * D_);
  rstd_ = Buffer<float>(alloc, max_rows_);
}

void LayerNorm::init(ParameterSet& params) const {
  std::fill_n(params.value(gamma_), D_, 1.0f);
  std::fill_n(params.value(beta_), D_, 0.0f);
}

void LayerNorm::forward(const ParameterSet& params, const float* x, int64_t rows, float* y, int threads) {
  if (rows > max_rows_) throw std::invalid_argument("LayerNorm: more rows than allocated");
  const float* g = params.value(gamma_);
  const float* b = params.value(beta_);
  const int64_t D = D_;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * D;
    double mean = 0.0, var = 0.0;  // float64 row statistics: D is small, and this keeps them exact-ish
    for (int64_t d = 0; d < D; ++d) mean += xr[d];
    mean /= double(D);
    for (int64_t d = 0; d < D; ++d) var += (xr[d] - mean) * (xr[d] - mean);
    var /= double(D);
    const float rstd = float(1.0 / std::sqrt(var + double(eps_)));
    rstd_[r] = rstd;
    float* xh = xhat_.data() + r * D;
    float* yr = y + r * D;
    for (int64_t d = 0; d < D; ++d) {
      xh[d] = float((xr[d] - mean) * rstd);
      yr[d] = g[d] * xh[d] + b[d];
    }
  }
}

void LayerNorm::backward(ParameterSet& params, const float* dy, int64_t rows, float* dx, int threads) {
  const float* g = params.value(gamma_);
  float* dg = params.grad(gamma_);
  float* db = params.grad(beta_);
  const int64_t D = D_;
  // dx = rstd · (dx̂ − mean(dx̂) − x̂ · mean(dx̂ ⊙ x̂)), dx̂ = dy ⊙ γ.
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t r = 0; r < rows; ++r) {
    const float* dyr = dy + r * D;
    const float* xh = xhat_.data() + r * D;
    double s1 = 0.0, s2 = 0.0;
    for (int64_t d = 0; d < D; ++d) {
      const double dxh = double(dyr[d]) * g[d];
      s1 += dxh;
      s2 += dxh * xh[d];
    }
    const float m1 = float(s1 / double(D)), m2 = float(s2 / double(D));
    float* dxr = dx + r * D;
    for (int64_t d = 0; d < D; ++d) dxr[d] = rstd_[r] * (dyr[d] * g[d] - m1 - xh[d] * m2);
  }
  // Parameter gradients: columns split between threads, rows summed in order (thread independent).
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t d = 0; d < D; ++d) {
    float sg = 0.0f, sb = 0.0f;
    for (int64_t r = 0; r < rows; ++r) {
      sg += dy[r * D + d] * xhat_[r * D + d];
      sb += dy[r * D + d];
    }
    dg[d] += sg;
    db[d] += sb;
  }
}

}  // namespace lobench::seqrec
