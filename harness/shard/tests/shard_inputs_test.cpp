#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <string>

#include "variants/accuracy.hpp"
#include "variants/variant.hpp"
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

namespace lobench::shard {
namespace {

// Without any MPI: each vocabulary shard stepped alone with the whole V in the mean's scale, and its
// outputs summed (losses, counts, dA) or placed (dE rows), is the whole step — for every CPU variant,
// both reductions, with weights. What the sharded step builds on (StepInputs::global_V).
TEST(ShardInputs, VocabularyShardStepsSumToTheWholeStep) {
  for (const char* name : {"reference", "dense", "chunked", "fused"})
    for (Reduction red : {Reduction::mean, Reduction::sum}) {
      Shape s{1, 13, 101, 8, 4, red, true};
      SyntheticSpec spec;
      spec.seed = 2;
      spec.pad_fraction = 0.2;
      spec.dup_fraction = 0.3;
      const StepData whole = make_synthetic(s, spec);
      const Variant& v = *Registry::instance().find(name);
      CountingAllocator alloc;
      RunOptions o;
      o.threads = 1;
      RunContext ctx{alloc, o};
      StepOutputs want;
      want.resize(whole.P, whole.V, whole.D);
      v.run(whole.view(), want, ctx);

      const ShardLayout layout = make_layout(ShardKind::vocab, 3, s.V, s.P());
      StepOutputs sum;
      sum.resize(whole.P, whole.V, whole.D);
      for (int r = 0; r < 3; ++r) {
        const ShardData d = shard_of(whole, layout, r);
        StepOutputs part;
        part.resize(d.positions.size(), d.vocab.size(), d.D);
        v.run(d.view(), part, ctx);
        sum.loss += part.loss;  // each shard's loss is its share of the whole mean (same Σw, whole V)
        for (size_t i = 0; i < sum.per_position_loss.size(); ++i) sum.per_position_loss[i] += part.per_position_loss[i];
        for (size_t i = 0; i < sum.counts.size(); ++i) sum.counts[i] += part.counts[i];
        for (size_t i = 0; i < sum.dA.size(); ++i) sum.dA[i] += part.dA[i];
        std::copy(part.dE.begin(), part.dE.end(), sum.dE.begin() + d.vocab.begin * d.D);
      }
      const std::string what = fmt::format("{} {}", name, to_string(red));
      EXPECT_LE(relative_error(sum.loss, want.loss), 1e-6) << what;
      EXPECT_EQ(sum.counts, want.counts) << what;
      // The accuracy rules (relative L2 over the array; an element of dA is a sum over V that cancels,
      // so one element alone may differ more): 1e-6 for the losses, 1e-5 for the gradients.
      const std::vector<double> dA(want.dA.begin(), want.dA.end()), dE(want.dE.begin(), want.dE.end());
      EXPECT_LE(relative_l2_error(sum.per_position_loss.data(), want.per_position_loss.data(), whole.P), 1e-6) << what;
      EXPECT_LE(relative_l2_error(sum.dA.data(), dA.data(), int64_t(dA.size())), 1e-5) << what;
      // (a row of dE comes from one shard, but through a product tiled for that shard's V: not the same bits)
      EXPECT_LE(relative_l2_error(sum.dE.data(), dE.data(), int64_t(dE.size())), 1e-5) << what;
    }
}

}  // namespace
}  // namespace lobench::shard
