#include <gtest/gtest.h>

#include <stdexcept>

#include "harness/shard/layout.hpp"

namespace lobench::shard {
namespace {

// Every split covers [0, n) with consecutive, disjoint ranges in part order.
void expect_partition(int64_t n, int parts, Split split) {
  int64_t next = 0;
  for (int k = 0; k < parts; ++k) {
    const Range r = split_range(n, parts, k, split);
    EXPECT_EQ(r.begin, next) << n << "/" << parts << " part " << k;
    EXPECT_LE(r.begin, r.end);
    next = r.end;
  }
  EXPECT_EQ(next, n) << n << "/" << parts;
}

TEST(ShardLayout, SplitsCoverTheRangeInOrder) {
  for (int64_t n : {0, 1, 2, 5, 7, 1000, 1001, 876939})
    for (int parts : {1, 2, 3, 4, 7, 16, 1024}) {
      expect_partition(n, parts, Split::balanced);
      expect_partition(n, parts, Split::blocked);
    }
}

TEST(ShardLayout, BalancedSizesDifferByAtMostOne) {
  // 10 over 4: 3, 3, 2, 2.
  EXPECT_EQ(split_range(10, 4, 0), (Range{0, 3}));
  EXPECT_EQ(split_range(10, 4, 1), (Range{3, 6}));
  EXPECT_EQ(split_range(10, 4, 2), (Range{6, 8}));
  EXPECT_EQ(split_range(10, 4, 3), (Range{8, 10}));
  // Fewer rows than parts: the last parts hold none.
  EXPECT_EQ(split_range(2, 3, 2).size(), 0);
  for (int k = 0; k < 7; ++k) {
    const int64_t s = split_range(1001, 7, k).size();
    EXPECT_TRUE(s == 143) << k;
  }
}

TEST(ShardLayout, BlockedIsCutBceStyleWithEmptyTail) {
  // 5 over 4: ceil = 2: [0,2) [2,4) [4,5) [5,5): a rank with no rows although V > R.
  EXPECT_EQ(split_range(5, 4, 0, Split::blocked), (Range{0, 2}));
  EXPECT_EQ(split_range(5, 4, 2, Split::blocked), (Range{4, 5}));
  EXPECT_TRUE(split_range(5, 4, 3, Split::blocked).empty());
  EXPECT_EQ(split_range(5, 4, 3, Split::blocked).begin, 5);
}

TEST(ShardLayout, RejectsBadSplits) {
  EXPECT_THROW(split_range(-1, 2, 0), std::invalid_argument);
  EXPECT_THROW(split_range(4, 0, 0), std::invalid_argument);
  EXPECT_THROW(split_range(4, 2, 2), std::invalid_argument);
  EXPECT_THROW(split_range(4, 2, -1), std::invalid_argument);
  EXPECT_THROW(parse_split("even"), std::invalid_argument);
}

TEST(ShardLayout, KindsAndGrids) {
  const ShardLayout v = make_layout(ShardKind::vocab, 3, 1001, 34);
  EXPECT_EQ(v.vocab_parts, 3);
  EXPECT_EQ(v.position_parts, 1);
  EXPECT_EQ(v.vocab(2), (Range{668, 1001}));
  EXPECT_EQ(v.positions(2), (Range{0, 34}));

  const ShardLayout p = make_layout(ShardKind::positions, 3, 1001, 34);
  EXPECT_EQ(p.vocab(1), (Range{0, 1001}));
  EXPECT_EQ(p.positions(1), (Range{12, 23}));

  // 6 ranks: 3 vocabulary parts x 2 position parts, rank = vocab_index·2 + position_index.
  const ShardLayout g = make_layout(ShardKind::grid, 6, 100, 10);
  EXPECT_EQ(g.vocab_parts, 3);
  EXPECT_EQ(g.position_parts, 2);
  EXPECT_EQ(g.vocab_index(5), 2);
  EXPECT_EQ(g.position_index(5), 1);
  EXPECT_EQ(g.vocab(5), (Range{67, 100}));
  EXPECT_EQ(g.positions(5), (Range{5, 10}));
  EXPECT_EQ(make_layout(ShardKind::grid, 4, 100, 10).vocab_parts, 2);
  EXPECT_EQ(make_layout(ShardKind::grid, 3, 100, 10).vocab_parts, 3);  // a prime: R x 1
  EXPECT_EQ(make_layout(ShardKind::grid, 6, 100, 10, 2).position_parts, 3);
  EXPECT_EQ(g.describe(), "vocab,positions 3x2 balanced");

  EXPECT_THROW(make_layout(ShardKind::grid, 6, 100, 10, 4), std::invalid_argument);
  EXPECT_THROW(make_layout(ShardKind::vocab, 0, 100, 10), std::invalid_argument);
  EXPECT_THROW(make_layout(ShardKind::vocab, 2, 0, 10), std::invalid_argument);
  EXPECT_EQ(parse_shard_kind("vocab,positions"), ShardKind::grid);
  EXPECT_EQ(parse_shard_kind("positions"), ShardKind::positions);
  EXPECT_THROW(parse_shard_kind("rows"), std::invalid_argument);
}

}  // namespace
}  // namespace lobench::shard
