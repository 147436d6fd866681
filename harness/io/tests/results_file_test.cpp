#include "harness/io/results_file.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "harness/io/merge_runs.hpp"
#include "harness/io/tests/h5_content.hpp"
#include "variants/tests/temp_path.hpp"

namespace lobench {
namespace {

TEST(ResultsFile, AppendsFlushesAndResumes) {
  const std::string path = testing::temp_path("results_file_test.h5");
  Provenance prov = collect_provenance("test argv");
  {
    ResultsFile f(path, prov, OutMode::create_new);
    ResultRow r;
    r.variant.set("chunked");
    r.backend.set("cpu");
    r.V = 100;
    r.status.set("ok");
    f.append(r, {0.5, 0.25});
    r.V = 200;
    r.status.set("skipped");
    r.reason.set("OOM predicted: 3 GiB > 2 GiB");
    f.append(r, {});
    // Flushed per row: a reader sees both rows before the writer closes.
    const auto rows = ResultsFile::read_all(path);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[1].reason.str(), "OOM predicted: 3 GiB > 2 GiB");
    EXPECT_EQ(rows[1].row_id, 1);
    const auto samples = ResultsFile::read_samples(path);
    ASSERT_EQ(samples.size(), 2u);
    EXPECT_EQ(samples[1].row_id, 0);
    EXPECT_EQ(samples[1].sample, 1);
    EXPECT_DOUBLE_EQ(samples[1].seconds, 0.25);
    EXPECT_TRUE(std::isnan(rows[1].time_median_s));  // not measured: NaN, never 0
    EXPECT_TRUE(std::isnan(rows[1].peak_bytes));
  }
  {
    ResultsFile f(path, prov, OutMode::resume);
    EXPECT_EQ(f.rows(), 2);
    ResultRow r;
    r.variant.set("chunked");
    r.backend.set("cpu");
    r.V = 100;
    EXPECT_TRUE(f.has(r.key()));
    r.V = 300;
    EXPECT_FALSE(f.has(r.key()));
    f.append(r, {});
  }
  const auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].row_id, 2);
  auto file = h5::open_file_read(path);
  EXPECT_EQ(h5::read_attr_string(file, "argv").value(), "test argv");
  EXPECT_DOUBLE_EQ(h5::read_attr_double(file, "resume_count").value(), 1.0);
  std::filesystem::remove(path);
}

TEST(ResultsFile, OperandAndDevicePeakRoundTrip) {
  const std::string path = testing::temp_path("results_file_operand.h5");
  {
    ResultsFile f(path, collect_provenance("t"), OutMode::create_new);
    ResultRow r;
    r.variant.set("cuda_fused");
    r.backend.set("cuda");
    r.operand.set("bf16");
    r.peak_device_bytes = 123456789012;
    f.append(r, {});
    ResultRow cpu;
    cpu.variant.set("fused");
    cpu.backend.set("cpu");
    cpu.operand.set("fp32");
    f.append(cpu, {});  // peak_device_bytes left at its default
  }
  const auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].operand.str(), "bf16");
  EXPECT_EQ(rows[0].peak_device_bytes, 123456789012);
  EXPECT_EQ(rows[1].operand.str(), "fp32");
  EXPECT_TRUE(std::isnan(rows[1].peak_device_bytes));
  std::filesystem::remove(path);
}

TEST(ResultsFile, KeyIncludesTheOperandAndAnEmptyOperandIsFp32) {
  ResultRow r;
  r.variant.set("cuda_fused");
  r.backend.set("cuda");
  r.V = 100000;
  r.operand.set("fp32");
  const std::string fp32 = r.key();
  r.operand.set("bf16");
  EXPECT_NE(r.key(), fp32);
  r.operand.set("tf32");
  EXPECT_NE(r.key(), fp32);
  r.operand.set("");  // what a file from before the column reads as
  EXPECT_EQ(r.key(), fp32);
}

// Files written before the e_format column read it as "": such a row is a float32 point, and
// resuming must recognise it (it used to append a duplicate row every time).
TEST(ResultsFile, KeyTreatsAnEmptyEFormatAsFp32) {
  ResultRow r;
  r.variant.set("fused");
  r.backend.set("cpu");
  r.e_format.set("fp32");
  const std::string fp32 = r.key();
  r.e_format.set("");
  EXPECT_EQ(r.key(), fp32);
  r.e_format.set("bfloat16");
  EXPECT_NE(r.key(), fp32);
}

// A run file written before the operand and peak_device_bytes columns existed: its rows read with
// those columns at their defaults, and resuming it matches them as fp32 rows.
TEST(ResultsFile, ReadsAndResumesFilesWithoutTheNewColumns) {
  const std::string path = testing::temp_path("results_file_old.h5");
  struct OldRow {
    int64_t row_id;
    char variant[32];
    char backend[8];
    int64_t V;
    char status[8];
  };
  {
    auto file = h5::create_file(path);
    h5::Handle type(H5Tcreate(H5T_COMPOUND, sizeof(OldRow)), H5Tclose);
    auto str = [&](const char* name, size_t off, size_t n) {
      h5::Handle s(H5Tcopy(H5T_C_S1), H5Tclose);
      H5Tset_size(s, n);
      H5Tinsert(type, name, off, s);
    };
    H5Tinsert(type, "row_id", offsetof(OldRow, row_id), H5T_NATIVE_INT64);
    str("variant", offsetof(OldRow, variant), 32);
    str("backend", offsetof(OldRow, backend), 8);
    H5Tinsert(type, "V", offsetof(OldRow, V), H5T_NATIVE_INT64);
    str("status", offsetof(OldRow, status), 8);
    const hsize_t n = 2, unlimited = H5S_UNLIMITED, chunk = 64;
    h5::Handle space(H5Screate_simple(1, &n, &unlimited), H5Sclose);
    h5::Handle props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_chunk(props, 1, &chunk);
    h5::Handle ds(H5Dcreate2(file, "results", type, space, H5P_DEFAULT, props, H5P_DEFAULT), H5Dclose);
    OldRow rows[2] = {{0, "chunked", "cpu", 100, "ok"}, {1, "dense", "cpu", 200, "skipped"}};
    ASSERT_GE(H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows), 0);
    h5::write_attr(file, "schema_version", int64_t(1));
  }
  auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].variant.str(), "chunked");
  EXPECT_EQ(rows[1].V, 200);
  EXPECT_EQ(rows[1].status.str(), "skipped");
  EXPECT_EQ(rows[0].operand.str(), "");
  EXPECT_TRUE(std::isnan(rows[0].peak_device_bytes));
  EXPECT_TRUE(std::isnan(rows[1].peak_device_bytes));
  EXPECT_TRUE(std::isnan(rows[0].counts_mismatch));  // any column the old file lacks keeps its default

  {
    ResultsFile f(path, collect_provenance("t"), OutMode::resume);
    ResultRow r;
    r.variant.set("chunked");
    r.backend.set("cpu");
    r.V = 100;
    r.operand.set("fp32");
    EXPECT_TRUE(f.has(r.key()));
    r.V = 300;
    f.append(r, {});  // an fp32 row fits the old columns
    r.operand.set("bf16");
    EXPECT_THROW(f.append(r, {}), h5::Error);  // a bf16 row would lose its operand: refused
  }
  rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].V, 300);
  std::filesystem::remove(path);
}

// The committed Table II run file reads, with the columns of schema 3 filled for its CPU rows.
TEST(ResultsFile, ReadsTheCommittedCpuRunFiles) {
  const std::string path = std::string(LOBENCH_SOURCE_DIR) + "/results/cpu/table2.h5";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
  const auto rows = ResultsFile::read_all(path);
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) {
    EXPECT_GT(r.V, 0);
    EXPECT_TRUE(std::isnan(r.peak_device_bytes));
    if (r.backend == "cpu" && r.status == "ok") {
      EXPECT_GE(r.reps, 3);
      EXPECT_GT(r.gemm_gflops, 0);
      EXPECT_LT(r.gemm_gflops, r.fma_peak_gflops);
    }
  }
}

// One small file of each earlier schema version is kept (results/schema/run_vN.h5): it reads, its
// sentinels become NaN, its samples come from the old column, and resuming it appends in its own layout.
TEST(ResultsFile, ReadsAndResumesTheKeptVersion1File) {
  const std::string kept = std::string(LOBENCH_SOURCE_DIR) + "/results/schema/run_v1.h5";
  ASSERT_TRUE(std::filesystem::exists(kept)) << kept;
  const std::string path = testing::temp_path("results_v1_copy.h5");
  std::filesystem::copy_file(kept, path, std::filesystem::copy_options::overwrite_existing);
  auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 9u);
  for (const auto& r : rows) {
    EXPECT_TRUE(std::isnan(r.peak_device_bytes));  // -1 in the file
    if (r.status == "ok") {
      EXPECT_GT(r.time_median_s, 0);
      EXPECT_EQ(r.counts_mismatch, 0);
    } else {
      EXPECT_TRUE(std::isnan(r.time_median_s));  // 0 in the file
      EXPECT_TRUE(std::isnan(r.peak_bytes));
    }
  }
  const auto samples = ResultsFile::read_samples(path);
  EXPECT_EQ(samples.size(), 4u * 2);  // four ok rows, two samples each
  {
    ResultsFile f(path, collect_provenance("t"), OutMode::resume);
    EXPECT_EQ(f.schema_version(), 1);
    EXPECT_TRUE(f.has(rows[0].key()));
    ResultRow r = rows[0];
    r.V = 4242;
    r.status.set("ok");
    r.time_median_s = 0.125;
    f.append(r, {0.125, 0.5});
  }
  rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_EQ(rows[9].V, 4242);
  EXPECT_DOUBLE_EQ(rows[9].time_median_s, 0.125);
  const auto more = ResultsFile::read_samples(path);
  ASSERT_EQ(more.size(), samples.size() + 2);
  EXPECT_DOUBLE_EQ(more.back().seconds, 0.5);
  std::filesystem::remove(path);
}

// Version 2 lacked the yardstick and meter columns: they read as NaN (flags empty), and a resumed
// version-2 file grows in its own layout.
TEST(ResultsFile, ReadsAndResumesTheKeptVersion2File) {
  const std::string kept = std::string(LOBENCH_SOURCE_DIR) + "/results/schema/run_v2.h5";
  ASSERT_TRUE(std::filesystem::exists(kept)) << kept;
  const std::string path = testing::temp_path("results_v2_copy.h5");
  std::filesystem::copy_file(kept, path, std::filesystem::copy_options::overwrite_existing);
  auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 12u);
  int ok = 0;
  for (const auto& r : rows) {
    EXPECT_TRUE(std::isnan(r.fma_peak_gflops));
    EXPECT_TRUE(std::isnan(r.local_gemm_before_gflops));
    EXPECT_TRUE(std::isnan(r.rss_growth_bytes));
    EXPECT_TRUE(std::isnan(r.rank_time_max_s));
    EXPECT_TRUE(r.flags.empty());
    if (r.status == "ok") {
      ++ok;
      EXPECT_GT(r.time_median_s, 0);
      EXPECT_EQ(r.reps, 2);
    }
  }
  EXPECT_EQ(ok, 6);
  EXPECT_EQ(ResultsFile::read_samples(path).size(), 12u);
  {
    ResultsFile f(path, collect_provenance("t"), OutMode::resume);
    EXPECT_EQ(f.schema_version(), 2);
    ResultRow r = rows[0];
    r.V = 4242;
    r.fma_peak_gflops = 99;  // not in that layout: dropped
    f.append(r, {0.25});
  }
  rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 13u);
  EXPECT_EQ(rows[12].V, 4242);
  EXPECT_TRUE(std::isnan(rows[12].fma_peak_gflops));
  std::filesystem::remove(path);
}

// Version 3 lacked origin, timing_source and memory_meter: they read empty, and a resumed version-3 file
// grows in its own layout (rows of built-ins and of a Python variant, backend `python`).
TEST(ResultsFile, ReadsAndResumesTheKeptVersion3File) {
  const std::string kept = std::string(LOBENCH_SOURCE_DIR) + "/results/schema/run_v3.h5";
  ASSERT_TRUE(std::filesystem::exists(kept)) << kept;
  const std::string path = testing::temp_path("results_v3_copy.h5");
  std::filesystem::copy_file(kept, path, std::filesystem::copy_options::overwrite_existing);
  auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 12u);
  int python = 0;
  for (const auto& r : rows) {
    EXPECT_TRUE(r.origin.empty() && r.timing_source.empty() && r.memory_meter.empty());
    EXPECT_EQ(r.status, "ok");
    EXPECT_LT(r.rel_dE_err, 1e-5);
    python += r.backend == "python";
  }
  EXPECT_EQ(python, 4);
  {
    ResultsFile f(path, collect_provenance("t"), OutMode::resume);
    EXPECT_EQ(f.schema_version(), 3);
    ResultRow r = rows[0];
    r.V = 4242;
    r.origin.set("built-in");  // not in that layout: dropped
    f.append(r, {0.25});
  }
  rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 13u);
  EXPECT_EQ(rows[12].V, 4242);
  EXPECT_TRUE(rows[12].origin.empty());
  std::filesystem::remove(path);
}

// `lobench merge` reads an older part too: the kept version-3 file merged alone becomes a current file
// with the same rows and samples, the new columns empty.
TEST(ResultsFile, MergeReadsTheKeptVersion3File) {
  const std::string kept = std::string(LOBENCH_SOURCE_DIR) + "/results/schema/run_v3.h5";
  const std::string out = testing::temp_path("results_v3_merged.h5");
  std::filesystem::remove(out);
  const io::MergeSummary m = io::merge_runs(out, {kept}, collect_provenance("t"), OutMode::create_new);
  EXPECT_EQ(m.rows, 12);
  const auto rows = ResultsFile::read_all(out);
  ASSERT_EQ(rows.size(), 12u);
  EXPECT_EQ(ResultsFile::read_samples(out).size(), 24u);
  EXPECT_TRUE(rows[2].origin.empty());
  {
    ResultsFile f(out, collect_provenance("t"), OutMode::resume);
    EXPECT_EQ(f.schema_version(), io::kSchemaVersion);
  }
  std::filesystem::remove(out);
}

// The merged file is what `lobench merge` wrote before it moved onto io::RunFileWriter's whole-file
// publishing (issue 42): data/merged_v3.h5 (lobench 5f272d9: `merge OUT results/schema/run_v3.h5`) and
// this merge hold the same tables, rows, attributes and /parts, but for the merge's own provenance and
// the part's path.
TEST(ResultsFile, MergeWritesTheContentEarlierLobenchWrote) {
  const std::string kept = std::string(LOBENCH_SOURCE_DIR) + "/results/schema/run_v3.h5";
  const std::string out = testing::temp_path("results_v3_merged_again.h5");
  std::filesystem::remove(out);
  io::merge_runs(out, {kept}, collect_provenance("t"), OutMode::create_new);
  const std::string earlier = std::string(LOBENCH_SOURCE_DIR) + "/harness/io/tests/data/merged_v3.h5";
  // That file is version 4: its /results lacks the columns added since, and says so in schema_version;
  // the rows themselves are compared column by column below (the newer columns NaN on both sides).
  const std::set<std::string> since_version_4 = {"path", "results", "schema_version"};
  EXPECT_EQ(testing::content_differences(testing::h5_content(out, since_version_4, /*without_provenance=*/true),
                                         testing::h5_content(earlier, since_version_4, /*without_provenance=*/true)),
            "");
  const auto merged = ResultsFile::read_all(out), written = ResultsFile::read_all(earlier);
  ASSERT_EQ(merged.size(), written.size());
  for (size_t i = 0; i < merged.size(); ++i)
    for (const io::Column& c : io::result_columns())
      EXPECT_EQ(io::column_text(merged[i], c), io::column_text(written[i], c)) << "row " << i << ", " << c.name;
  // OUT there is refused, and replaced only with --overwrite, by a complete file; a part is never OUT.
  EXPECT_THROW(io::merge_runs(out, {kept}, collect_provenance("t"), OutMode::create_new), std::invalid_argument);
  const std::string part = testing::temp_path("results_v3_part.h5");
  std::filesystem::copy_file(kept, part, std::filesystem::copy_options::overwrite_existing);
  EXPECT_THROW(io::merge_runs(part, {part}, collect_provenance("t"), OutMode::overwrite), std::invalid_argument);
  std::filesystem::remove(part);
  io::merge_runs(out, {kept}, collect_provenance("t"), OutMode::overwrite);
  EXPECT_EQ(ResultsFile::read_all(out).size(), 12u);
  std::filesystem::remove(out);
}

// Version 4 lacked shape_gemm_gflops: it reads as NaN, and a resumed version-4 file grows in its own
// layout (rows of built-ins and of a Python variant, torch_dense).
TEST(ResultsFile, ReadsAndResumesTheKeptVersion4File) {
  const std::string kept = std::string(LOBENCH_SOURCE_DIR) + "/results/schema/run_v4.h5";
  ASSERT_TRUE(std::filesystem::exists(kept)) << kept;
  const std::string path = testing::temp_path("results_v4_copy.h5");
  std::filesystem::copy_file(kept, path, std::filesystem::copy_options::overwrite_existing);
  auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 12u);
  int python = 0;
  for (const auto& r : rows) {
    EXPECT_TRUE(std::isnan(r.shape_gemm_gflops));
    EXPECT_TRUE(r.epilogue.empty());
    EXPECT_NE(r.key().find("epilogue=fp32"), std::string::npos) << r.key();
    EXPECT_GT(r.gemm_gflops, 0);
    EXPECT_EQ(r.status, "ok");
    EXPECT_FALSE(r.origin.empty());
    python += r.backend == "python";
  }
  EXPECT_EQ(python, 4);
  {
    ResultsFile f(path, collect_provenance("t"), OutMode::resume);
    EXPECT_EQ(f.schema_version(), 4);
    ResultRow r = rows[0];
    r.V = 4242;
    r.shape_gemm_gflops = 123;  // not in that layout: dropped
    f.append(r, {0.25});
    // ... but a row of another epilogue would read back as fp32's: refused, the file keeps its rows
    r.V = 4343;
    r.epilogue.set("bf16");
    EXPECT_THROW(f.append(r, {0.25}), h5::Error);
  }
  rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 13u);
  EXPECT_EQ(rows[12].V, 4242);
  EXPECT_TRUE(std::isnan(rows[12].shape_gemm_gflops));
  std::filesystem::remove(path);
}

// A new file is the current version and keeps the columns of version 4 and 5.
TEST(ResultsFile, VersionFiveKeepsWhereARowCameFromHowItWasMeasuredAndItsShapesProduct) {
  const std::string path = testing::temp_path("results_v5.h5");
  {
    ResultsFile f(path, collect_provenance("t"), OutMode::overwrite);
    EXPECT_EQ(f.schema_version(), 5);
    ResultRow r;
    r.variant.set("naive_loop");
    r.origin.set("plugin /x/naive_loop.so sha256=" + std::string(64, 'a') + " abi=2");
    r.timing_source.set("self_timed");
    r.memory_meter.set("framework_counter");
    r.shape_gemm_gflops = 512.5;
    f.append(r, {});
  }
  const auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].shape_gemm_gflops, 512.5);
  EXPECT_EQ(rows[0].origin, "plugin /x/naive_loop.so sha256=" + std::string(64, 'a') + " abi=2");
  EXPECT_EQ(rows[0].timing_source, "self_timed");
  EXPECT_EQ(rows[0].memory_meter, "framework_counter");
  std::filesystem::remove(path);
}

TEST(ResultsFile, AnExistingOutIsNeverTruncatedWithoutBeingAsked) {
  const std::string path = testing::temp_path("results_refuse.h5");
  {
    ResultsFile f(path, collect_provenance("t"), OutMode::create_new);
    ResultRow r;
    r.variant.set("fused");
    f.append(r, {});
  }
  EXPECT_THROW(ResultsFile(path, collect_provenance("t"), OutMode::create_new), std::invalid_argument);
  EXPECT_EQ(ResultsFile::read_all(path).size(), 1u);  // untouched
  // --overwrite replaces it only when the new run is complete: a run that ends without close() (an
  // exception, a crash) leaves it as it was.
  { ResultsFile f(path, collect_provenance("t"), OutMode::overwrite); }
  EXPECT_EQ(ResultsFile::read_all(path).size(), 1u);
  {
    ResultsFile f(path, collect_provenance("t"), OutMode::overwrite);
    EXPECT_EQ(ResultsFile::read_all(path).size(), 1u);  // still the old file while the new one is written
    f.close("2026-01-01T00:00:00Z");
  }
  EXPECT_EQ(ResultsFile::read_all(path).size(), 0u);
  // --resume refuses what is not a run file, and leaves it as it was.
  const std::string text = testing::temp_path("results_not_hdf5.txt");
  { std::ofstream(text) << "precious notes\n"; }
  EXPECT_THROW(ResultsFile(text, collect_provenance("t"), OutMode::resume), std::invalid_argument);
  std::ifstream back(text);
  std::string line;
  std::getline(back, line);
  EXPECT_EQ(line, "precious notes");
  // ... and a directory is never replaced.
  const std::string dir = testing::temp_path("results_dir");
  std::filesystem::create_directories(dir);
  EXPECT_THROW(ResultsFile(dir, collect_provenance("t"), OutMode::overwrite), std::invalid_argument);
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  std::filesystem::remove(dir);
  std::filesystem::remove(text);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace lobench
