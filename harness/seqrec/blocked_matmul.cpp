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

ProductBlocks product_blocks(int64_t M, int64_t N) {
  if (M < 1024 && N >= 512) return {M, ((N + 3) / 4 + 15) / 16 * 16};  // 4 column blocks of all rows
  return {row_block(M), N};
}

namespace {

template <class CBlock, class ABlock, class BBlock>
void product_into(CBlock&& c, const ABlock& a, const BBlock& b, bool accumulate) {
  if (accumulate) c.noalias() += a * b;
  else c.noalias() = a * b;
}

}  // namespace

void matmul(const float* A, Op opA, const float* B, Op opB, float* C, int64_t M, int64_t K, int64_t N,
            bool accumulate, int threads) {
  if (M <= 0 || N <= 0) return;
  const ProductBlocks blocks = product_blocks(M, N);
  const int64_t row_blocks = (M + blocks.rows - 1) / blocks.rows, col_blocks = (N + blocks.cols - 1) / blocks.cols;
  // Inside an OpenMP team of more than one thread Eigen's products run on the calling thread; with one
  // thread, a one-thread team is asked for explicitly below and Eigen would parallelize on its own, so
  // its thread count is pinned to 1 for the call.
  const int saved = Eigen::nbThreads();
  Eigen::setNbThreads(1);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t blk = 0; blk < row_blocks * col_blocks; ++blk) {
    const int64_t r0 = blk / col_blocks * blocks.rows, m = std::min(blocks.rows, M - r0);
    const int64_t c0 = blk % col_blocks * blocks.cols, n = std::min(blocks.cols, N - c0);
    Eigen::Map<RowMat, 0, Eigen::OuterStride<>> c(C + r0 * N + c0, m, n, Eigen::OuterStride<>(N));
    const auto a_plain = CMap(A, M, K).middleRows(r0, m);
    const auto a_trans = CMap(A, K, M).middleCols(r0, m).transpose();
    const auto b_plain = CMap(B, K, N).middleCols(c0, n);
    const auto b_trans = CMap(B, N, K).middleRows(c0, n).transpose();
    if (opA == Op::none && opB == Op::none) product_into(c, a_plain, b_plain, accumulate);
    else if (opA == Op::none) product_into(c, a_plain, b_trans, accumulate);
    else if (opB == Op::none) product_into(c, a_trans, b_plain, accumulate);
    else product_into(c, a_trans, b_trans, accumulate);
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
