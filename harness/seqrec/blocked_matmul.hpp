// Matrix products of the layers, with results independent of the thread count.
//
// A multithreaded GEMM chooses its cache blocking from the number of threads, so its sums can be
// ordered differently at 1 and 2 threads. Here the output is cut into blocks whose shape is a function
// of the product's shape only (product_blocks(M, N), never of the thread count); each block is one
// single-threaded product (variants/cpu/sgemm.hpp: OpenBLAS, else Eigen), and OpenMP deals the blocks out. Every output element is therefore
// computed by the same instruction sequence whatever the thread count.
#pragma once

#include <cstdint>

namespace lobench::seqrec {

// Rows per block of an M-row product: 64; 128 from M = 1024; 256 from M = 2048 (so at least 8 blocks
// whenever a block is taller than 64).
int64_t row_block(int64_t M);

// The blocks of C [M, N]. Each block's product packs its slice of the right-hand operand again (both
// libraries pack per product), so tall products (the layers' x·W over B·N rows) take tall row blocks
// (row_block(M)) of all columns; short wide ones (M < 1024, N >= 512: the weight gradients xᵀ·dy of
// the qkv and fc layers, whose right-hand operand is the [B·N, N] dy) take all rows in 4 column blocks
// (a multiple of 16 wide), so that dy is packed once instead of once per 64 rows.
struct ProductBlocks {
  int64_t rows = 0, cols = 0;
};
ProductBlocks product_blocks(int64_t M, int64_t N);

enum class Op { none, transpose };

// C[M, N] (= or +=) op(A) · op(B), all row-major and dense. op(A) is [M, K]: A is [M, K] (none) or
// [K, M] (transpose); op(B) is [K, N]: B is [K, N] or [N, K].
void matmul(const float* A, Op opA, const float* B, Op opB, float* C, int64_t M, int64_t K, int64_t N,
            bool accumulate, int threads);

// out[c] += Σ_r X[r, c] over rows in order (threads split the columns): bias gradients.
void add_column_sums(const float* X, int64_t rows, int64_t cols, float* out, int threads);

}  // namespace lobench::seqrec
