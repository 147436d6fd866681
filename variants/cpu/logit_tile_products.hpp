// The tiled variants' products without their element-wise work, on tiles the caller gives (those `fused`
// chooses: choose_blocks with no block sizes given, for the step's full V): the logit product A[P×D]·Eᵀ[D×V] alone, or the three
// products of a fused pass (logits, dE_b += Gᵀ·A, dA += G·E_b). Two paths, as `fused` has them: the
// library's (cpu::sgemm on each tile, tile_products.hpp) and our own micro-kernels on transposed tiles
// (fused_tile.hpp, where the CPU runs them). What the yardstick at a row's shape times
// (harness/meters/shape_gemm.hpp) and what step_bench's gemm, gemm_own and gemm_products* rows time:
// one definition of "the product at this shape".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "variants/aligned_vector.hpp"
#include "variants/cpu/fused_tile.hpp"
#include "variants/cpu/onednn.hpp"
#include "variants/cpu/sgemm.hpp"
#include "variants/cpu/tile_blocks.hpp"

namespace lobench::cpu {

// The operands the products read: A [P, D] and E [V, D], row-major, owned by the caller.
struct LogitOperands {
  const float* A = nullptr;
  const float* E = nullptr;
  int64_t P = 0, V = 0, D = 0;
};

// Tile (p0, vb) as `fused` hands it to our kernels: positions [p0, p0 + block_p) of Aᵀ (ldat floats per
// row), vocabulary block vb of E, the tile's Gᵀ at `Gt`.
TransposedTile transposed_step_tile(const LogitOperands& x, const TileBlocks& b, const float* At, int64_t ldat,
                                    float* Gt, int64_t p0, int64_t vb);

// The products through cpu::sgemm, every tile on the calling thread of its block: products == 1 (the
// logits) or 3 (logits, dE, dA). Blocks are handed out dynamically here, round-robin in the variants
// (schedule(static, 1), for bit-reproducible dA); with equal blocks the two take the same time.
class LibraryTileProducts {
 public:
  // (x.V may be fewer rows than the shape `b` was chosen for: whole blocks of it, as the yardstick times;
  // `library`: the process's, or another library the yardstick times)
  LibraryTileProducts(const LogitOperands& x, const TileBlocks& b, int products, GemmLibrary library = sgemm_library());
  void operator()();
  const TileBlocks& blocks() const { return b_; }

 private:
  LogitOperands x_;
  int products_;
  GemmLibrary library_;
  TileBlocks b_;
  AlignedVector<float> tiles_, dA_, dE_;
};

// The same products through our own micro-kernels on transposed tiles as `fused` makes them (Aᵀ made
// once here, untimed, as the library reads A in place). `own` must outlive this object.
class OwnTileProducts {
 public:
  OwnTileProducts(const LogitOperands& x, const TileBlocks& b, const OwnTileKernels& own, int products);
  void operator()();
  const TileBlocks& blocks() const { return b_; }

 private:
  LogitOperands x_;
  const OwnTileKernels& own_;
  int products_;
  TileBlocks b_;
  int64_t ldat_;
  AlignedVector<float> At_, tiles_, dA_, dE_;
};

// The logit products of the tiles with bf16 operands (the tiles fused_bf16 makes): A paired along D once,
// each vocabulary block of E paired along D and transposed once (here, untimed), then per tile the one bf16
// product the variants make (bf16_products.hpp: AMX-BF16 where the CPU has it). The caller checks that the
// bf16 products run (bf16_products_unavailable()).
class Bf16TileLogits {
 public:
  Bf16TileLogits(const LogitOperands& x, const TileBlocks& b);
  void operator()();
  const TileBlocks& blocks() const { return b_; }

 private:
  LogitOperands x_;
  TileBlocks b_;
  int64_t Dw_;
  AlignedVector<float> tiles_;
  AlignedVector<uint32_t> A_, E_;
};

// The same logit product with bf16 operands through oneDNN's matmul on the same tiles (A and E rounded
// to bf16 nearest-even once here, untimed, as Bf16TileLogits packs them untimed; oneDNN may still reorder
// each block of E, row-major here, inside its timing, a small bias against it): the yardstick's oneDNN
// path for bf16 and fp8 rows (the best product at the shape, not ours). Throws std::runtime_error where
// oneDNN is unavailable.
class OnednnBf16Logits {
 public:
  OnednnBf16Logits(const LogitOperands& x, const TileBlocks& b);
  void operator()();
  // "oneDNN 2.6.3 (ISA) bf16 matmul (IMPLEMENTATION)": the path's name, with the implementation oneDNN chose.
  std::string name() const;

 private:
  LogitOperands x_;
  TileBlocks b_;
  AlignedVector<float> tiles_;
  AlignedVector<uint16_t> A_, E_;
  OnednnBf16TileLogits product_;
};

}  // namespace lobench::cpu
