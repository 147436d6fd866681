// The residual connection of a pre-LN block: y = x + f(x). Its backward passes the gradient to both
// branches unchanged (the caller adds the branch's input gradient to dy).
#pragma once

#include <cstdint>

namespace lobench::seqrec {

// y[i] = x[i] + branch[i] (y may alias either).
inline void residual_add(const float* x, const float* branch, int64_t n, float* y, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] + branch[i];
}

// dx[i] = dy[i] + dbranch_input[i]: the gradient reaching x by the skip path and through the branch.
inline void residual_backward(const float* dy, const float* d_through_branch, int64_t n, float* dx, int threads) {
  residual_add(dy, d_through_branch, n, dx, threads);
}

}  // namespace lobench::seqrec
