// The whole model: its gradient with each full-vocabulary variant (the accuracy rules: loss to 1e-6,
// gradients to relative L2 1e-5), against finite differences on a tiny model, at 1 and 2 threads bit
// for bit, and its memory counted exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "harness/seqrec/sasrec_model.hpp"
#include "harness/seqrec/tests/gradient_check.hpp"
#include "harness/seqrec/tests/seqrec_test_support.hpp"
#include "harness/seqrec/train_step.hpp"

namespace lobench::seqrec {
namespace {

// A ragged batch: left padding of different lengths, L targets per position with some padding ids
// (-1 and V) and repeats, weight 0 at padded positions.
struct TestBatch {
  int64_t B, N, L;
  std::vector<int32_t> ids, targets;
  std::vector<float> weights;
  Batch view() const { return {B, L, ids.data(), targets.data(), weights.data()}; }
};

TestBatch make_batch(int64_t B, int64_t N, int64_t L, int64_t V, uint64_t seed) {
  TestBatch t{B, N, L, {}, {}, {}};
  data::Rng rng(data::stream_key(seed, 1, 0));
  t.ids.assign(size_t(B * N), 0);
  t.targets.assign(size_t(B * N * L), -1);
  t.weights.assign(size_t(B * N), 0.0f);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t pad = int64_t(rng.below(uint64_t(N / 2 + 1)));
    for (int64_t n = pad; n < N; ++n) {
      const int64_t r = b * N + n;
      t.ids[size_t(r)] = int32_t(1 + rng.below(uint64_t(V - 1)));
      t.weights[size_t(r)] = 1.0f;
      for (int64_t l = 0; l < L; ++l) {
        const uint64_t u = rng.below(10);
        t.targets[size_t(r * L + l)] = u == 0 ? int32_t(V) : u == 1 && l > 0 ? t.targets[size_t(r * L)]
                                                                             : int32_t(1 + rng.below(uint64_t(V - 1)));
      }
    }
  }
  return t;
}

ModelConfig small_config(int64_t V, int threads) {
  ModelConfig c;
  c.V = V;
  c.N = 8;
  c.D = 16;
  c.layers = 2;
  c.heads = 2;
  c.max_batch = 3;
  c.dropout = 0.1f;
  c.seed = 3;
  c.threads = threads;
  return c;
}

struct Gradient {
  double loss = 0;
  std::vector<float> grad;
};

Gradient model_gradient(const ModelConfig& c, const std::string& objective, const TestBatch& batch) {
  CountingAllocator alloc;
  SasRec model(c, alloc);
  model.init();
  RunOptions o;
  o.threads = c.threads;
  o.block_v = 64;  // several vocabulary blocks, a ragged last one
  Objective obj(objective, o, 9);
  TrainStep step(model, obj, alloc);
  const StepRecord r = step.run(batch.view(), /*step=*/5, nullptr);
  return {r.loss, std::vector<float>(model.params().grads(), model.params().grads() + model.params().size())};
}

using testing::relative_l2;

TEST(SeqrecModel, GradientIsTheSameWithDenseChunkedAndFused) {
  const int64_t V = 301;
  const TestBatch batch = make_batch(3, 8, 4, V, 1);
  for (bool tied : {true, false}) {
    ModelConfig c = small_config(V, 2);
    c.tied = tied;
    const Gradient dense = model_gradient(c, "dense", batch);
    ASSERT_GT(dense.loss, 0.0);
    for (const char* v : {"chunked", "fused"}) {
      const Gradient g = model_gradient(c, v, batch);
      EXPECT_LE(std::abs(g.loss - dense.loss) / dense.loss, 1e-6) << v << " tied " << tied;
      EXPECT_LE(relative_l2(g.grad, dense.grad), 1e-5) << v << " tied " << tied;
    }
  }
}

// The loss keeps its outputs (dA, dE) from one step to the next and does not zero them (the variants
// overwrite them, as the step benchmark's repeated runs rely on): a second step, after a first on other
// data, gives bit for bit the gradient of a fresh model on that second batch alone.
TEST(SeqrecModel, AStepDoesNotDependOnThePreviousStepsLossOutputs) {
  const int64_t V = 301;
  const TestBatch first = make_batch(3, 8, 4, V, 5), second = make_batch(3, 8, 4, V, 6);
  for (const char* v : {"dense", "chunked", "fused"}) {
    const ModelConfig c = small_config(V, 2);
    const Gradient fresh = model_gradient(c, v, second);
    CountingAllocator alloc;
    SasRec model(c, alloc);
    model.init();
    RunOptions o;
    o.threads = c.threads;
    o.block_v = 64;
    Objective obj(v, o, 9);
    TrainStep step(model, obj, alloc);
    step.run(first.view(), /*step=*/5, nullptr);
    const StepRecord r = step.run(second.view(), /*step=*/5, nullptr);
    EXPECT_EQ(r.loss, fresh.loss) << v;
    ASSERT_EQ(model.params().size(), int64_t(fresh.grad.size()));
    EXPECT_EQ(std::memcmp(model.params().grads(), fresh.grad.data(), fresh.grad.size() * 4), 0) << v;
  }
}

// The backbone and the sampled objective do not depend on the thread count (bit for bit). The tiled
// loss variants are bit-reproducible for a given thread count but add per-thread dA shares (variants/
// cpu/tile_scan.hpp), so with them a 1- and a 2-thread run agree to rounding only.
TEST(SeqrecModel, GradientDoesNotDependOnTheThreadCount) {
  const int64_t V = 301;
  const TestBatch batch = make_batch(3, 8, 4, V, 2);
  const Gradient one = model_gradient(small_config(V, 1), "sampled", batch);
  const Gradient two = model_gradient(small_config(V, 2), "sampled", batch);
  EXPECT_EQ(one.loss, two.loss);
  ASSERT_EQ(one.grad.size(), two.grad.size());
  EXPECT_EQ(std::memcmp(one.grad.data(), two.grad.data(), one.grad.size() * 4), 0);
  const Gradient c1 = model_gradient(small_config(V, 1), "chunked", batch);
  const Gradient c2 = model_gradient(small_config(V, 2), "chunked", batch);
  const Gradient c2_again = model_gradient(small_config(V, 2), "chunked", batch);
  EXPECT_EQ(std::memcmp(c2.grad.data(), c2_again.grad.data(), c2.grad.size() * 4), 0);
  EXPECT_LE(std::abs(c1.loss - c2.loss) / c1.loss, 1e-6);
  EXPECT_LE(relative_l2(c2.grad, c1.grad), 1e-5);
}

// The same at a shape whose products take every block shape of blocked_matmul.hpp (1,024 rows: 128-row
// blocks; the fc weight gradient [128, 512]: column blocks), bit for bit at 1 and 2 threads.
TEST(SeqrecModel, GradientDoesNotDependOnTheThreadCountAtTallShapes) {
  const int64_t V = 301;
  const TestBatch batch = make_batch(8, 128, 2, V, 7);
  auto config = [&](int threads) {
    ModelConfig c = small_config(V, threads);
    c.N = 128;
    c.D = 128;
    c.layers = 1;
    c.max_batch = 8;
    return c;
  };
  const Gradient one = model_gradient(config(1), "sampled", batch);
  const Gradient two = model_gradient(config(2), "sampled", batch);
  EXPECT_EQ(one.loss, two.loss);
  ASSERT_EQ(one.grad.size(), two.grad.size());
  EXPECT_EQ(std::memcmp(one.grad.data(), two.grad.data(), one.grad.size() * 4), 0);
}

// Finite differences of the whole model's loss on a tiny model (tolerance: gradient_check.hpp; the
// larger init std makes the gradients O(1/V)·O(1) rather than vanishing, so the noise bound holds).
TEST(SeqrecModel, WholeModelGradientMatchesFiniteDifferences) {
  const int64_t V = 23;
  const TestBatch batch = make_batch(2, 5, 2, V, 3);
  // chunked under the paper's mean, under mean_positions (V times the gradient) and with the per-item
  // logit bias, and sampled.
  // The post-LN layout (--block post_ln, S3-Rec's SASRec) under fused and sampled.
  struct Case {
    const char* objective;
    LossReduction reduction;
    bool item_bias;
    bool post_ln = false;
  };
  for (auto [objective, reduction, item_bias, post_ln] :
       {Case{"chunked", LossReduction::mean, false}, Case{"chunked", LossReduction::mean_positions, false},
        Case{"fused", LossReduction::mean, true}, Case{"sampled", LossReduction::mean, false},
        Case{"fused", LossReduction::mean, false, true}, Case{"sampled", LossReduction::mean, false, true}}) {
    ModelConfig c;
    c.V = V;
    c.N = 5;
    c.D = 8;
    c.layers = 2;
    c.heads = 2;
    c.max_batch = 2;
    c.dropout = 0.1f;
    c.init_std = 0.5f;
    c.tied = std::string(objective) != "sampled";
    c.item_bias = item_bias;
    c.post_ln = post_ln;
    CountingAllocator alloc;
    SasRec model(c, alloc);
    model.init();
    if (item_bias)  // away from 0, where a wrong sign or a missing term would hide
      for (int64_t v = 0; v < V; ++v) model.mutable_output_bias()[v] = -1.0f + 0.1f * float(v % 7);
    RunOptions o;
    Objective obj(objective, o, 4, reduction, item_bias);
    TrainStep step(model, obj, alloc);
    step.run(batch.view(), 2, nullptr);
    const double scale = reduction == LossReduction::mean_positions ? 1000.0 / double(V) : 1000.0;
    std::vector<float> analytic(model.params().grads(), model.params().grads() + model.params().size());
    std::vector<float> dh(size_t(2 * 5 * 8)), dt(size_t(V * 8)), db(static_cast<size_t>(V));
    auto f = [&] {
      const float* h = model.forward(batch.ids.data(), 2, 2, true);
      LossBatch lb{10, V, 8, 2, h, model.output_table(), batch.targets.data(), batch.weights.data()};
      lb.bias = model.output_bias();
      return obj.compute(lb, 2, dh.data(), dt.data(), item_bias ? db.data() : nullptr).loss * scale;  // scaled: see below
    };
    // f is the loss ×1000 (mean_positions: ×1000/V) so that its gradients are O(1) like the layer tests'.
    for (float& g : analytic) g *= float(scale);
    for (const ParamInfo& t : model.params().tensors()) {
      const double err = testing::fd_relative_error(model.params().values() + t.ref.offset, t.ref.size,
                                                    analytic.data() + t.ref.offset, f, 40);
      EXPECT_LT(err, testing::kTolerance) << objective << " " << to_string(reduction) << " bias " << item_bias << " post-LN " << post_ln << " "
                                    << t.name;
    }
  }
}

TEST(SeqrecModel, MemoryIsCountedExactly) {
  for (auto [tied, item_bias] : {std::pair{true, false}, std::pair{false, false}, std::pair{true, true}}) {
    ModelConfig c = small_config(301, 2);
    c.tied = tied;
    c.item_bias = item_bias;
    CountingAllocator alloc;
    SasRec model(c, alloc);
    EXPECT_EQ(model.params().size(), SasRec::parameter_count(c));
    EXPECT_EQ(alloc.current_bytes(), ParameterSet::bytes_for(SasRec::parameter_count(c)) + SasRec::activation_bytes(c));
    AdamW opt({}, model.params(), alloc);
    EXPECT_EQ(alloc.current_bytes(), ParameterSet::bytes_for(SasRec::parameter_count(c)) + SasRec::activation_bytes(c) +
                                         AdamW::state_bytes(model.params().size(), OptimizerPrecision::fp32));
  }
}

TEST(SeqrecModel, RejectsBadConfigurationsAndIds) {
  ModelConfig c = small_config(301, 1);
  c.heads = 3;
  CountingAllocator alloc;
  EXPECT_THROW(SasRec(c, alloc), std::invalid_argument);
  c = small_config(301, 1);
  c.N = int64_t(1) << 40;
  EXPECT_THROW(SasRec(c, alloc), std::invalid_argument);
  c = small_config(301, 1);
  SasRec model(c, alloc);
  std::vector<int32_t> ids(size_t(c.N), 1);
  ids[3] = 301;
  EXPECT_THROW(model.forward(ids.data(), 1, 0, true), std::invalid_argument);
  EXPECT_THROW(Objective("nosuch", RunOptions{}, 0), std::invalid_argument);
}

}  // namespace
}  // namespace lobench::seqrec
