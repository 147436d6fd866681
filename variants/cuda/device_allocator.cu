#include "variants/cuda/device_allocator.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "variants/cuda/cuda_check.hpp"

namespace lobench::cuda {

void* DeviceAllocator::allocate(size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls are not blamed
    throw std::runtime_error("device allocation of " + std::to_string(bytes) + " bytes failed (" +
                             cudaGetErrorName(e) + "; " + std::to_string(current_) + " bytes already held)");
  }
  current_ += int64_t(bytes);
  ++allocations_;
  if (current_ > peak_) peak_ = current_;
  return p;
}

void DeviceAllocator::deallocate(void* p, size_t bytes) noexcept {
  if (!p) return;
  cudaFree(p);
  current_ -= int64_t(bytes);
}

bool device_available(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = std::string("no usable CUDA device: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
    return false;
  }
  if (n == 0) {
    if (why) *why = "no CUDA device on this machine";
    return false;
  }
  return true;
}

}  // namespace lobench::cuda
