// Tile sizes: overrides are obeyed and clamped, the automatic sizes follow the caches, threads never
// outnumber the vocabulary blocks; and the cache sizes are read from sysfs.
#include "variants/cpu/tile_blocks.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "variants/tests/temp_path.hpp"

namespace lobench {
namespace {

using cpu::CacheSizes;
using cpu::choose_blocks;

const CacheSizes kZen4{32 << 10, 1 << 20, 32 << 20, "test"};

TEST(TileBlocks, OverridesAreObeyedAndClamped) {
  const auto b = choose_blocks(1024, 100000, 128, RunOptions{2, 300, 70}, kZen4, false);
  EXPECT_EQ(b.block_v, 300);
  EXPECT_EQ(b.block_p, 70);
  EXPECT_EQ(b.ld, 304);
  EXPECT_EQ(b.threads, 2);
  const auto small = choose_blocks(5, 20, 8, RunOptions{4, 64, 16}, kZen4, false);
  EXPECT_EQ(small.block_v, 20);
  EXPECT_EQ(small.block_p, 5);
  EXPECT_EQ(small.threads, 1) << "one vocabulary block: one thread";
}

TEST(TileBlocks, AutomaticTilesFitTheSecondLevelCache) {
  for (const CacheSizes& c : {kZen4, CacheSizes{48 << 10, 2 << 20, 64 << 20, "test"},
                              CacheSizes{32 << 10, 256 << 10, 8 << 20, "test"}})
    for (int64_t D : {64, 128, 256, 1024})
      for (int64_t P : {1, 100, 1024, 100000}) {
        const auto b = choose_blocks(P, 1000000, D, RunOptions{2, 0, 0}, c, false);
        EXPECT_GE(b.block_v, 16);
        EXPECT_GE(b.block_p, 1);
        EXPECT_LE(b.block_p, P);
        EXPECT_EQ(b.block_v % 16, 0) << "whole vectors per tile row";
        if (b.block_p > 16) {
          EXPECT_LE(b.block_p * (b.ld + D) * 4, c.l2) << "D " << D << " P " << P << " L2 " << c.l2;
        }
      }
}

// bf16 and fp8 operands' tiles hold 8·ld + 6·D bytes per position (float32 logits, G paired both ways, A's
// pairs, the dA row) and are sized by that against L2: on the Xeon model 167's 2 MiB, 512 positions at
// D = 128 where fp32's rule gives 1024 (measured faster: results/cpu/performance.md).
TEST(TileBlocks, Bf16TilesFitTheirOwnWorkingSetInTheSecondLevelCache) {
  const CacheSizes xeon{48 << 10, 2 << 20, 480 << 20, "test"};
  RunOptions o{2, 0, 0};
  EXPECT_EQ(choose_blocks(1024, 100000, 128, o, xeon, false).block_p, 1024);
  for (const char* operand : {"bf16", "e4m3", "e5m2"}) {
    o.operand = operand;
    EXPECT_EQ(choose_blocks(1024, 100000, 128, o, xeon, false).block_p, 512) << operand;
    for (const CacheSizes& c : {kZen4, xeon})
      for (int64_t D : {64, 128, 256})
        for (int64_t P : {100, 1024, 100000}) {
          const auto b = choose_blocks(P, 1000000, D, o, c, false);
          if (b.block_p > 32) {
            EXPECT_LE(b.block_p * (8 * b.ld + 6 * D), c.l2) << operand << " D " << D << " P " << P;
          }
        }
  }
}

// bf16 tiles on AMX at D <= 128 are 128 columns wide (measured faster there: tile_blocks.cpp), with the
// positions of the 256-column rule; fp32 tiles, bf16 tiles at larger D or without AMX, and a --block-v keep
// theirs.
TEST(TileBlocks, Bf16TilesOnAmxAtSmallDAreNarrower) {
  const CacheSizes xeon{48 << 10, 2 << 20, 480 << 20, "test"};
  RunOptions o{2, 0, 0};
  EXPECT_EQ(choose_blocks(1024, 100000, 128, o, xeon, true).block_v, 256) << "fp32";
  for (const char* operand : {"bf16", "e4m3", "e5m2"}) {
    o.operand = operand;
    o.block_v = 0;
    const auto b = choose_blocks(1024, 100000, 128, o, xeon, true);
    EXPECT_EQ(b.block_v, 128) << operand;
    EXPECT_EQ(b.ld, 128) << operand;
    EXPECT_EQ(b.block_p, 512) << operand << ": the 256-column rule's positions (1024 if sized at 128 columns)";
    EXPECT_EQ(choose_blocks(1024, 100000, 64, o, xeon, true).block_v, 128) << operand;
    EXPECT_EQ(choose_blocks(1024, 100000, 256, o, xeon, true).block_v, 256) << operand;
    EXPECT_EQ(choose_blocks(1024, 100000, 128, o, xeon, false).block_v, 256) << operand << ": no AMX";
    EXPECT_EQ(choose_blocks(1024, 4096, 128, o, xeon, true).block_v, 64) << operand << ": small vocabularies as before";
    o.block_v = 256;
    EXPECT_EQ(choose_blocks(1024, 100000, 128, o, xeon, true).block_v, 256) << operand << ": --block-v obeyed";
  }
}

TEST(TileBlocks, SmallVocabulariesAreSplitIntoBlocksIndependentOfTheThreadCount) {
  for (int threads : {1, 2, 8}) {
    const auto b = choose_blocks(1024, 1000, 128, RunOptions{threads, 0, 0}, kZen4, false);
    EXPECT_EQ(b.block_v, 16);  // ⌈1000 / 64⌉ rounded up to 16
    EXPECT_EQ(b.threads, threads);
    EXPECT_EQ(choose_blocks(1024, 4096, 128, RunOptions{threads, 0, 0}, kZen4, false).block_v, 64);
    EXPECT_EQ(choose_blocks(1024, 100000, 128, RunOptions{threads, 0, 0}, kZen4, false).block_v, 256);
  }
}

TEST(TileBlocks, TheDevelopmentMachineGetsTheMeasuredTiles) {
  EXPECT_EQ(choose_blocks(1024, 100000, 128, RunOptions{2, 0, 0}, kZen4, false).block_p, 512);
  EXPECT_EQ(choose_blocks(1024, 100000, 256, RunOptions{2, 0, 0}, kZen4, false).block_p, 512);
  EXPECT_EQ(choose_blocks(100, 100000, 256, RunOptions{2, 0, 0}, kZen4, false).block_p, 100);
}

// Balanced chunks: the fewest that fit, all of one size (a multiple of 32), none left small at the end.
TEST(TileBlocks, PositionChunksAreBalanced) {
  for (int64_t fit : {1, 31, 32, 100, 336, 512, 682, 4096})
    for (int64_t P : {1, 31, 32, 33, 100, 337, 1000, 1024, 1025, 4096, 100000}) {
      const int64_t c = cpu::balanced_chunk(P, fit), usable = std::max<int64_t>(32, fit / 32 * 32);
      const int64_t chunks = (P + c - 1) / c;
      EXPECT_LE(c, usable) << "P " << P << " fit " << fit;
      EXPECT_TRUE(c == P || c % 32 == 0) << "whole panels of 32 positions: P " << P << " fit " << fit;
      EXPECT_EQ(chunks, (P + usable - 1) / usable) << "the fewest chunks: P " << P << " fit " << fit;
      const int64_t last = P - (chunks - 1) * c;  // each chunk but the last is c positions
      EXPECT_GT(last, c - 32 * chunks) << "the last chunk is not left small: P " << P << " fit " << fit;
    }
  EXPECT_EQ(cpu::balanced_chunk(1024, 336), 256);  // 4 chunks, not 320, 320, 320, 64
  EXPECT_EQ(cpu::balanced_chunk(1024, 512), 512);
  EXPECT_EQ(cpu::balanced_chunk(1024, 682), 512);
  EXPECT_EQ(cpu::balanced_chunk(4096, 682), 608);  // 7 chunks of 19 panels: 608 × 6 and 448
  EXPECT_EQ(cpu::balanced_chunk(20, 682), 20);
}

TEST(TileBlocks, MachineCacheSizesAreSane) {
  const CacheSizes& c = cpu::cache_sizes();
  EXPECT_GE(c.l1d, 4 << 10);
  EXPECT_GE(c.l2, c.l1d);
  EXPECT_GE(c.l3, c.l2);
  EXPECT_FALSE(c.source.empty());
}

TEST(TileBlocks, ReadsTheSysfsLayout) {
  const std::filesystem::path dir = testing::temp_path("cache_info_test");  // unique per process
  std::filesystem::remove_all(dir);
  auto level = [&](int index, const char* lvl, const char* type, const char* size) {
    const auto d = dir / ("index" + std::to_string(index));
    std::filesystem::create_directories(d);
    std::ofstream(d / "level") << lvl << "\n";
    std::ofstream(d / "type") << type << "\n";
    std::ofstream(d / "size") << size << "\n";
  };
  level(0, "1", "Data", "48K");
  level(1, "1", "Instruction", "32K");
  level(2, "2", "Unified", "2048K");
  level(3, "3", "Unified", "96M");
  const CacheSizes c = cpu::read_sysfs_cache_sizes(dir.string());
  EXPECT_EQ(c.l1d, 48 << 10);
  EXPECT_EQ(c.l2, 2 << 20);
  EXPECT_EQ(c.l3, int64_t(96) << 20);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lobench
