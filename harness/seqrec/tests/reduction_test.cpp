// The full-vocabulary loss's reductions (seqrec_loss.hpp LossReduction) reach the variant: on the same
// inputs, mean_positions is V × mean and sum is V·Σw × mean, loss and both gradients, for every CPU
// variant; its memory is counted exactly; a run's config carries the reduction and AdamW's ε to the
// run file; bad names are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <vector>

#include "datasets/random.hpp"
#include "harness/io/h5_io.hpp"
#include "harness/seqrec/seqrec_loss.hpp"
#include "harness/seqrec/seqrec_run_file.hpp"
#include "harness/seqrec/seqrec_runner.hpp"
#include "harness/seqrec/tests/seqrec_test_support.hpp"

namespace lobench::seqrec {
namespace {

namespace fs = std::filesystem;

// Ragged inputs: some positions at weight 0, padding ids (-1 and V) and repeats among the targets.
struct Inputs {
  int64_t P = 37, V = 211, D = 12, L = 3;
  std::vector<float> hidden, table, weights;
  std::vector<int32_t> targets;
  double weight_sum = 0;
  LossBatch batch() const { return {P, V, D, L, hidden.data(), table.data(), targets.data(), weights.data()}; }
};

Inputs make_inputs() {
  Inputs in;
  data::Rng rng(data::stream_key(11, 2, 0));
  for (int64_t i = 0; i < in.P * in.D; ++i) in.hidden.push_back(float(rng.normal()));
  for (int64_t i = 0; i < in.V * in.D; ++i) in.table.push_back(float(0.3 * rng.normal()));
  for (int64_t p = 0; p < in.P; ++p) {
    in.weights.push_back(p % 5 == 0 ? 0.0f : 1.0f);
    in.weight_sum += in.weights.back();
    for (int64_t l = 0; l < in.L; ++l) {
      const uint64_t u = rng.below(8);
      in.targets.push_back(u == 0 ? -1 : u == 1 ? int32_t(in.V) : u == 2 && l > 0 ? in.targets.back()
                                                                                  : int32_t(1 + rng.below(uint64_t(in.V - 1))));
    }
  }
  return in;
}

struct Result {
  double loss = 0;
  std::vector<float> d_hidden, d_table;
  int64_t peak = 0, predicted = 0;
};

Result run(const std::string& variant, LossReduction r, const Inputs& in) {
  RunOptions o;
  o.threads = 2;
  o.block_v = 64;
  FullVocabularyLoss loss(variant, o, r);
  Result out;
  out.d_hidden.assign(size_t(in.P * in.D), 0.0f);
  out.d_table.assign(size_t(in.V * in.D), 0.0f);
  out.loss = loss.compute(in.batch(), out.d_hidden.data(), out.d_table.data()).loss;
  out.peak = loss.workspace_peak_bytes();
  out.predicted = loss.predicted_working_bytes(in.P, in.V, in.D, in.L);
  return out;
}

using testing::relative_l2;

TEST(SeqrecReduction, MeanPositionsIsVTimesMeanAndSumIsVTimesTheWeightSumTimesMean) {
  const Inputs in = make_inputs();
  for (const char* v : {"dense", "chunked", "fused"}) {
    const Result mean = run(v, LossReduction::mean, in);
    ASSERT_GT(mean.loss, 0.0) << v;
    const double V = double(in.V);
    for (auto [r, factor] : {std::pair{LossReduction::mean_positions, V}, std::pair{LossReduction::sum, V * in.weight_sum}}) {
      const Result x = run(v, r, in);
      EXPECT_LE(std::abs(x.loss - factor * mean.loss) / (factor * mean.loss), 1e-6) << v << " " << to_string(r);
      EXPECT_LE(relative_l2(x.d_hidden, mean.d_hidden, factor), 1e-5) << v << " " << to_string(r);
      EXPECT_LE(relative_l2(x.d_table, mean.d_table, factor), 1e-5) << v << " " << to_string(r);
      EXPECT_EQ(x.peak, x.predicted) << v << " " << to_string(r);  // the [P] scaled weights included
    }
    EXPECT_EQ(mean.peak, mean.predicted) << v;
    EXPECT_EQ(run(v, LossReduction::mean_positions, in).predicted, mean.predicted + in.P * 4) << v;
  }
}

TEST(SeqrecReduction, ZeroWeightEverywhereGivesZeroLossAndGradients) {
  Inputs in = make_inputs();
  std::fill(in.weights.begin(), in.weights.end(), 0.0f);
  const Result x = run("fused", LossReduction::mean_positions, in);
  EXPECT_EQ(x.loss, 0.0);
  for (float g : x.d_hidden) ASSERT_EQ(g, 0.0f);
  for (float g : x.d_table) ASSERT_EQ(g, 0.0f);
}

TEST(SeqrecReduction, NamesAreParsedAndTheSampledObjectiveRefusesSum) {
  EXPECT_EQ(parse_loss_reduction("mean"), LossReduction::mean);
  EXPECT_EQ(parse_loss_reduction("sum"), LossReduction::sum);
  EXPECT_EQ(parse_loss_reduction("mean_positions"), LossReduction::mean_positions);
  EXPECT_EQ(to_string(LossReduction::mean_positions), "mean_positions");
  EXPECT_THROW(parse_loss_reduction("avg"), std::invalid_argument);
  EXPECT_THROW(Objective("sampled", RunOptions{}, 0, LossReduction::sum), std::invalid_argument);
  EXPECT_NO_THROW(Objective("sampled", RunOptions{}, 0, LossReduction::mean_positions));
}

struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("seqrec_reduction_") {}
};

// Through a whole run: the first step's loss (the same initial model on the same batch) is V times the
// paper's under mean_positions, and the run file records the reduction and ε.
TEST(SeqrecReduction, ARunsReductionReachesTheVariantAndItsRunFile) {
  TempDir dir;
  auto config = [&](const std::string& reduction) {
    SeqrecConfig c = testing::tiny_run("fused", dir.path / (reduction + ".h5"));
    c.lr = SeqrecConfig{}.lr;
    c.reduction = reduction;
    c.adam_eps = 1e-12f;
    c.steps = 1;
    c.eval_every = -1;
    c.threads = 1;
    return c;
  };
  std::ostringstream log, progress;
  double first[2];
  int i = 0;
  for (const char* r : {"mean", "mean_positions"}) {
    const SeqrecConfig c = config(r);
    const SeqrecOutcome o = run_seqrec(c, collect_provenance("test"), log, progress);
    ASSERT_EQ(o.status, "ok") << o.reason;
    EXPECT_EQ(o.measured.loss_workspace, o.predicted.loss_workspace) << r;
    first[i++] = SeqrecRunFile::read_steps(c.out).at(0).loss;
    auto f = h5::open_file_read(c.out);
    EXPECT_EQ(h5::read_attr_string(f, "reduction").value_or(""), r);
    EXPECT_FLOAT_EQ(float(h5::read_attr_double(f, "adam_eps").value_or(0)), 1e-12f);
  }
  const double V = 1754 + 1;  // yambda_like(0.002): 1754 items and padding
  EXPECT_NEAR(first[1] / (V * first[0]), 1.0, 1e-6);
  SeqrecConfig bad = config("avg");
  EXPECT_THROW(validate(bad), std::invalid_argument);
  bad = config("mean");
  bad.adam_eps = -1.0f;
  EXPECT_THROW(validate(bad), std::invalid_argument);
}

}  // namespace
}  // namespace lobench::seqrec
