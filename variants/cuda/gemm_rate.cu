#include "variants/cuda/gemm_rate.hpp"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "variants/cuda/cuda_check.hpp"
#include "variants/cuda/device_allocator.hpp"
#include "variants/timing.hpp"

namespace lobench::cuda {
namespace {

// Uniform in [-1, 1) from a hash of (seed, index): random enough for a GEMM, no cuRAND needed.
__device__ float hashed_uniform(uint64_t seed, uint64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return float(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

__global__ void fill_uniform(float* x, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    x[i] = hashed_uniform(seed, uint64_t(i));
}

__global__ void to_bf16(const float* x, __nv_bfloat16* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = __float2bfloat16_rn(x[i]);
}

int grid_for(int64_t n) { return int(std::clamp<int64_t>((n + 255) / 256, 1, 4096)); }

// A plain device buffer freed on scope exit (the yardstick is not a variant: its memory is not counted).
struct Raw {
  void* p = nullptr;
  explicit Raw(size_t bytes) { LOBENCH_CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(bytes, 1))); }
  ~Raw() { cudaFree(p); }
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;
};

struct Handle {
  cublasHandle_t h = nullptr;
  Handle() { LOBENCH_CUBLAS_CHECK(cublasCreate(&h)); }
  ~Handle() { cublasDestroy(h); }
};

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    LOBENCH_CUDA_CHECK(cudaEventCreate(&start));
    LOBENCH_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
};

}  // namespace

double GpuGemmRates::for_operand(const std::string& operand) const {
  if (operand.empty() || operand == "fp32") return fp32_gflops;
  if (operand == "tf32") return tf32_gflops;
  if (operand == "bf16") return bf16_gflops;
  return std::numeric_limits<double>::quiet_NaN();
}

GpuGemmRates measure_gpu_gemm_rates(int64_t m, int64_t n, int64_t k) {
  std::string why;
  if (!device_available(&why)) throw std::runtime_error(why);
  if (m < 1 || n < 1 || k < 1) throw std::invalid_argument("measure_gpu_gemm_rates: m, n, k must be positive");
  GpuGemmRates rates;
  rates.device_name = gpu_device_name();

  Raw a32(size_t(m * k) * sizeof(float)), b32(size_t(n * k) * sizeof(float));
  Raw a16(size_t(m * k) * sizeof(__nv_bfloat16)), b16(size_t(n * k) * sizeof(__nv_bfloat16));
  Raw c(size_t(m * n) * sizeof(float));
  fill_uniform<<<grid_for(m * k), 256>>>(static_cast<float*>(a32.p), m * k, 1);
  LOBENCH_CUDA_CHECK_LAUNCH();
  fill_uniform<<<grid_for(n * k), 256>>>(static_cast<float*>(b32.p), n * k, 2);
  LOBENCH_CUDA_CHECK_LAUNCH();
  to_bf16<<<grid_for(m * k), 256>>>(static_cast<const float*>(a32.p), static_cast<__nv_bfloat16*>(a16.p), m * k);
  LOBENCH_CUDA_CHECK_LAUNCH();
  to_bf16<<<grid_for(n * k), 256>>>(static_cast<const float*>(b32.p), static_cast<__nv_bfloat16*>(b16.p), n * k);
  LOBENCH_CUDA_CHECK_LAUNCH();
  LOBENCH_CUDA_CHECK(cudaDeviceSynchronize());

  Handle handle;
  LOBENCH_CUBLAS_CHECK(cublasSetMathMode(handle.h, CUBLAS_DEFAULT_MATH));
  Events ev;
  const float alpha = 1.0f, beta = 0.0f;
  const double flops = 2.0 * double(m) * double(n) * double(k);

  // Row-major C[m×n] = A[m×k]·B[n×k]ᵀ is column-major Cᵀ[n×m] = op(B)·A with B read transposed: the
  // "TN" product, as the logits A·Eᵀ are computed.
  auto rate = [&](const void* A, const void* B, cudaDataType_t in_type, cublasComputeType_t compute) {
    auto gemm = [&] {
      LOBENCH_CUBLAS_CHECK(cublasGemmEx(handle.h, CUBLAS_OP_T, CUBLAS_OP_N, int(n), int(m), int(k), &alpha, B, in_type,
                                        int(k), A, in_type, int(k), &beta, c.p, CUDA_R_32F, int(n), compute,
                                        CUBLAS_GEMM_DEFAULT));
    };
    auto timed = [&](int count) {
      LOBENCH_CUDA_CHECK(cudaEventRecord(ev.start));
      for (int i = 0; i < count; ++i) gemm();
      LOBENCH_CUDA_CHECK(cudaEventRecord(ev.stop));
      LOBENCH_CUDA_CHECK(cudaEventSynchronize(ev.stop));
      float ms = 0;
      LOBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.start, ev.stop));
      return double(ms) * 1e-3;
    };
    timed(2);  // warm-up: cuBLAS's heuristics, workspace, clocks
    const int inner = calls_per_sample(timed(1), 2e-3, 1000);
    // The timing rule (variants/timing.hpp): 7 samples of `inner` products each, on the device's clock.
    const Samples per_product = collect_samples([&] { return timed(inner) / inner; }, 0, RepPolicy::fixed(7));
    return flops / per_product.median() / 1e9;
  };
  rates.fp32_gflops = rate(a32.p, b32.p, CUDA_R_32F, CUBLAS_COMPUTE_32F);
  rates.tf32_gflops = rate(a32.p, b32.p, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32);
  rates.bf16_gflops = rate(a16.p, b16.p, CUDA_R_16BF, CUBLAS_COMPUTE_32F);
  return rates;
}

std::string gpu_device_name() {
  if (!device_available(nullptr)) return "";
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  return prop.name;
}

bool gpu_memory_info(int64_t* free_bytes, int64_t* total_bytes) {
  if (!device_available(nullptr)) return false;
  size_t f = 0, t = 0;
  if (cudaMemGetInfo(&f, &t) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  if (free_bytes) *free_bytes = int64_t(f);
  if (total_bytes) *total_bytes = int64_t(t);
  return true;
}

}  // namespace lobench::cuda
