#include "harness/sweep/axes.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

namespace lobench::sweep {
namespace {

Axes three_axes() {
  Axes a;
  a.add("B", AxisKind::integer, {"1", "2"}, "b");
  a.add("mode", AxisKind::text, {"x"}, "m");
  a.add("lr", AxisKind::real, {"0.5", "1e-3"}, "r");
  return a;
}

TEST(Axes, TheProductVariesTheLastAxisFastest) {
  const Axes a = three_axes();
  ASSERT_EQ(a.size(), 4);
  const auto pts = a.expand();
  ASSERT_EQ(pts.size(), 4u);
  EXPECT_EQ(pts[0].describe(), "B=1 mode=x lr=0.5");
  EXPECT_EQ(pts[1].describe(), "B=1 mode=x lr=1e-3");
  EXPECT_EQ(pts[2].describe(), "B=2 mode=x lr=0.5");
  EXPECT_EQ(pts[3].int_at("B"), 2);
  EXPECT_DOUBLE_EQ(pts[3].real_at("lr"), 1e-3);
  EXPECT_EQ(a.swept(), (std::vector<std::string>{"B", "lr"}));
}

TEST(Axes, ListsAcceptSpacesAndRefuseEmptyOrMistypedItems) {
  Axes a = three_axes();
  a.set("B", "3, 4 ,5");
  EXPECT_EQ(a.int_values("B"), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_THROW(a.set("B", "3,,4"), std::invalid_argument);
  EXPECT_THROW(a.set("B", ""), std::invalid_argument);
  EXPECT_THROW(a.set("B", "3,x"), std::invalid_argument);
  EXPECT_THROW(a.set("B", "1e-3"), std::invalid_argument);  // integers are whole numbers (1e3 is one: 1000)
  EXPECT_THROW(a.set("lr", "nan"), std::invalid_argument);
  EXPECT_THROW(a.set("lr", "inf"), std::invalid_argument);
  EXPECT_EQ(a.int_values("B"), (std::vector<int64_t>{3, 4, 5}));  // a refused list changes nothing
}

TEST(Axes, ARepeatedOptionsLastOccurrenceWins) {
  Axes a = three_axes();
  CLI::App app;
  a.register_options(&app);
  std::vector<std::string> args = {"--B", "16", "--B", "32"};
  std::reverse(args.begin(), args.end());
  app.parse(args);
  EXPECT_EQ(a.int_values("B"), (std::vector<int64_t>{32}));
}

TEST(Axes, AnOverflowingProductIsRefused) {
  Axes a;
  std::vector<std::string> many(100000, "1");
  for (int i = 0; i < 4; ++i) a.add("a" + std::to_string(i), AxisKind::integer, many, "h");
  EXPECT_THROW(a.size(), std::invalid_argument);
}

}  // namespace
}  // namespace lobench::sweep
