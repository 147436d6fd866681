// The numbers users write (harness/cli/numbers.hpp): counts in every notation the docs promise, sizes
// that must carry a unit, and the transform that gives every integer option of a command the same.
#include "harness/cli/numbers.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include "harness/cli/option_checks.hpp"
#include "harness/sweep/axes.hpp"

namespace lobench::cli {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const OptionError& e) {
    return e.what();
  }
  return "";
}

TEST(Numbers, CountsAcceptExponentsAndDecimalSuffixes) {
  EXPECT_EQ(parse_count("--V", "100000"), 100000);
  EXPECT_EQ(parse_count("--V", "1e5"), 100000);
  EXPECT_EQ(parse_count("--V", "1E5"), 100000);
  EXPECT_EQ(parse_count("--V", "100k"), 100000);
  EXPECT_EQ(parse_count("--V", "100K"), 100000);
  EXPECT_EQ(parse_count("--V", "1.5k"), 1500);
  EXPECT_EQ(parse_count("--V", "1M"), 1000000);
  EXPECT_EQ(parse_count("--V", "2.5e3"), 2500);
  EXPECT_EQ(parse_count("--V", "3G"), 3000000000);
  EXPECT_EQ(parse_count("--V", "1.000"), 1);
  EXPECT_EQ(parse_count("--V", "0.1k"), 100);
  EXPECT_EQ(parse_count("--V", "0"), 0);
  EXPECT_EQ(parse_count("--eval-every", "-1"), -1);
  EXPECT_EQ(parse_count("--V", "9223372036854775807"), INT64_MAX);
  EXPECT_EQ(canonical_count("--V", "1.5M"), "1500000");
}

TEST(Numbers, CountsThatAreNotWholeNumbersAreRefusedNamingTheOption) {
  for (const char* bad : {"1e-3", "1.5", "0.0001k", "1.0001k", "", "k", "1x", "1m", "1e", "1e+", "--1", "1 k", " 1",
                          "nan", "inf", "1e400", "9223372036854775808", "10G0", "1.2.3", "0x10"}) {
    const std::string e = error_of([&] { parse_count("--V", bad); });
    EXPECT_NE(e.find("--V"), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find(std::string("'") + bad + "'"), std::string::npos) << bad << ": " << e;
  }
  EXPECT_NE(error_of([] { parse_count("--B", "1e-3"); }).find("not a whole number"), std::string::npos);
}

TEST(Numbers, SizesNeedAUnit) {
  EXPECT_EQ(parse_size("--mem-limit", "20G"), int64_t(20) << 30);
  EXPECT_EQ(parse_size("--mem-limit", "20g"), int64_t(20) << 30);
  EXPECT_EQ(parse_size("--mem-limit", "1.5GiB"), int64_t(3) << 29);
  EXPECT_EQ(parse_size("--mem-limit", "512MB"), int64_t(512) << 20);
  EXPECT_EQ(parse_size("--mem-limit", "4096B"), 4096);
  EXPECT_EQ(parse_size("--mem-limit", "1K"), 1024);
  EXPECT_EQ(parse_size("--mem-limit", "1T"), int64_t(1) << 40);
  for (const char* bare : {"2", "123456", "4294967296"}) {
    const std::string e = error_of([&] { parse_size("--mem-limit", bare); });
    EXPECT_NE(e.find("--mem-limit"), std::string::npos) << e;
    EXPECT_NE(e.find("no unit"), std::string::npos) << e;
    EXPECT_NE(e.find(std::string(bare) + "G"), std::string::npos) << e;  // the suggestion
  }
  for (const char* bad : {"0G", "-1G", "nanG", "infG", "1e30G", "12Q", "", "G", "5 G", "0.1B"})
    EXPECT_NE(error_of([&] { parse_size("--gpu-mem-limit", bad); }).find("--gpu-mem-limit"), std::string::npos) << bad;
  EXPECT_EQ(parse_memory_limit("--mem-limit", "2G"), int64_t(2) << 30);  // the same parser
}

TEST(Numbers, EveryIntegerOptionOfACommandTakesCounts) {
  CLI::App app;
  auto* sub = app.add_subcommand("train");
  int64_t steps = 0;
  int epochs = 0;
  uint64_t seed = 0;
  double lr = 0;
  sub->add_option("--steps", steps);
  sub->add_option("--epochs", epochs);
  sub->add_option("--seed", seed);
  sub->add_option("--lr", lr);
  accept_count_notation(app);
  app.parse(std::vector<std::string>{"1e-3", "--lr", "18446744073709551615", "--seed", "2k", "--epochs", "1.5M", "--steps", "train"});
  EXPECT_EQ(steps, 1500000);
  EXPECT_EQ(epochs, 2000);
  EXPECT_EQ(seed, UINT64_MAX);  // plain digits are CLI11's, so the whole uint64 range stays
  EXPECT_DOUBLE_EQ(lr, 1e-3);   // a real option is untouched
  EXPECT_THROW(app.parse(std::vector<std::string>{"1e-3", "--steps", "train"}), CLI::ValidationError);
}

TEST(Numbers, IntegerAxesTakeCountsAndKeepPlainDigits) {
  sweep::Axes axes;
  axes.add("V", sweep::AxisKind::integer, {"1k"}, "vocabulary");
  EXPECT_EQ(axes.values("V"), std::vector<std::string>{"1000"});
  axes.set("V", "1e5, 100k,1.5M");
  EXPECT_EQ(axes.values("V"), (std::vector<std::string>{"100000", "100000", "1500000"}));
  EXPECT_EQ(axes.int_values("V"), (std::vector<int64_t>{100000, 100000, 1500000}));
  EXPECT_THROW(axes.set("V", "1e-3"), std::invalid_argument);
}

}  // namespace
}  // namespace lobench::cli
