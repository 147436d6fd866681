#include "variants/counting_allocator.hpp"

#include <gtest/gtest.h>

namespace lobench {
namespace {

TEST(CountingAllocator, TracksCurrentAndPeakExactly) {
  CountingAllocator a;
  {
    Buffer<float> x(a, 100);
    EXPECT_EQ(a.current_bytes(), 400);
    {
      Buffer<double> y(a, 10);
      EXPECT_EQ(a.current_bytes(), 480);
    }
    EXPECT_EQ(a.current_bytes(), 400);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(x.data()) % 64, 0u);
  }
  EXPECT_EQ(a.current_bytes(), 0);
  EXPECT_EQ(a.peak_bytes(), 480);
  a.reset_peak();
  EXPECT_EQ(a.peak_bytes(), 0);
  Buffer<int64_t> z(a, 3);
  Buffer<int64_t> moved = std::move(z);
  EXPECT_EQ(a.current_bytes(), 24);
  EXPECT_EQ(a.peak_bytes(), 24);
}

}  // namespace
}  // namespace lobench
