// The yardsticks a row's rate is compared with, measured in the same run. CPU rows: the machine's limits
// on the row's threads (the best of Eigen's, OpenBLAS's and our own micro-kernels' SGEMM at a large square size, and the FMA
// peak; harness/meters/), measured once per thread count before the first such row; the logit product at
// the row's shape through its operands' products (meters/shape_gemm.hpp), once per (P, V, D, threads,
// products); and a local
// yardstick, Eigen's SGEMM of the point's tile shape ([P×D]·[D×512]), measured before and after each
// point, whose drift flags a row measured while the machine was busy (these machines are shared).
// GPU rows: cuBLAS's rates per operand precision on one 8192³ product, measured once, when the first
// GPU row is about to run.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "harness/meters/machine_limits.hpp"
#include "harness/meters/shape_gemm.hpp"

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

// How long each sample of the local yardstick around a point lasts: about one step of the point at the
// machine's best SGEMM rate, within [3 ms, 30 ms]. The yardstick watches the machine on the point's own
// time scale; at 30 ms for every point, the two yardsticks around a step of 50 µs cost 0.3 s, thousands of
// times the point (a small sweep, a test) while saying no more about it. A step of unknown work gets 30 ms.
double local_sample_seconds(double step_flops, double machine_gflops);

class Yardsticks {
 public:
  explicit Yardsticks(int64_t sgemm_n = 4096) : sgemm_n_(sgemm_n) {}
  // The machine's limits on `threads` threads, measured on the first call for that count.
  const meters::MachineLimits& machine(int threads);
  // Measures the limits on `threads` again (a row ran faster than them: the first measurement was taken
  // on a busy machine) and keeps the new ones if their best SGEMM is higher; returns the kept ones.
  const meters::MachineLimits& remeasure_machine(int threads);
  // The bf16 yardstick on `threads` (MachineLimits::bf16), measured on the first call for that count;
  // machine(threads) must have been measured. Returns the limits with it.
  const meters::MachineLimits& machine_with_bf16(int threads);
  // The limits measured so far (none before the first CPU row).
  const std::map<int, meters::MachineLimits>& machines() const { return machine_; }
  // The logit product at (P, V, D) on `threads` through `products` (meters/shape_gemm.hpp, samples of at
  // most kShapeSampleSeconds), measured on the first call for that shape and products.
  const meters::ShapeGemmRate& shape(int64_t P, int64_t V, int64_t D, int threads, meters::ShapeProducts products);
  bool has_shape(int64_t P, int64_t V, int64_t D, int threads, meters::ShapeProducts products) const {
    return shape_.count(std::tuple(P, V, D, threads, products)) != 0;
  }
  // Measures it again (a row ran faster than its yardstick; shape() measured it first) and keeps the faster
  // of the two.
  const meters::ShapeGemmRate& remeasure_shape(int64_t P, int64_t V, int64_t D, int threads,
                                               meters::ShapeProducts products);
  // Measures the local SGEMM rate for this (P, D, threads) now, in samples of about sample_s
  // (local_sample_seconds), and remembers it.
  double measure_local(int64_t P, int64_t D, int threads, double sample_s);
  // The last local rate measured at this (P, D, threads), if any.
  std::optional<double> last_local(int64_t P, int64_t D, int threads) const;
  // cuBLAS rates, measured on the first call; nothing (with the reason in *why) without a device.
  const std::optional<GpuRates>& gpu(std::string* why);

 private:
  int64_t bf16_n() const;  // the bf16 product's size
  int64_t sgemm_n_;
  std::map<int, meters::MachineLimits> machine_;
  std::map<std::tuple<int64_t, int64_t, int>, double> cpu_;
  std::map<std::tuple<int64_t, int64_t, int64_t, int, meters::ShapeProducts>, meters::ShapeGemmRate> shape_;
  bool gpu_measured_ = false;
  std::optional<GpuRates> gpu_;
  std::string gpu_why_;
};

// Free and total device memory now; nothing without a usable device (or without CUDA).
std::optional<std::pair<int64_t, int64_t>> gpu_memory();

}  // namespace lobench::sweep
