// train-xmc with the classifier sharded by labels, under mpirun (-np 2 and -np 3): the same training
// as one process within the accuracy rules, bit-identical when repeated, the memory per rank as
// predicted, and a shard too small stopping every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <tuple>

#include "variants/accuracy.hpp"
#include "harness/shard/label_shard.hpp"
#include "harness/train/tests/tiny_data.hpp"

namespace lobench::shard {
namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

train::TrainConfig small_config(const std::string& format, const std::string& rounding, train::UpdateMode mode) {
  train::TrainConfig c;
  c.D = 16;
  c.epochs = 2;
  c.batch = 64;
  c.max_steps = 12;
  c.clf_format = format;
  c.clf_rounding = rounding;
  c.mode = mode;
  c.dropout = 0.2f;
  c.threads = 1;
  c.seed = 3;
  return c;
}

// Within the accuracy rules of a step (1e-6 for losses, 1e-5 for the weights' statistic), P@k exact
// unless a score tie flips (none on these inputs).
void expect_same_training(const train::RunOutcome& a, const train::RunOutcome& b, const std::string& what) {
  ASSERT_EQ(a.epochs.size(), b.epochs.size()) << what;
  for (size_t e = 0; e < a.epochs.size(); ++e) {
    const train::EpochRecord &x = a.epochs[e], &y = b.epochs[e];
    EXPECT_LE(relative_error(x.train_loss, y.train_loss), 1e-6) << what << " epoch " << e;
    EXPECT_LE(relative_error(x.test_loss, y.test_loss), 1e-6) << what << " epoch " << e;
    EXPECT_LE(relative_error(x.weight_mean_abs, y.weight_mean_abs), 1e-5) << what << " epoch " << e;
    EXPECT_EQ(x.weight_zero_fraction, y.weight_zero_fraction) << what;
    for (int i = 0; i < 3; ++i) {
      EXPECT_NEAR(x.p[i], y.p[i], 1e-12) << what << " P@" << 2 * i + 1;
      EXPECT_NEAR(x.psp[i], y.psp[i], 1e-9) << what << " PSP@" << 2 * i + 1;
    }
  }
}

TEST(LabelShardedTraining, EqualsOneProcessAndRepeatsBitForBit) {
  const data::TrainTest d = train::testing::tiny_xmc(600, 150, 61);  // 61 labels: ragged over 2 and 3 ranks
  for (const auto& [format, rounding, mode] :
       {std::tuple{"fp32", "rne", train::UpdateMode::fused}, std::tuple{"fp32", "rne", train::UpdateMode::separate},
        std::tuple{"bfloat16", "sr", train::UpdateMode::fused}}) {
    const train::TrainConfig cfg = small_config(format, rounding, mode);
    const std::string what = fmt::format("{} {} {}", format, rounding, train::to_string(mode));
    CommStats st;
    const train::RunOutcome a = train_xmc_sharded(MPI_COMM_WORLD, d, cfg, &st);
    const train::RunOutcome b = train_xmc_sharded(MPI_COMM_WORLD, d, cfg);
    EXPECT_GT(st.bytes_sent, 0);
    // Repeated: bit for bit (fixed-order sums, identical replicated encoders).
    ASSERT_EQ(a.epochs.size(), b.epochs.size());
    for (size_t e = 0; e < a.epochs.size(); ++e) {
      EXPECT_EQ(a.epochs[e].train_loss, b.epochs[e].train_loss) << what;
      EXPECT_EQ(a.epochs[e].test_loss, b.epochs[e].test_loss) << what;
      EXPECT_EQ(a.epochs[e].weight_mean_abs, b.epochs[e].weight_mean_abs) << what;
    }
    // Every rank agrees on what was learnt (the sums and the merged top-k are the same everywhere).
    double loss = a.epochs.back().train_loss, p1 = a.epochs.back().p[0], max_loss = 0, max_p1 = 0;
    MPI_Allreduce(&loss, &max_loss, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&p1, &max_p1, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_EQ(loss, max_loss) << what;
    EXPECT_EQ(p1, max_p1) << what;
    // Memory: exactly as predicted on every rank, and less than one process's head.
    EXPECT_EQ(a.measured_train_peak, a.predicted.train.total()) << what;
    EXPECT_EQ(a.measured_peak, a.predicted.peak(/*evaluates=*/true)) << what;  // the test split scored too
    if (world_rank() == 0) {
      const train::RunOutcome single = train::train_xmc(d, cfg);
      EXPECT_LT(a.predicted.train.weights, single.predicted.train.weights) << what;
      // fp32: every update is the same arithmetic; only dH's summation order differs (rounding-level).
      // bf16 with stochastic rounding: the same random word per element, but a rounding-level change in
      // an update can move a weight by one bf16 step, so the losses are compared more loosely there.
      if (std::string(format) == "fp32") expect_same_training(a, single, what);
      else
        for (size_t e = 0; e < a.epochs.size(); ++e)
          EXPECT_LE(relative_error(a.epochs[e].train_loss, single.epochs[e].train_loss), 1e-3) << what;
    }
  }
}

TEST(LabelShardedTraining, ShardTooSmallStopsEveryRank) {
  const data::TrainTest d = train::testing::tiny_xmc(200, 50, 12);  // 12 labels over 3 ranks: 4 each, < 5
  int R = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &R);
  const train::TrainConfig cfg = small_config("fp32", "rne", train::UpdateMode::fused);
  if (R * 5 > 12) {
    EXPECT_THROW(train_xmc_sharded(MPI_COMM_WORLD, d, cfg), RankFailure);
  } else {
    train::TrainConfig bad = cfg;
    bad.hist_every = 1;  // not available sharded: every rank refuses
    EXPECT_THROW(train_xmc_sharded(MPI_COMM_WORLD, d, bad), RankFailure);
  }
}

}  // namespace
}  // namespace lobench::shard
