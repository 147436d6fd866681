// How the tiled CPU variants (chunked, fused) size their logit tiles and how many threads they use.
#pragma once

#include <cstdint>
#include <string>

#include "variants/cpu/bf16_products.hpp"
#include "variants/cpu/cache_info.hpp"
#include "variants/variant.hpp"

namespace lobench::cpu {

struct TileBlocks {
  int64_t block_v = 0;  // vocabulary columns per tile
  int64_t block_p = 0;  // positions per tile: the position chunk every vocabulary block is swept with
  int64_t ld = 0;       // floats between tile rows: block_v rounded up to 16 (64-byte aligned rows)
  int threads = 1;      // threads actually used: never more than there are vocabulary blocks
};

// "block_p positions x block_v entries": how run files and benchmark contexts name the tiles.
std::string tile_description(const TileBlocks& b);

// Positions per chunk when at most `fit` fit in cache: the P positions cut into the fewest chunks of at
// most `fit` (rounded down to a multiple of 32, at least 32), all of one size, a multiple of 32 (or P), the
// last no larger. Equal chunks, not full ones and a remainder: at P = 1024, D = 256 a fit of 336 had made
// chunks of 336, 336, 336 and 16, the last a tile of 16 positions whose products run far below the rate
// of a full one; balanced they are 4 × 256.
int64_t balanced_chunk(int64_t P, int64_t fit);

// RunOptions' block_v / block_p when set (clamped to the problem), otherwise sizes from the caches and,
// for bf16 and fp8 operands, from whether the bf16 products run on AMX (bf16_on_amx): see tile_blocks.cpp
// for the rule and the measurements behind it.
TileBlocks choose_blocks(int64_t P, int64_t V, int64_t D, const RunOptions& o, const CacheSizes& caches,
                         bool bf16_on_amx);

// This machine's caches and bf16 products (bf16_products_on_amx).
inline TileBlocks choose_blocks(int64_t P, int64_t V, int64_t D, const RunOptions& o) {
  return choose_blocks(P, V, D, o, cache_sizes(), bf16_products_on_amx());
}

}  // namespace lobench::cpu
