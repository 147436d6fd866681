// The three products of a logit tile with bf16 operands (`--operand bf16`, the GPU rows' semantics): A,
// E and the tile's logit gradient G rounded to bfloat16 (nearest-even), every product accumulated in
// float32 (bf16_products.hpp). The element-wise work between the products is done on the float32 logits, in
// float32 (in binary16 with an fp16 epilogue: variants/epilogue.hpp).
//
// Each product wants its inner index in pairs (bf16_products.hpp), so the operands are packed once
// where they are made:
//   logits  X = A_rows·E_bᵀ      a: A paired along D (per run)         b: E_b paired along D, transposed (per tile)
//   dE      dE_b (+)= Gᵀ·A_rows  a: G paired along positions, read transposed (per tile)
//                                b: A paired along positions (per run, per chunk)
//           (with the AMX kernel, whose tiles read a by rows: dE_bᵀ (+)= A_rowsᵀ·G, a: Aᵀ paired along
//           positions, b: G paired along positions, made as dEᵀ tiles added into dE's rows in place)
//   dA      dA_rows += G·E_b     a: G paired along the vocabulary (per tile)   b: E_b paired along the vocabulary (per tile)
// Packing costs O(rows·n + n·D) per tile against O(rows·n·D) for the products. Either dE form gives the
// same bits (each output is the same chain of the same pairs; a lane's products commute).
//
// The fused variant's tile, where its epilogue runs (fused_tiles: AVX512_BF16): the logits' epilogue makes
// the loss terms, counts and G's two pairings in registers (bf16_fused_tile.hpp) instead of a float32
// tile swept and packed: pair_E, fused_logits, add_row_sums, then gradient_products. With the avx512_bf16 kernel
// the epilogue is the logit product's; with the others (the emulation, AMX) it reads the logits from X.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "variants/counting_allocator.hpp"
#include "variants/cpu/bf16_fused_tile.hpp"
#include "variants/cpu/bf16_products.hpp"
#include "variants/cpu/tile_blocks.hpp"

namespace lobench::cpu {

class Bf16TileProducts {
 public:
  // fp16_epilogue: the fused tiles' element-wise math in binary16 (fused_tiles_run(true)).
  Bf16TileProducts(const float* A, int64_t P, int64_t D, const TileBlocks& b, CountingAllocator& alloc,
                   bool fused_tiles = false, bool fp16_epilogue = false)
      : kernel_(active_bf16_kernel()), fp16_epilogue_(fp16_epilogue), dE_transposed_(in_amx_tiles(kernel_)), D_(D), Dw_((D + 1) / 2), b_(b),
        chunk_words_(chunk_words(b, D)),
        A_pairs_(alloc, P * Dw_),
        A_by_pos_(alloc, chunks(P, b) * chunk_words_),
        per_thread_(thread_words(b, D)),
        thread_buffers_(alloc, b.threads * per_thread_), capacity_p_(P),
        targets_(alloc, fused_tiles ? b.threads * target_words(b) : 0),
        row_sums_(alloc, fused_tiles ? b.threads * b.block_p * kBf16RowSumDoubles : 0) {
    if (fused_tiles && !fused_tiles_run(fp16_epilogue))
      throw std::logic_error("Bf16TileProducts: the fused tile's epilogue needs AVX512_BF16 (and AVX512-FP16 in binary16)");
    std::fill(targets_.data(), targets_.data() + targets_.size(), 0u);
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
      uint32_t* chunk = A_by_pos_.data() + c * chunk_words_;
      if (dE_transposed_) pair_rows_transposed(A + p0 * D_, D_, rows, D_, chunk, (rows + 1) / 2);
      else pair_rows(A + p0 * D_, D_, rows, D_, chunk, D_);
    }
  }

  // Exactly what the constructor allocates.
  static int64_t bytes(int64_t P, int64_t D, const TileBlocks& b, bool fused_tiles = false) {
    return 4 * (P * ((D + 1) / 2) + chunks(P, b) * chunk_words(b, D) + b.threads * thread_words(b, D)) +
           (fused_tiles ? b.threads * (4 * target_words(b) + 8 * kBf16RowSumDoubles * b.block_p) : 0);
  }

  // Whether fused tiles run here: the bf16 products run, and the CPU has AVX512_BF16 for their epilogue
  // (which the build compiled). Their logits are made in the epilogue's kernel where the products' kernel
  // is avx512_bf16, else by the products' kernel into X first (the same logits, the same epilogue).
  // With fp16_epilogue, the binary16 tile: the CPU has AVX512-FP16 too (fp16_epilogue_tile_unavailable()).
  static bool fused_tiles_run(bool fp16_epilogue = false) {
    return !bf16_products_unavailable() && !bf16_simd_unavailable() && bf16_fused_tile_built() &&
           (!fp16_epilogue || !fp16_epilogue_tile_unavailable());
  }

  // X[rows, n] (rows `ld` apart) = A[p0, p0+rows) · E_rowsᵀ, E_rows the block's n rows of E.
  void logits(int thread, const float* E_rows, int64_t n, int64_t p0, int64_t rows, float* X, int64_t ld) {
    Bf16Product p;
    p.M = rows, p.N = n, p.K2 = Dw_;
    p.a = A_pairs_.data() + p0 * Dw_, p.lda = Dw_;
    p.b = pair_E_by_dim(thread, E_rows, n), p.ldb = b_.block_v;
    p.c = X, p.ldc = ld;
    bf16_product(kernel_, p);
  }

  // With X holding the tile's logit gradient G: dE_rows [n, D] (= on the first chunk, else +=) Gᵀ·A_rows
  // and dA_rows [rows, D] += G·E_rows, from G and E_rows rounded to bf16.
  void gradients(int thread, const float* X, int64_t ld, const float* E_rows, int64_t n, int64_t p0, int64_t rows,
                 float* dE_rows, float* dA_rows) {
    pair_rows(X, ld, rows, n, G_by_position(thread), b_.block_v);
    pair_columns(X, ld, rows, n, G_by_vocabulary(thread), (b_.block_v + 1) / 2);
    gradient_products(thread, E_rows, n, p0, rows, dE_rows, dA_rows, /*dA_accumulate=*/true, /*E_paired=*/false);
  }

  // The tile's rows [r0, r0 + count) of E_b (E_rows, D floats apart; r0 even) paired along D (transposed)
  // and along the vocabulary, for fused_logits and gradient_products(E_paired): the caller pairs the
  // block's n rows, in one piece or in several, before fused_logits.
  void pair_E(int thread, const float* E_rows, int64_t r0, int64_t count) {
    if (r0 % 2 || r0 + count > b_.block_v)
      throw std::logic_error("Bf16TileProducts::pair_E: a piece of E's block starts at an odd row or ends past it");
    pair_columns_transposed_and_rows(E_rows, D_, count, D_, E_by_dim(thread) + r0, b_.block_v,
                                     E_by_vocabulary(thread) + (r0 / 2) * D_, D_);
  }

  // The fused tile's logits (fused_tiles), E_b's n rows paired by pair_E: for every target (r, j) of the tile that for_each_target(fn)
  // names by fn(r, j), X[r·ldx + j] = its logit (X [rows × ldx] holds every logit where the products'
  // kernel is not avx512_bf16); predicted[r] += #{j : x > 0}; the rows' softplus sums
  // kept for add_row_sums; G = row_scale·(σ(x) − y) paired both ways, for gradient_products (E_paired).
  // `prefetch`: memory read after this tile (Bf16FusedTile::prefetch).
  template <class ForEachTarget>
  void fused_logits(int thread, int64_t n, int64_t p0, int64_t rows, const float* row_scale,
                    float* X, int64_t ldx, int64_t* predicted, ForEachTarget&& for_each_target,
                    const Bf16FusedTile::Prefetch (&prefetch)[2] = {}) {
    uint32_t* bits = targets_.data() + thread * target_words(b_);
    const int64_t ld_bits = target_ld(b_);
    for_each_target([&](int64_t r, int64_t j) { bits[(j / kBf16TargetBits) * ld_bits + r] |= 1u << (j % kBf16TargetBits); });
    Bf16FusedTile t;
    t.rows = rows, t.n = n, t.Dw = Dw_;
    t.A = A_pairs_.data() + p0 * Dw_;
    t.Et = E_by_dim(thread), t.ld_et = b_.block_v;
    if (kernel_ != Bf16Kernel::avx512_bf16) {  // the logits into X by the products' kernel
      Bf16Product p;
      p.M = rows, p.N = n, p.K2 = Dw_;
      p.a = t.A, p.lda = Dw_;
      p.b = t.Et, p.ldb = b_.block_v;
      p.c = X, p.ldc = ldx;
      bf16_product(kernel_, p);
    }
    t.row_scale = row_scale;
    t.targets = bits, t.ld_targets = ld_bits;
    t.X = X, t.ldx = ldx;
    t.row_sums = row_sums(thread);
    t.predicted = predicted;
    t.G_by_pos = G_by_position(thread), t.ld_gpos = b_.block_v;
    t.G_by_voc = G_by_vocabulary(thread), t.ld_gvoc = (b_.block_v + 1) / 2;
    t.prefetch[0] = prefetch[0], t.prefetch[1] = prefetch[1];
    bf16_fused_tile(t, /*logits_in_x=*/kernel_ != Bf16Kernel::avx512_bf16, fp16_epilogue_);
    for_each_target([&](int64_t r, int64_t j) { bits[(j / kBf16TargetBits) * ld_bits + r] = 0; });
  }

  // After fused_logits (and the targets' terms, which the element-wise order puts first): loss[r] += the
  // tile's softplus sum of row r.
  void add_row_sums(int thread, int64_t rows, double* loss) {
    bf16_fused_tile_row_sums(row_sums(thread), rows, loss, fp16_epilogue_);
  }

  // From G's pairs in this thread's buffers: dE_rows [n, D] (= on the first chunk, else +=) Gᵀ·A_rows and
  // dA_rows [rows, D] (+= when dA_accumulate, else =) G·E_rows. E_paired: pair_E paired E_rows along the
  // vocabulary already (E_rows is then not read).
  void gradient_products(int thread, const float* E_rows, int64_t n, int64_t p0, int64_t rows, float* dE_rows,
                         float* dA_rows, bool dA_accumulate, bool E_paired) {
    const int64_t rows_w = (rows + 1) / 2, n_w = (n + 1) / 2;
    uint32_t* E_by_voc = E_by_vocabulary(thread);
    if (!E_paired) pair_rows(E_rows, D_, n, D_, E_by_voc, D_);
    const uint32_t* A_chunk = A_by_pos_.data() + (p0 / b_.block_p) * chunk_words_;

    Bf16Product dE;
    if (dE_transposed_) {  // dEᵀ[D, n] (+)= A_rowsᵀ · G, stored into dE's rows
      dE.M = D_, dE.N = n, dE.K2 = rows_w;
      dE.a = A_chunk, dE.lda = rows_w;
      dE.b = G_by_position(thread), dE.ldb = b_.block_v;
      dE.c_transposed = true;
    } else {  // dE_rows[n, D] (+)= Gᵀ · A_rows
      dE.M = n, dE.N = D_, dE.K2 = rows_w;
      dE.a = G_by_position(thread), dE.lda = b_.block_v, dE.a_transposed = true;
      dE.b = A_chunk, dE.ldb = D_;
    }
    dE.c = dE_rows, dE.ldc = D_, dE.accumulate = p0 != 0;
    bf16_product(kernel_, dE);

    Bf16Product dA;  // dA_rows[rows, D] (+)= G · E_rows
    dA.M = rows, dA.N = D_, dA.K2 = n_w;
    dA.a = G_by_vocabulary(thread), dA.lda = (b_.block_v + 1) / 2;
    dA.b = E_by_voc, dA.ldb = D_;
    dA.c = dA_rows, dA.ldc = D_, dA.accumulate = dA_accumulate;
    bf16_product(kernel_, dA);
  }

 private:
  static int64_t chunks(int64_t P, const TileBlocks& b) { return (P + b.block_p - 1) / b.block_p; }
  // A chunk of A paired along positions: ⌈block_p/2⌉ × D words (or D × ⌈block_p/2⌉, transposed).
  static int64_t chunk_words(const TileBlocks& b, int64_t D) { return D * ((b.block_p + 1) / 2); }
  // Per thread: E_b paired along D (transposed) and along the vocabulary; G paired along positions and
  // along the vocabulary.
  static int64_t thread_words(const TileBlocks& b, int64_t D) {
    const int64_t v_w = (b.block_v + 1) / 2, p_w = (b.block_p + 1) / 2;
    return ((D + 1) / 2) * b.block_v + v_w * D + p_w * b.block_v + b.block_p * v_w;
  }
  // A fused tile's target bits: a word per 32 entries per position, positions padded (bf16_fused_tile.hpp).
  static int64_t target_ld(const TileBlocks& b) { return (b.block_p + kBf16TargetRowPad - 1) / kBf16TargetRowPad * kBf16TargetRowPad; }
  static int64_t target_words(const TileBlocks& b) { return (b.block_v + kBf16TargetBits - 1) / kBf16TargetBits * target_ld(b); }

  uint32_t* pair_E_by_dim(int thread, const float* E_rows, int64_t n) {
    uint32_t* E_t = E_by_dim(thread);
    pair_columns_transposed(E_rows, D_, n, D_, E_t, b_.block_v);
    return E_t;
  }
  uint32_t* thread_base(int t) { return thread_buffers_.data() + t * per_thread_; }
  uint32_t* E_by_dim(int t) { return thread_base(t); }
  uint32_t* E_by_vocabulary(int t) { return E_by_dim(t) + Dw_ * b_.block_v; }
  uint32_t* G_by_position(int t) { return E_by_vocabulary(t) + ((b_.block_v + 1) / 2) * D_; }
  uint32_t* G_by_vocabulary(int t) { return G_by_position(t) + ((b_.block_p + 1) / 2) * b_.block_v; }
  double* row_sums(int t) { return row_sums_.data() + t * b_.block_p * kBf16RowSumDoubles; }

  Bf16Kernel kernel_;  // chosen once, before the threads start
  bool fp16_epilogue_;
  bool dE_transposed_;  // the AMX kernel and its model read a by rows only: dE is made transposed for them
  int64_t D_, Dw_;
  TileBlocks b_;
  int64_t chunk_words_;
  Buffer<uint32_t> A_pairs_, A_by_pos_;
  int64_t per_thread_;
  Buffer<uint32_t> thread_buffers_;
  int64_t capacity_p_;  // the most positions pack_A takes
  Buffer<uint32_t> targets_;  // fused tiles: per thread, the tile's target bits (all zero between tiles)
  Buffer<double> row_sums_;   // fused tiles: per thread, [block_p × kBf16RowSumDoubles] (Bf16FusedTile::row_sums)
};

}  // namespace lobench::cpu
