#include "harness/meters/shape_gemm.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "harness/meters/sgemm_rate.hpp"
#include "variants/cpu/bf16_products.hpp"
#include "variants/cpu/logit_tile_products.hpp"
#include "variants/cpu/sgemm.hpp"
#include "variants/timing.hpp"

namespace lobench::meters {
namespace {

// The vocabulary rows timed: whole blocks for about sample_s at machine_gflops, two per thread at least, V at most.
int64_t timed_rows(int64_t P, int64_t V, int64_t D, const cpu::TileBlocks& b, double sample_s, double machine_gflops) {
  const int64_t unit = b.block_v * b.threads;
  const double rows = sample_s * machine_gflops * 1e9 / (2.0 * double(P) * double(D));
  if (!(std::isfinite(rows) && rows > 0)) return V;
  const int64_t blocks = std::max<int64_t>(2, int64_t(std::ceil(rows / double(unit))));
  return std::min(V, blocks * unit);
}

}  // namespace

ShapeGemmRate measure_shape_gemm(int64_t P, int64_t V, int64_t D, int threads, ShapeProducts products,
                                 double longest_sample_s, double machine_gflops) {
  RunOptions fused_defaults;  // no block sizes given: the tiles `fused` chooses
  fused_defaults.threads = threads;
  const cpu::TileBlocks b = cpu::choose_blocks(P, V, D, fused_defaults);
  ShapeGemmRate r;
  r.timed_v = timed_rows(P, V, D, b, longest_sample_s, machine_gflops);
  const std::vector<float> A = fixed_operand(P * D, kOperandStepA), E = fixed_operand(r.timed_v * D, kOperandStepB);
  const cpu::LogitOperands x{A.data(), E.data(), P, r.timed_v, D};
  std::vector<Contender> contenders;
  std::optional<cpu::LibraryTileProducts> library;
  std::optional<cpu::OwnTileProducts> own;
  std::optional<cpu::Bf16TileLogits> bf16;
  if (products == ShapeProducts::bf16) {
    bf16.emplace(x, b);
    contenders.push_back({std::string("bf16 products (") + cpu::to_string(cpu::active_bf16_kernel()) + ")", [&] { (*bf16)(); }, {}, {}});
  } else {
    library.emplace(x, b, 1);
    contenders.push_back({cpu::sgemm_library_name(), [&] { (*library)(); }, {}, {}});
    if (const cpu::OwnTileKernels* own_kernels = cpu::own_tile_kernels()) {
      own.emplace(x, b, *own_kernels, 1);
      contenders.push_back({"own", [&] { (*own)(); }, {}, {}});
    }
  }
  time_interleaved(contenders, 1, RepPolicy::fixed(5));
  // The fastest round, not the median: a limit, as the FMA peak is. On the shared Zen 5 the median of 5
  // rounds at D = 256 read 488–544 GFLOP/s over three runs minutes apart, and `fused` ran above the lowest.
  const double flops = 2.0 * double(P) * double(r.timed_v) * double(D);
  for (const Contender& c : contenders) {
    const double rate = flops / c.wall.min() / 1e9;
    r.paths.emplace_back(c.name, rate);
    if (!(rate <= r.gflops)) r.gflops = rate, r.fastest = c.name;
  }
  return r;
}

}  // namespace lobench::meters
