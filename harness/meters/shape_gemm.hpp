// The best product at a row's shape: the logit product A[P×D]·Eᵀ[D×V] on the tiles `fused` chooses for
// that shape (variants/cpu/logit_tile_products.hpp: the products step_bench's gemm, gemm_own and gemm_bf16
// rows time), timed in one measurement through every path the row's operands have: with fp32 operands the
// library's (cpu::sgemm: OpenBLAS or Eigen, one tile per call on its thread), oneDNN's (likewise, where the
// build found it) and our own micro-kernels (where the CPU runs them), interleaved; with bf16 or fp8
// operands the bf16 products (AMX-BF16 where the CPU has it) and oneDNN's bf16 matmul on the same tiles. The fastest path's fastest round is the rate. A CPU row's yardstick is the larger of this
// and the machine's square product for its operands (machine_limits.hpp): the square product is not where
// every kernel is fastest. On a Zen 5 at P = 1024, D = 256, V = 100000 (2 threads) `fused` ran at 475–480
// GFLOP/s, 100–101 % of our kernels' 4096³ product (474–478), and was flagged a measurement error while
// its own products ran faster than that.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "variants/cpu/tile_blocks.hpp"

namespace lobench::meters {

// Which products a row's operands are computed with.
enum class ShapeProducts { fp32, bf16 };

struct ShapeGemmRate {
  double gflops = std::numeric_limits<double>::quiet_NaN();  // the fastest path's fastest round, on 2·P·timed_v·D
  // Every path timed, (name, GFLOP/s): "own" (our micro-kernels), the library's name
  // (cpu::sgemm_library_name()), "oneDNN ... (dnnl_sgemm, 1 thread per call)", "bf16 products (KERNEL)" or
  // "oneDNN ... bf16 matmul".
  std::vector<std::pair<std::string, double>> paths;
  std::string fastest;  // the name of the path whose rate is `gflops`
  int64_t timed_v = 0;  // the vocabulary rows of the timed product (whole tiles; at most V)
  // The tiles the product was timed on: those `fused` and `chunked` choose at this shape and thread count
  // (cpu::choose_blocks; with bf16 products, the bf16 tiles), which fix the order of their sums.
  cpu::TileBlocks tiles;
};

// The longest sample the sweep's yardstick takes (run_sweep): all of V up to a product of this long, so
// that E streams from memory as in the step. A V cut to samples of about one step's time (30 ms at most)
// held E in the L3 cache at V = 100000 (28 MiB of 32 at D = 128) and read 502–530 GFLOP/s at D = 128 over
// three runs on the Zen 5; 0.25 s makes a shape's measurement about 3 s at most (5 rounds and an untimed
// one of at most two paths).
inline constexpr double kShapeSampleSeconds = 0.25;
// The most bytes of E the timed product holds (its own copy of fixed values, beside the row's inputs).
inline constexpr int64_t kShapeOperandBytes = int64_t(256) << 20;

// Each path's samples last at most about `longest_sample_s`: V is cut to the whole vocabulary blocks that
// take that long at the shape's own rate (timed first on two blocks per thread; at least two blocks per
// thread; all of V when that is less; kShapeOperandBytes of E at most), then 5 interleaved rounds after
// one untimed. Results do not depend on the values, which are fixed. With ShapeProducts::bf16 the caller
// checks that the bf16 products run (cpu::bf16_products_unavailable()).
ShapeGemmRate measure_shape_gemm(int64_t P, int64_t V, int64_t D, int threads, ShapeProducts products,
                                 double longest_sample_s);

}  // namespace lobench::meters
