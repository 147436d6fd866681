// Google Benchmark timings of the GPU variants at the target shapes, beside the GPU's own GEMM
// rates measured in the same run (docs/method.md#the-yardstick: ratios within one run are what compare).
//
// Benchmarks (manual time: the device time of one step from CUDA events, one untimed warm-up step per
// benchmark; the variants' sessions flush L2 before each step, the SR-SGD step uploads W first, so up to
// one pass over W may hit L2):
//   {cuda_fused,cuda_chunked,cuda_dense}/B:…/N:…/V:…/op:{bf16,fp32}   one loss-and-gradient step (D = 128, L = 8)
//   fused_sr_sgd/W:{bfloat16,float8_e4m3fn}/B:128/N:128/V:100000      the ELMO step: loss, counts, dA and the
//                                                                     SGD update with stochastic rounding, dW never stored
// Shapes: B = N = 128, V = 100k (the 3 ms target for the bf16 fused step) and B = N = 32, V = 1M
// (chunked against PyTorch's dense BCE: lobench/peer_torch_dense.py, in the same check).
// Counters:
//   TFLOP/s            6·P·V·D / time (the useful work of one step, whatever the algorithm computes)
//   frac_gemm_square   TFLOP/s over cuBLAS's rate for an 8192³ product in the operand precision (the
//                      matrix units' practical peak)
//   frac_gemm_logits   TFLOP/s over cuBLAS's rate for the logit product's own shape (m = P, n = 8192,
//                      k = 128), which at k = 128 is bounded by writing C, not by the matrix units
//   peak_MiB           working memory, counted by the device allocator (exact; = the prediction)
//
//   build/variants/cuda_step_bench --benchmark_out=cuda_step.json --benchmark_out_format=json
// Without a device it prints why and exits 0.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "variants/cuda/device_allocator.hpp"
#include "variants/cuda/fused_sr_sgd.hpp"
#include "variants/cuda/gemm_rate.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "variants/variant.hpp"

namespace {

using namespace lobench;

constexpr int64_t kD = 128, kL = 8;

Shape shape_of(int64_t B, int64_t N, int64_t V) { return Shape{B, N, V, kD, kL, Reduction::mean, false}; }

const StepData& inputs(int64_t B, int64_t N, int64_t V) {
  static std::map<std::tuple<int64_t, int64_t, int64_t>, std::unique_ptr<StepData>> cache;
  auto& slot = cache[{B, N, V}];
  if (!slot) slot = std::make_unique<StepData>(make_synthetic(shape_of(B, N, V), SyntheticSpec{}));
  return *slot;
}

// GEMM rates (GFLOP/s) measured once at start-up.
cuda::GpuGemmRates g_square, g_logits_32, g_logits_128;

const cuda::GpuGemmRates& logits_rates(int64_t P) { return P >= 16384 ? g_logits_128 : g_logits_32; }

void set_counters(benchmark::State& state, const Shape& s, const std::string& operand, double median_s,
                  int64_t peak_bytes) {
  const double tflops = 6.0 * double(s.P()) * double(s.V) * double(s.D) / median_s / 1e12;
  state.counters["TFLOP/s"] = tflops;
  state.counters["frac_gemm_square"] = tflops * 1e3 / g_square.for_operand(operand);
  state.counters["frac_gemm_logits"] = tflops * 1e3 / logits_rates(s.P()).for_operand(operand);
  state.counters["peak_MiB"] = double(peak_bytes) / 1048576.0;
}

void bench_variant(benchmark::State& state, const std::string& name, int64_t B, int64_t N, int64_t V,
                   const std::string& operand) {
  const Variant* v = Registry::instance().find(name);
  if (!v) {
    state.SkipWithError(("no variant " + name).c_str());
    return;
  }
  const Shape s = shape_of(B, N, V);
  RunOptions o;
  o.operand = operand;
  if (auto why = v->skip_reason(s, o)) {
    state.SkipWithError(why->c_str());
    return;
  }
  // A CUDA error or an out-of-memory fails this benchmark only, not the whole run (and its JSON).
  try {
    const StepData& d = inputs(B, N, V);
    auto session = v->open_session(d.view(), o);
    session->run_timed();  // warm-up: module load, cuBLAS heuristics
    std::vector<double> samples;
    for (auto _ : state) {
      const double t = session->run_timed();
      samples.push_back(t);
      state.SetIterationTime(t);
    }
    std::sort(samples.begin(), samples.end());
    set_counters(state, s, operand, samples[samples.size() / 2], session->peak_working_bytes());
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void bench_sr_sgd(benchmark::State& state, const std::string& format) {
  const int64_t B = 128, N = 128, V = 100000;
  const Shape s = shape_of(B, N, V);
  try {
    const StepData& d = inputs(B, N, V);
    const precision::Quantizer q(precision::parse_format(format));
    std::vector<float> W(d.E.size());
    q.round(d.E, W);
    cuda::SrSgdOptions o;
    o.format = format;
    StepOutputs out;
    cuda::fused_sr_sgd_step(d.view(), W, o, 0.01f, 0, out);  // warm-up
    std::vector<double> samples;
    int64_t peak = 0;
    uint64_t step = 1;
    for (auto _ : state) {
      const cuda::SrSgdReport r = cuda::fused_sr_sgd_step(d.view(), W, o, 0.01f, step++, out);
      samples.push_back(r.seconds);
      peak = r.peak_working_bytes;
      state.SetIterationTime(r.seconds);
    }
    std::sort(samples.begin(), samples.end());
    set_counters(state, s, "bf16", samples[samples.size() / 2], peak);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string why;
  if (!cuda::device_available(&why)) {
    std::printf("cuda_step_bench: skipped, no CUDA device: %s\n", why.c_str());
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  g_square = cuda::measure_gpu_gemm_rates(8192, 8192, 8192);
  g_logits_32 = cuda::measure_gpu_gemm_rates(1024, 8192, kD);
  g_logits_128 = cuda::measure_gpu_gemm_rates(16384, 8192, kD);
  benchmark::AddCustomContext("gpu", g_square.device_name);
  for (const auto& [label, r] : {std::pair{"square_8192", &g_square}, std::pair{"logits_P1024", &g_logits_32},
                                 std::pair{"logits_P16384", &g_logits_128}}) {
    benchmark::AddCustomContext(std::string("gemm_") + label + "_gflops",
                                "fp32 " + std::to_string(r->fp32_gflops) + ", tf32 " + std::to_string(r->tf32_gflops) +
                                    ", bf16 " + std::to_string(r->bf16_gflops));
  }
  for (const auto& shape : {std::tuple<int64_t, int64_t, int64_t>{128, 128, 100000}, {32, 32, 1000000}})
    for (const char* op : {"bf16", "fp32"})
      for (const char* name : {"cuda_fused", "cuda_chunked", "cuda_dense"}) {
        const auto [B, N, V] = shape;  // copied: lambdas capture variables, not structured bindings (pre-C++20 compilers)
        const int64_t b = B, n = N, v = V;
        const std::string label = std::string(name) + "/B:" + std::to_string(B) + "/N:" + std::to_string(N) +
                                  "/V:" + std::to_string(V) + "/op:" + op;
        benchmark::RegisterBenchmark(label.c_str(), [=](benchmark::State& st) { bench_variant(st, name, b, n, v, op); })
            ->UseManualTime()
            ->Iterations(10)
            ->Unit(benchmark::kMillisecond);
      }
  for (const char* format : {"bfloat16", "float8_e4m3fn"}) {
    const std::string label = std::string("fused_sr_sgd/W:") + format + "/B:128/N:128/V:100000";
    benchmark::RegisterBenchmark(label.c_str(), [=](benchmark::State& st) { bench_sr_sgd(st, format); })
        ->UseManualTime()
        ->Iterations(10)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
