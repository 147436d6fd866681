// The per-item logit bias (ModelConfig::item_bias, train-seqrec --output-bias item): the loss with a
// bias against a float64 reference of BCE(h·o + b) for every CPU variant, its memory counted exactly,
// the constant-predictor start it is given, and what it refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "datasets/random.hpp"
#include "harness/io/h5_io.hpp"
#include "harness/seqrec/seqrec_loss.hpp"
#include "harness/seqrec/seqrec_run_file.hpp"
#include "harness/seqrec/seqrec_runner.hpp"
#include "harness/seqrec/tests/loss_reference.hpp"
#include "harness/seqrec/tests/seqrec_test_support.hpp"

namespace lobench::seqrec {
namespace {

using testing::Gradients;
using testing::Inputs;
using testing::make_inputs;
using testing::is_target;
using testing::reference;
using testing::relative_l2;

TEST(ItemBias, EveryVariantMatchesTheFloat64ReferenceAndCountsItsMemory) {
  const Inputs in = make_inputs(1);
  for (LossReduction r : {LossReduction::mean, LossReduction::sum}) {
    const Gradients ref = reference(in, r == LossReduction::mean);
    for (const char* v : {"dense", "chunked", "fused"}) {
      RunOptions o;
      o.threads = 2;
      o.block_v = 64;  // several vocabulary blocks, a ragged last one
      FullVocabularyLoss loss(v, o, r, /*item_bias=*/true);
      std::vector<float> d_hidden(size_t(in.P * in.D), 7.0f), d_table(size_t(in.V * in.D), 0.0f), d_bias(size_t(in.V), 0.0f);
      const LossResult res = loss.compute(in.batch(), d_hidden.data(), d_table.data(), d_bias.data());
      EXPECT_LE(std::abs(res.loss - ref.loss) / ref.loss, 1e-6) << v << " " << to_string(r);
      EXPECT_LE(relative_l2(d_hidden, ref.d_hidden), 1e-5) << v << " " << to_string(r);
      EXPECT_LE(relative_l2(d_table, ref.d_table), 1e-5) << v << " " << to_string(r);
      EXPECT_LE(relative_l2(d_bias, ref.d_bias), 1e-5) << v << " " << to_string(r);
      // d_table and d_bias are accumulated into (a second step adds the same again, exactly: x + x = 2x);
      // d_hidden is overwritten.
      const std::vector<float> table_once = d_table, bias_once = d_bias, hidden_once = d_hidden;
      loss.compute(in.batch(), d_hidden.data(), d_table.data(), d_bias.data());
      for (size_t i = 0; i < d_table.size(); ++i) ASSERT_EQ(d_table[i], 2 * table_once[i]) << v << " " << i;
      for (size_t i = 0; i < d_bias.size(); ++i) ASSERT_EQ(d_bias[i], 2 * bias_once[i]) << v << " " << i;
      EXPECT_EQ(d_hidden, hidden_once) << v;
      EXPECT_EQ(loss.workspace_peak_bytes(), loss.predicted_working_bytes(in.P, in.V, in.D, in.L)) << v;
      EXPECT_EQ(loss.allocated_output_bytes(), loss.output_bytes(in.P, in.V, in.D)) << v;
      EXPECT_GT(loss.output_bytes(in.P, in.V, in.D), FullVocabularyLoss(v, o, r).output_bytes(in.P, in.V, in.D));
    }
  }
}

// b = constant_predictor_logits(...) with every hidden state 0 is the constant predictor, whose bias
// gradient under `sum` is Σ_p w_p (σ(b_v) − y_pv) = (W/2 − n_v)/(W + 1) (n_v counted here independently).
TEST(ItemBias, TheConstantPredictorStartLeavesAtMostHalfAPositionOfGradient) {
  Inputs in = make_inputs(2);
  std::fill(in.hidden.begin(), in.hidden.end(), 0.0f);
  in.bias = constant_predictor_logits(in.targets.data(), in.weights.data(), in.P, in.L, in.V);
  double W = 0;
  for (float w : in.weights) W += w;
  FullVocabularyLoss loss("chunked", RunOptions{}, LossReduction::sum, /*item_bias=*/true);
  std::vector<float> dh(size_t(in.P * in.D)), dt(size_t(in.V * in.D), 0.0f), db(size_t(in.V), 0.0f);
  loss.compute(in.batch(), dh.data(), dt.data(), db.data());
  int64_t seen = 0;
  for (int64_t v = 0; v < in.V; ++v) {
    double n = 0;
    for (int64_t p = 0; p < in.P; ++p) n += in.weights[size_t(p)] * (v >= 1 && is_target(in, p, v) ? 1.0 : 0.0);
    seen += n > 0;
    EXPECT_NEAR(db[size_t(v)], (W / 2 - n) / (W + 1), 1e-5) << "item " << v << " n " << n;
  }
  EXPECT_GT(seen, 20);  // the check covers seen items, not only the unseen ones
  EXPECT_LT(in.bias[0], *std::max_element(in.bias.begin(), in.bias.end()));  // the padding item is never a target
}

TEST(ItemBias, AMismatchedBiasAndTheSampledObjectiveAreRefused) {
  const Inputs in = make_inputs(3);
  std::vector<float> dh(size_t(in.P * in.D)), dt(size_t(in.V * in.D)), db(size_t(in.V));
  FullVocabularyLoss with("fused", RunOptions{}, LossReduction::mean, true), without("fused", RunOptions{});
  EXPECT_THROW(with.compute(in.batch(), dh.data(), dt.data(), nullptr), std::invalid_argument);
  LossBatch no_bias = in.batch();
  no_bias.bias = nullptr;
  EXPECT_THROW(with.compute(no_bias, dh.data(), dt.data(), db.data()), std::invalid_argument);
  EXPECT_THROW(without.compute(in.batch(), dh.data(), dt.data(), db.data()), std::invalid_argument);
  EXPECT_THROW(Objective("sampled", RunOptions{}, 0, LossReduction::mean, true), std::invalid_argument);
}

// A whole run with the bias: memory predicted = measured by part, the run file says so, and the first
// step starts calibrated (the constant predictor's loss, not V·ln 2 per position).
TEST(ItemBias, ARunWithTheBiasCountsItsMemoryAndStartsCalibrated) {
  testing::TempDir dir("seqrec_item_bias_");
  for (const char* v : {"fused", "dense"}) {
    SeqrecConfig c = testing::tiny_run(v, dir.path / (std::string(v) + ".h5"));
    c.item_bias = true;
    std::ostringstream log, progress;
    const SeqrecOutcome o = run_seqrec(c, collect_provenance("test"), log, progress);
    ASSERT_EQ(o.status, "ok") << v << ": " << o.reason;
    EXPECT_EQ(o.measured.parameters, o.predicted.parameters) << v;
    EXPECT_EQ(o.measured.optimizer_state, o.predicted.optimizer_state) << v;
    EXPECT_EQ(o.measured.activations, o.predicted.activations) << v;
    EXPECT_EQ(o.measured.loss_workspace, o.predicted.loss_workspace) << v;
    EXPECT_EQ(o.measured.loss_outputs, o.predicted.loss_outputs) << v;
    auto f = h5::open_file_read(c.out);
    EXPECT_EQ(h5::read_attr_string(f, "output_bias").value_or(""), "item");
    const auto steps = SeqrecRunFile::read_steps(c.out);
    ASSERT_FALSE(steps.empty());
    // `mean`: per element. Uncalibrated (logits ≈ 0) the first loss is ≈ ln 2 = 0.69; at the constant
    // predictor it is about (L/V)·(ln(V/L) + 1) ≈ 0.008 for L = 2 targets among V = 1,755.
    EXPECT_LT(steps[0].loss, 0.05) << v;
  }
}

}  // namespace
}  // namespace lobench::seqrec
