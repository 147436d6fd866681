#include "variants/sparse_targets.hpp"

#include <gtest/gtest.h>

namespace lobench {
namespace {

TEST(SparseTargets, DropsPaddingAndDuplicatesAndSortsPairsById) {
  // V = 10, L = 4: padding as -1, V and a large id; a duplicate 3; a row of only padding.
  const std::vector<int32_t> t = {3, -1, 3, 7,  //
                                  10, 1, 9, 99,  //
                                  -1, 10, -5, 12};
  StepInputs in;
  in.P = 3;
  in.V = 10;
  in.L = 4;
  in.targets = t.data();
  CountingAllocator alloc;
  SparseTargets st(in, alloc);
  EXPECT_EQ(st.nnz(), 4);
  EXPECT_EQ(st.positives(0), 2);
  EXPECT_EQ(st.positives(1), 2);
  EXPECT_EQ(st.positives(2), 0);
  EXPECT_EQ(st.ids()[st.row_begin(0)], 3);
  EXPECT_EQ(st.ids()[st.row_begin(0) + 1], 7);
  EXPECT_EQ(st.ids()[st.row_begin(1)], 1);
  EXPECT_EQ(st.ids()[st.row_begin(1) + 1], 9);
  auto [lo, hi] = st.pairs_in(2, 8);  // ids 3 (p0) and 7 (p0)
  ASSERT_EQ(hi - lo, 2);
  EXPECT_EQ(st.pair_id(lo), 3);
  EXPECT_EQ(st.pair_pos(lo), 0);
  EXPECT_EQ(st.pair_id(lo + 1), 7);
  auto [lo2, hi2] = st.pairs_in(0, 10);
  EXPECT_EQ(hi2 - lo2, 4);
  EXPECT_EQ(alloc.peak_bytes(), SparseTargets::bytes(3, 4));
}

}  // namespace
}  // namespace lobench
