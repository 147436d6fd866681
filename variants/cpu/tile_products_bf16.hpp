// The three products of a logit tile with bf16 operands (`--operand bf16`, the GPU rows' semantics): A,
// E and the tile's logit gradient G rounded to bfloat16 (nearest-even), every product accumulated in
// float32 (bf16_products.hpp). The element-wise work between the products stays in float32, on the
// float32 logits.
//
// Each product wants its inner index in pairs (bf16_products.hpp), so the operands are packed once
// where they are made:
//   logits  X = A_rows·E_bᵀ    a: A paired along D (per run)       b: E_b paired along D, transposed (per tile)
//   dE      dE_bᵀ (+)= A_rowsᵀ·G  a: Aᵀ paired along positions (per run, per chunk)  b: G paired along positions (per tile)
//                              (made as dEᵀ tiles and added into dE's rows in place: c_transposed)
//   dA      dA_rows += G·E_b    a: G paired along the vocabulary (per tile)     b: E_b paired along the vocabulary (per tile)
// Packing costs O(rows·n + n·D) per tile against O(rows·n·D) for the products.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "variants/counting_allocator.hpp"
#include "variants/cpu/bf16_products.hpp"
#include "variants/cpu/tile_blocks.hpp"

namespace lobench::cpu {

class Bf16TileProducts {
 public:
  Bf16TileProducts(const float* A, int64_t P, int64_t D, const TileBlocks& b, CountingAllocator& alloc)
      : kernel_(active_bf16_kernel()), D_(D), Dw_((D + 1) / 2), b_(b), chunk_words_(chunk_words(b, D)),
        A_pairs_(alloc, P * Dw_),
        At_pairs_(alloc, chunks(P, b) * chunk_words_),
        per_thread_(thread_words(b, D)),
        thread_buffers_(alloc, b.threads * per_thread_), capacity_p_(P) {
    if (A) pack_A(A, P);
  }

  // Packs A [P, D] (P at most the constructor's) for the products that follow: what the constructor does
  // with its A, for a caller that keeps the buffers across steps and changes A (the training head's
  // embeddings, harness/train/classifier_step.cpp). A null A at construction packs nothing.
  void pack_A(const float* A, int64_t P) {
    if (P > capacity_p_) throw std::logic_error("Bf16TileProducts::pack_A: more positions than the buffers hold");
    pair_columns(A, D_, P, D_, A_pairs_.data(), Dw_);
    for (int64_t p0 = 0, c = 0; p0 < P; p0 += b_.block_p, ++c) {
      const int64_t rows = std::min(b_.block_p, P - p0);
      pair_rows_transposed(A + p0 * D_, D_, rows, D_, At_pairs_.data() + c * chunk_words_, (rows + 1) / 2);
    }
  }

  // Exactly what the constructor allocates.
  static int64_t bytes(int64_t P, int64_t D, const TileBlocks& b) {
    return 4 * (P * ((D + 1) / 2) + chunks(P, b) * chunk_words(b, D) + b.threads * thread_words(b, D));
  }

  // X[rows, n] (rows `ld` apart) = A[p0, p0+rows) · E_rowsᵀ, E_rows the block's n rows of E.
  void logits(int thread, const float* E_rows, int64_t n, int64_t p0, int64_t rows, float* X, int64_t ld) {
    uint32_t* E_t = E_by_dim(thread);
    pair_columns_transposed(E_rows, D_, n, D_, E_t, b_.block_v);
    Bf16Product p;
    p.M = rows, p.N = n, p.K2 = Dw_;
    p.a = A_pairs_.data() + p0 * Dw_, p.lda = Dw_;
    p.b = E_t, p.ldb = b_.block_v;
    p.c = X, p.ldc = ld;
    bf16_product(kernel_, p);
  }

  // With X holding the tile's logit gradient G: dE_rows [n, D] (= on the first chunk, else +=) Gᵀ·A_rows
  // and dA_rows [rows, D] += G·E_rows, from G and E_rows rounded to bf16.
  void gradients(int thread, const float* X, int64_t ld, const float* E_rows, int64_t n, int64_t p0, int64_t rows,
                 float* dE_rows, float* dA_rows) {
    const int64_t rows_w = (rows + 1) / 2, n_w = (n + 1) / 2;
    uint32_t* G_by_pos = G_by_position(thread);
    uint32_t* G_by_voc = G_by_vocabulary(thread);
    uint32_t* E_by_voc = E_by_vocabulary(thread);
    pair_rows(X, ld, rows, n, G_by_pos, b_.block_v);
    pair_columns(X, ld, rows, n, G_by_voc, (b_.block_v + 1) / 2);
    pair_rows(E_rows, D_, n, D_, E_by_voc, D_);

    Bf16Product dE;  // dEᵀ[D, n] (+)= A_rowsᵀ · G, stored into dE's rows
    dE.M = D_, dE.N = n, dE.K2 = rows_w;
    dE.a = At_pairs_.data() + (p0 / b_.block_p) * chunk_words_, dE.lda = rows_w;
    dE.b = G_by_pos, dE.ldb = b_.block_v;
    dE.c = dE_rows, dE.ldc = D_, dE.c_transposed = true, dE.accumulate = p0 != 0;
    bf16_product(kernel_, dE);

    Bf16Product dA;  // dA_rows[rows, D] += G · E_rows
    dA.M = rows, dA.N = D_, dA.K2 = n_w;
    dA.a = G_by_voc, dA.lda = (b_.block_v + 1) / 2;
    dA.b = E_by_voc, dA.ldb = D_;
    dA.c = dA_rows, dA.ldc = D_, dA.accumulate = true;
    bf16_product(kernel_, dA);
  }

 private:
  static int64_t chunks(int64_t P, const TileBlocks& b) { return (P + b.block_p - 1) / b.block_p; }
  static int64_t chunk_words(const TileBlocks& b, int64_t D) { return D * ((b.block_p + 1) / 2); }
  // Per thread: E_b paired along D (transposed) and along the vocabulary; G paired along positions and
  // along the vocabulary.
  static int64_t thread_words(const TileBlocks& b, int64_t D) {
    const int64_t v_w = (b.block_v + 1) / 2, p_w = (b.block_p + 1) / 2;
    return ((D + 1) / 2) * b.block_v + v_w * D + p_w * b.block_v + b.block_p * v_w;
  }
  uint32_t* thread_base(int t) { return thread_buffers_.data() + t * per_thread_; }
  uint32_t* E_by_dim(int t) { return thread_base(t); }
  uint32_t* E_by_vocabulary(int t) { return E_by_dim(t) + Dw_ * b_.block_v; }
  uint32_t* G_by_position(int t) { return E_by_vocabulary(t) + ((b_.block_v + 1) / 2) * D_; }
  uint32_t* G_by_vocabulary(int t) { return G_by_position(t) + ((b_.block_p + 1) / 2) * b_.block_v; }

  Bf16Kernel kernel_;  // chosen once, before the threads start
  int64_t D_, Dw_;
  TileBlocks b_;
  int64_t chunk_words_;
  Buffer<uint32_t> A_pairs_, At_pairs_;
  int64_t per_thread_;
  Buffer<uint32_t> thread_buffers_;
  int64_t capacity_p_;  // the most positions pack_A takes
};

}  // namespace lobench::cpu
