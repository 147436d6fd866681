// The counting device allocator: every buffer a GPU variant allocates on the device (cuBLAS's
// workspace included) goes through one of these, so that the peak working bytes of a step are counted,
// not guessed (docs/method.md#memory). Counts the bytes asked for; cudaMalloc's own granularity
// is what the cudaMemGetInfo cross-check sees.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace lobench::cuda {

class DeviceAllocator {
 public:
  DeviceAllocator() = default;
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  void* allocate(size_t bytes);  // throws std::bad_alloc-like std::runtime_error naming the size on failure
  void deallocate(void* p, size_t bytes) noexcept;

  int64_t current_bytes() const { return current_; }
  int64_t peak_bytes() const { return peak_; }
  int64_t allocations() const { return allocations_; }
  void reset_peak() { peak_ = current_; }

 private:
  int64_t current_ = 0, peak_ = 0, allocations_ = 0;
};

// An owning typed device buffer from a DeviceAllocator (like the CPU Buffer<T>).
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceAllocator& a, int64_t n) : alloc_(&a), n_(n) {
    if (n > 0) p_ = static_cast<T*>(a.allocate(size_t(n) * sizeof(T)));
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    DeviceBuffer(std::move(o)).swap(*this);
    return *this;
  }
  ~DeviceBuffer() {
    if (p_) alloc_->deallocate(p_, size_t(n_) * sizeof(T));
  }
  void swap(DeviceBuffer& o) noexcept {
    std::swap(alloc_, o.alloc_);
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
  }
  T* data() const { return p_; }
  int64_t size() const { return n_; }
  int64_t bytes() const { return n_ * int64_t(sizeof(T)); }

 private:
  DeviceAllocator* alloc_ = nullptr;
  T* p_ = nullptr;
  int64_t n_ = 0;
};

// Whether a CUDA device can be used here; when not, `why` says why (no driver, no device, ...).
bool device_available(std::string* why = nullptr);

}  // namespace lobench::cuda
