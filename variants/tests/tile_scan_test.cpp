// The schedule the tiled variants share: every (position, vocabulary entry) lies in exactly one tile,
// the per-thread sums reach the outputs once, and Eigen's own threading is left as it was found.
#include "variants/cpu/tile_scan.hpp"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <vector>

namespace lobench {
namespace {

TEST(TileScan, EveryLogitIsInExactlyOneTileAndSumsReachTheOutputs) {
  for (int threads : {1, 2, 3})
    for (auto [bv, bp] : {std::pair<int64_t, int64_t>{7, 5}, {64, 16}, {1000, 1000}}) {
      StepInputs in;
      in.P = 37;
      in.V = 101;
      in.D = 3;
      const cpu::TileBlocks b = cpu::choose_blocks(in.P, in.V, in.D, RunOptions{threads, bv, bp});
      CountingAllocator alloc;
      cpu::TileScanWorkspace ws(b, in.D, alloc);
      StepOutputs out;
      out.resize(in.P, in.V, in.D);
      std::vector<int> seen(size_t(in.P * in.V), 0);  // tiles are disjoint: no two threads share an entry
      cpu::scan_tiles(in, b, ws, cpu::kLossAndCounts | cpu::kInputGradient, out,
                      [&](cpu::TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) {
                        for (int64_t r = 0; r < rows; ++r) {
                          for (int64_t j = 0; j < n; ++j) ++seen[size_t((p0 + r) * in.V + v0 + j)];
                          w.loss[r] += double(n);  // each row's sum over its tiles is V
                          w.predicted[r] += 1;     // one per tile
                          w.true_pos[r] += 2;
                          for (int64_t k = 0; k < in.D; ++k) w.dA[r * in.D + k] += 1.0f;
                        }
                      });
      for (int s : seen) ASSERT_EQ(s, 1) << "threads " << threads << " blocks " << bv << "x" << bp;
      const int64_t tiles_per_row = (in.V + b.block_v - 1) / b.block_v;
      for (int64_t p = 0; p < in.P; ++p) {
        EXPECT_EQ(out.per_position_loss[size_t(p)], double(in.V));
        EXPECT_EQ(out.counts[size_t(p * 4 + kFP)], tiles_per_row);
        EXPECT_EQ(out.counts[size_t(p * 4 + kTP)], 2 * tiles_per_row);
        for (int64_t k = 0; k < in.D; ++k) EXPECT_EQ(out.dA[size_t(p * in.D + k)], float(tiles_per_row));
      }
      EXPECT_EQ(alloc.peak_bytes(), cpu::TileScanWorkspace::bytes(b, in.D));
    }
}

// The tiles' float sums enter the outputs in block order whatever the thread count: sums whose value
// depends on the order of addition (1e8 + small terms in float) come out bit-identical.
TEST(TileScan, SumsAreAddedInBlockOrderWhateverTheThreadCount) {
  StepInputs in;
  in.P = 21;
  in.V = 3333;
  in.D = 5;
  std::vector<float> first_dA;
  std::vector<double> first_loss;
  for (int threads : {1, 2, 3, 4}) {
    // 16-wide blocks of V = 3333: 209 blocks in groups of 2, so both groups and ordering are exercised
    const cpu::TileBlocks b = cpu::choose_blocks(in.P, in.V, in.D, RunOptions{threads, 16, 8});
    CountingAllocator alloc;
    cpu::TileScanWorkspace ws(b, in.D, alloc);
    StepOutputs out;
    out.resize(in.P, in.V, in.D);
    cpu::scan_tiles(in, b, ws, cpu::kLossAndCounts | cpu::kInputGradient, out,
                    [&](cpu::TileThread& w, int64_t v0, int64_t, int64_t p0, int64_t rows) {
                      for (int64_t r = 0; r < rows; ++r) {
                        // Alternating huge and tiny terms: float addition is far from associative here.
                        const double big = (v0 / 16) % 2 ? -1e17 : 1e17;
                        w.loss[r] += big + 1e-3 * double(v0 + p0 + r);
                        for (int64_t k = 0; k < in.D; ++k)
                          w.dA[r * in.D + k] += float(big * 1e-9) + 1e-3f * float(v0 + k + r);
                      }
                    });
    if (first_dA.empty()) {
      first_dA = out.dA;
      first_loss = out.per_position_loss;
    } else {
      EXPECT_EQ(out.dA, first_dA) << threads << " threads";
      EXPECT_EQ(out.per_position_loss, first_loss) << threads << " threads";
    }
  }
}

TEST(TileScan, EigenThreadingIsRestoredAfterARun) {
  const int before = Eigen::nbThreads();
  Eigen::setNbThreads(2);
  {
    cpu::ProductsOnCallingThread guard;
    EXPECT_EQ(Eigen::nbThreads(), 1);
  }
  EXPECT_EQ(Eigen::nbThreads(), 2);
  Eigen::setNbThreads(before);
}

}  // namespace
}  // namespace lobench
