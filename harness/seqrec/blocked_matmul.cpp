#include "harness/seqrec/blocked_matmul.hpp"

#include <algorithm>

#include "variants/cpu/sgemm.hpp"

namespace lobench::seqrec {

int64_t row_block(int64_t M) {
  int64_t b = 64;
  while (b < 256 && M >= 8 * (2 * b)) b *= 2;
  return b;
}

ProductBlocks product_blocks(int64_t M, int64_t N) {
  if (M < 1024 && N >= 512) return {M, ((N + 3) / 4 + 15) / 16 * 16};  // 4 column blocks of all rows
  return {row_block(M), N};
}

void matmul(const float* A, Op opA, const float* B, Op opB, float* C, int64_t M, int64_t K, int64_t N,
            bool accumulate, int threads) {
  if (M <= 0 || N <= 0) return;
  const ProductBlocks blocks = product_blocks(M, N);
  const int64_t row_blocks = (M + blocks.rows - 1) / blocks.rows, col_blocks = (N + blocks.cols - 1) / blocks.cols;
  // Each block is one product on the calling thread (ProductsOnCallingThread: neither Eigen nor
  // OpenBLAS splits it further, whatever the team's size).
  const cpu::ProductsOnCallingThread products_on_calling_thread;
  const cpu::Op op_a = opA == Op::none ? cpu::Op::none : cpu::Op::transpose;
  const cpu::Op op_b = opB == Op::none ? cpu::Op::none : cpu::Op::transpose;
  const int64_t lda = opA == Op::none ? K : M, ldb = opB == Op::none ? N : K;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t blk = 0; blk < row_blocks * col_blocks; ++blk) {
    const int64_t r0 = blk / col_blocks * blocks.rows, m = std::min(blocks.rows, M - r0);
    const int64_t c0 = blk % col_blocks * blocks.cols, n = std::min(blocks.cols, N - c0);
    const float* a = opA == Op::none ? A + r0 * K : A + r0;  // op(A)'s rows [r0, r0+m)
    const float* b = opB == Op::none ? B + c0 : B + c0 * K;  // op(B)'s columns [c0, c0+n)
    cpu::sgemm(op_a, op_b, m, n, K, a, lda, b, ldb, C + r0 * N + c0, N, accumulate);
  }
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
