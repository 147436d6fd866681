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

// Each path's product of the operands x on the tiles b (only the first: the library's or the bf16
// products, with `first_only`), and its contender (which calls it).
struct Paths {
  std::optional<cpu::LibraryTileProducts> library, onednn;
  std::optional<cpu::OwnTileProducts> own;
  std::optional<cpu::Bf16TileLogits> bf16;
  std::optional<cpu::OnednnBf16Logits> onednn_bf16;
  std::vector<Contender> contenders;
  Paths(const cpu::LogitOperands& x, const cpu::TileBlocks& b, ShapeProducts products, bool first_only) {
    if (products == ShapeProducts::bf16) {
      bf16.emplace(x, b);
      contenders.push_back({std::string("bf16 products (") + cpu::to_string(cpu::active_bf16_kernel()) + ")",
                            [this] { (*bf16)(); }, {}, {}});
      if (!first_only && !cpu::onednn_unavailable()) {
        try {
          onednn_bf16.emplace(x, b);
          contenders.push_back({onednn_bf16->name(), [this] { (*onednn_bf16)(); }, {}, {}});
        } catch (const std::runtime_error&) {  // (oneDNN refuses bf16 on this CPU: its square rate says why)
        }
      }
      return;
    }
    library.emplace(x, b, 1);
    contenders.push_back({cpu::sgemm_library_name(), [this] { (*library)(); }, {}, {}});
    if (first_only) return;
    if (cpu::onednn_is_another_library()) {
      onednn.emplace(x, b, 1, cpu::GemmLibrary::onednn);
      contenders.push_back({cpu::gemm_library_name(cpu::GemmLibrary::onednn), [this] { (*onednn)(); }, {}, {}});
    }
    if (const cpu::OwnTileKernels* own_kernels = cpu::own_tile_kernels()) {
      own.emplace(x, b, *own_kernels, 1);
      contenders.push_back({"own", [this] { (*own)(); }, {}, {}});
    }
  }
  Paths(const Paths&) = delete;
  Paths& operator=(const Paths&) = delete;
};

// The vocabulary rows timed: whole blocks of `unit` rows for about sample_s at `gflops`, two blocks at
// least, V and kShapeOperandBytes of E at most.
int64_t timed_rows(int64_t P, int64_t V, int64_t D, int64_t unit, double sample_s, double gflops) {
  const double rows = sample_s * gflops * 1e9 / (2.0 * double(P) * double(D));
  const int64_t most = std::min(V, std::max(2 * unit, kShapeOperandBytes / (4 * D) / unit * unit));
  if (!(std::isfinite(rows) && rows > 0)) return most;
  const int64_t blocks = std::max<int64_t>(2, int64_t(std::ceil(rows / double(unit))));
  return std::min(most, blocks * unit);
}

}  // namespace

ShapeGemmRate measure_shape_gemm(int64_t P, int64_t V, int64_t D, int threads, ShapeProducts products,
                                 double longest_sample_s) {
  RunOptions fused_defaults;  // no block sizes given: the tiles `fused` chooses (bf16 tiles are sized apart)
  fused_defaults.threads = threads;
  if (products == ShapeProducts::bf16) fused_defaults.operand = "bf16";
  const cpu::TileBlocks b = cpu::choose_blocks(P, V, D, fused_defaults);
  const int64_t unit = b.block_v * b.threads;
  const AlignedVector<float> A = fixed_operand(P * D, kOperandStepA);
  // The samples sized from this shape's own rate, on two blocks per thread (the square product's rate
  // would make samples far longer where the shape runs far slower, as at small P).
  const int64_t probe_v = std::min(V, 2 * unit);
  const AlignedVector<float> probe_E = fixed_operand(probe_v * D, kOperandStepB);
  Paths probe({A.data(), probe_E.data(), P, probe_v, D}, b, products, /*first_only=*/true);
  const Samples once = collect_samples([&] { return seconds_of(probe.contenders[0].run); }, 1, RepPolicy::fixed(1));
  ShapeGemmRate r;
  r.tiles = b;
  r.timed_v = timed_rows(P, V, D, unit, longest_sample_s, 2.0 * double(P) * double(probe_v) * double(D) / once.min() / 1e9);
  const AlignedVector<float> E = fixed_operand(r.timed_v * D, kOperandStepB);
  Paths paths({A.data(), E.data(), P, r.timed_v, D}, b, products, /*first_only=*/false);
  std::vector<Contender>& contenders = paths.contenders;
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
