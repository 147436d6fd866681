// The classifier head's products at its operand precision (ClassifierConfig::operand, `train-xmc
// --operand`): the logits Z = H·W_tᵀ, the weight gradient dW_t = G_tᵀ·H and the input gradient
// dH += G_t·W_t of a training step's tiles, and the scores W_t·Hᵀ of evaluation.
//   fp32: one single-threaded sgemm each (variants/cpu/tile_products.hpp), as the tiled variants.
//   bf16: H, W_t and the logit gradient G_t rounded to bfloat16 (nearest-even), every product accumulated
//         in float32 through the CPU's bf16 products (variants/cpu/bf16_products.hpp: AMX-BF16 where
//         present, else AVX512_BF16), the semantics of `lobench run --operand bf16`. The element-wise work
//         (loss, σ, the SGD update and its rounding into the storage format) stays in float32.
//   e4m3, e5m2: H and the weights each scaled by their per-tensor power of two and rounded to the fp8
//         format (variants/fp8_scaling.hpp: H's scale from the batch's max |H|, the weights' from the whole
//         head's max |W| at the start of the step or evaluation), then the bf16 products as above, G in
//         bf16: the semantics of `lobench run --operand e4m3|e5m2`. Weights stored in the same fp8 format
//         are held exactly (a power-of-two scale moves them along the format's grid); the update still
//         reads the weights as stored, never their rounded copies.
// The bf16 packing buffers (and the fp8 operands' rounded copies of H and of each thread's weight tile)
// are allocated once, for the largest batch, and counted in the head's predicted bytes (bytes()).
#pragma once

#include <cstdint>
#include <optional>

#include "variants/counting_allocator.hpp"
#include "variants/cpu/bf16_products.hpp"
#include "variants/cpu/tile_blocks.hpp"
#include "variants/cpu/tile_products.hpp"
#include "variants/cpu/tile_products_bf16.hpp"
#include "variants/fp8_scaling.hpp"
#include "variants/operand.hpp"

namespace lobench::train {

// A training step's three products per tile. `blocks`: the step's tiles at the largest batch
// (block_p = max_batch, block_v = tile, the head's thread count).
class StepProducts {
 public:
  StepProducts(Operand op, int64_t D, const cpu::TileBlocks& blocks, CountingAllocator& alloc)
      : op_(op), D_(D), tile_(blocks.block_v), H_fp8_(alloc, fp8_floats(op, D, blocks) ? blocks.block_p * D : 0),
        W_fp8_(alloc, fp8_floats(op, D, blocks) ? int64_t(blocks.threads) * blocks.block_v * D : 0) {
    if (products_in_bf16(op)) bf16_.emplace(nullptr, blocks.block_p, D, blocks, alloc);
  }
  static int64_t bytes(Operand op, int64_t D, const cpu::TileBlocks& blocks) {
    return (products_in_bf16(op) ? cpu::Bf16TileProducts::bytes(blocks.block_p, D, blocks) : 0) + 4 * fp8_floats(op, D, blocks);
  }

  // The step's embeddings H [B, D] (B at most the largest batch), before its tiles; W_amax: the largest
  // magnitude of the head's weights (read with fp8 operands only, for their scale).
  void start_step(const float* H, int64_t B, float W_amax) {
    H_ = H;
    if (is_fp8(op_)) {
      Fp8Scaling::of(op_, H, B * D_).round(H, H_fp8_.data(), B * D_);
      H_ = H_fp8_.data();
      W_scaling_.emplace(op_, W_amax);
    }
    if (bf16_) bf16_->pack_A(H_, B);
  }
  // The weight rows W_t [n, D] as the products read them: W_t itself, or with fp8 operands rounded with
  // the weights' scale into the thread's buffer. Give logits() and gradients() these rows.
  const float* operand_rows(int thread, const float* W_t, int64_t n) {
    if (!W_scaling_) return W_t;
    float* out = W_fp8_.data() + int64_t(thread) * tile_ * D_;
    W_scaling_->round(W_t, out, n * D_);
    return out;
  }
  // Z [B, n] (rows ld apart) = H·W_tᵀ, W_t the tile's n weight rows [n, D] (operand_rows).
  void logits(int thread, const float* W_t, int64_t n, int64_t B, float* Z, int64_t ld) {
    if (bf16_) bf16_->logits(thread, W_t, n, 0, B, Z, ld);
    else cpu::tile_logits(H_, W_t, B, n, D_, Z, ld, library_);
  }
  // With Z holding the logit gradient G: dW [n, D] = Gᵀ·H and dH_part [B, D] += G·W_t.
  void gradients(int thread, const float* G, int64_t ld, const float* W_t, int64_t n, int64_t B, float* dW,
                 float* dH_part) {
    if (bf16_) bf16_->gradients(thread, G, ld, W_t, n, 0, B, dW, dH_part);
    else cpu::tile_gradients(G, ld, H_, W_t, B, n, D_, dW, /*first_chunk=*/true, dH_part, library_);
  }

 private:
  // fp8 operands' rounded copies: H [block_p, D] and per thread a weight tile [block_v, D].
  static int64_t fp8_floats(Operand op, int64_t D, const cpu::TileBlocks& b) {
    return is_fp8(op) ? (b.block_p + int64_t(b.threads) * b.block_v) * D : 0;
  }

  Operand op_;
  cpu::GemmLibrary library_ = cpu::tile_products_library();  // (taken once: a step never mixes libraries)
  int64_t D_, tile_;
  const float* H_ = nullptr;
  std::optional<cpu::Bf16TileProducts> bf16_;
  Buffer<float> H_fp8_, W_fp8_;
  std::optional<Fp8Scaling> W_scaling_;  // fp8 operands: the weights' scale for this step
};

// Evaluation's scores Z [n, B] = W_t·Hᵀ of one batch, tile by tile on T threads (tiles of at most `tile`
// labels). Its buffers live while one evaluate() runs.
class ScoreProducts {
 public:
  // W_amax: the largest magnitude of the head's weights (read with fp8 operands only, for their scale).
  ScoreProducts(Operand op, const float* H, int64_t B, int64_t D, int T, int64_t tile, float W_amax,
                CountingAllocator& alloc)
      : H_(H), B_(B), D_(D), Dw_((D + 1) / 2), tile_(tile) {
    if (!products_in_bf16(op)) return;
    kernel_ = cpu::active_bf16_kernel();
    H_pairs_ = Buffer<uint32_t>(alloc, Dw_ * B);
    W_pairs_ = Buffer<uint32_t>(alloc, int64_t(T) * tile * Dw_);
    if (is_fp8(op)) {  // H rounded with its scale (then packed), the weight tiles with the weights'
      H_fp8_ = Buffer<float>(alloc, B * D + int64_t(T) * tile * D);
      Fp8Scaling::of(op, H, B * D).round(H, H_fp8_.data(), B * D);
      H_ = H_fp8_.data();
      W_scaling_.emplace(op, W_amax);
    }
    cpu::pair_columns_transposed(H_, D, B, D, H_pairs_.data(), B);  // [Dw, B]: H paired along D
  }
  static int64_t bytes(Operand op, int64_t B, int64_t D, int T, int64_t tile) {
    return (products_in_bf16(op) ? 4 * ((D + 1) / 2) * (B + int64_t(T) * tile) : 0) +
           (is_fp8(op) ? 4 * (B + int64_t(T) * tile) * D : 0);
  }

  void scores(int thread, const float* W_t, int64_t n, float* Z) {
    if (!kernel_) {
      cpu::sgemm(cpu::Op::none, cpu::Op::transpose, n, B_, D_, W_t, D_, H_, D_, Z, B_, /*accumulate=*/false);
      return;
    }
    if (W_scaling_) {  // (the thread's rounded tile sits after the rounded H)
      float* rounded = H_fp8_.data() + B_ * D_ + int64_t(thread) * tile_ * D_;
      W_scaling_->round(W_t, rounded, n * D_);
      W_t = rounded;
    }
    uint32_t* W_pairs = W_pairs_.data() + int64_t(thread) * tile_ * Dw_;
    cpu::pair_columns(W_t, D_, n, D_, W_pairs, Dw_);  // [n, Dw]: W_t paired along D
    cpu::Bf16Product p;
    p.M = n, p.N = B_, p.K2 = Dw_;
    p.a = W_pairs, p.lda = Dw_;
    p.b = H_pairs_.data(), p.ldb = B_;
    p.c = Z, p.ldc = B_;
    cpu::bf16_product(*kernel_, p);
  }

 private:
  const float* H_;
  int64_t B_, D_, Dw_, tile_;
  std::optional<cpu::Bf16Kernel> kernel_;  // bf16 or fp8 operands: the kernel, chosen before the threads start
  Buffer<uint32_t> H_pairs_, W_pairs_;
  Buffer<float> H_fp8_;                  // fp8 operands: H rounded [B, D], then per thread a rounded weight tile
  std::optional<Fp8Scaling> W_scaling_;  // fp8 operands: the weights' scale
};

}  // namespace lobench::train
