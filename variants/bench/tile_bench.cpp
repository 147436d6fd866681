// One thread's time for each product of our own on one transposed tile (variants/cpu/fused_tile.hpp), the
// way the fused and chunked variants call them: the tuning tool behind the kernels' block sizes. Run it
// pinned to one core (taskset -c N); every kernel is timed as the best of many passes over a few vocabulary
// blocks (so E_b comes from L2/L3 as in a step, not from L1), the kernels taking turns.
//
//   build/variants/bench/tile_bench [rows n D [P [rounds [blocks]]]]   (default 512 256 128, P = 1024, 100 rounds, 8 blocks)
//
// Prints GFLOP/s per kernel (2·rows·n·D flops each; `fused tile`, logits_sigmoid + grad_E + grad_A, and
// `chunked tile`, both scans' kernels, on their 6 and 8·rows·n·D) and each rate over the logit product's.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

#include "variants/aligned_vector.hpp"
#include "variants/bench/bench_args.hpp"
#include "variants/cpu/fused_tile.hpp"

namespace {

using namespace lobench;

struct Bench {
  int64_t rows, n, D, P;
  int blocks_ = 8;  // vocabulary blocks cycled through (E and dE of 400 blocks at D = 128: 100 MB, DRAM as in a step)
  AlignedVector<float> A, At, E, Gt, dE, dA, scale;
  std::vector<double> loss;
  std::vector<int64_t> predicted;
  int64_t ldat;

  Bench(int64_t rows_, int64_t n_, int64_t D_, int64_t P_, int blocks) : rows(rows_), n(n_), D(D_), P(P_), blocks_(blocks) {
    std::mt19937 rng(1);
    std::normal_distribution<float> g(0.0f, 1.0f);
    A.resize(size_t(P * D));
    for (float& x : A) x = g(rng) * 0.3f;
    ldat = cpu::transposed_ld(P);
    At.resize(size_t(D * ldat));
    cpu::transpose_rows(A.data(), P, D, At.data(), ldat);
    E.resize(size_t(blocks_ * n * D));
    for (float& x : E) x = g(rng) * 0.3f;
    Gt.resize(size_t(n * cpu::transposed_ld(rows)));
    dE.resize(size_t(blocks_ * n * D));
    dA.resize(size_t(rows * D));
    scale.assign(size_t(rows), 1e-6f);
    loss.resize(size_t(rows));
    predicted.resize(size_t(rows));
  }

  cpu::TransposedTile tile(int b) {
    cpu::TransposedTile t;
    t.rows = rows, t.n = n, t.D = D;
    t.At = At.data(), t.ldat = ldat;
    t.A = A.data();
    t.E = E.data() + b * n * D;
    t.Gt = Gt.data(), t.ldt = cpu::transposed_ld(rows);
    return t;
  }

  // Seconds per tile of each kernel: the best of `rounds` passes over the blocks_ blocks, the kernels
  // taking turns within each round, so that they all see the same machine (a loaded machine's changes of
  // clock and sharing hit every kernel alike, and the best of many filters the rest).
  std::vector<double> time(const std::vector<std::function<void(int)>>& kernels, int rounds) {
    std::vector<double> best(kernels.size(), 1e300);
    for (const auto& f : kernels)
      for (int b = 0; b < blocks_; ++b) f(b);
    for (int round = 0; round < rounds; ++round)
      for (size_t i = 0; i < kernels.size(); ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int b = 0; b < blocks_; ++b) kernels[i](b);
        best[i] = std::min(best[i], std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / blocks_);
      }
    return best;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::vector<int64_t> size = bench::positional_sizes(
      argc, argv,
      "usage: tile_bench [rows n D [P [rounds [blocks]]]]   (default 512 256 128 1024 100 8; run pinned: taskset -c 1 ...)",
      {512, 256, 128, 1024, 100, 8});
  const cpu::OwnTileKernels* k = cpu::own_tile_kernels();
  if (!k) {
    std::fprintf(stderr, "tile_bench: the kernels of our own do not run here (AVX-512 and the avx512 path needed)\n");
    return 1;
  }
  const int64_t rows = size[0], n = size[1], D = size[2], P = size[3];
  const int rounds = int(size[4]), blocks = int(size[5]);
  Bench b(rows, n, D, std::max(P, rows), blocks);
  const double f2 = 2.0 * double(rows) * double(n) * double(D);
  auto t = [&](int blk) { return b.tile(blk); };
  // (the kernels after a logit product read a tile of gradients: s·σ of the logits, as in a step)
  k->logits_sigmoid(t(0), b.scale.data(), b.loss.data(), b.predicted.data());
  struct Row {
    const char* name;
    double work;
    std::function<void(int)> run;
  };
  const std::vector<Row> rows_out = {
      {"logits", 1, [&](int blk) { k->logits(t(blk)); }},
      {"logits_sigmoid", 1, [&](int blk) { k->logits_sigmoid(t(blk), b.scale.data(), b.loss.data(), b.predicted.data()); }},
      {"logits_softplus", 1, [&](int blk) { k->logits_softplus(t(blk), b.loss.data(), b.predicted.data()); }},
      {"logits_scaled_sigmoid", 1, [&](int blk) { k->logits_scaled_sigmoid(t(blk), b.scale.data()); }},
      // (in place: each pass turns the tile's values into s·σ of them; the work per value does not depend on it)
      {"sigmoid_epilogue (no product)", 1, [&](int blk) { (void)blk; k->sigmoid_epilogue(t(0), b.scale.data(), b.loss.data(), b.predicted.data()); }},
      {"grad_E", 1, [&](int blk) { k->grad_E(t(blk), b.dE.data() + blk * n * D, true); }},
      // (as a step's first position chunk: dE's rows written, not read)
      {"grad_E (dE written)", 1, [&](int blk) { k->grad_E(t(blk), b.dE.data() + blk * n * D, false); }},
      {"grad_A", 1, [&](int blk) { k->grad_A(t(blk), b.dA.data(), true); }},
      {"products (logits, grad_E, grad_A)", 3, [&](int blk) {
         k->logits(t(blk));
         k->grad_E(t(blk), b.dE.data() + blk * n * D, true);
         k->grad_A(t(blk), b.dA.data(), true);
       }},
      {"fused tile", 3, [&](int blk) {
         k->logits_sigmoid(t(blk), b.scale.data(), b.loss.data(), b.predicted.data());
         k->grad_E(t(blk), b.dE.data() + blk * n * D, true);
         k->grad_A(t(blk), b.dA.data(), true);
       }},
      {"chunked tile", 4, [&](int blk) {
         k->logits_softplus(t(blk), b.loss.data(), b.predicted.data());
         k->logits_scaled_sigmoid(t(blk), b.scale.data());
         k->grad_E(t(blk), b.dE.data() + blk * n * D, true);
         k->grad_A(t(blk), b.dA.data(), true);
       }},
  };
  std::vector<std::function<void(int)>> kernels;
  for (const Row& r : rows_out) kernels.push_back(r.run);
  const std::vector<double> seconds = b.time(kernels, rounds);
  const double logits = seconds[0];
  std::printf("tile %lld x %lld, D = %lld (one thread)\n", (long long)rows, (long long)n, (long long)D);
  for (size_t i = 0; i < rows_out.size(); ++i)
    std::printf("  %-36s %8.1f us  %7.1f GFLOP/s  %.3f of logits\n", rows_out[i].name, seconds[i] * 1e6,
                rows_out[i].work * f2 / seconds[i] / 1e9, (rows_out[i].work * f2 / seconds[i]) / (f2 / logits));
  return 0;
}
