// The fused variant's logit tile with bf16 operands, its element-wise work in the logit product's
// epilogue: one VDPBF16PS kernel makes each register block of logits and, before storing anything, turns
// it into loss terms, counts and the logit gradient G = s·w·(σ(x) − y), rounded to bf16 and written
// straight into the two paired layouts the gradient products read (tile_products_bf16.hpp). It replaces
// three passes over a float32 tile (the element-wise sweep and two pairings of G).
//
// G, the counts and the logits at the targets are the bits of the passes it replaces (the library path of
// tile_products_bf16.hpp, the one the emulation takes): the logits are the same lane chains
// (bf16_register_block_avx512.hpp); σ is bce_math's, on AVX-512 (the element-wise kernels' path); G is
// rounded by the packing's rule. The loss is not: as the fp32 tile does (fused_tile.hpp), a row's softplus
// sum is made from one logarithm per 16 logits of a lane (Σ max(x, 0) + log1p(q), 1 + q = Π (1 + e^{−|x|}),
// over 8 blocks of 32 columns), summed in float64, instead of a log1p per logit: within 64 float32 ulps of
// the row's float64 softplus sum (Bf16FusedTile.RowLossMatchesFloat64Softplus), and the same bits for
// every kernel and thread count.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace lobench::cpu {

// One tile: `rows` positions × `n` vocabulary entries, row r position p0 + r, column j entry v0 + j.
struct Bf16FusedTile {
  int64_t rows = 0, n = 0, Dw = 0;    // Dw: pairs of the inner index D
  const uint32_t* A = nullptr;        // the rows of A paired along D, rows Dw words apart
  const uint32_t* Et = nullptr;       // E_b paired along D, transposed: pair k of entry j at Et[k·ld_et + j]
  int64_t ld_et = 0;
  const float* row_scale = nullptr;   // s·w of each row
  // Targets: bit j % 32 of targets[(j / 32)·ld_targets + r] is set where entry j is a target of row r
  // (ld_targets ≥ rows rounded up to 8; the words past `rows` read as zero).
  const uint32_t* targets = nullptr;
  int64_t ld_targets = 0;
  float* X = nullptr;                 // the logit at each target, X[r·ldx + j] (nothing else is written)
  int64_t ldx = 0;
  // [rows × kBf16RowSumDoubles]: per row 16 float64 lanes of its softplus sum (overwritten), then the
  // kernel's state between blocks (the float32 math: 32 floats; the binary16 math: none)
  double* row_sums = nullptr;
  int64_t* predicted = nullptr;       // [rows]: += #{j : x > 0}
  uint32_t* G_by_pos = nullptr;       // G paired along positions: pair(G[2k][j], G[2k+1][j]) at [k·ld_gpos + j]
  int64_t ld_gpos = 0;
  uint32_t* G_by_voc = nullptr;       // G paired along the vocabulary: pair(G[r][2k], G[r][2k+1]) at [r·ld_gvoc + k]
  int64_t ld_gvoc = 0;
  // Memory the caller reads next (the next tile's rows of E, this tile's rows of dE), asked for into the
  // L2 cache a few lines per register block while the tile's logits are made (fused_logits) or while the
  // epilogue runs on logits made by AMX (epilogue_of_tile): in a step these come from DRAM, and the passes
  // that read them would wait for it (a start of null reads nothing). In the AMX route this took the
  // fused bf16 step at V = 100000, D = 128 from 83.1 to 77.4 ms on the Xeon model 167 (medians of three
  // step_bench runs, 128-column tiles; level at D = 256: results/cpu/performance.md). With 256-column
  // tiles, whose working set filled the L2, a session before had found it slower (not kept).
  struct Prefetch {
    const void* start = nullptr;
    int64_t bytes = 0;
    bool for_writing = false;
  } prefetch[2];
};

// The doubles of Bf16FusedTile::row_sums per row.
constexpr int64_t kBf16RowSumDoubles = 32;
// Columns per target word, and the padding of ld_targets.
constexpr int64_t kBf16TargetBits = 32;
constexpr int64_t kBf16TargetRowPad = 8;

// The AVX512_BF16 kernels (bf16_fused_tile_avx512.cpp), present where LOBENCH_BF16_SIMD is defined; call
// them only where the CPU has AVX512_BF16 (bf16_simd_unavailable() is nothing; fused_logits: where the
// avx512_bf16 kernel is the products' kernel).
namespace avx512_bf16 {
// The tile: X at the targets, row_sums, predicted, G_by_pos (⌈rows/2⌉ × n) and G_by_voc (rows × ⌈n/2⌉),
// G = row_scale·σ(x), minus row_scale at the targets, pairs past the tile's edge padded with +0.
void fused_logits(const Bf16FusedTile& t);
// The same epilogue on logits already made (by any bf16 kernel) and held in t.X (t.A, t.Et unused): what
// fused_logits makes, bit for bit, from the same logits.
void epilogue_of_tile(const Bf16FusedTile& t);
// loss[r] += the row's sum from its 16 float64 lanes, for r < rows.
void add_row_sums(const double* row_sums, int64_t rows, double* loss);
}  // namespace avx512_bf16

// The same three with softplus and σ computed in binary16 (`--epilogue fp16`, variants/epilogue.hpp) on
// AVX512-FP16 (bf16_fused_tile_fp16.cpp), present where LOBENCH_FP16_EPILOGUE_TILE_BUILT is defined: the
// logits rounded to binary16, bce_math in binary16 (the emulation's operations, bit for bit), the loss
// terms summed in the emulation's order (per 16 columns, columns l and 8 + l added in binary16, into 8
// float64 lanes of row_sums), σ widened to float32 for G. What the library path with the emulated fp16
// kernels makes from the same logits, bit for bit. Call them only where fp16_epilogue_tile_unavailable()
// is nothing.
namespace avx512_fp16_epilogue {
void fused_logits(const Bf16FusedTile& t);
void epilogue_of_tile(const Bf16FusedTile& t);
void add_row_sums(const double* row_sums, int64_t rows, double* loss);
}  // namespace avx512_fp16_epilogue

// The tile through the kernels above: fused_logits (epilogue_of_tile where logits_in_x: the logits made
// into t.X already), of avx512_fp16_epilogue where fp16_epilogue, else of avx512_bf16.
void bf16_fused_tile(const Bf16FusedTile& t, bool logits_in_x, bool fp16_epilogue);
// add_row_sums of the same namespace.
void bf16_fused_tile_row_sums(const double* row_sums, int64_t rows, double* loss, bool fp16_epilogue);

// Whether this build has the kernels above.
bool bf16_fused_tile_built();
// Why the binary16 tile cannot run here (the build lacks it, the CPU lacks AVX512-FP16 or AVX512_BF16, or
// LOBENCH_ISA excludes them), or nothing.
std::optional<std::string> fp16_epilogue_tile_unavailable();

}  // namespace lobench::cpu
