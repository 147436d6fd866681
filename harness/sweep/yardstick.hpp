// The yardsticks a row's rate is compared with, measured in the same run: for CPU rows Eigen's SGEMM
// rate at the point's (P, D, threads), re-measured before each group of rows (these machines are shared
// and their speed drifts); for GPU rows cuBLAS's rates per operand precision on one 8192³ product,
// measured once, when the first GPU row is about to run.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

namespace lobench::sweep {

struct GpuRates {
  double fp32 = 0, tf32 = 0, bf16 = 0;  // GFLOP/s
  std::string device_name;
  double for_operand(const std::string& op) const;
};
// The GPU yardstick's product: the matrix units' practical peak per operand precision. (A logit-shaped
// product, m = P, n = 8192, k = D = 128, is bounded by writing C and would flatter a kernel that never
// stores logits; variants/cuda/bench/cuda_step_bench reports both.)
inline constexpr int64_t kGpuGemmN = 8192;

class Yardsticks {
 public:
  // Measures the CPU SGEMM rate for this (P, D, threads) now and remembers it.
  double measure_cpu(int64_t P, int64_t D, int threads);
  // The last rate measured at this (P, D, threads), if any.
  std::optional<double> last_cpu(int64_t P, int64_t D, int threads) const;
  // cuBLAS rates, measured on the first call; nothing (with the reason in *why) without a device.
  const std::optional<GpuRates>& gpu(std::string* why);

 private:
  std::map<std::tuple<int64_t, int64_t, int>, double> cpu_;
  bool gpu_measured_ = false;
  std::optional<GpuRates> gpu_;
  std::string gpu_why_;
};

// Free and total device memory now; nothing without a usable device (or without CUDA).
std::optional<std::pair<int64_t, int64_t>> gpu_memory();

}  // namespace lobench::sweep
