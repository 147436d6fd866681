#include "harness/seqrec/dropout.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <string>

#include "precision_sim/stochastic.hpp"

namespace lobench::seqrec {

Dropout::Dropout(float p, uint64_t seed, uint64_t site) : p_(p), seed_(seed), site_(site) {
  if (!(p >= 0.0f && p < 1.0f)) throw std::invalid_argument("dropout must be in [0, 1), got " + std::to_string(p));
}

void Dropout::forward(const float* x, int64_t n, uint64_t step, bool training, float* y, int threads, uint64_t first) const {
  if (!training || p_ == 0.0f) {
    if (x != y) std::copy_n(x, n, y);
    return;
  }
  constexpr int64_t kBlock = 1024;
  const uint32_t threshold = uint32_t(std::min(4294967295.0, std::floor(double(p_) * 4294967296.0)));
  const float scale = 1.0f / (1.0f - p_);
  const uint64_t stream = (site_ << 32) + step;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t i0 = blk * kBlock, m = std::min(kBlock, n - i0);
    uint32_t words[kBlock];
    precision::random_words(seed_, stream, first + uint64_t(i0), std::span<uint32_t>(words, size_t(m)));
    for (int64_t i = 0; i < m; ++i) y[i0 + i] = words[i] >= threshold ? x[i0 + i] * scale : 0.0f;
  }
}

}  // namespace lobench::seqrec
