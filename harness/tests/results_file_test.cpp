#include "results_file.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>

#include "tests/temp_path.hpp"

namespace lobench {
namespace {

TEST(ResultsFile, AppendsFlushesAndResumes) {
  const std::string path = testing::temp_path("results_file_test.h5");
  Provenance prov = collect_provenance("test argv");
  {
    ResultsFile f(path, prov, false);
    ResultRow r;
    r.set_variant("chunked");
    r.set_backend("cpu");
    r.V = 100;
    r.set_status("ok");
    r.time_samples_s[0] = 0.5;
    f.append(r);
    r.V = 200;
    r.set_status("skipped");
    r.set_reason("OOM predicted: 3 GiB > 2 GiB");
    f.append(r);
    // Flushed per row: a reader sees both rows before the writer closes.
    const auto rows = ResultsFile::read_all(path);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_STREQ(rows[1].reason, "OOM predicted: 3 GiB > 2 GiB");
    EXPECT_EQ(rows[1].row_id, 1);
    EXPECT_DOUBLE_EQ(rows[0].time_samples_s[0], 0.5);
  }
  {
    ResultsFile f(path, prov, true);
    EXPECT_EQ(f.rows(), 2);
    ResultRow r;
    r.set_variant("chunked");
    r.set_backend("cpu");
    r.V = 100;
    EXPECT_TRUE(f.has(r.key()));
    r.V = 300;
    EXPECT_FALSE(f.has(r.key()));
    f.append(r);
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
    ResultsFile f(path, collect_provenance("t"), false);
    ResultRow r;
    r.set_variant("cuda_fused");
    r.set_backend("cuda");
    r.set_operand("bf16");
    r.peak_device_bytes = 123456789012;
    f.append(r);
    ResultRow cpu;
    cpu.set_variant("fused");
    cpu.set_backend("cpu");
    cpu.set_operand("fp32");
    f.append(cpu);  // peak_device_bytes left at its default
  }
  const auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_STREQ(rows[0].operand, "bf16");
  EXPECT_EQ(rows[0].peak_device_bytes, 123456789012);
  EXPECT_STREQ(rows[1].operand, "fp32");
  EXPECT_EQ(rows[1].peak_device_bytes, -1);
  std::filesystem::remove(path);
}

TEST(ResultsFile, KeyIncludesTheOperandAndAnEmptyOperandIsFp32) {
  ResultRow r;
  r.set_variant("cuda_fused");
  r.set_backend("cuda");
  r.V = 100000;
  r.set_operand("fp32");
  const std::string fp32 = r.key();
  r.set_operand("bf16");
  EXPECT_NE(r.key(), fp32);
  r.set_operand("tf32");
  EXPECT_NE(r.key(), fp32);
  r.set_operand("");  // what a file from before the column reads as
  EXPECT_EQ(r.key(), fp32);
}

// Files written before the e_format column read it as "": such a row is a float32 point, and
// resuming must recognise it (it used to append a duplicate row every time).
TEST(ResultsFile, KeyTreatsAnEmptyEFormatAsFp32) {
  ResultRow r;
  r.set_variant("fused");
  r.set_backend("cpu");
  r.set_e_format("fp32");
  const std::string fp32 = r.key();
  r.set_e_format("");
  EXPECT_EQ(r.key(), fp32);
  r.set_e_format("bfloat16");
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
  }
  auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_STREQ(rows[0].variant, "chunked");
  EXPECT_EQ(rows[1].V, 200);
  EXPECT_STREQ(rows[1].status, "skipped");
  EXPECT_STREQ(rows[0].operand, "");
  EXPECT_EQ(rows[0].peak_device_bytes, -1);
  EXPECT_EQ(rows[1].peak_device_bytes, -1);
  EXPECT_EQ(rows[0].counts_mismatch, -1);  // any column the old file lacks keeps its default

  {
    ResultsFile f(path, collect_provenance("t"), true);
    ResultRow r;
    r.set_variant("chunked");
    r.set_backend("cpu");
    r.V = 100;
    r.set_operand("fp32");
    EXPECT_TRUE(f.has(r.key()));
    r.V = 300;
    f.append(r);  // an fp32 row fits the old columns
    r.set_operand("bf16");
    EXPECT_THROW(f.append(r), h5::Error);  // a bf16 row would lose its operand: refused
  }
  rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].V, 300);
  std::filesystem::remove(path);
}

// The run files committed before the GPU columns still read.
TEST(ResultsFile, ReadsTheCommittedCpuRunFiles) {
  const std::string path = std::string(LOBENCH_SOURCE_DIR) + "/results/cpu/table2_quiet.h5";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
  const auto rows = ResultsFile::read_all(path);
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) {
    EXPECT_GT(r.V, 0);
    EXPECT_EQ(r.peak_device_bytes, -1);
    EXPECT_STREQ(r.operand, "");
  }
}

}  // namespace
}  // namespace lobench
