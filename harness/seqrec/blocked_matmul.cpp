#include "harness/seqrec/blocked_matmul.hpp"

#include <Eigen/Core>
#include <algorithm>

namespace lobench::seqrec {

namespace {
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using CMap = Eigen::Map<const RowMat>;
using Map = Eigen::Map<RowMat>;
}  // namespace

int64_t row_block(int64_t M) {
  int64_t b = 64;
  while (b < 256 && M >= 8 * (2 * b)) b *= 2;
  return b;
}

void matmul(const float* A, Op opA, const float* B, Op opB, float* C, int64_t M, int64_t K, int64_t N,
            bool accumulate, int threads) {
  if (M <= 0 || N <= 0) return;
  const int64_t rb = row_block(M), blocks = (M + rb - 1) / rb;
  // Inside an OpenMP team of more than one thread Eigen's products run on the calling thread; with one
  // thread, a one-thread team is asked for explicitly below and Eigen would parallelize on its own, so
  // its thread count is pinned to 1 for the call.
  const int saved = Eigen::nbThreads();
  Eigen::setNbThreads(1);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t r0 = blk * rb, m = std::min(rb, M - r0);
    Map c(C + r0 * N, m, N);
    const CMap b_plain(B, K, N);
    const CMap b_trans(B, N, K);
    if (opA == Op::none) {
      const CMap a(A + r0 * K, m, K);
      if (opB == Op::none) {
        if (accumulate) c.noalias() += a * b_plain; else c.noalias() = a * b_plain;
      } else {
        if (accumulate) c.noalias() += a * b_trans.transpose(); else c.noalias() = a * b_trans.transpose();
      }
    } else {
      const auto a = CMap(A, K, M).middleCols(r0, m).transpose();
      if (opB == Op::none) {
        if (accumulate) c.noalias() += a * b_plain; else c.noalias() = a * b_plain;
      } else {
        if (accumulate) c.noalias() += a * b_trans.transpose(); else c.noalias() = a * b_trans.transpose();
      }
    }
  }
  Eigen::setNbThreads(saved);
}

void add_column_sums(const float* X, int64_t rows, int64_t cols, float* out, int threads) {
  constexpr int64_t kCols = 64;
  const int64_t blocks = (cols + kCols - 1) / kCols;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t c0 = blk * kCols, c1 = std::min(cols, c0 + kCols);
    for (int64_t r = 0; r < rows; ++r) {
      const float* x = X + r * cols;
      for (int64_t c = c0; c < c1; ++c) out[c] += x[c];
    }
  }
}

}  // namespace lobench::seqrec
