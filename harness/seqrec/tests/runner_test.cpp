#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "harness/io/h5_io.hpp"
#include "harness/meters/peak_rss.hpp"
#include "harness/seqrec/seqrec_run_file.hpp"
#include "harness/seqrec/seqrec_runner.hpp"
#include "harness/seqrec/tests/seqrec_test_support.hpp"

namespace lobench::seqrec {
namespace {

namespace fs = std::filesystem;

SeqrecConfig tiny(const std::string& variant, const fs::path& out) { return testing::tiny_run(variant, out); }

struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("seqrec_runner_") {}
};

TEST(SeqrecRunner, MeasuredMemoryEqualsPredictedAndTheRunFileHasEveryStep) {
  TempDir dir;
  for (const char* v : {"chunked", "fused", "dense", "sampled"}) {
    const SeqrecConfig c = tiny(v, dir.path / (std::string(v) + ".h5"));
    std::ostringstream log, progress;
    const SeqrecOutcome o = run_seqrec(c, collect_provenance("test"), log, progress);
    ASSERT_EQ(o.status, "ok") << v << ": " << o.reason;
    EXPECT_EQ(o.steps, 6);
    EXPECT_EQ(o.measured.parameters, o.predicted.parameters) << v;
    EXPECT_EQ(o.measured.gradients, o.predicted.gradients) << v;
    EXPECT_EQ(o.measured.optimizer_state, o.predicted.optimizer_state) << v;
    EXPECT_EQ(o.measured.activations, o.predicted.activations) << v;
    EXPECT_EQ(o.measured.loss_workspace, o.predicted.loss_workspace) << v;
    EXPECT_EQ(o.measured.loss_outputs, o.predicted.loss_outputs) << v;
    EXPECT_GT(o.rss_peak_bytes, 0);
    EXPECT_TRUE(std::isfinite(o.test_hit_at_8)) << v;
    const auto steps = SeqrecRunFile::read_steps(c.out);
    ASSERT_EQ(steps.size(), 6u);
    const int64_t V = 1754 + 1;  // yambda_like(0.002): 1754 items and padding
    for (const StepRow& r : steps) {
      EXPECT_GT(r.loss, 0.0);
      EXPECT_GT(r.step_s, 0.0);
      EXPECT_NEAR(r.step_s, r.forward_s + r.loss_s + r.backward_s + r.optimizer_s, 1e-12);
      // Cut metrics over all V items of every weighted position (none for the sampled objective).
      const int64_t all = r.tp + r.fp + r.fn + r.tn;
      if (std::string(v) == "sampled") EXPECT_EQ(all, 0);
      else EXPECT_TRUE(all > 0 && all % V == 0) << all;
    }
    const auto epochs = SeqrecRunFile::read_epochs(c.out);
    ASSERT_EQ(epochs.size(), 2u);  // 18 users in windows of B = 4: 5 steps an epoch
    auto f = h5::open_file_read(c.out);
    EXPECT_EQ(h5::read_attr_string(f, "status").value_or(""), "ok");
  }
}

// The /steps and /epochs tables as stored: the declared columns (LOBENCH_SEQREC_*_COLUMNS), in their
// order and HDF5 classes, as before they were declared once (h5py readers rely on the names).
TEST(SeqrecRunner, StepAndEpochTablesAreTheDeclaredOnes) {
  TempDir dir;
  const SeqrecConfig c = tiny("fused", dir.path / "run.h5");
  std::ostringstream log, progress;
  ASSERT_EQ(run_seqrec(c, collect_provenance("test"), log, progress).status, "ok");
  const std::vector<std::string> steps = {"step", "epoch", "batch", "loss", "lr", "forward_s", "loss_s", "backward_s",
                                          "optimizer_s", "comm_s", "step_s", "tp", "fp", "fn", "tn", "precision", "recall", "f1",
                                          "loss_workspace_bytes", "rss_bytes"};
  const std::vector<std::string> epochs = {"epoch", "steps", "train_loss", "dev_hit_at_8", "dev_hr_at_10",
                                           "dev_ndcg_at_10", "dev_ndcg_at_20", "test_hit_at_8", "test_hr_at_10",
                                           "test_ndcg_at_10", "test_ndcg_at_20", "epoch_s", "eval_s"};
  auto f = h5::open_file_read(c.out);
  for (const auto& [table, names, columns] : {std::tuple{"steps", steps, &StepRow::columns()},
                                              std::tuple{"epochs", epochs, &EpochRow::columns()}}) {
    ASSERT_EQ(columns->size(), names.size()) << table;
    h5::Handle ds(H5Dopen2(f, table, H5P_DEFAULT), H5Dclose);
    h5::Handle type(H5Dget_type(ds), H5Tclose);
    ASSERT_EQ(H5Tget_nmembers(type), int(names.size())) << table;
    for (unsigned i = 0; i < names.size(); ++i) {
      char* name = H5Tget_member_name(type, i);
      EXPECT_EQ(std::string(name), names[i]) << table;
      H5free_memory(name);
      EXPECT_EQ((*columns)[i].name, names[i]) << table;
      const bool real = (*columns)[i].kind == io::ColumnKind::float64;
      EXPECT_EQ(H5Tget_member_class(type, i), real ? H5T_FLOAT : H5T_INTEGER) << table << "." << names[i];
    }
  }
}

// The RSS peak a run reports is its own: 256 MiB touched and freed before it do not show in it.
TEST(SeqrecRunner, TheRssPeakIsTheRunsOwnNotTheProcesssEarlierPeak) {
  TempDir dir;
  meters::fix_malloc_mmap_threshold();  // the freed block goes back to the kernel
  {
    std::vector<char> big(size_t(256) << 20);
    std::fill(big.begin(), big.end(), char(1));
    // RSS first, then the peak: the peak read later is at least any RSS read before it. (In the other
    // order, reading /proc for the second value can touch a new page, and RSS exceeded the peak by 4 KiB.)
    const int64_t resident = meters::resident_bytes();
    ASSERT_GE(meters::peak_resident_bytes(), resident);
  }
  const int64_t earlier_peak = meters::peak_resident_bytes();
  std::ostringstream log, progress;
  const SeqrecOutcome o = run_seqrec(tiny("fused", dir.path / "rss.h5"), collect_provenance("test"), log, progress);
  ASSERT_EQ(o.status, "ok") << o.reason;
  EXPECT_GT(o.rss_peak_bytes, 0);
  EXPECT_LT(o.rss_peak_bytes, earlier_peak - (int64_t(128) << 20)) << "the 256 MiB block's peak leaked into the run's";
}

TEST(SeqrecRunner, AMemoryLimitBelowThePredictionIsRecordedAsSkipped) {
  TempDir dir;
  SeqrecConfig c = tiny("dense", dir.path / "oom.h5");
  c.mem_limit = 1000;
  std::ostringstream log, progress;
  const SeqrecOutcome o = run_seqrec(c, collect_provenance("test"), log, progress);
  EXPECT_EQ(o.status, "skipped");
  EXPECT_NE(o.reason.find("OOM predicted"), std::string::npos);
  auto f = h5::open_file_read(c.out);
  EXPECT_EQ(h5::read_attr_string(f, "status").value_or(""), "skipped");
  h5::Handle g(H5Gopen2(f, "memory", H5P_DEFAULT), H5Gclose);
  EXPECT_EQ(int64_t(h5::read_attr_double(g, "predicted_total_bytes").value_or(0)), o.predicted.total());
  EXPECT_EQ(SeqrecRunFile::read_steps(c.out).size(), 0u);
}

TEST(SeqrecRunner, TrainingLowersTheLossAndBeatsPopularity) {
  TempDir dir;
  SeqrecConfig c = tiny("chunked", dir.path / "learn.h5");
  c.syn_scale = 0.005;
  c.steps = 0;
  c.epochs = 12;
  c.D = 32;
  c.N = 32;
  std::ostringstream log, progress;
  const SeqrecOutcome o = run_seqrec(c, collect_provenance("test"), log, progress);
  ASSERT_EQ(o.status, "ok") << o.reason;
  const auto steps = SeqrecRunFile::read_steps(c.out);
  ASSERT_GT(steps.size(), 20u);
  double first = 0, last = 0;
  for (size_t i = 0; i < 5; ++i) {
    first += steps[i].loss;
    last += steps[steps.size() - 1 - i].loss;
  }
  EXPECT_LT(last, 0.5 * first);  // from ln 2 per element towards the positives' share
  auto f = h5::open_file_read(c.out);
  const double pop = h5::read_attr_double(f, "popularity_test_hit_at_8").value_or(1.0);
  EXPECT_GT(o.test_hit_at_8, pop) << log.str();
}

TEST(SeqrecRunner, RejectsBadInput) {
  SeqrecConfig c = tiny("chunked", "");
  std::ostringstream log, progress;
  c.dataset = "/no/such/file.txt";
  EXPECT_ANY_THROW(run_seqrec(c, collect_provenance("test"), log, progress));
  c = tiny("nosuch", "");
  EXPECT_THROW(run_seqrec(c, collect_provenance("test"), log, progress), std::invalid_argument);
  c = tiny("chunked", "");
  c.heads = 3;
  EXPECT_THROW(run_seqrec(c, collect_provenance("test"), log, progress), std::invalid_argument);
  c = tiny("chunked", "");
  c.protocol = "leave_one_out";  // with L = 2
  EXPECT_THROW(run_seqrec(c, collect_provenance("test"), log, progress), std::invalid_argument);
}

}  // namespace
}  // namespace lobench::seqrec
