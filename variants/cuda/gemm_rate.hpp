// The GPU yardstick: cuBLAS's GEMM rate on the device, for the logit product's shape, in each operand
// precision a GPU variant can compute in (docs/method.md#the-yardstick: the machine's own GEMM rate,
// measured in the same run). Plain C++ so that the harness can include it without CUDA headers.
#pragma once

#include <cstdint>
#include <string>

namespace lobench::cuda {

// GFLOP/s (2·m·n·k per product) of cublasGemmEx for C[m×n] = A[m×k]·B[n×k]ᵀ (row-major; the logits
// A·Eᵀ of m = P positions against n items at k = D), fp32 output, accumulation in fp32:
//   fp32: float inputs, CUBLAS_COMPUTE_32F (no tensor cores);
//   tf32: float inputs, CUBLAS_COMPUTE_32F_FAST_TF32 (tensor cores, 10-bit mantissa);
//   bf16: bfloat16 inputs (CUDA_R_16BF), CUBLAS_COMPUTE_32F.
// At small k (D = 128) C's write dominates the tensor-core products, so tf32 and bf16 are bounded by
// memory bandwidth: a kernel that never stores its logits (fused) can exceed them.
struct GpuGemmRates {
  double fp32_gflops = 0, tf32_gflops = 0, bf16_gflops = 0;
  std::string device_name;
  // The rate for an operand name ("fp32" or "", "tf32", "bf16"); NaN for any other name.
  double for_operand(const std::string& operand) const;
};

// Inputs are uniform random in [-1, 1) (never zeros: zeros flatter some tensor-core paths), one
// untimed warm-up, then each sample times enough back-to-back products on CUDA events for about 2 ms;
// the median of 7 samples. Runs on the current device; throws std::runtime_error on any CUDA or cuBLAS
// error (none there: check device_available() first).
GpuGemmRates measure_gpu_gemm_rates(int64_t m, int64_t n, int64_t k);

// The current device's name ("NVIDIA H200"); "" when no device can be used.
std::string gpu_device_name();

// Free and total bytes of the current device's memory (cudaMemGetInfo); false when no device can be
// used.
bool gpu_memory_info(int64_t* free_bytes, int64_t* total_bytes);

}  // namespace lobench::cuda
