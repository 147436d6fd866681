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

// The schedule every path below times: position chunks in order, each chunk's vocabulary blocks handed out
// dynamically to b.threads threads; tile(thread, p0, rows, vb, v0, n) makes tile (p0, vb).
template <class Tile>
void for_each_tile(const LogitOperands& x, const TileBlocks& b, Tile&& tile) {
  const int64_t n_vblocks = vocabulary_blocks(x, b);
#pragma omp parallel num_threads(b.threads)
  {
    const int thread = omp_get_thread_num();
    for (int64_t p0 = 0; p0 < x.P; p0 += b.block_p) {
      const int64_t rows = std::min(b.block_p, x.P - p0);
#pragma omp for schedule(dynamic, 1)
      for (int64_t vb = 0; vb < n_vblocks; ++vb) {
        const int64_t v0 = vb * b.block_v;
        tile(thread, p0, rows, vb, v0, std::min(b.block_v, x.V - v0));
      }
    }
  }
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
  const int64_t P = x_.P, D = x_.D;
  ProductsOnCallingThread products_on_calling_thread;
  for_each_tile(x_, b_, [&](int t, int64_t p0, int64_t rows, int64_t, int64_t v0, int64_t n) {
    float* X = tiles_.data() + t * b_.block_p * b_.ld;
    const float* A_rows = x_.A + p0 * D;
    const float* E_rows = x_.E + v0 * D;
    tile_logits(A_rows, E_rows, rows, n, D, X, b_.ld, library_);
    if (products_ == 3)
      tile_gradients(X, b_.ld, A_rows, E_rows, rows, n, D, dE_.data() + v0 * D, p0 == 0, dA_.data() + (t * P + p0) * D,
                     library_);
  });
}

OwnTileProducts::OwnTileProducts(const LogitOperands& x, const TileBlocks& b, const OwnTileKernels& own, int products)
    : x_(x), own_(own), products_(products), b_(for_operands(x, b)),
      ldat_(transposed_ld(x.P)), At_(size_t(x.D * ldat_)),
      tiles_(size_t(b_.threads * b_.block_v * transposed_ld(b_.block_p))),
      dA_(products == 3 ? size_t(b_.threads * x.P * x.D) : 0), dE_(products == 3 ? size_t(x.V * x.D) : 0) {
  transpose_rows(x.A, x.P, x.D, At_.data(), ldat_);
}

void OwnTileProducts::operator()() {
  const int64_t P = x_.P, D = x_.D;
  for_each_tile(x_, b_, [&](int thread, int64_t p0, int64_t, int64_t vb, int64_t v0, int64_t) {
    float* Gt = tiles_.data() + thread * b_.block_v * transposed_ld(b_.block_p);
    const TransposedTile t = transposed_step_tile(x_, b_, At_.data(), ldat_, Gt, p0, vb);
    own_.logits(t);
    if (products_ == 3) {
      own_.grad_E(t, dE_.data() + v0 * D, /*accumulate=*/p0 != 0);
      own_.grad_A(t, dA_.data() + (thread * P + p0) * D, /*accumulate=*/true);
    }
  });
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
  for_each_tile(x_, b_, [&](int thread, int64_t p0, int64_t rows, int64_t vb, int64_t, int64_t n) {
    Bf16Product p;
    p.M = rows, p.N = n, p.K2 = Dw_;
    p.a = A_.data() + p0 * Dw_, p.lda = Dw_;
    p.b = E_.data() + vb * Dw_ * b_.block_v, p.ldb = b_.block_v;
    p.c = tiles_.data() + thread * b_.block_p * b_.ld, p.ldc = b_.ld;
    bf16_product(p);
  });
}

OnednnBf16Logits::OnednnBf16Logits(const LogitOperands& x, const TileBlocks& b)
    : x_(x), b_(for_operands(x, b)), tiles_(size_t(b_.threads * b_.block_p * b_.ld)),
      A_(bf16_nearest_even(x.A, size_t(x.P * x.D))), E_(bf16_nearest_even(x.E, size_t(x.V * x.D))), product_(x.D) {
  // Every tile shape's primitive made here: a refusal throws to the caller, not inside the threads' region.
  for (int64_t rows : {b_.block_p, x.P % b_.block_p})
    for (int64_t n : {b_.block_v, x.V % b_.block_v})
      if (rows > 0 && n > 0 && rows <= x.P && n <= x.V) product_.prepare(rows, n, b_.ld);
}

std::string OnednnBf16Logits::name() const {
  return onednn_name() + " bf16 matmul (" + product_.implementation() + ")";
}

void OnednnBf16Logits::operator()() {
  const int64_t D = x_.D;
  // (what oneDNN throws while executing is kept and thrown after the region: inside it would terminate)
  std::exception_ptr failed;
  for_each_tile(x_, b_, [&](int thread, int64_t p0, int64_t rows, int64_t, int64_t v0, int64_t n) {
    try {
      product_(A_.data() + p0 * D, rows, E_.data() + v0 * D, n, tiles_.data() + thread * b_.block_p * b_.ld, b_.ld);
    } catch (...) {
#pragma omp critical(lobench_onednn_bf16_logits)
      if (!failed) failed = std::current_exception();
    }
  });
  if (failed) std::rethrow_exception(failed);
}

}  // namespace lobench::cpu
