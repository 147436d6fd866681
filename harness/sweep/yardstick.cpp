#include "harness/sweep/yardstick.hpp"

#include <algorithm>
#include <cmath>

#include "harness/measure.hpp"

#if LOBENCH_HAS_CUDA
#include "variants/cuda/gemm_rate.hpp"
#endif

namespace lobench::sweep {

double GpuRates::for_operand(const std::string& op) const { return op == "tf32" ? tf32 : op == "bf16" ? bf16 : fp32; }

const meters::MachineLimits& Yardsticks::machine(int threads) {
  auto it = machine_.find(threads);
  if (it == machine_.end()) it = machine_.emplace(threads, meters::measure_machine_limits(threads, sgemm_n_)).first;
  return it->second;
}

// At least 2048³: on AMX a 512³ product takes about 0.1 ms, less than a scheduler time slice on a
// shared machine, and its samples measure the waiting (12 GFLOP/s seen at load 8, against 2 300 from CPU
// time); 2048³ takes milliseconds.
int64_t Yardsticks::bf16_n() const { return std::max<int64_t>(sgemm_n_, 2048); }

namespace {

// The two bf16 square products (ours and oneDNN's) into m.
void measure_bf16(meters::MachineLimits& m, int64_t n, int threads) {
  m.bf16 = meters::bf16_square_gemm(n, threads);
  m.bf16_onednn = meters::onednn_bf16_square_gemm(n, threads);
}

}  // namespace

const meters::MachineLimits& Yardsticks::machine_with_bf16(int threads) {
  meters::MachineLimits& m = machine_.at(threads);
  if (m.bf16.n == 0) measure_bf16(m, bf16_n(), threads);
  return m;
}

const meters::MachineLimits& Yardsticks::remeasure_machine(int threads) {
  meters::MachineLimits again = meters::measure_machine_limits(threads, sgemm_n_);
  meters::MachineLimits& kept = machine_[threads];
  if (kept.bf16.n != 0) measure_bf16(again, bf16_n(), threads);
  auto higher = [](const meters::SgemmRate& a, const meters::SgemmRate& b) { return !(a.gflops <= b.gflops) ? a : b; };
  const meters::SgemmRate best_bf16 = higher(again.bf16, kept.bf16), best_bf16_onednn = higher(again.bf16_onednn, kept.bf16_onednn);
  if (!(again.best_sgemm_gflops() <= kept.best_sgemm_gflops())) kept = std::move(again);
  kept.bf16 = best_bf16, kept.bf16_onednn = best_bf16_onednn;  // (each yardstick kept at its highest)
  return kept;
}

const meters::ShapeGemmRate& Yardsticks::shape(int64_t P, int64_t V, int64_t D, int threads,
                                               meters::ShapeProducts products) {
  const auto key = std::tuple(P, V, D, threads, products);
  auto it = shape_.find(key);
  if (it == shape_.end()) {
    meters::ShapeGemmRate r = meters::measure_shape_gemm(P, V, D, threads, products, meters::kShapeSampleSeconds);
    it = shape_.emplace(key, std::move(r)).first;
  }
  return it->second;
}

const meters::ShapeGemmRate& Yardsticks::remeasure_shape(int64_t P, int64_t V, int64_t D, int threads,
                                                         meters::ShapeProducts products) {
  meters::ShapeGemmRate& kept = shape_.at(std::tuple(P, V, D, threads, products));
  meters::ShapeGemmRate again = meters::measure_shape_gemm(P, V, D, threads, products, meters::kShapeSampleSeconds);
  if (again.gflops > kept.gflops) kept = std::move(again);
  return kept;
}

double local_sample_seconds(double step_flops, double machine_gflops) {
  constexpr double kShortest = 0.003, kLongest = 0.03;
  const double step_s = step_flops / (machine_gflops * 1e9);
  if (!(std::isfinite(step_s) && step_s > 0)) return kLongest;
  return std::clamp(step_s, kShortest, kLongest);
}

double Yardsticks::measure_local(int64_t P, int64_t D, int threads, double sample_s) {
  const double r = measure_sgemm_gflops(P, D, 512, threads, sample_s);
  cpu_[std::tuple(P, D, threads)] = r;
  return r;
}

std::optional<double> Yardsticks::last_local(int64_t P, int64_t D, int threads) const {
  const auto it = cpu_.find(std::tuple(P, D, threads));
  if (it == cpu_.end()) return std::nullopt;
  return it->second;
}

const std::optional<GpuRates>& Yardsticks::gpu(std::string* why) {
  if (!gpu_measured_) {
    gpu_measured_ = true;
#if LOBENCH_HAS_CUDA
    try {
      const cuda::GpuGemmRates r = cuda::measure_gpu_gemm_rates(kGpuGemmN, kGpuGemmN, kGpuGemmN);
      gpu_ = GpuRates{r.fp32_gflops, r.tf32_gflops, r.bf16_gflops, r.device_name};
    } catch (const std::exception& e) {
      gpu_why_ = e.what();
    }
#else
    gpu_why_ = "CUDA not compiled in";
#endif
  }
  if (why) *why = gpu_why_;
  return gpu_;
}

std::optional<std::pair<int64_t, int64_t>> gpu_memory() {
#if LOBENCH_HAS_CUDA
  int64_t free_bytes = 0, total_bytes = 0;
  if (cuda::gpu_memory_info(&free_bytes, &total_bytes)) return std::pair(free_bytes, total_bytes);
#endif
  return std::nullopt;
}

}  // namespace lobench::sweep
