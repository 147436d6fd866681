#include "sweep.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <cmath>

#include "args_file.hpp"
#include "tests/temp_path.hpp"
#include "results_file.hpp"

namespace lobench {
namespace {

SweepSpec small_spec(const std::string& out) {
  SweepSpec s;
  s.B = {1};
  s.N = {37};
  s.V = {100, 333};
  s.D = {8};
  s.L = {3};
  s.variants = {"dense", "chunked"};
  s.threads = {2};
  s.reps = 2;
  s.warmup = 0;
  s.mem_limit = int64_t(1) << 30;
  s.out = out;
  return s;
}

TEST(Sweep, RecordsEveryPointWithAccuracyAndResumesWithoutDuplicates) {
  const std::string path = testing::temp_path("sweep_test.h5");
  std::ostringstream table, progress;
  SweepSpec spec = small_spec(path);
  ASSERT_EQ(run_sweep(spec, collect_provenance("t"), table, progress), 0);
  auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& r : rows) {
    EXPECT_STREQ(r.status, "ok");
    EXPECT_LE(r.rel_loss_err, 1e-6);
    EXPECT_LE(r.rel_dA_err, 1e-5);
    EXPECT_LE(r.rel_dE_err, 1e-5);
    EXPECT_EQ(r.counts_mismatch, 0);
    EXPECT_GT(r.time_median_s, 0.0);
    EXPECT_TRUE(std::isnan(r.time_samples_s[2]));  // reps = 2: the rest is NaN
    EXPECT_GT(r.gemm_gflops, 0.0);
    EXPECT_LE(r.peak_bytes, r.predicted_bytes);
  }
  EXPECT_NE(progress.str().find("ETA"), std::string::npos);
  EXPECT_NE(table.str().find("chunked"), std::string::npos);

  // Resuming the same sweep adds nothing; widening it adds only the new points.
  spec.resume = true;
  run_sweep(spec, collect_provenance("t"), table, progress);
  EXPECT_EQ(ResultsFile::read_all(path).size(), 4u);
  spec.V = {100, 333, 500};
  run_sweep(spec, collect_provenance("t"), table, progress);
  rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[4].V, 500);
  EXPECT_EQ(rows[5].V, 500);
  std::filesystem::remove(path);
}

TEST(Sweep, PointsOverTheMemoryLimitAreSkippedWithTheReason) {
  const std::string path = testing::temp_path("sweep_oom.h5");
  SweepSpec spec = small_spec(path);
  spec.N = {64};
  spec.V = {5000};
  spec.mem_limit = 2 << 20;  // dense needs 3·64·5000·4 B = 3.7 MiB
  std::ostringstream table, progress;
  run_sweep(spec, collect_provenance("t"), table, progress);
  const auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_STREQ(rows[0].variant, "dense");
  EXPECT_STREQ(rows[0].status, "skipped");
  EXPECT_EQ(std::string(rows[0].reason).rfind("OOM predicted", 0), 0u) << rows[0].reason;
  EXPECT_STREQ(rows[1].status, "ok");
  std::filesystem::remove(path);
}

TEST(Sweep, UnknownVariantIsAnError) {
  SweepSpec spec = small_spec("/tmp/never_written.h5");
  spec.variants = {"no_such"};
  std::ostringstream a, b;
  EXPECT_THROW(run_sweep(spec, collect_provenance("t"), a, b), std::invalid_argument);
}

TEST(ArgsFile, ExpandsNamedSweepFiles) {
  const std::string path = testing::temp_path("sweep.args");
  {
    std::ofstream f(path);
    f << "# a comment\n--V 100,200   # trailing comment\n--reps 3\n";
  }
  std::string at = "@" + path;
  std::vector<char*> argv = {const_cast<char*>("lobench"), const_cast<char*>("run"), at.data(), const_cast<char*>("--B")};
  const auto out = expand_args_files(int(argv.size()), argv.data());
  EXPECT_EQ(out, (std::vector<std::string>{"lobench", "run", "--V", "100,200", "--reps", "3", "--B"}));
  std::string missing = "@/no/such/file.args";
  argv[2] = missing.data();
  EXPECT_THROW(expand_args_files(int(argv.size()), argv.data()), std::runtime_error);
}

TEST(RunCommand, OptionsAfterANamedSweepOverrideItsValues) {
  const std::string args = testing::temp_path("override.args"), out = testing::temp_path("override.h5");
  {
    std::ofstream f(args);
    f << "--B 2,3 --N 5 --V 50,60 --D 4 --L 2 --variants dense,chunked --reps 3\n";
  }
  const std::string cmd = std::string(LOBENCH_EXE) + " run @" + args + " --B 1 --V 70 --variants chunked --reps 1 --out " +
                          out + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const auto rows = ResultsFile::read_all(out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].B, 1);
  EXPECT_EQ(rows[0].N, 5);
  EXPECT_EQ(rows[0].V, 70);
  EXPECT_EQ(rows[0].reps, 1);
  EXPECT_STREQ(rows[0].variant, "chunked");
  const std::string bad = std::string(LOBENCH_EXE) + " run --V 10,x --out " + out + " > /dev/null 2>&1";
  EXPECT_NE(std::system(bad.c_str()), 0);
  std::filesystem::remove(args);
  std::filesystem::remove(out);
}

}  // namespace
}  // namespace lobench
