// --partition K/N (harness/io/partition.hpp): the one parser and the one rule `lobench merge` checks the
// parts of every run-file kind with (run files and folders of run files alike).
#include "harness/io/partition.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace lobench::io {
namespace {

std::string refusal(const std::vector<std::pair<std::string, Partition>>& parts, int64_t required) {
  try {
    check_partitions(parts, required);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Partition, ParsesKOverNAndRefusesTheRest) {
  const Partition p = Partition::parse("2/5");
  EXPECT_EQ(p.index, 2);
  EXPECT_EQ(p.count, 5);
  EXPECT_EQ(p.str(), "2/5");
  for (const char* bad : {"5/5", "-1/3", "1/0", "1", "a/b", "1/2/3", "1/2x", ""})
    EXPECT_THROW(Partition::parse(bad), std::invalid_argument) << bad;
}

TEST(Partition, MergeRuleEachOnceSameNNoGap) {
  const Partition p0{0, 3}, p1{1, 3}, p2{2, 3};
  EXPECT_EQ(refusal({{"a", p0}, {"b", p1}, {"c", p2}}, 3), "");
  EXPECT_EQ(refusal({{"c", p2}, {"a", p0}, {"b", p1}}, 3), "");  // any order
  EXPECT_NE(refusal({{"a", p0}, {"b", p0}, {"c", p2}}, 3).find("'a' and 'b' are both partition 0/3"), std::string::npos);
  EXPECT_NE(refusal({{"a", p0}, {"b", p1}}, 3).find("partition 2/3 is missing (a gap)"), std::string::npos);
  EXPECT_NE(refusal({{"a", p0}, {"b", Partition{1, 4}}}, 2).find("'b' is partition 1/4 but 'a' is 0/3"),
            std::string::npos);
  // Partitions past the sweep's runs made nothing and may be absent (required < N).
  EXPECT_EQ(refusal({{"a", p0}, {"b", p1}}, 2), "");
}

}  // namespace
}  // namespace lobench::io
