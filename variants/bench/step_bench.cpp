// Google Benchmark timings of one BCE step (loss, dA, dE, counts) at reduced Table II shapes of the
// Cut BCE paper (B = N = 32, so P = 1024; L = 8; mean reduction), 2 threads, beside the machine's SGEMM
// rate at the same shapes measured in the same run: ratios measured in one run are what compare across
// machines (docs/method.md#the-yardstick).
//
// First, the instruction ceilings of this CPU, measured in the same run (on kThreads threads at once, each
// the best of many short interleaved bursts, so that a loaded machine's sharing hardly enters):
//   peak/fp32_fma          VFMADD231PS on 512-bit registers, GFLOP/s at 32 flops per instruction;
//   peak/bf16_dot          VDPBF16PS (AVX512_BF16), GFLOP/s at 64 flops per instruction; x_fp32 is the
//                          ratio of the two;
//   peak/amx_bf16          TDPBF16PS (AMX-BF16) on tiles already loaded, GFLOP/s at 16384 flops per
//                          instruction, where the CPU has it; x_fp32_amx its ratio to the FMA's. The
//                          larger ratio is the most a bf16 row can gain over fp32 on this CPU.
// Benchmarks, in this order for each shape (V, D) in {(100000, 128), (200000, 128), (100000, 256)}:
//   gemm/V:…/D:…           the yardstick: the logit product of the tiled variants, A[P×D]·E_bᵀ[D×block_v]
//                          for every vocabulary block, the blocks taken by 2 threads (cpu::sgemm, each product
//                          on its own thread), tiles as `fused` chooses them. Work 2·P·V·D.
//   gemm_own/V:…/D:…       the same logit products through our own micro-kernels (variants/cpu/fused_tile.hpp,
//                          where the CPU runs them: AVX-512), on the transposed tiles `fused` uses, Aᵀ made
//                          beforehand (untimed). The yardstick of a shape is the faster of gemm and gemm_own
//                          in this run (wall and CPU time each), so that no ratio gains from a weak yardstick.
//   gemm_products/V:…/D:…  the three products of a fused pass (logits, dE_b += Gᵀ·A, dA += G·E_b) with no
//                          element-wise work: the ceiling of a fused kernel built on these products.
//   gemm_products_own/V:…/D:…  the same three products through our own micro-kernels (what `fused` makes
//                          on AVX-512), no element-wise work.
//   fused/V:…/D:…          the `fused` variant.
//   epilogue/V:…/D:…       fused's element-wise work alone (loss terms, counts, s·σ of every logit: the
//                          kernels' sigmoid_epilogue on tiles of logits made beforehand, in place), P·V logits:
//                          ns_per_logit (wall; _cpu: CPU time per thread), of_gemm_time (its time over the
//                          yardstick's logit product at the shape) and of_fused_time (over fused's step time
//                          in this run). With the products at the yardstick's rate, fused's ratio to the
//                          yardstick is at most 3 / (3 + of_gemm_time): the floor the element-wise work sets.
//   chunked/V:…/D:…        the `chunked` variant (Cut BCE, logits computed twice).
//   fused_sgemm, chunked_sgemm/V:…/D:…  the same two variants with their products through cpu::sgemm (the
//                          library) instead of our own kernels (set_own_tile_kernels_enabled(false)): the
//                          before and after of the kernels of our own, in one run.
//   dense/V:…/D:…          the `dense` variant, at V = 100000 only (3·P·V floats of working memory).
//   gemm_bf16/V:…/D:…      the bf16 yardstick: the same logit products with bf16 operands accumulated in
//                          float32 (variants/cpu/bf16_products.hpp: the kernel the variants use, the
//                          context's bf16_products), E packed beforehand (untimed). Work 2·P·V·D.
//   fused_bf16, chunked_bf16, dense_bf16/V:…/D:…  the variants with --operand bf16 (A, E and the gradient tile rounded
//                          to bf16). On a CPU without AVX512_BF16 the bf16 rows report the skip reason.
//                          The kernel is the context's bf16_products: AMX where the CPU has it.
//   fused_e4m3/V:…/D:…     fused with --operand e4m3 (A and E scaled per tensor and rounded to E4M3, the same
//                          bf16 products; docs/method.md#fp8-operands-on-the-cpu).
// Counters (all from wall-clock time, median over the iterations, after one untimed warm-up run):
//   GFLOP/s      6·P·V·D per step (gemm: 2·P·V·D), the useful work of one fused pass;
//   frac_gemm    GFLOP/s over the yardstick's GFLOP/s at the same shape in this run (the faster of gemm and
//                gemm_own, each as last measured);
//   chunked only: GFLOP/s_8PVD, frac_gemm_8PVD on the 8·P·V·D it actually computes;
//   bf16 rows: frac_gemm_bf16 (over gemm_bf16's GFLOP/s) and x_fp32 (over the fp32 row of the same
//                variant and shape in this run, when it ran before: the bf16 speed-up);
//   fused_e4m3:  the same, and x_bf16, x_bf16_cpu (this row's rate over fused_bf16's at the same shape as
//                last measured, i.e. its last repetition; wall and CPU time: "e4m3 at bf16 speed" is 1);
//   GFLOP/s_cpu, frac_gemm_cpu: the same from process CPU time (all threads) instead of wall time, i.e.
//                the rate the threads reached while they were on a core; less disturbed than wall time on
//                a machine shared with other jobs, but blind to time lost to waiting;
//   peak_MiB     the variant's peak working memory (counting allocator).
//
// Environment (for the performance gate, scripts/bench_check.sh):
//   LOBENCH_BENCH_SHAPES=20000x64,40000x64   the (V, D) shapes instead of the three above;
//   LOBENCH_INJECT_SLOWDOWN=1.3              an injected regression: every variant benchmark's timed step
//                                            takes 1.3 times its process CPU time (the calling thread burns the
//                                            extra after the step); gemm and gemm_products are untouched. The
//                                            variants themselves never read it.
//
//   build/variants/bench/step_bench --benchmark_min_time=0.5
//       --benchmark_out=step.json --benchmark_out_format=json --benchmark_context=commit=$(git rev-parse HEAD)
#include <benchmark/benchmark.h>

#include <omp.h>
#include <time.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "variants/aligned_vector.hpp"
#include "variants/bce/bce_tile.hpp"
#include "variants/cpu/bf16_products.hpp"
#include "variants/cpu/cache_info.hpp"
#include "variants/cpu/cpu_model.hpp"
#include "variants/cpu/eigen_maps.hpp"
#include "variants/cpu/fused_tile.hpp"
#include "variants/cpu/logit_tile_products.hpp"
#include "variants/cpu/sgemm.hpp"
#include "variants/cpu/tile_blocks.hpp"
#include "variants/cpu/tile_scan.hpp"
#include "variants/variant.hpp"

namespace {

using namespace lobench;

constexpr int kThreads = 2;

// The options of every step here: kThreads threads, the variants' own block sizes, fp32 throughout.
RunOptions bench_options() {
  RunOptions o;
  o.threads = kThreads;
  return o;
}

Shape table2_shape(int64_t V, int64_t D) { return Shape{32, 32, V, D, 8, Reduction::mean, false}; }

// Inputs per shape, drawn once and shared by every benchmark of that shape.
const StepData& inputs(int64_t V, int64_t D) {
  static std::map<std::pair<int64_t, int64_t>, std::unique_ptr<StepData>> cache;
  auto& slot = cache[{V, D}];
  if (!slot) slot = std::make_unique<StepData>(make_synthetic(table2_shape(V, D), SyntheticSpec{}));
  return *slot;
}

double flops(const StepData& d, double per_pvd) { return per_pvd * double(d.P) * double(d.V) * double(d.D); }

double process_cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

struct Timing {
  double wall = 0;  // seconds per step, median
  double cpu = 0;   // process CPU seconds per step, median
};

// Runs `step` once untimed, then once per benchmark iteration.
template <class Step>
Timing time_iterations(benchmark::State& state, Step&& step) {
  step();
  std::vector<double> wall, cpu;
  for (auto _ : state) {
    const double c0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    step();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cpu.push_back(process_cpu_seconds() - c0);
    state.SetIterationTime(s);
    wall.push_back(s);
  }
  auto median = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  return {median(wall), median(cpu)};
}

// The operands of a shape, as the tile products read them.
cpu::LogitOperands operands(const StepData& d) { return {d.A.data(), d.E.data(), d.P, d.V, d.D}; }

// The products of the tiled variants without their element-wise work (variants/cpu/logit_tile_products.hpp):
// the library's and our own, the logits only (products == 1) or the three of a fused pass (products == 3).
cpu::TileBlocks fused_blocks(const StepData& d) { return cpu::choose_blocks(d.P, d.V, d.D, bench_options()); }
cpu::LibraryTileProducts library_products(const StepData& d, int products) {
  return cpu::LibraryTileProducts(operands(d), fused_blocks(d), products);
}
cpu::OwnTileProducts own_products(const StepData& d, const cpu::OwnTileKernels& own, int products) {
  return cpu::OwnTileProducts(operands(d), fused_blocks(d), own, products);
}

// The fused step's element-wise work alone (OwnTileKernels::sigmoid_epilogue: loss terms, counts and
// s·σ(x) of every logit), tile by tile in the order and on the tiles `fused` uses, on each thread's tile of
// logits made once beforehand (untimed) and worked on in place: each pass turns the tile's values into s·σ
// of the last ones, and the work per value does not depend on the values (no branch in the epilogue).
// What the step pays for its element-wise work when it is not hidden behind the products.
class OwnEpilogue {
 public:
  OwnEpilogue(const StepData& d, const cpu::OwnTileKernels& own)
      : d_(d), own_(own), b_(cpu::choose_blocks(d.P, d.V, d.D, bench_options())),
        ldat_(cpu::transposed_ld(d.P)), At_(size_t(d.D * ldat_)),
        tiles_(size_t(b_.threads * b_.block_v * cpu::transposed_ld(b_.block_p))), row_scale_(size_t(d.P)),
        loss_(size_t(b_.threads * d.P)), predicted_(size_t(b_.threads * d.P)) {
    cpu::transpose_rows(d.A.data(), d.P, d.D, At_.data(), ldat_);
    cpu::fill_row_scale(d.view(), row_scale_.data());
    for (int thread = 0; thread < b_.threads; ++thread) own_.logits(tile(thread, 0, 0));
  }

  void operator()() {
    const int64_t n_vblocks = (d_.V + b_.block_v - 1) / b_.block_v;
#pragma omp parallel num_threads(b_.threads)
    {
      const int thread = omp_get_thread_num();
      for (int64_t p0 = 0; p0 < d_.P; p0 += b_.block_p) {
#pragma omp for schedule(dynamic, 1)
        for (int64_t vb = 0; vb < n_vblocks; ++vb)
          own_.sigmoid_epilogue(tile(thread, p0, vb), row_scale_.data() + p0, loss_.data() + thread * d_.P + p0,
                                predicted_.data() + thread * d_.P + p0);
      }
    }
  }

 private:
  cpu::TransposedTile tile(int thread, int64_t p0, int64_t vb) {
    return cpu::transposed_step_tile(operands(d_), b_, At_.data(), ldat_,
                                     tiles_.data() + thread * b_.block_v * cpu::transposed_ld(b_.block_p), p0, vb);
  }
  const StepData& d_;
  const cpu::OwnTileKernels& own_;
  cpu::TileBlocks b_;
  int64_t ldat_;
  AlignedVector<float> At_, tiles_, row_scale_;
  std::vector<double> loss_;
  std::vector<int64_t> predicted_;
};

struct Rates {
  double wall = 0, cpu = 0;  // GFLOP/s
};

// The bf16 yardstick and each fp32 variant's rate per shape, as measured in this run.
std::map<std::pair<int64_t, int64_t>, Rates>& gemm_bf16_rates() {
  static std::map<std::pair<int64_t, int64_t>, Rates> rates;
  return rates;
}
std::map<std::string, Rates>& fp32_variant_rates() {
  static std::map<std::string, Rates> rates;
  return rates;
}
std::map<std::string, Rates>& bf16_variant_rates() {
  static std::map<std::string, Rates> rates;
  return rates;
}

// The logit products' rates per shape, as last measured in this run: through the library (gemm) and
// through our own kernels (gemm_own).
std::map<std::pair<int64_t, int64_t>, Rates>& gemm_rates() {
  static std::map<std::pair<int64_t, int64_t>, Rates> rates;
  return rates;
}
std::map<std::pair<int64_t, int64_t>, Rates>& gemm_own_rates() {
  static std::map<std::pair<int64_t, int64_t>, Rates> rates;
  return rates;
}

Rates rates_of(const StepData& d, double per_pvd, const Timing& t) {
  return {flops(d, per_pvd) / t.wall / 1e9, flops(d, per_pvd) * kThreads / t.cpu / 1e9};
}

// The best of 3 untimed runs of `logits` (after a warm-up), as rates on 2·P·V·D.
template <class Logits>
Rates measure_now(const StepData& d, Logits&& logits) {
  logits();
  Timing best{1e300, 1e300};
  for (int rep = 0; rep < 3; ++rep) {
    const double c0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    logits();
    best.wall = std::min(best.wall, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    best.cpu = std::min(best.cpu, process_cpu_seconds() - c0);
  }
  return rates_of(d, 2, best);
}

// The yardstick of a shape: the faster of the library's and our own logit products (wall and CPU time
// each), from this run's gemm and gemm_own benchmarks, each measured now, untimed, when a filter left its
// benchmark out (gemm_own only where our kernels run).
Rates gemm_rate(const StepData& d) {
  const std::pair<int64_t, int64_t> key{d.V, d.D};
  if (!gemm_rates().count(key)) gemm_rates()[key] = measure_now(d, library_products(d, 1));
  Rates best = gemm_rates()[key];
  if (const cpu::OwnTileKernels* own = cpu::own_tile_kernels()) {
    if (!gemm_own_rates().count(key)) gemm_own_rates()[key] = measure_now(d, own_products(d, *own, 1));
    best.wall = std::max(best.wall, gemm_own_rates()[key].wall);
    best.cpu = std::max(best.cpu, gemm_own_rates()[key].cpu);
  }
  return best;
}

void report(benchmark::State& state, const StepData& d, const Timing& t, double per_pvd, const std::string& suffix = "") {
  const Rates r = rates_of(d, per_pvd, t), g = gemm_rate(d);
  state.counters["GFLOP/s" + suffix] = r.wall;
  state.counters["frac_gemm" + suffix] = r.wall / g.wall;
  state.counters["GFLOP/s_cpu" + suffix] = r.cpu;
  state.counters["frac_gemm_cpu" + suffix] = r.cpu / g.cpu;
}

void bench_gemm(benchmark::State& state, int64_t V, int64_t D) {
  const StepData& d = inputs(V, D);
  auto logits = library_products(d, 1);
  const Timing t = time_iterations(state, logits);
  gemm_rates()[{V, D}] = rates_of(d, 2, t);
  report(state, d, t, 2);
}

void bench_gemm_own(benchmark::State& state, int64_t V, int64_t D) {
  const cpu::OwnTileKernels* own = cpu::own_tile_kernels();
  if (!own) {
    state.SkipWithError("the micro-kernels of our own need AVX-512 (and LOBENCH_ISA not below avx512)");
    return;
  }
  const StepData& d = inputs(V, D);
  auto logits = own_products(d, *own, 1);
  const Timing t = time_iterations(state, logits);
  gemm_own_rates()[{V, D}] = rates_of(d, 2, t);
  report(state, d, t, 2);
}

void bench_gemm_products_own(benchmark::State& state, int64_t V, int64_t D) {
  const cpu::OwnTileKernels* own = cpu::own_tile_kernels();
  if (!own) {
    state.SkipWithError("the micro-kernels of our own need AVX-512 (and LOBENCH_ISA not below avx512)");
    return;
  }
  const StepData& d = inputs(V, D);
  auto three = own_products(d, *own, 3);
  report(state, d, time_iterations(state, three), 6);
}

void bench_gemm_products(benchmark::State& state, int64_t V, int64_t D) {
  const StepData& d = inputs(V, D);
  auto three = library_products(d, 3);
  report(state, d, time_iterations(state, three), 6);
}

// The element-wise work of the fused step alone (OwnEpilogue), as time per logit and as a share of the
// fused step's time and of the yardstick's logit product at the same shape in this run.
void bench_epilogue(benchmark::State& state, int64_t V, int64_t D) {
  const cpu::OwnTileKernels* own = cpu::own_tile_kernels();
  if (!own) {
    state.SkipWithError("the micro-kernels of our own need AVX-512 (and LOBENCH_ISA not below avx512)");
    return;
  }
  const StepData& d = inputs(V, D);
  OwnEpilogue epilogue(d, *own);
  const Timing t = time_iterations(state, epilogue);
  const double logits = double(d.P) * double(d.V);
  state.counters["ns_per_logit"] = t.wall / logits * 1e9;
  state.counters["ns_per_logit_cpu"] = t.cpu / kThreads / logits * 1e9;
  // (a time over the yardstick product's: the rates' inverse, 2·P·V·D flops)
  const Rates g = gemm_rate(d);
  state.counters["of_gemm_time"] = t.wall / (flops(d, 2) / g.wall / 1e9);
  state.counters["of_gemm_time_cpu"] = t.cpu / (flops(d, 2) * kThreads / g.cpu / 1e9);
  const std::string key = "fused/" + std::to_string(V) + "x" + std::to_string(D);
  if (auto it = fp32_variant_rates().find(key); it != fp32_variant_rates().end()) {
    state.counters["of_fused_time"] = t.wall / (flops(d, 6) / it->second.wall / 1e9);
    state.counters["of_fused_time_cpu"] = t.cpu / (flops(d, 6) * kThreads / it->second.cpu / 1e9);
  }
}

// Both ceilings once per iteration (0.4 s of bursts per thread), summed over the threads.
void bench_peaks(benchmark::State& state) {
  if (auto why = cpu::bf16_simd_unavailable()) {
    state.SkipWithError(why->c_str());
    return;
  }
  cpu::PeakRates sum;
  double amx_sum = 0, amx_total = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    cpu::PeakRates total;
#pragma omp parallel num_threads(kThreads)
    {
      const cpu::PeakRates r = *cpu::simd_peak_rates(0.4);
      const double amx = cpu::amx_peak_rate(0.2).value_or(0.0);
#pragma omp critical
      total.fp32_fma += r.fp32_fma, total.bf16_dot += r.bf16_dot, amx_total += amx;
    }
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    sum = total;
    amx_sum = amx_total;
    amx_total = 0;
  }
  state.counters["fp32_fma_GFLOP/s"] = sum.fp32_fma;
  state.counters["bf16_dot_GFLOP/s"] = sum.bf16_dot;
  state.counters["x_fp32"] = sum.bf16_dot / sum.fp32_fma;
  if (amx_sum > 0) {
    state.counters["amx_bf16_GFLOP/s"] = amx_sum;
    state.counters["x_fp32_amx"] = amx_sum / sum.fp32_fma;
  }
}

void bench_gemm_bf16(benchmark::State& state, int64_t V, int64_t D) {
  if (auto why = cpu::bf16_products_unavailable()) {
    state.SkipWithError(why->c_str());
    return;
  }
  const StepData& d = inputs(V, D);
  cpu::Bf16TileLogits logits(operands(d), fused_blocks(d));
  const Timing t = time_iterations(state, logits);
  gemm_bf16_rates()[{V, D}] = rates_of(d, 2, t);
  report(state, d, t, 2);
  state.counters["x_fp32"] = gemm_bf16_rates()[{V, D}].wall / gemm_rate(d).wall;
}

// The injected regression of the gate's tests (scripts/bench_check.sh --inject F): every variant
// benchmark's timed step then takes F times its process CPU time: after the step, the calling thread
// burns CPU until the process's CPU clock (all threads: an idle OpenMP worker's spin-wait counts too)
// reads F times what the step used. (Extra work instead, the variant on (F - 1)·V more entries, made a
// 1.3x "injection" measure 1.45-1.5x on the Zen 5, and a parallel burn of (F - 1) times the step's CPU
// seconds 1.36x: the workers' spin-waits around the extra region. The gate is tested against the
// slowdown it claims.)
double injected_slowdown() {
  const char* s = std::getenv("LOBENCH_INJECT_SLOWDOWN");
  if (!s || !*s) return 1.0;
  char* end = nullptr;
  const double f = std::strtod(s, &end);
  if (*end || !(f >= 1.0) || f > 16.0) {
    std::fprintf(stderr, "LOBENCH_INJECT_SLOWDOWN=%s is not a factor in [1, 16]\n", s);
    std::exit(2);
  }
  return f;
}

// Spins until the process CPU clock reaches `until` (seconds, process_cpu_seconds()).
void burn_cpu_until(double until) {
  volatile double sink = 0;
  while (process_cpu_seconds() < until) sink = sink + 1.0;
}

void bench_variant(benchmark::State& state, const std::string& name, const std::string& operand, int64_t V, int64_t D,
                   bool library_products = false) {
  const StepData& d = inputs(V, D);
  const Variant* v = Registry::instance().find(name);
  if (!v) {
    state.SkipWithError(("no variant " + name).c_str());
    return;
  }
  RunOptions options = bench_options();
  options.operand = operand;
  if (auto why = v->skip_reason(table2_shape(V, D), options)) {
    state.SkipWithError(why->c_str());
    return;
  }
  StepOutputs out;
  out.resize(d.P, d.V, d.D);
  const double slowdown = injected_slowdown();
  CountingAllocator alloc;
  gemm_rate(d);  // (measured now, before the products of our own may be switched off, if not yet)
  cpu::set_own_tile_kernels_enabled(!library_products);
  const Timing t = time_iterations(state, [&] {
    RunContext ctx{alloc, options};
    const double c0 = slowdown > 1.0 ? process_cpu_seconds() : 0.0;
    v->run(d.view(), out, ctx);
    if (slowdown > 1.0) burn_cpu_until(c0 + slowdown * (process_cpu_seconds() - c0));
  });
  cpu::set_own_tile_kernels_enabled(true);
  report(state, d, t, 6);
  if (name == "chunked") report(state, d, t, 8, "_8PVD");
  if (library_products) return;
  state.counters["peak_MiB"] = double(alloc.peak_bytes()) / (1 << 20);
  const std::string key = name + "/" + std::to_string(V) + "x" + std::to_string(D);
  const Rates r = rates_of(d, 6, t);
  if (operand == "fp32") {
    fp32_variant_rates()[key] = r;
    return;
  }
  if (auto it = gemm_bf16_rates().find({V, D}); it != gemm_bf16_rates().end())
    state.counters["frac_gemm_bf16"] = r.wall / it->second.wall;
  if (auto it = fp32_variant_rates().find(key); it != fp32_variant_rates().end())
    state.counters["x_fp32"] = r.wall / it->second.wall;
  if (operand == "bf16") bf16_variant_rates()[key] = r;
  else if (auto it = bf16_variant_rates().find(key); it != bf16_variant_rates().end()) {
    state.counters["x_bf16"] = r.wall / it->second.wall;
    state.counters["x_bf16_cpu"] = r.cpu / it->second.cpu;
  }
}

// The (V, D) shapes: LOBENCH_BENCH_SHAPES ("VxD,VxD") or the three reduced Table II shapes.
std::vector<std::pair<int64_t, int64_t>> bench_shapes() {
  const char* s = std::getenv("LOBENCH_BENCH_SHAPES");
  if (!s || !*s) return {{100000, 128}, {200000, 128}, {100000, 256}};
  std::vector<std::pair<int64_t, int64_t>> shapes;
  std::string list = s;
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    const std::string item = list.substr(at, comma - at);
    long long V = 0, D = 0;
    char tail = 0;
    if (std::sscanf(item.c_str(), "%lldx%lld%c", &V, &D, &tail) != 2 || V < 1 || D < 1 || V > (1LL << 31) || D > 65536) {
      std::fprintf(stderr, "LOBENCH_BENCH_SHAPES=%s: '%s' is not VxD (for example 20000x64)\n", s, item.c_str());
      std::exit(2);
    }
    shapes.emplace_back(V, D);
    at = comma + 1;
  }
  return shapes;
}

void register_all() {
  const std::vector<std::pair<int64_t, int64_t>> shapes = bench_shapes();
  benchmark::RegisterBenchmark("peak/fp32_fma_and_bf16_dot", bench_peaks)->UseManualTime()->Iterations(3)->Unit(benchmark::kMillisecond);
  for (const auto& [V, D] : shapes) {
    const std::string args = "/V:" + std::to_string(V) + "/D:" + std::to_string(D);
    auto tune = [](benchmark::internal::Benchmark* b) { b->UseManualTime()->Unit(benchmark::kMillisecond); };
    tune(benchmark::RegisterBenchmark(("gemm" + args).c_str(), bench_gemm, V, D));
    tune(benchmark::RegisterBenchmark(("gemm_own" + args).c_str(), bench_gemm_own, V, D));
    tune(benchmark::RegisterBenchmark(("gemm_products" + args).c_str(), bench_gemm_products, V, D));
    tune(benchmark::RegisterBenchmark(("gemm_products_own" + args).c_str(), bench_gemm_products_own, V, D));
    std::vector<std::string> names = {"fused", "chunked"};
    if (V <= 100000) names.push_back("dense");
    for (const std::string& name : names)
      tune(benchmark::RegisterBenchmark((name + args).c_str(), bench_variant, name, "fp32", V, D, false));
    tune(benchmark::RegisterBenchmark(("epilogue" + args).c_str(), bench_epilogue, V, D));
    for (const std::string name : {"fused", "chunked"})
      tune(benchmark::RegisterBenchmark((name + "_sgemm" + args).c_str(), bench_variant, name, "fp32", V, D, true));
    tune(benchmark::RegisterBenchmark(("gemm_bf16" + args).c_str(), bench_gemm_bf16, V, D));
    for (const std::string& name : names)
      tune(benchmark::RegisterBenchmark((name + "_bf16" + args).c_str(), bench_variant, name, "bf16", V, D, false));
    tune(benchmark::RegisterBenchmark(("fused_e4m3" + args).c_str(), bench_variant, "fused", "e4m3", V, D, false));
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const auto& c = lobench::cpu::cache_sizes();
  benchmark::AddCustomContext("simd_path", lobench::cpu::to_string(lobench::cpu::active_bce_tile_kernels().path));
  benchmark::AddCustomContext("threads", std::to_string(kThreads));
  // The machine as run files describe it (their cpu_model and hardware_threads attributes, from the same
  // definitions), so that one machine can get one fingerprint from both (plots/perf_runs.py).
  benchmark::AddCustomContext("cpu_model", lobench::cpu::cpu_model_name());
  benchmark::AddCustomContext("cpu_id", lobench::cpu::cpu_identity());
  benchmark::AddCustomContext("cpu_simd", lobench::cpu::cpu_simd_flags());
  benchmark::AddCustomContext("hardware_threads", std::to_string(std::thread::hardware_concurrency()));
  // The yardstick's library and kernels (e.g. OpenBLAS's core type): runs with a different yardstick are a
  // different series for the gate (plots/perf_runs.py puts it in the machine fingerprint).
  benchmark::AddCustomContext("gemm_library", lobench::cpu::sgemm_library_name());
  const auto bf16_why = lobench::cpu::bf16_products_unavailable();
  benchmark::AddCustomContext("bf16_products", bf16_why ? "skipped: " + *bf16_why
                                                      : std::string("own micro-kernel, ") +
                                                            lobench::cpu::to_string(lobench::cpu::active_bf16_kernel()) +
                                                            " (amx_bf16 where the CPU has AMX-BF16, else the faster of "
                                                            "avx512_bf16 and avx512_fma)");
  benchmark::AddCustomContext("caches", "L1d " + std::to_string(c.l1d >> 10) + " KiB, L2 " + std::to_string(c.l2 >> 10) +
                                            " KiB, L3 " + std::to_string(c.l3 >> 20) + " MiB (" + c.source + ")");
  for (int64_t D : {128, 256}) {
    const auto b = lobench::cpu::choose_blocks(1024, 100000, D, bench_options());
    benchmark::AddCustomContext("tile_D" + std::to_string(D), lobench::cpu::tile_description(b));
    RunOptions bf16 = bench_options();
    bf16.operand = "bf16";
    benchmark::AddCustomContext("tile_bf16_D" + std::to_string(D),
                                lobench::cpu::tile_description(lobench::cpu::choose_blocks(1024, 100000, D, bf16)));
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
