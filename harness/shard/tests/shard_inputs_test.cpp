#include <gtest/gtest.h>

#include <climits>
#include <stdexcept>

#include "harness/shard/shard_inputs.hpp"

namespace lobench::shard {
namespace {

TEST(ShardInputs, RebasesTargetsToTheShardsRows) {
  // Rows [10, 20): ids inside move down by 10; outside (below, above, both padding conventions and
  // hostile extremes) become −1; a duplicate stays a duplicate.
  const int32_t ids[] = {10, 19, 20, 9, -1, 100, 15, 15, INT32_MIN, INT32_MAX};
  int32_t local[10];
  rebase_targets(ids, 10, Range{10, 20}, local);
  const int32_t want[] = {0, 9, -1, -1, -1, -1, 5, 5, -1, -1};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(local[i], want[i]) << i;
  rebase_targets(ids, 10, Range{20, 20}, local);  // a shard without rows: every id is padding
  for (int i = 0; i < 10; ++i) EXPECT_EQ(local[i], -1);
}

// A rank's synthetic shard is the whole problem's block, targets rebased.
TEST(ShardInputs, SyntheticShardsAreBlocksOfTheWholeProblem) {
  Shape s{1, 9, 31, 3, 4, Reduction::mean, true};
  SyntheticSpec spec;
  spec.seed = 5;
  spec.pad_fraction = 0.2;
  spec.dup_fraction = 0.3;
  spec.zero_weight_fraction = 0.25;
  const StepData whole = make_synthetic(s, spec);
  for (ShardKind kind : {ShardKind::vocab, ShardKind::positions, ShardKind::grid}) {
    const ShardLayout layout = make_layout(kind, 4, s.V, s.P(), 0, Split::blocked);
    for (int r = 0; r < 4; ++r) {
      const ShardData a = synthetic_shard(s, spec, layout, r), b = shard_of(whole, layout, r);
      EXPECT_EQ(a.A, b.A);
      EXPECT_EQ(a.E, b.E);
      EXPECT_EQ(a.targets, b.targets);
      EXPECT_EQ(a.weights, b.weights);
      EXPECT_EQ(a.vocab, layout.vocab(r));
      const StepInputs in = a.view();
      EXPECT_EQ(in.V, layout.vocab(r).size());
      EXPECT_EQ(in.P, layout.positions(r).size());
      EXPECT_EQ(in.mean_V(), s.V);  // the mean's scale is the whole vocabulary's
      for (int64_t p = 0; p < in.P; ++p)
        for (int64_t l = 0; l < s.L; ++l) {
          const int32_t g = whole.targets[size_t((a.positions.begin + p) * s.L + l)];
          const int32_t t = a.targets[size_t(p * s.L + l)];
          if (a.vocab.contains(g)) EXPECT_EQ(t, g - a.vocab.begin);
          else EXPECT_EQ(t, -1);
        }
    }
  }
  EXPECT_THROW(shard_of(whole, make_layout(ShardKind::vocab, 2, s.V + 1, s.P()), 0), std::invalid_argument);
}

}  // namespace
}  // namespace lobench::shard
