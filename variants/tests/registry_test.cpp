#include <gtest/gtest.h>

#include <set>

#include "variants/variant.hpp"

namespace lobench {
namespace {

// A variant must never silently vanish from the binary: its name is listed here.
TEST(Registry, ListsEveryExpectedCpuVariant) {
  std::set<std::string> names;
  for (const Variant* v : Registry::instance().all())
    if (v->backend() == "cpu") names.insert(v->name());
  for (const char* expected : {"reference", "dense", "chunked", "fused"}) EXPECT_TRUE(names.count(expected)) << expected;
  EXPECT_NE(Registry::instance().find("chunked"), nullptr);
  EXPECT_NE(Registry::instance().find("cpu/dense"), nullptr);
  EXPECT_EQ(Registry::instance().find("no_such_variant"), nullptr);
}

}  // namespace
}  // namespace lobench
