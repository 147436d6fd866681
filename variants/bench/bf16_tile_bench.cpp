// One thread, one logit tile of the fused step with bf16 operands: each piece of the tile's work timed
// alone (best of many repetitions, so that a shared machine's interruptions hardly enter), to see where
// a bf16 fused tile spends its time. Run pinned to one core: `taskset -c 1 build/variants/bench/bf16_tile_bench [D [rows [n]]]`.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "variants/aligned_vector.hpp"
#include "variants/bench/bench_args.hpp"
#include "variants/bce/bce_tile.hpp"
#include "variants/cpu/bf16_products.hpp"
#include "variants/cpu/tile_products_bf16.hpp"

using namespace lobench;
using namespace lobench::cpu;

namespace {

template <class F>
double best_seconds(F&& f, int reps = 200) {
  f();
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

AlignedVector<float> normal(int64_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  AlignedVector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  // (512 × 256: the step's tiles at P = 1024, D = 128 and 256)
  const char* usage = "usage: bf16_tile_bench [D [rows [n]]]   (default 128 512 256, D even; run pinned: taskset -c 1 ...)";
  const std::vector<int64_t> size = bench::positional_sizes(argc, argv, usage, {128, 512, 256});
  const int64_t D = size[0], rows = size[1], n = size[2];
  if (D % 2) {  // (the buffers below hold D/2 pairs per row)
    std::fprintf(stderr, "%s: D = %lld: odd (D is paired into bf16 pairs)\n%s\n", argv[0], (long long)D, usage);
    return 2;
  }
  const int64_t Dw = D / 2, ld = (n + 15) / 16 * 16;
  const double flops = 2.0 * rows * n * D;

  const AlignedVector<float> A = normal(rows * D, 1, 0.3f), E = normal(n * D, 2, 0.3f);
  AlignedVector<uint32_t> A_pairs(size_t(rows * Dw)), At_pairs(size_t(D * ((rows + 1) / 2))), E_t(size_t(Dw * n)),
      G_by_pos(size_t((rows + 1) / 2 * n)), G_by_voc(size_t(rows * ((n + 1) / 2))), E_by_voc(size_t((n + 1) / 2 * D));
  pair_columns(A.data(), D, rows, D, A_pairs.data(), Dw);
  pair_rows_transposed(A.data(), D, rows, D, At_pairs.data(), (rows + 1) / 2);
  AlignedVector<float> X(size_t(rows * ld)), dE(size_t(n * D)), dA(size_t(rows * D));
  AlignedVector<float> row_scale(size_t(rows), 1e-6f);
  std::vector<double> loss(static_cast<size_t>(rows));
  std::vector<int64_t> predicted(static_cast<size_t>(rows));
  const BceTileKernels& k = active_bce_tile_kernels();
  const Bf16Kernel kernel = active_bf16_kernel();
  if (const auto peak = simd_peak_rates(0.2))
    std::printf("this thread's peaks: fp32 FMA %.1f GFLOP/s, VDPBF16PS %.1f GFLOP/s\n", peak->fp32_fma, peak->bf16_dot);
  std::printf("kernel %s, simd_path %d, rows %lld n %lld D %lld\n", to_string(kernel), int(k.path), (long long)rows,
              (long long)n, (long long)D);

  auto logits = [&] {
    Bf16Product p;
    p.M = rows, p.N = n, p.K2 = Dw, p.a = A_pairs.data(), p.lda = Dw, p.b = E_t.data(), p.ldb = n, p.c = X.data(), p.ldc = ld;
    bf16_product(kernel, p);
  };
  auto pair_E_t = [&] { pair_columns_transposed(E.data(), D, n, D, E_t.data(), n); };
  auto sweep = [&] { k.softplus_and_sigmoid(X.data(), rows, n, ld, loss.data(), predicted.data(), row_scale.data()); };
  auto pair_G = [&] {
    pair_rows(X.data(), ld, rows, n, G_by_pos.data(), n);
    pair_columns(X.data(), ld, rows, n, G_by_voc.data(), (n + 1) / 2);
  };
  auto pair_E = [&] { pair_rows(E.data(), D, n, D, E_by_voc.data(), D); };
  auto grad_E = [&] {
    Bf16Product p;
    p.M = D, p.N = n, p.K2 = (rows + 1) / 2, p.a = At_pairs.data(), p.lda = (rows + 1) / 2, p.b = G_by_pos.data(), p.ldb = n;
    p.c = dE.data(), p.ldc = D, p.c_transposed = true, p.accumulate = true;
    bf16_product(kernel, p);
  };
  AlignedVector<uint32_t> A_by_pos(static_cast<size_t>((rows + 1) / 2 * D));
  pair_rows(A.data(), D, rows, D, A_by_pos.data(), D);
  auto grad_E_rows = [&] {  // the same dE, row-major, G read transposed (what the variants make)
    Bf16Product p;
    p.M = n, p.N = D, p.K2 = (rows + 1) / 2, p.a = G_by_pos.data(), p.lda = n, p.a_transposed = true;
    p.b = A_by_pos.data(), p.ldb = D, p.c = dE.data(), p.ldc = D, p.accumulate = true;
    bf16_product(kernel, p);
  };
  auto grad_A = [&] {
    Bf16Product p;
    p.M = rows, p.N = D, p.K2 = (n + 1) / 2, p.a = G_by_voc.data(), p.lda = (n + 1) / 2, p.b = E_by_voc.data(), p.ldb = D;
    p.c = dA.data(), p.ldc = D, p.accumulate = true;
    bf16_product(kernel, p);
  };
  pair_E_t();
  logits();
  sweep();
  pair_G();
  pair_E();
  const double t_logits = best_seconds(logits), t_pairE_t = best_seconds(pair_E_t), t_sweep = best_seconds([&] {
    logits();
    sweep();
  }) - t_logits;
  const double t_pairG = best_seconds(pair_G), t_pairE = best_seconds(pair_E), t_dE = best_seconds(grad_E),
               t_dA = best_seconds(grad_A), t_dE_rows = best_seconds(grad_E_rows);
  const double t_all = best_seconds([&] {
    pair_E_t();
    logits();
    sweep();
    pair_G();
    pair_E();
    grad_E();
    grad_A();
  });
  auto row = [&](const char* what, double t, bool product) {
    if (product) std::printf("%-28s %8.1f us  %6.1f GFLOP/s  %5.1f %%\n", what, t * 1e6, flops / t / 1e9, 100 * t / t_all);
    else std::printf("%-28s %8.1f us  %22s %5.1f %%\n", what, t * 1e6, "", 100 * t / t_all);
  };
  // The fused tile (tile_products_bf16.hpp): logits with the element-wise work and G's pairing in their
  // epilogue, then the two gradient products; ~1 target per 10 000 logits.
  CountingAllocator alloc;
  TileBlocks blocks;
  blocks.block_v = n, blocks.block_p = rows, blocks.ld = ld, blocks.threads = 1;
  std::vector<std::pair<int64_t, int64_t>> targets;
  for (int64_t i = 0; i < rows * n / 10000; ++i) targets.push_back({(i * 7919) % rows, (i * 104729) % n});
  // [0]: the float32 epilogue, [1]: the binary16 one (`--epilogue fp16`, where the CPU has AVX512-FP16)
  double t_fused_logits[2] = {}, t_fused_grads[2] = {}, t_fused[2] = {};
  for (int fp16 = 0; fp16 < 2; ++fp16) {
    if (!Bf16TileProducts::fused_tiles_run(fp16 == 1)) continue;
    Bf16TileProducts tp(A.data(), rows, D, blocks, alloc, true, fp16 == 1);
    auto fused_logits = [&] {
      tp.pair_E(0, E.data(), 0, n);
      tp.fused_logits(0, n, 0, rows, row_scale.data(), X.data(), ld, predicted.data(), [&](auto&& fn) {
        for (auto [r, j] : targets) fn(r, j);
      });
      tp.add_row_sums(0, rows, loss.data());
    };
    auto fused_grads = [&] { tp.gradient_products(0, E.data(), n, 0, rows, dE.data(), dA.data(), true, true); };
    t_fused_logits[fp16] = best_seconds(fused_logits);
    t_fused_grads[fp16] = best_seconds(fused_grads);
    t_fused[fp16] = best_seconds([&] {
      fused_logits();
      fused_grads();
    });
  }
  row("logits product", t_logits, true);
  row("pair E along D, transposed", t_pairE_t, false);
  row("element-wise sweep", t_sweep, false);
  row("pair G two ways", t_pairG, false);
  row("pair E along vocabulary", t_pairE, false);
  row("dE product (transposed C)", t_dE, true);
  row("dE product (G transposed)", t_dE_rows, true);
  row("dA product", t_dA, true);
  std::printf("%-28s %8.1f us  %6.1f GFLOP/s (6 rows n D)\n", "whole tile", t_all * 1e6, 3 * flops / t_all / 1e9);
  for (int fp16 = 0; fp16 < 2; ++fp16) {
    if (!(t_fused[fp16] > 0)) continue;
    const char* e = fp16 ? " (fp16 epilogue)" : "";
    row((std::string("fused: logits + epilogue") + e).c_str(), t_fused_logits[fp16], true);
    row((std::string("fused: pair E, dE, dA") + e).c_str(), t_fused_grads[fp16], false);
    std::printf("%-28s %8.1f us  %6.1f GFLOP/s (6 rows n D)\n", (std::string("fused tile") + e).c_str(), t_fused[fp16] * 1e6,
                3 * flops / t_fused[fp16] / 1e9);
  }
  return 0;
}
