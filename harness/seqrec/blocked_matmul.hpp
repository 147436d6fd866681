// Matrix products of the layers, with results independent of the thread count.
//
// Eigen's own multithreaded GEMM chooses its cache blocking from the number of threads, so its sums
// can be ordered differently at 1 and 2 threads. Here the output is cut into blocks of a fixed number
// of rows (kRowBlock, not a function of the thread count); each block is one single-threaded Eigen
// product, and OpenMP deals the blocks out. Every output element is therefore computed by the same
// instruction sequence whatever the thread count.
#pragma once

#include <cstdint>

namespace lobench::seqrec {

constexpr int64_t kRowBlock = 64;

enum class Op { none, transpose };

// C[M, N] (= or +=) op(A) · op(B), all row-major and dense. op(A) is [M, K]: A is [M, K] (none) or
// [K, M] (transpose); op(B) is [K, N]: B is [K, N] or [N, K].
void matmul(const float* A, Op opA, const float* B, Op opB, float* C, int64_t M, int64_t K, int64_t N,
            bool accumulate, int threads);

// out[c] += Σ_r X[r, c] over rows in order (threads split the columns): bias gradients.
void add_column_sums(const float* X, int64_t rows, int64_t cols, float* out, int threads);

}  // namespace lobench::seqrec
