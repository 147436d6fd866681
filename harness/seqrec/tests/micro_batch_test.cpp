// The fixed summation order of micro-batches (fixed_order_sum.hpp) and the micro-batched step
// (micro_batch_step.hpp): the three ways of walking the tree give the same bits, rank blocks are nodes of
// it, and a step cut into micro-batches computes the plain step's loss and gradient (to rounding: the
// whole batch's Σw scales each micro-batch, dropout masks and sampled negatives follow the windows).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "datasets/random.hpp"
#include "harness/seqrec/fixed_order_sum.hpp"
#include "harness/seqrec/micro_batch_step.hpp"
#include "harness/seqrec/tests/seqrec_test_support.hpp"

namespace lobench::seqrec {
namespace {

std::vector<float> random_floats(int64_t n, uint64_t seed) {
  data::Rng rng(data::stream_key(seed, 7, 0));
  std::vector<float> x;
  for (int64_t i = 0; i < n; ++i) x.push_back(float(rng.normal() * std::pow(10.0, double(rng.below(7)) - 3)));
  return x;
}

// The tree over rows written out with TreeOps and slot buffers, as MicroBatchStep walks it.
std::vector<float> tree_with_slots(const std::vector<float>& rows, int64_t n, int64_t count, const std::vector<char>& present) {
  std::vector<std::vector<float>> slots(size_t(tree_slots(n)), std::vector<float>(size_t(count)));
  TreeOps ops;
  ops.leaf = [&](int64_t i, int s) {
    std::copy_n(rows.begin() + i * count, count, slots[size_t(s)].begin());
    return present[size_t(i)] != 0;
  };
  ops.add = [&](int s, int from) {
    for (int64_t i = 0; i < count; ++i) slots[size_t(s)][size_t(i)] += slots[size_t(from)][size_t(i)];
  };
  ops.move = [&](int s, int from) { slots[size_t(s)] = slots[size_t(from)]; };
  return tree_sum(0, n, 0, ops) ? slots[0] : std::vector<float>(size_t(count), 0.0f);
}

TEST(SeqrecMicroBatch, TheTreeIsTheSameWalkedThreeWays) {
  const int64_t count = 37;
  for (int64_t n = 1; n <= 13; ++n) {
    const std::vector<float> rows = random_floats(n * count, uint64_t(n));
    for (int mask = 0; mask < 3; ++mask) {
      std::vector<char> present(static_cast<size_t>(n), 1);
      if (mask == 1) present.back() = 0;                             // a short last batch
      if (mask == 2) for (int64_t i = n / 2; i < n; ++i) present[size_t(i)] = 0;
      const std::vector<float> slots = tree_with_slots(rows, n, count, present);
      std::vector<float> in_place = rows;
      const bool any = tree_sum_rows(in_place.data(), count, 0, n, present.data());
      for (int64_t i = 0; i < count; ++i) {
        const float scalar = tree_sum_values(rows.data() + i, n, count, present.data());
        EXPECT_EQ(std::bit_cast<uint32_t>(scalar), std::bit_cast<uint32_t>(slots[size_t(i)])) << n << " " << i;
        if (any) {
          EXPECT_EQ(std::bit_cast<uint32_t>(in_place[size_t(i)]), std::bit_cast<uint32_t>(scalar)) << n << " " << i;
        }
      }
    }
  }
}

// What R ranks compute: each its block of K/R leaves by the tree, then the tree over the R block sums.
TEST(SeqrecMicroBatch, RankBlocksReproduceTheWholeTree) {
  const int64_t count = 29;
  for (int64_t K : {1, 2, 4, 6, 8, 12, 16}) {
    const std::vector<float> rows = random_floats(K * count, uint64_t(100 + K));
    for (int64_t present_leaves : {K, K - 1, (K + 1) / 2}) {
      std::vector<char> present(static_cast<size_t>(K), 0);
      for (int64_t i = 0; i < present_leaves; ++i) present[size_t(i)] = 1;
      std::vector<float> whole = rows;
      tree_sum_rows(whole.data(), count, 0, K, present.data());
      for (int64_t R : {1, 2, 4, 8}) {
        if (!ranks_split_the_tree(K, R)) continue;
        const int64_t k = K / R;
        std::vector<float> blocks(size_t(R * count), 0.0f);
        std::vector<char> rank_present(static_cast<size_t>(R));
        for (int64_t r = 0; r < R; ++r) {
          std::vector<float> mine(rows.begin() + r * k * count, rows.begin() + (r + 1) * k * count);
          rank_present[size_t(r)] = tree_sum_rows(mine.data(), count, 0, k, present.data() + r * k);
          std::copy_n(mine.begin(), count, blocks.begin() + r * count);
        }
        if (!tree_sum_rows(blocks.data(), count, 0, R, rank_present.data())) continue;
        for (int64_t i = 0; i < count; ++i)
          EXPECT_EQ(std::bit_cast<uint32_t>(blocks[size_t(i)]), std::bit_cast<uint32_t>(whole[size_t(i)]))
              << "K " << K << " R " << R << " present " << present_leaves << " i " << i;
      }
    }
  }
  EXPECT_FALSE(ranks_split_the_tree(6, 3));  // 3 blocks of 2 are not nodes of tree(6) = tree(3) + tree(3)
  EXPECT_FALSE(ranks_split_the_tree(4, 8));
  EXPECT_THROW(validate(MicroBatchPlan{8, 3, 1}), std::invalid_argument);
  EXPECT_THROW(validate(MicroBatchPlan{8, 8, 2}), std::invalid_argument);
  EXPECT_NO_THROW(validate(MicroBatchPlan{8, 2, 4}));
  // The message quotes --micro-batch only where the user gave it (a new-user trial read "--micro-batch 16"
  // for a value it never gave, the default of 3 ranks and --B 16).
  auto message = [](const MicroBatchPlan& p) {
    try {
      validate(p);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string defaulted = message(MicroBatchPlan{16, 16, 3, /*micro_given=*/false});
  EXPECT_EQ(defaulted.find("--micro-batch 16"), std::string::npos) << defaulted;
  EXPECT_NE(defaulted.find("--micro-batch not given"), std::string::npos) << defaulted;
  EXPECT_NE(message(MicroBatchPlan{16, 16, 3, /*micro_given=*/true}).find("--micro-batch 16"), std::string::npos);
}

// A batch of 6 windows (padding, weights 0, repeats) through the model with dropout.
struct Windows {
  int64_t B = 6, N = 8, L = 3;
  std::vector<int32_t> ids, targets;
  std::vector<float> weights;
};
Windows make_windows(int64_t V) {
  Windows w;
  data::Rng rng(data::stream_key(4, 1, 0));
  w.ids.assign(size_t(w.B * w.N), 0);
  w.targets.assign(size_t(w.B * w.N * w.L), -1);
  w.weights.assign(size_t(w.B * w.N), 0.0f);
  for (int64_t b = 0; b < w.B; ++b)
    for (int64_t n = int64_t(rng.below(uint64_t(w.N / 2))); n < w.N; ++n) {
      const int64_t r = b * w.N + n;
      w.ids[size_t(r)] = int32_t(1 + rng.below(uint64_t(V - 1)));
      w.weights[size_t(r)] = 1.0f;
      for (int64_t l = 0; l < w.L; ++l) w.targets[size_t(r * w.L + l)] = int32_t(1 + rng.below(uint64_t(V - 1)));
    }
  return w;
}

struct StepResult {
  double loss;
  std::vector<float> grad;
};

StepResult micro_step(const std::string& objective, int64_t micro, const Windows& w, int64_t V) {
  ModelConfig c;
  c.V = V;
  c.N = w.N;
  c.D = 16;
  c.layers = 2;
  c.heads = 2;
  c.max_batch = micro;
  c.dropout = 0.3f;
  c.seed = 3;
  c.threads = 1;
  CountingAllocator alloc;
  SasRec model(c, alloc);
  model.init();
  RunOptions o;
  o.threads = 1;
  o.block_v = 64;
  Objective obj(objective, o, 9);
  MicroBatchStep step(model, obj, alloc, MicroBatchPlan{w.B, micro, 1}, nullptr);
  EXPECT_EQ(step.allocated_partial_bytes(), MicroBatchStep::partial_sum_bytes(model.params().size(), {w.B, micro, 1}));
  const StepRecord r = step.run(Batch{w.B, w.L, w.ids.data(), w.targets.data(), w.weights.data()}, 5, nullptr);
  return {r.loss, std::vector<float>(model.params().grads(), model.params().grads() + model.params().size())};
}

TEST(SeqrecMicroBatch, MicroBatchesComputeThePlainStep) {
  const int64_t V = 211;
  const Windows w = make_windows(V);
  for (const char* objective : {"dense", "chunked", "fused", "sampled"}) {
    const StepResult plain = micro_step(objective, 6, w, V);
    ASSERT_GT(plain.loss, 0.0);
    for (int64_t micro : {2, 3}) {
      const StepResult m = micro_step(objective, micro, w, V);
      EXPECT_LE(std::abs(m.loss - plain.loss) / plain.loss, 1e-6) << objective << " micro " << micro;
      EXPECT_LE(testing::relative_l2(m.grad, plain.grad), 1e-5) << objective << " micro " << micro;
    }
  }
}

}  // namespace
}  // namespace lobench::seqrec
