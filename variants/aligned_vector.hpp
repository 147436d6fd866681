// std::vector whose storage starts on a 64-byte cache line, as the step's working buffers do (Buffer,
// counting_allocator.hpp): for the operands a meter times a kernel on. std::vector's storage is only
// 16-byte aligned; where glibc serves it from a fresh mmap (every block over 32 MiB, and smaller large
// blocks until the process has freed one) it starts 16 bytes past a page, and every 64-byte row an AMX
// tile load or a 512-bit load reads straddles two cache lines. That made the bf16 yardstick depend on which
// rows a run had made before it (results/cpu/performance.md, "the yardsticks' operands on whole cache
// lines"). An AlignedVector<T> is not a std::vector<T>: it binds to no std::vector<T>& parameter.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace lobench {

inline constexpr std::size_t kCacheLineBytes = 64;

template <class T>
struct CacheLineAllocator {
  static_assert(alignof(T) <= kCacheLineBytes, "a cache line would under-align T");
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
  [[nodiscard]] T* allocate(std::size_t n) {
    if (n > std::size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kCacheLineBytes)));
  }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t(kCacheLineBytes)); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const noexcept { return true; }
};

template <class T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace lobench
