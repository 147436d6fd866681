// How the tiled CPU variants size their logit tiles and how many threads they use.
#pragma once

#include <algorithm>
#include <cstdint>

#include "variant.hpp"

namespace lobench::cpu {

struct TileBlocks {
  int64_t block_v = 0;  // vocabulary columns per tile
  int64_t block_p = 0;  // positions per tile
  int threads = 1;      // threads actually used: never more than there are vocabulary blocks
};

// Defaults: 512 vocabulary columns (the Cut BCE CPU prototype's choice, 96 % of SGEMM for the products)
// and up to 2048 positions per tile; both clamped to the problem.
inline TileBlocks choose_blocks(int64_t P, int64_t V, const RunOptions& o) {
  TileBlocks b;
  b.block_v = std::min<int64_t>(o.block_v > 0 ? o.block_v : 512, V);
  b.block_p = std::min<int64_t>(o.block_p > 0 ? o.block_p : 2048, P);
  const int64_t n_vblocks = (V + b.block_v - 1) / b.block_v;
  b.threads = int(std::max<int64_t>(1, std::min<int64_t>(std::max(o.threads, 1), n_vblocks)));
  return b;
}

}  // namespace lobench::cpu
