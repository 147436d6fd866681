#include "harness/meters/fma_peak.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "harness/measure.hpp"
#include "precision_sim/cpu_dispatch.hpp"

namespace lobench::meters {
namespace {

// Every loop returns a value computed from all its chains, so that no chain is dead code; a chain is
// x ← x·m + c with m just below 1, which neither overflows nor underflows over any run length.
constexpr float kM = 0.99999f, kC = 1e-6f;
volatile double g_sink = 0;

__attribute__((target("avx2,fma"))) double fma_chains_avx2(int64_t iters, float seed) {
  constexpr int kChains = 12;
  __m256 x[kChains];
  for (int j = 0; j < kChains; ++j) x[j] = _mm256_set1_ps(seed + float(j));
  const __m256 m = _mm256_set1_ps(kM), c = _mm256_set1_ps(kC);
  for (int64_t i = 0; i < iters; ++i)
    for (int j = 0; j < kChains; ++j) x[j] = _mm256_fmadd_ps(x[j], m, c);
  __m256 s = x[0];
  for (int j = 1; j < kChains; ++j) s = _mm256_add_ps(s, x[j]);
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  return double(out[0]) + out[7];
}
constexpr double kFlopsPerIterAvx2 = 12 * 8 * 2;

__attribute__((target("avx512f"))) double fma_chains_avx512(int64_t iters, float seed) {
  constexpr int kChains = 16;
  __m512 x[kChains];
  for (int j = 0; j < kChains; ++j) x[j] = _mm512_set1_ps(seed + float(j));
  const __m512 m = _mm512_set1_ps(kM), c = _mm512_set1_ps(kC);
  for (int64_t i = 0; i < iters; ++i)
    for (int j = 0; j < kChains; ++j) x[j] = _mm512_fmadd_ps(x[j], m, c);
  __m512 s = x[0];
  for (int j = 1; j < kChains; ++j) s = _mm512_add_ps(s, x[j]);
  return double(_mm512_reduce_add_ps(s));
}
constexpr double kFlopsPerIterAvx512 = 16 * 16 * 2;

double fma_chains_portable(int64_t iters, float seed) {
  constexpr int kChains = 8;
  float x[kChains];
  for (int j = 0; j < kChains; ++j) x[j] = seed + float(j);
  for (int64_t i = 0; i < iters; ++i)
    for (int j = 0; j < kChains; ++j) x[j] = std::fma(x[j], kM, kC);
  double s = 0;
  for (float v : x) s += v;
  return s;
}
constexpr double kFlopsPerIterPortable = 8 * 2;

// One thread's rate: its fastest run of about 2 ms among `runs`. Runs that short let one of them fall in a
// time slice the scheduler gives this thread alone on a shared machine: a peak is the rate when
// nothing competes. (Each thread times itself: a fork or barrier per run would time the scheduler's
// wake-up latency, tens of ms on an oversubscribed machine, instead of the FMA units.)
template <typename Loop>
double thread_peak(Loop loop, double flops_per_iter, float seed, int runs) {
  double sink = 0;
  auto fastest_of = [&](int64_t n, int count) {  // lobench's one timing rule, a fixed count, the fastest run
    return collect_samples([&] { return seconds_of([&] { sink += loop(n, seed); }); }, 0, RepPolicy::fixed(count)).min();
  };
  int64_t iters = 1 << 10;
  while (fastest_of(iters, 3) < 0.001 && iters < (int64_t(1) << 40)) iters *= 2;
  iters = int64_t(double(iters) * 0.002 / std::max(fastest_of(iters, 3), 1e-7)) + 1;
  const double best = fastest_of(iters, runs);
  g_sink = g_sink + sink;  // every chain's value is observable, so none is dead code
  return flops_per_iter * double(iters) / best / 1e9;
}

// The threads run at once (one parallel region), each timing itself; the peak is the sum of their rates.
template <typename Loop>
double peak_of(Loop loop, double flops_per_iter, int threads, int runs) {
  double total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  total += thread_peak(loop, flops_per_iter, float(omp_get_thread_num()), runs);
  return total;
}

}  // namespace

FmaPeak fma_peak(int threads, int runs) {
  using cpu_dispatch::Isa;
  FmaPeak p;
  const Isa isa = cpu_dispatch::cpu_supports(Isa::avx512) ? Isa::avx512
                  : cpu_dispatch::cpu_supports(Isa::avx2) ? Isa::avx2
                                                          : Isa::portable;
  p.isa = std::string(cpu_dispatch::name(isa));
  switch (isa) {
    case Isa::avx512: p.gflops = peak_of(fma_chains_avx512, kFlopsPerIterAvx512, threads, runs); break;
    case Isa::avx2: p.gflops = peak_of(fma_chains_avx2, kFlopsPerIterAvx2, threads, runs); break;
    case Isa::portable: p.gflops = peak_of(fma_chains_portable, kFlopsPerIterPortable, threads, runs); break;
  }
  return p;
}

}  // namespace lobench::meters
