#include "harness/train/trainer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "datasets/arff.hpp"
#include "harness/train/tests/tiny_data.hpp"
#include "harness/io/h5_io.hpp"
#include "harness/train/xmc_sweep.hpp"
#include "variants/tests/scoped_env.hpp"

namespace lobench::train {
namespace {

TrainConfig tiny_config() {
  TrainConfig c;
  c.D = 64;
  c.batch = 64;
  c.epochs = 5;
  c.dropout = 0.2f;
  c.enc_lr = 3e-3f;
  c.clf_lr = 0.02f;
  c.threads = 2;
  return c;
}

// P@1 of guessing: the mean number of labels per row over the number of labels.
double chance_p1(const data::SparseDataset& d) { return double(d.labels.nnz()) / double(d.rows()) / double(d.num_labels); }

TEST(TrainXmc, TinySyntheticRunLearns) {
  const data::TrainTest d = testing::tiny_xmc();
  const double chance = chance_p1(d.test);
  for (const char* fmt : {"fp32", "bf16"}) {
    SCOPED_TRACE(fmt);
    TrainConfig c = tiny_config();
    c.clf_format = fmt;
    c.clf_rounding = "sr";
    const RunOutcome o = train_xmc(d, c);
    ASSERT_EQ(o.epochs.size(), 5u);
    const EpochRecord& last = o.epochs.back();
    EXPECT_GT(last.p[0], 0.5) << "chance is " << chance;
    EXPECT_GT(last.p[0], 20 * chance);
    EXPECT_LT(last.train_loss, o.epochs.front().train_loss);
    EXPECT_GE(last.p[0], last.p[2]);  // P@1 >= P@5 with ~3 labels per row
    EXPECT_GT(last.ndcg[2], 0.0);
    EXPECT_GT(last.psp[0], 0.0);
    for (const EpochRecord& e : o.epochs) EXPECT_TRUE(std::isfinite(e.test_loss));
  }
  // ... and a model that does not learn stays near chance.
  TrainConfig frozen = tiny_config();
  frozen.enc_lr = 0;
  frozen.clf_lr = 0;
  frozen.epochs = 1;
  EXPECT_LT(train_xmc(d, frozen).epochs.back().p[0], 5 * chance);
}

TEST(TrainXmc, SameSeedSameRun) {
  const data::TrainTest d = testing::tiny_xmc(500, 100, 50);
  TrainConfig c = tiny_config();
  c.epochs = 2;
  c.clf_format = "e4m3fn";
  c.clf_rounding = "sr";
  const RunOutcome a = train_xmc(d, c), b = train_xmc(d, c);
  ASSERT_EQ(a.epochs.size(), b.epochs.size());
  for (size_t i = 0; i < a.epochs.size(); ++i) {
    EXPECT_EQ(a.epochs[i].train_loss, b.epochs[i].train_loss);
    EXPECT_EQ(a.epochs[i].p[0], b.epochs[i].p[0]);
  }
  c.seed = 1;
  EXPECT_NE(train_xmc(d, c).epochs[0].train_loss, a.epochs[0].train_loss);
}

TEST(TrainXmc, MaxStepsAndHistograms) {
  const data::TrainTest d = testing::tiny_xmc(500, 100, 50);
  TrainConfig c = tiny_config();
  c.epochs = 3;
  c.max_steps = 10;  // 8 steps per epoch
  c.hist_every = 3;
  int epochs_seen = 0;
  const RunOutcome o = train_xmc(d, c, nullptr, [&](const EpochRecord&, const GradientHistogram* h, const GradientHistogram* g) {
    ++epochs_seen;
    EXPECT_NE(h, nullptr);
    EXPECT_NE(g, nullptr);
  });
  EXPECT_EQ(o.steps, 10);
  EXPECT_EQ(epochs_seen, 2);
  // steps 0, 3, 6, 9 recorded, V*D elements each
  EXPECT_EQ(o.grad_hist.total(), 4 * 50 * int64_t(c.D));
  // G: labels x rows of the recorded steps (steps 0, 3 and 6 have 64 rows; step 9 is the second epoch's
  // first step, 64 rows too)
  EXPECT_EQ(o.logit_grad_hist.total(), 4 * 50 * 64);
  EXPECT_EQ(o.logit_grad_hist.counts[GradientHistogram::kNonFinite], 0);
  EXPECT_TRUE(std::isfinite(o.epochs.back().p[0]));  // the last epoch is evaluated
}

TEST(TrainXmc, CosineScheduleAndWarmup) {
  const data::TrainTest d = testing::tiny_xmc(500, 100, 50);
  TrainConfig c = tiny_config();
  c.epochs = 2;
  c.schedule = "cosine";
  c.warmup_steps = 4;
  const RunOutcome o = train_xmc(d, c);
  // 16 steps, 4 of warmup: the last step's factor is (1 + cos(pi 11/12)) / 2 = 0.017
  EXPECT_NEAR(o.epochs.back().lr_clf, c.clf_lr * 0.5 * (1 + std::cos(M_PI * 11.0 / 12.0)), 1e-6 * c.clf_lr);
  EXPECT_GT(o.epochs.front().lr_clf, 0.5 * c.clf_lr);
}

TEST(TrainXmc, RejectsBadConfiguration) {
  const data::TrainTest d = testing::tiny_xmc(200, 50, 30);
  auto expect_bad = [&](auto mutate, const char* what) {
    TrainConfig c = tiny_config();
    mutate(c);
    try {
      train_xmc(d, c);
      ADD_FAILURE() << "accepted " << what;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_bad([](TrainConfig& c) { c.clf_format = "fp7"; }, "fp7");
  expect_bad([](TrainConfig& c) { c.clf_rounding = "dither"; }, "dither");
  expect_bad([](TrainConfig& c) { c.chunks = 0; }, "--chunks");
  expect_bad([](TrainConfig& c) { c.dropout = 1.5f; }, "--dropout");
  expect_bad([](TrainConfig& c) { c.sr_bits = 5; }, "--sr-bits");
  expect_bad([](TrainConfig& c) { c.schedule = "linear"; }, "--schedule");
  expect_bad([](TrainConfig& c) { c.clf_rounding = "elmo_sr"; }, "elmo_sr");
}

// Real data (skips without ../shared/datasets): Delicious trains to a sensible P@1 in a few epochs.
TEST(TrainXmc, DeliciousLearns) {
  const std::filesystem::path dir = std::filesystem::path(LOBENCH_SHARED_DATASETS) / "xmc";
  if (!std::filesystem::exists(dir / "delicious-train.arff")) GTEST_SKIP() << "no " << dir << "/delicious-*.arff";
  const data::TrainTest d = data::read_mulan(dir, "delicious");
  TrainConfig c;
  c.D = 256;
  c.epochs = 3;
  c.batch = 128;
  c.threads = 2;
  const RunOutcome o = train_xmc(d, c);
  // published 67.8-69.0 after full training; 3 short epochs of a small model are well on the way
  EXPECT_GT(o.epochs.back().p[0], 0.55);
}

// --dataset bibtex: the public set's files under the data folder (the folder holding xmc/, or xmc/
// itself), verified; without --data-dir or LOBENCH_DATA the message says which files and how to pass one.
TEST(TrainXmc, NamedSetsAreReadFromTheDataFolderOnly) {
  const char* env = std::getenv("LOBENCH_DATA");
  const std::string saved = env ? env : "";
  ::unsetenv("LOBENCH_DATA");
  XmcSweepSpec spec;
  spec.dataset = "bibtex";
  try {
    (void)load_xmc_dataset(spec, 0);
    ADD_FAILURE() << "bibtex loaded without a data folder";
  } catch (const std::runtime_error& e) {
    for (const char* part : {"xmc/bibtex-train.arff", "--data-dir", "LOBENCH_DATA"})
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
  if (env) ::setenv("LOBENCH_DATA", saved.c_str(), 1);
  const std::filesystem::path root(LOBENCH_SHARED_DATASETS);
  if (!std::filesystem::exists(root / "xmc" / "bibtex-train.arff")) GTEST_SKIP() << "no " << root << "/xmc/bibtex-*.arff";
  for (const std::filesystem::path& dir : {root, root / "xmc"}) {
    spec.data_dir = dir.string();
    const data::TrainTest d = load_xmc_dataset(spec, 0);
    EXPECT_EQ(d.train.rows(), 4880);
    EXPECT_EQ(d.test.rows(), 2515);
  }
}

// --operand is an axis: its canonical name in the file names and the run file; a bf16 run on a CPU
// without bf16 products (LOBENCH_ISA=avx2 stands for one) is recorded as skipped with the reason while
// the fp32 run trains; tf32 is refused before anything is written.
TEST(TrainXmc, OperandIsAnAxisSkippedWithTheReasonWhereTheCpuCannot) {
  const auto dir = std::filesystem::temp_directory_path() / ("lobench_train_operand_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  XmcSweepSpec spec;
  spec.dataset = "synthetic:tiny";
  spec.syn_scale = 0.02;
  spec.base.epochs = 1;
  spec.base.threads = 1;
  spec.progress = false;
  spec.axes.set("dim", "8");
  spec.axes.set("operand", "fp32,bfloat16");
  spec.out_dir = (dir / "runs").string();
  const auto points = expand_sweep(spec);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_NE(points[1].name.find("_op-bf16_"), std::string::npos) << points[1].name;
  std::ostringstream out, err;
  const int failed = [&] {
    const lobench::testing::ScopedEnv isa("LOBENCH_ISA", "avx2");
    return run_xmc_sweep(spec, collect_provenance("test"), out, err);
  }();
  EXPECT_EQ(failed, 0) << out.str();
  auto attr = [&](const SweepPoint& p, const char* name) {
    auto f = h5::open_file_read((dir / "runs" / (p.name + ".h5")).string());
    return h5::read_attr_string(f, name).value_or("");
  };
  EXPECT_EQ(attr(points[0], "status"), "ok");
  EXPECT_EQ(attr(points[0], "operand"), "fp32");
  EXPECT_EQ(attr(points[1], "status"), "skipped");
  EXPECT_EQ(attr(points[1], "operand"), "bf16");
  EXPECT_NE(attr(points[1], "reason").find("--operand bf16"), std::string::npos) << attr(points[1], "reason");
  EXPECT_NE(attr(points[1], "bf16_kernel").find("none"), std::string::npos) << attr(points[1], "bf16_kernel");
  spec.axes.set("operand", "tf32");
  spec.out_dir = (dir / "tf32").string();
  try {
    run_xmc_sweep(spec, collect_provenance("test"), out, err);
    ADD_FAILURE() << "a tf32 sweep ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--operand tf32"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "tf32"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lobench::train
