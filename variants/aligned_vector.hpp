// std::vector whose storage starts on a 64-byte cache line, as the step's own buffers do (Buffer,
// counting_allocator.hpp): for the operands a meter times a kernel on. std::vector's storage is only
// 16-byte aligned, and where glibc serves it from a fresh mmap (large blocks, in a process that has not
// yet freed one) it starts 16 bytes past a page: every 64-byte row an AMX tile load or a 512-bit load
// reads then straddles two cache lines. The bf16 yardstick at the step's shape read 1 220-1 240 GFLOP/s
// that way and 1 970-2 080 with the same operands from the heap (AMX Xeon model 167, 2 threads,
// P = 1024, V = 100000, D = 128), so which rows a run had made before decided the yardstick.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace lobench {

inline constexpr std::size_t kCacheLineBytes = 64;

template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kCacheLineBytes)));
  }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t(kCacheLineBytes)); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const noexcept { return true; }
};

template <class T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace lobench
