#include "variants/aligned_vector.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace lobench {
namespace {

bool on_a_cache_line(const void* p) { return reinterpret_cast<uintptr_t>(p) % kCacheLineBytes == 0; }

// Small blocks come from the heap, large ones from a fresh mmap (where std::vector's storage starts 16
// bytes past a page: 32 MiB floats here, above glibc's largest mmap threshold), and once a large block of
// at most 32 MiB is freed glibc serves the next smaller large ones from the heap. Every way, the storage
// starts on a cache line.
TEST(AlignedVector, StorageStartsOnACacheLineForEverySizeAndAllocationPath) {
  for (size_t n : {size_t(1), size_t(3), size_t(17), size_t(4096), size_t(1) << 20, size_t(8) << 20}) {
    AlignedVector<float> v(n, 1.0f);
    EXPECT_TRUE(on_a_cache_line(v.data())) << n << " floats";
    AlignedVector<uint16_t> w(n);
    EXPECT_TRUE(on_a_cache_line(w.data())) << n << " words";
  }
  { AlignedVector<float> freed(size_t(6) << 20); }  // 24 MiB, freed: raises glibc's mmap threshold to it
  AlignedVector<float> after(size_t(5) << 20);      // 20 MiB: now from the heap
  EXPECT_TRUE(on_a_cache_line(after.data()));
  after.resize(after.size() + 12345);  // (reallocated)
  EXPECT_TRUE(on_a_cache_line(after.data()));
}

TEST(AlignedVector, CopiesAndComparesAsAVector) {
  const std::vector<float> values{1.0f, -2.0f, 3.5f};
  AlignedVector<float> v(values.begin(), values.end());
  AlignedVector<float> copy = v;
  EXPECT_EQ(copy, v);
  EXPECT_TRUE(on_a_cache_line(copy.data()));
  copy[1] = 0.0f;
  EXPECT_NE(copy, v);
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), values);
}

}  // namespace
}  // namespace lobench
