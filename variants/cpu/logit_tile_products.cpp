#include "variants/cpu/logit_tile_products.hpp"

#include <omp.h>

#include <algorithm>
#include <exception>

#include "variants/cpu/bf16_products.hpp"
#include "variants/cpu/bf16_dot.hpp"
#include "variants/cpu/sgemm.hpp"
#include "variants/cpu/tile_products.hpp"

namespace lobench::cpu {

namespace {
int64_t vocabulary_blocks(const LogitOperands& x, const TileBlocks& b) { return (x.V + b.block_v - 1) / b.block_v; }

// b's threads, never more than x's vocabulary blocks.
TileBlocks for_operands(const LogitOperands& x, TileBlocks b) {
  b.threads = int(std::max<int64_t>(1, std::min<int64_t>(b.threads, vocabulary_blocks(x, b))));
  return b;
}
}  // namespace

TransposedTile transposed_step_tile(const LogitOperands& x, const TileBlocks& b, const float* At, int64_t ldat,
                                    float* Gt, int64_t p0, int64_t vb) {
  TransposedTile t;
  t.rows = std::min(b.block_p, x.P - p0), t.n = std::min(b.block_v, x.V - vb * b.block_v), t.D = x.D;
  t.At = At + p0, t.ldat = ldat;
  t.A = x.A + p0 * x.D;
  t.E = x.E + vb * b.block_v * x.D;
  t.Gt = Gt, t.ldt = transposed_ld(t.rows);
  return t;
}

LibraryTileProducts::LibraryTileProducts(const LogitOperands& x, const TileBlocks& b, int products, GemmLibrary library)
    : x_(x), products_(products), library_(library), b_(for_operands(x, b)),
      tiles_(size_t(b_.threads * b_.block_p * b_.ld)), dA_(products == 3 ? size_t(b_.threads * x.P * x.D) : 0),
      dE_(products == 3 ? size_t(x.V * x.D) : 0) {}

void LibraryTileProducts::operator()() {
  const int64_t P = x_.P, D = x_.D, n_vblocks = vocabulary_blocks(x_, b_);
  ProductsOnCallingThread products_on_calling_thread;
#pragma omp parallel num_threads(b_.threads)
  {
    const int t = omp_get_thread_num();
    float* X = tiles_.data() + t * b_.block_p * b_.ld;
    for (int64_t p0 = 0; p0 < P; p0 += b_.block_p) {
      const int64_t rows = std::min(b_.block_p, P - p0);
#pragma omp for schedule(dynamic, 1)
      for (int64_t vb = 0; vb < n_vblocks; ++vb) {
        const int64_t v0 = vb * b_.block_v, n = std::min(b_.block_v, x_.V - v0);
        const float* A_rows = x_.A + p0 * D;
        const float* E_rows = x_.E + v0 * D;
        tile_logits(A_rows, E_rows, rows, n, D, X, b_.ld, library_);
        if (products_ == 3)
          tile_gradients(X, b_.ld, A_rows, E_rows, rows, n, D, dE_.data() + v0 * D, p0 == 0,
                         dA_.data() + (t * P + p0) * D, library_);
      }
    }
  }
}

OwnTileProducts::OwnTileProducts(const LogitOperands& x, const TileBlocks& b, const OwnTileKernels& own, int products)
    : x_(x), own_(own), products_(products), b_(for_operands(x, b)),
      ldat_(transposed_ld(x.P)), At_(size_t(x.D * ldat_)),
      tiles_(size_t(b_.threads * b_.block_v * transposed_ld(b_.block_p))),
      dA_(products == 3 ? size_t(b_.threads * x.P * x.D) : 0), dE_(products == 3 ? size_t(x.V * x.D) : 0) {
  transpose_rows(x.A, x.P, x.D, At_.data(), ldat_);
}

void OwnTileProducts::operator()() {
  const int64_t P = x_.P, D = x_.D, n_vblocks = vocabulary_blocks(x_, b_);
#pragma omp parallel num_threads(b_.threads)
  {
    const int thread = omp_get_thread_num();
    float* Gt = tiles_.data() + thread * b_.block_v * transposed_ld(b_.block_p);
    for (int64_t p0 = 0; p0 < P; p0 += b_.block_p) {
#pragma omp for schedule(dynamic, 1)
      for (int64_t vb = 0; vb < n_vblocks; ++vb) {
        const TransposedTile t = transposed_step_tile(x_, b_, At_.data(), ldat_, Gt, p0, vb);
        own_.logits(t);
        if (products_ == 3) {
          own_.grad_E(t, dE_.data() + vb * b_.block_v * D, /*accumulate=*/p0 != 0);
          own_.grad_A(t, dA_.data() + (thread * P + p0) * D, /*accumulate=*/true);
        }
      }
    }
  }
}

Bf16TileLogits::Bf16TileLogits(const LogitOperands& x, const TileBlocks& b)
    : x_(x), b_(for_operands(x, b)), Dw_((x.D + 1) / 2), tiles_(size_t(b_.threads * b_.block_p * b_.ld)),
      A_(size_t(x.P * Dw_)), E_(size_t(vocabulary_blocks(x, b_) * Dw_ * b_.block_v)) {
  pair_columns(x.A, x.D, x.P, x.D, A_.data(), Dw_);
  for (int64_t vb = 0; vb < vocabulary_blocks(x, b_); ++vb) {
    const int64_t v0 = vb * b_.block_v, n = std::min(b_.block_v, x.V - v0);
    pair_columns_transposed(x.E + v0 * x.D, x.D, n, x.D, E_.data() + vb * Dw_ * b_.block_v, b_.block_v);
  }
}

void Bf16TileLogits::operator()() {
  const int64_t n_vblocks = vocabulary_blocks(x_, b_);
#pragma omp parallel num_threads(b_.threads)
  {
    float* X = tiles_.data() + omp_get_thread_num() * b_.block_p * b_.ld;
    for (int64_t p0 = 0; p0 < x_.P; p0 += b_.block_p) {
#pragma omp for schedule(dynamic, 1)
      for (int64_t vb = 0; vb < n_vblocks; ++vb) {
        Bf16Product p;
        p.M = std::min(b_.block_p, x_.P - p0), p.N = std::min(b_.block_v, x_.V - vb * b_.block_v), p.K2 = Dw_;
        p.a = A_.data() + p0 * Dw_, p.lda = Dw_;
        p.b = E_.data() + vb * Dw_ * b_.block_v, p.ldb = b_.block_v;
        p.c = X, p.ldc = b_.ld;
        bf16_product(p);
      }
    }
  }
}

OnednnBf16Logits::OnednnBf16Logits(const LogitOperands& x, const TileBlocks& b)
    : x_(x), b_(for_operands(x, b)), tiles_(size_t(b_.threads * b_.block_p * b_.ld)), A_(size_t(x.P * x.D)),
      E_(size_t(x.V * x.D)), product_(x.D) {
  for (size_t i = 0; i < A_.size(); ++i) A_[i] = bf16_nearest_even(x.A[i]);
  for (size_t i = 0; i < E_.size(); ++i) E_[i] = bf16_nearest_even(x.E[i]);
  // Every tile shape's primitive made here: a refusal throws to the caller, not inside the threads' region.
  for (int64_t rows : {b_.block_p, x.P % b_.block_p})
    for (int64_t n : {b_.block_v, x.V % b_.block_v})
      if (rows > 0 && n > 0 && rows <= x.P && n <= x.V) product_.prepare(rows, n, b_.ld);
}

std::string OnednnBf16Logits::name() const {
  return onednn_name() + " bf16 matmul (" + product_.implementation() + ")";
}

void OnednnBf16Logits::operator()() {
  const int64_t n_vblocks = vocabulary_blocks(x_, b_), D = x_.D;
  // (what oneDNN throws while executing is kept and thrown after the region: inside it would terminate)
  std::exception_ptr failed;
#pragma omp parallel num_threads(b_.threads)
  {
    float* X = tiles_.data() + omp_get_thread_num() * b_.block_p * b_.ld;
    for (int64_t p0 = 0; p0 < x_.P; p0 += b_.block_p) {
#pragma omp for schedule(dynamic, 1)
      for (int64_t vb = 0; vb < n_vblocks; ++vb) {
        const int64_t v0 = vb * b_.block_v;
        try {
          product_(A_.data() + p0 * D, std::min(b_.block_p, x_.P - p0), E_.data() + v0 * D,
                   std::min(b_.block_v, x_.V - v0), X, b_.ld);
        } catch (...) {
#pragma omp critical(lobench_onednn_bf16_logits)
          if (!failed) failed = std::current_exception();
        }
      }
    }
  }
  if (failed) std::rethrow_exception(failed);
}

}  // namespace lobench::cpu
