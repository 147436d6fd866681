// Every CUDA runtime and cuBLAS call is checked; a failure throws with the call, the file:line and the
// library's own name and description of the error (a GPU variant's failure is then one "failed" row in
// the sweep, with the reason, never a crash).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace lobench::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  throw std::runtime_error(std::string("CUDA error ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                           ") in " + call + " at " + file + ":" + std::to_string(line));
}

[[noreturn]] inline void throw_cublas_error(cublasStatus_t s, const char* call, const char* file, int line) {
  throw std::runtime_error(std::string("cuBLAS error ") + cublasGetStatusName(s) + " (" + cublasGetStatusString(s) +
                           ") in " + call + " at " + file + ":" + std::to_string(line));
}

}  // namespace lobench::cuda

#define LOBENCH_CUDA_CHECK(call)                                                         \
  do {                                                                                   \
    const cudaError_t lobench_e_ = (call);                                               \
    if (lobench_e_ != cudaSuccess) ::lobench::cuda::throw_cuda_error(lobench_e_, #call, __FILE__, __LINE__); \
  } while (0)

#define LOBENCH_CUBLAS_CHECK(call)                                                              \
  do {                                                                                          \
    const cublasStatus_t lobench_s_ = (call);                                                   \
    if (lobench_s_ != CUBLAS_STATUS_SUCCESS)                                                    \
      ::lobench::cuda::throw_cublas_error(lobench_s_, #call, __FILE__, __LINE__);               \
  } while (0)

// After a kernel launch: a bad launch configuration shows here, a fault in the kernel at the next
// synchronising call.
#define LOBENCH_CUDA_CHECK_LAUNCH() LOBENCH_CUDA_CHECK(cudaGetLastError())
