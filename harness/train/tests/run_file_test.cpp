#include "harness/train/run_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "harness/train/tests/tiny_data.hpp"

namespace lobench::train {
namespace {

TEST(TrainRunFile, EpochRowsMemoryAndHistogramsRoundTrip) {
  const data::TrainTest d = testing::tiny_xmc(400, 100, 40);
  TrainConfig c;
  c.D = 16;
  c.batch = 50;
  c.epochs = 3;
  c.hist_every = 2;
  c.clf_format = "bf16";
  c.clf_rounding = "sr";
  const auto dir = std::filesystem::temp_directory_path() / ("lobench_train_run_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "run.h5").string();
  const DataShape shape = DataShape::of(d);
  RunOutcome o;
  {
    TrainRunFile f(path, collect_provenance("test argv"), "tiny", c, shape, predict_memory(c, shape));
    o = train_xmc(d, c, nullptr, [&](const EpochRecord& r, const GradientHistogram* h, const GradientHistogram* g) {
      f.append_epoch(r, h, g);
    });
    // rows are on disk before the run is finished
    EXPECT_EQ(TrainRunFile::read_epochs(f.writing_path()).size(), 3u);
    EXPECT_FALSE(std::filesystem::exists(path)) << "the run file appears only when complete";
    f.finish(&o, "ok", "");
  }
  const auto rows = TrainRunFile::read_epochs(path);
  ASSERT_EQ(rows.size(), 3u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].epoch, int64_t(i + 1));
    EXPECT_EQ(rows[i].train_loss, o.epochs[i].train_loss);
    EXPECT_EQ(rows[i].p_at_1, o.epochs[i].p[0]);
    EXPECT_EQ(rows[i].psp_at_5, o.epochs[i].psp[2]);
  }
  auto f = h5::open_file_read(path);
  EXPECT_EQ(h5::read_attr_string(f, "argv").value_or(""), "test argv");
  EXPECT_EQ(h5::read_attr_string(f, "clf_rounding").value_or(""), "stochastic");
  EXPECT_EQ(h5::read_attr_string(f, "status").value_or(""), "ok");
  h5::Handle mem(H5Gopen2(f, "memory", H5P_DEFAULT), H5Gclose);
  const auto measured = h5::read_attr_double(mem, "measured_peak_bytes");
  const auto predicted = h5::read_attr_double(mem, "predicted_peak_bytes");
  ASSERT_TRUE(measured && predicted);
  EXPECT_EQ(*measured, *predicted);
  const auto hist = h5::read<int64_t>(f, "grad_hist");
  ASSERT_EQ(hist.dim(0), 3);
  ASSERT_EQ(hist.dim(1), GradientHistogram::kBins);
  int64_t total = 0;
  for (int64_t v : hist.data) total += v;
  EXPECT_EQ(total, o.grad_hist.total());
  const auto ghist = h5::read<int64_t>(f, "logit_grad_hist");
  ASSERT_EQ(ghist.dim(0), 3);
  int64_t gtotal = 0;
  for (int64_t v : ghist.data) gtotal += v;
  EXPECT_EQ(gtotal, o.logit_grad_hist.total());
  EXPECT_GT(gtotal, 0);
  std::filesystem::remove_all(dir);
}

// The /epochs table as stored: the columns of LOBENCH_XMC_EPOCH_COLUMNS, in their order, with the
// HDF5 classes readers (h5py, results/elmo/README.md) rely on; the file format did not change when the
// table's hand-built compound type became the declared one.
TEST(TrainRunFile, EpochTableIsTheDeclaredOne) {
  const std::vector<std::string> expected = {
      "epoch",     "steps",     "train_loss", "test_loss", "p_at_1",   "p_at_3",   "p_at_5",
      "ndcg_at_1", "ndcg_at_3", "ndcg_at_5",  "psp_at_1",  "psp_at_3", "psp_at_5", "lr_enc",
      "lr_clf",    "epoch_s",   "eval_s",     "weight_zero_fraction", "weight_mean_abs",
      "weight_non_finite", "peak_bytes", "utc"};
  const auto& columns = EpochRow::columns();
  ASSERT_EQ(columns.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(columns[i].name, expected[i]);
  const data::TrainTest d = testing::tiny_xmc(100, 50, 20);
  TrainConfig c;
  c.D = 8;
  c.batch = 50;
  c.epochs = 1;
  const auto dir = std::filesystem::temp_directory_path() / ("lobench_train_table_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "run.h5").string();
  const DataShape shape = DataShape::of(d);
  {
    TrainRunFile f(path, collect_provenance("test"), "tiny", c, shape, predict_memory(c, shape));
    const RunOutcome o = train_xmc(d, c, nullptr, [&](const EpochRecord& r, const GradientHistogram* h,
                                                       const GradientHistogram* g) { f.append_epoch(r, h, g); });
    f.finish(&o, "ok", "");
  }
  auto f = h5::open_file_read(path);
  h5::Handle ds(H5Dopen2(f, "epochs", H5P_DEFAULT), H5Dclose);
  h5::Handle type(H5Dget_type(ds), H5Tclose);
  ASSERT_EQ(H5Tget_nmembers(type), int(expected.size()));
  for (unsigned i = 0; i < expected.size(); ++i) {
    char* name = H5Tget_member_name(type, i);
    EXPECT_EQ(std::string(name), expected[i]);
    H5free_memory(name);
    const H5T_class_t cls = H5Tget_member_class(type, i);
    EXPECT_EQ(cls, expected[i] == "utc" ? H5T_STRING : columns[i].kind == io::ColumnKind::float64 ? H5T_FLOAT : H5T_INTEGER)
        << expected[i];
  }
  const auto rows = TrainRunFile::read_epochs(path);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].utc.view().size(), 20u) << rows[0].utc;  // 2026-01-02T03:04:05Z
  std::filesystem::remove_all(dir);
}

TEST(TrainRunFile, HistogramBinsAreExactAtPowersOfTwo) {
  GradientHistogram h;
  const float xs[] = {0.0f, -0.0f, 0x1.0p-17f, 0x1.fffffep-17f, 0x1.0p-16f, 0x1.0p-10f, -0x1.8p-10f, 448.0f,
                      INFINITY, 0x1.0p-60f, 0x1.0p+20f};
  h.add(xs, 11);
  EXPECT_EQ(h.counts[GradientHistogram::kZero], 2);
  EXPECT_EQ(h.counts[GradientHistogram::kNonFinite], 1);
  EXPECT_EQ(h.counts[GradientHistogram::kTiny], 1);
  EXPECT_EQ(h.counts[GradientHistogram::kHuge], 1);
  EXPECT_EQ(h.nonzero_below_pow2(-16), 3);  // 2^-60, 2^-17, just below 2^-16
  EXPECT_EQ(h.nonzero_below_pow2(-10), 4);
  EXPECT_EQ(h.nonzero_below_pow2(-9), 6);
  EXPECT_EQ(h.at_or_above_pow2(8), 2);  // 448 and 2^20
  EXPECT_EQ(h.total(), 11);
}

}  // namespace
}  // namespace lobench::train
