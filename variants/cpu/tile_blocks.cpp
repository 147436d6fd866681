#include "variants/cpu/tile_blocks.hpp"

#include <algorithm>

#include "variants/cpu/fused_tile.hpp"
#include "variants/operand.hpp"

namespace lobench::cpu {
namespace {

int64_t round_up_16(int64_t n) { return (n + 15) / 16 * 16; }

// Vocabulary columns per tile: 256 (16 AVX-512 vectors per tile row). On the development machine (Zen 4,
// 1 MiB L2, Eigen products) fused ran within measurement noise (±10 %) of the same rate for any block_v
// from 64 to 512 at D = 128 and 256, because the products stay compute-bound: per tile they move
// about (8/3)·(1/block_v + 1/block_p + 1.25/D) bytes per flop, a few GB/s at full speed. What block_v
// does decide is load balance, so small vocabularies get narrower tiles: at least 4 blocks for each of
// up to 16 threads. The rule does not look at the run's thread count: block sizes fix the order of the
// floating-point sums, and results must not depend on how many threads made them.
constexpr int64_t kBlockV = 256;
// bf16 tiles (bf16 and fp8 operands) on AMX at D <= kBf16NarrowMaxD: 128 columns. See choose_blocks.
constexpr int64_t kBf16BlockV = 128, kBf16NarrowMaxD = 128;
constexpr int64_t kMinBlocks = 4 * 16;
// Position chunks are whole panels of the transposed tile's logit product: a chunk of 336 had left its last
// panel of kTransposedPanel = 32 positions half empty.
constexpr int64_t kChunkStep = kTransposedPanel;

}  // namespace

std::string tile_description(const TileBlocks& b) {
  return std::to_string(b.block_p) + " positions x " + std::to_string(b.block_v) + " entries";
}

int64_t balanced_chunk(int64_t P, int64_t fit) {
  fit = std::max<int64_t>(kChunkStep, fit / kChunkStep * kChunkStep);
  const int64_t chunks = (P + fit - 1) / fit;
  return std::min(P, ((P + chunks - 1) / chunks + kChunkStep - 1) / kChunkStep * kChunkStep);
}

TileBlocks choose_blocks(int64_t P, int64_t V, int64_t D, const RunOptions& o, const CacheSizes& caches,
                         bool bf16_on_amx) {
  const int64_t threads = std::max(o.threads, 1);
  const bool bf16_tiles = products_in_bf16(parse_operand(o.operand));
  TileBlocks b;
  if (o.block_v > 0) {
    b.block_v = std::min(o.block_v, V);
  } else {
    const int64_t balanced = round_up_16((V + kMinBlocks - 1) / kMinBlocks);
    b.block_v = std::min({kBlockV, std::max<int64_t>(16, balanced), V});
  }
  b.ld = round_up_16(b.block_v);

  // Positions per tile: as many as keep one thread's logit tile [block_p, ld] and one row of A per position
  // within the per-core L2 (the four passes over a tile, product, element-wise sweep and two products,
  // find it there), in balanced chunks. Counting A's rows twice (for the chunk's dA share as well), as
  // this rule did until 2026-12-06, made D = 256 tiles of 336 (then 256) positions where 512 ran faster:
  // fused 446, 450 and 475 GFLOP/s at V = 100000, D = 256, P = 1024 (step_bench, 2 threads, Zen 5 with
  // 1 MiB L2, CPU time; results/cpu/performance.md), as the bf16 step had measured before. Larger chunks
  // also mean fewer passes over E and dE.
  //
  // With bf16 products (bf16 and fp8 operands, tile_products_bf16.hpp) a position holds more of the tile:
  // its float32 logits (4·ld bytes), G paired both ways (2·ld + 2·ld), A's pairs (2·D) and its float32 dA
  // row (4·D). Sized by the float32 rule (4·(ld + D)), the bf16 tiles at D = 128 were 1024 positions,
  // 2.75 MiB against the 2 MiB L2 of the Xeon model 167; 512 ran 3-22 % faster there over four alternated
  // pairs of runs (fused, V = 100000, P = 1024, 2 threads, 2026-12-07), and level at D = 256.
  if (o.block_p > 0) {
    b.block_p = std::min(o.block_p, P);
  } else {
    const int64_t bytes_per_position = bf16_tiles ? 8 * b.ld + 6 * D : 4 * (b.ld + D);
    b.block_p = balanced_chunk(P, caches.l2 / bytes_per_position);
  }

  // bf16 tiles on AMX at D <= 128 are then cut to 128 columns, their positions left as the 256-column
  // tile's rule gave them. On the AMX Xeon (model 167) the fused bf16 step at V = 100000, D = 128,
  // P = 1024, 2 threads ran 85.4 ms (median of three runs' medians) at 256 x 512 and 81.4 ms at 128 x 512,
  // in step_bench runs alternated with other builds; level at D = 256 (results/cpu/performance.md, first
  // section). Grids read in the terminal (not kept) had 64 columns, and 128 columns with 1024 positions,
  // slower. The narrower tile's E block paired along D (D·block_v·2 bytes, 32 KiB) fits the L1 cache the
  // AMX logit product reads it from, and the tile's working set falls from about 1.9 to 1.2 MiB of the
  // 2 MiB L2. Only AMX is narrowed: the lane kernel's tiles (AVX512_BF16 without AMX, the Zen 5) were not
  // measured at 128 columns.
  if (bf16_tiles && bf16_on_amx && o.block_v <= 0 && D <= kBf16NarrowMaxD && b.block_v > kBf16BlockV) {
    b.block_v = kBf16BlockV;
    b.ld = round_up_16(b.block_v);
  }

  const int64_t n_vblocks = (V + b.block_v - 1) / b.block_v;
  b.threads = int(std::max<int64_t>(1, std::min<int64_t>(threads, n_vblocks)));
  return b;
}

}  // namespace lobench::cpu
