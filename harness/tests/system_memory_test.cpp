#include "harness/system_memory.hpp"

#include <gtest/gtest.h>

namespace lobench {
namespace {

TEST(SystemMemory, ParsesSizesWithUnits) {
  EXPECT_EQ(parse_bytes("123"), 123);
  EXPECT_EQ(parse_bytes("2K"), 2048);
  EXPECT_EQ(parse_bytes("1.5GiB"), int64_t(1.5 * 1024 * 1024 * 1024));
  EXPECT_EQ(parse_bytes("20g"), int64_t(20) << 30);
  EXPECT_THROW(parse_bytes("lots"), std::invalid_argument);
  EXPECT_THROW(parse_bytes("3X"), std::invalid_argument);
  EXPECT_GT(available_memory_bytes(), 0);
  EXPECT_EQ(format_bytes(1536.0 * 1024 * 1024), "1.50 GiB");
}

}  // namespace
}  // namespace lobench
