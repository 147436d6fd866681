// Exact memory accounting: every working buffer a variant uses comes from here, so the peak is
// counted, not guessed, and can be set beside the variant's analytic prediction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <utility>

#include "variants/aligned_vector.hpp"

namespace lobench {

class CountingAllocator {
 public:
  // Bytes are counted as requested (not rounded to the 64-byte alignment) so the analytic model can
  // be exact.
  void* allocate(size_t bytes) {
    void* p = std::aligned_alloc(kCacheLineBytes, round_up(bytes == 0 ? 1 : bytes));
    if (!p) throw std::bad_alloc();
    std::lock_guard<std::mutex> lock(mutex_);
    current_ += int64_t(bytes);
    if (current_ > peak_) peak_ = current_;
    ++allocations_;
    return p;
  }
  void deallocate(void* p, size_t bytes) {
    std::free(p);
    std::lock_guard<std::mutex> lock(mutex_);
    current_ -= int64_t(bytes);
  }
  int64_t current_bytes() const { return current_; }
  int64_t peak_bytes() const { return peak_; }
  int64_t allocations() const { return allocations_; }
  // Starts a new measurement: the peak becomes what is live now.
  void reset_peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    peak_ = current_;
    allocations_ = 0;
  }

 private:
  static size_t round_up(size_t n) { return (n + kCacheLineBytes - 1) / kCacheLineBytes * kCacheLineBytes; }
  std::mutex mutex_;
  int64_t current_ = 0;
  int64_t peak_ = 0;
  int64_t allocations_ = 0;
};

// A typed, owning, 64-byte aligned array from a CountingAllocator. Contents are uninitialised.
template <typename T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(CountingAllocator& alloc, int64_t count)
      : alloc_(&alloc), count_(count),
        data_(static_cast<T*>(alloc.allocate(size_t(count) * sizeof(T)))) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    Buffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~Buffer() {
    if (data_) alloc_->deallocate(data_, size_t(count_) * sizeof(T));
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  int64_t size() const { return count_; }
  T& operator[](int64_t i) { return data_[i]; }
  const T& operator[](int64_t i) const { return data_[i]; }

 private:
  void swap(Buffer& o) {
    std::swap(alloc_, o.alloc_);
    std::swap(count_, o.count_);
    std::swap(data_, o.data_);
  }
  CountingAllocator* alloc_ = nullptr;
  int64_t count_ = 0;
  T* data_ = nullptr;
};

}  // namespace lobench
