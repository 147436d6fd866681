#include "harness/sweep/run_sweep.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <cmath>
#include <sys/wait.h>
#include <algorithm>
#include <fmt/format.h>

#include "harness/cli/args_file.hpp"
#include "harness/measure.hpp"
#include "harness/sweep/measure_row.hpp"
#include "harness/sweep/step_point.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "variants/cpu/bf16_products.hpp"
#include "variants/cpu/tile_blocks.hpp"
#include "variants/step.hpp"
#include "variants/tests/temp_path.hpp"
#include "harness/io/h5_io.hpp"
#include "harness/io/results_file.hpp"

namespace lobench {
namespace {

using sweep::SweepSettings;

SweepSettings small_spec(const std::string& out) {
  SweepSettings s;
  s.axes = sweep::step_axes(2);
  s.axes.set("B", "1");
  s.axes.set("N", "37");
  s.axes.set("V", "100,333");
  s.axes.set("D", "8");
  s.axes.set("L", "3");
  s.axes.set("variants", "dense,chunked");
  s.reps.fixed_reps = 2;
  s.warmup = 0;
  s.mem_limit = int64_t(1) << 30;
  s.out = out;
  return s;
}



TEST(Sweep, RecordsEveryPointWithAccuracyAndResumesWithoutDuplicates) {
  const std::string path = testing::temp_path("sweep_test.h5");
  std::ostringstream table, progress;
  SweepSettings spec = small_spec(path);
  ASSERT_EQ(sweep::run_sweep(spec, collect_provenance("t"), table, progress), 0);
  auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 4u);
  const double best_sgemm = *h5::read_attr_double(h5::open_file_read(path), "sgemm_best_gflops");
  for (const auto& r : rows) {
    EXPECT_EQ(r.status.str(), "ok");
    // The yardstick of a row with fp32 operands: the larger of the best square SGEMM and the logit
    // product at the row's own shape, both recorded.
    EXPECT_GT(r.shape_gemm_gflops, 0.0);
    EXPECT_EQ(r.gemm_gflops, std::max(best_sgemm, r.shape_gemm_gflops));
    EXPECT_LE(r.rel_loss_err, 1e-6);
    EXPECT_LE(r.rel_dA_err, 1e-5);
    EXPECT_LE(r.rel_dE_err, 1e-5);
    EXPECT_EQ(r.counts_mismatch, 0);
    EXPECT_GT(r.time_median_s, 0.0);
    EXPECT_GE(r.time_cv, 0.0);
    EXPECT_GT(r.gemm_gflops, 0.0);
    // The yardsticks of schema v3: the best SGEMM below the FMA ceiling, the local one both sides.
    EXPECT_LT(r.gemm_gflops, r.fma_peak_gflops);
    EXPECT_GT(r.local_gemm_before_gflops, 0.0);
    EXPECT_GT(r.local_gemm_after_gflops, 0.0);
    // the flags from the columns, plus busy where the step's threads waited for a CPU (said in the reason)
    const bool waited = r.reason.view().find("waited for a CPU") != std::string_view::npos;
    EXPECT_EQ(r.flags.str(), sweep::trust_flags(r, waited ? 1.0 : io::kNotMeasured)) << r.reason.view();
    EXPECT_GE(r.rss_growth_bytes, 0.0);
    EXPECT_LE(r.peak_bytes, r.predicted_bytes);
  }
  // the table says where the product at a shape is the yardstick, and only there
  const bool shape_above = std::any_of(rows.begin(), rows.end(), [&](const io::ResultRow& r) {
    return r.shape_gemm_gflops > best_sgemm;
  });
  EXPECT_EQ(table.str().find("yardstick at P = ") != std::string::npos, shape_above) << table.str();
  EXPECT_EQ(ResultsFile::read_samples(path).size(), 4u * 2);  // reps = 2 per row
  EXPECT_NE(progress.str().find("ETA"), std::string::npos);
  EXPECT_NE(table.str().find("summary: 4 ok, 0 skipped, 0 failed"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("chunked"), std::string::npos);

  // Resuming the same sweep adds nothing; widening it adds only the new points.
  spec.out_mode = OutMode::resume;
  sweep::run_sweep(spec, collect_provenance("t"), table, progress);
  EXPECT_EQ(ResultsFile::read_all(path).size(), 4u);
  spec.axes.set("V", "100,333,500");
  sweep::run_sweep(spec, collect_provenance("t"), table, progress);
  rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[4].V, 500);
  EXPECT_EQ(rows[5].V, 500);
  std::filesystem::remove(path);
}

TEST(Sweep, PointsOverTheMemoryLimitAreSkippedWithTheReason) {
  const std::string path = testing::temp_path("sweep_oom.h5");
  SweepSettings spec = small_spec(path);
  spec.axes.set("N", "64");
  spec.axes.set("V", "5000");
  spec.mem_limit = 2 << 20;  // dense needs 3·64·5000·4 B = 3.7 MiB
  std::ostringstream table, progress;
  sweep::run_sweep(spec, collect_provenance("t"), table, progress);
  const auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].variant.str(), "dense");
  EXPECT_EQ(rows[0].status.str(), "skipped");
  EXPECT_EQ(rows[0].reason.str().rfind("OOM predicted", 0), 0u) << rows[0].reason;
  EXPECT_EQ(rows[1].status.str(), "ok");
  std::filesystem::remove(path);
}

TEST(Sweep, UnknownVariantIsAnError) {
  SweepSettings spec = small_spec("/tmp/never_written.h5");
  spec.axes.set("variants", "no_such");
  std::ostringstream a, b;
  EXPECT_THROW(sweep::run_sweep(spec, collect_provenance("t"), a, b), std::invalid_argument);
}

TEST(Sweep, OperandAxisVariesFastestAfterTheVariantsAndIsValidated) {
  SweepSettings spec = small_spec("/tmp/never_written.h5");
  spec.axes.set("variants", "chunked");
  spec.axes.set("operand", "fp32,tf32,bf16");
  auto points = sweep::step_points(spec.axes, false);
  ASSERT_EQ(points.size(), 6u);  // V = 100, 333 times three operands
  const char* expected[] = {"fp32", "tf32", "bf16"};
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].options.operand, expected[i % 3]);
    EXPECT_EQ(points[i].shape.V, i < 3 ? 100 : 333);
  }
  // With a storage-format axis too: every (format, rounding) carries every operand; fp32 takes no rounding.
  spec.axes.set("e-format", "fp32,bfloat16");
  spec.axes.set("e-rounding", "nearest_even,stochastic");
  spec.axes.set("operand", "fp32,bf16");
  EXPECT_EQ(sweep::step_points(spec.axes, false).size(), 2u * (1 + 2) * 2);

  spec.axes.set("operand", "fp32,fp16");
  try {
    sweep::step_points(spec.axes, false);
    FAIL() << "fp16 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'fp16'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fp32, tf32, bf16"), std::string::npos) << e.what();
  }
  EXPECT_THROW(spec.axes.set("operand", ""), std::invalid_argument);
}

// Aliases are stored under one canonical name, so a resume with another spelling matches.
TEST(Sweep, AliasesAreStoredUnderTheirCanonicalNames) {
  SweepSettings spec = small_spec("/tmp/never_written.h5");
  spec.axes.set("variants", "chunked");
  spec.axes.set("V", "100");
  spec.axes.set("e-format", "bf16, bfloat16");  // a space after the comma is fine
  spec.axes.set("e-rounding", "rne,nearest_even");
  spec.axes.set("operand", "bfloat16,bf16");
  const auto points = sweep::step_points(spec.axes, false);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].options.e_format, "bfloat16");
  EXPECT_EQ(points[0].e_rounding, "nearest_even");
  EXPECT_EQ(points[0].options.operand, "bf16");
}

TEST(Sweep, SizesThatOverflowAndBadThreadCountsAreRefusedBeforeAnythingRuns) {
  SweepSettings spec = small_spec("/tmp/never_written.h5");
  spec.axes.set("B", "4294967296");
  spec.axes.set("N", "4294967296");
  EXPECT_THROW(sweep::step_points(spec.axes, false), std::invalid_argument);
  spec = small_spec("/tmp/never_written.h5");
  spec.axes.set("threads", "0");
  EXPECT_THROW(sweep::step_points(spec.axes, false), std::invalid_argument);
  spec.axes.set("threads", "-1");
  EXPECT_THROW(sweep::step_points(spec.axes, false), std::invalid_argument);
  spec = small_spec("/tmp/never_written.h5");
  spec.axes.set("block-v", "-1");
  EXPECT_THROW(sweep::step_points(spec.axes, false), std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists("/tmp/never_written.h5"));
}

TEST(Sweep, PartitionsTakeEveryNthRowAndTogetherCoverTheSweep) {
  SweepSettings spec = small_spec("");
  std::ostringstream all;
  sweep::list_rows(spec, all);
  std::string joined;
  for (int k = 0; k < 3; ++k) {
    spec.partition = sweep::Partition::parse(fmt::format("{}/3", k));
    std::ostringstream part;
    sweep::list_rows(spec, part);
    std::string text = part.str();
    joined += text.substr(0, text.rfind('\n', text.size() - 2) + 1);  // without its count line
  }
  std::string want = all.str();
  want = want.substr(0, want.rfind('\n', want.size() - 2) + 1);
  auto sorted_lines = [](const std::string& t) {
    std::vector<std::string> v;
    std::istringstream in(t);
    for (std::string l; std::getline(in, l);) v.push_back(l);
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted_lines(joined), sorted_lines(want));
  EXPECT_THROW(sweep::Partition::parse("3/3"), std::invalid_argument);
  EXPECT_THROW(sweep::Partition::parse("1"), std::invalid_argument);
}

// E ~ N(0, 1) does not fit e2m1 (largest finite value 6: about 2e-9 of draws lie beyond, none at this
// size) nor e2m3 (3.75: 1.8e-4 of draws), which has inf: such a point is an expected outcome of a
// format sweep, recorded as skipped with the reason and the count, and the run exits 0; the saturating
// e2m3_sat and the fitting bfloat16 run.
TEST(Sweep, AFormatThatCannotHoldEIsASkippedRowNotAFailure) {
  const std::string path = testing::temp_path("sweep_format_overflow.h5");
  SweepSettings spec = small_spec(path);
  spec.axes.set("V", "3000");
  spec.axes.set("D", "32");
  spec.axes.set("variants", "fused,chunked");
  spec.axes.set("e-format", "e2m3,e2m3_sat,bfloat16");
  std::ostringstream table, progress;
  ASSERT_EQ(sweep::run_sweep(spec, collect_provenance("t"), table, progress), 0) << table.str();
  const auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 6u);
  for (const auto& row : rows) {
    if (row.e_format.str() == "e2m3") {
      EXPECT_EQ(row.status.str(), "skipped") << row.variant;
      EXPECT_EQ(row.reason.str().rfind("E does not fit e2m3: ", 0), 0u) << row.reason;
      EXPECT_NE(row.reason.str().find("largest finite value 3.75"), std::string::npos) << row.reason;
    } else {
      EXPECT_EQ(row.status.str(), "ok") << row.e_format << " " << row.variant << ": " << row.reason;
    }
  }
  std::filesystem::remove(path);
}

// tf32 is a GPU tensor-core format: the CPU variants record it as skipped (bf16 they compute where the
// CPU has AVX512_BF16, and skip with that reason elsewhere).
TEST(Sweep, CpuVariantsRecordGpuOnlyOperandsAsSkippedAndResumeByOperand) {
  const std::string path = testing::temp_path("sweep_operand.h5");
  SweepSettings spec = small_spec(path);
  spec.axes.set("V", "100");
  spec.axes.set("variants", "chunked");
  spec.axes.set("operand", "fp32,tf32");
  std::ostringstream table, progress;
  ASSERT_EQ(sweep::run_sweep(spec, collect_provenance("t"), table, progress), 0);
  auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].operand.str(), "fp32");
  EXPECT_EQ(rows[0].status.str(), "ok");
  EXPECT_TRUE(std::isnan(rows[0].peak_device_bytes));
  EXPECT_EQ(rows[1].operand.str(), "tf32");
  EXPECT_EQ(rows[1].status.str(), "skipped");
  EXPECT_NE(rows[1].reason.str().find("operand tf32"), std::string::npos) << rows[1].reason;
  EXPECT_NE(table.str().find(" tf32 "), std::string::npos) << table.str();  // the swept operand is a column

  // Resume: the fp32 and tf32 rows are distinct points; adding bf16 adds only its row.
  spec.out_mode = OutMode::resume;
  spec.axes.set("operand", "fp32,tf32,bf16");
  sweep::run_sweep(spec, collect_provenance("t"), table, progress);
  rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].operand.str(), "bf16");
  std::filesystem::remove(path);
}

// fp8 operands: each row records the per-tensor scales of A and E in its reason; its kernel errors (against
// the reference on A and E rounded with those scales, point_inputs.cpp) meet the bf16 rule, its errors
// against the original inputs are larger (what the format costs). Where the CPU has no bf16 products the
// rows are skipped naming AVX512_BF16.
TEST(Sweep, Fp8OperandRowsRecordTheirScalesAndAreJudgedOnTheRoundedInputs) {
  const std::string path = testing::temp_path("sweep_fp8.h5");
  SweepSettings spec = small_spec(path);
  spec.axes.set("V", "3000");
  spec.axes.set("D", "32");
  spec.axes.set("variants", "fused,chunked,dense");
  spec.axes.set("operand", "e4m3,e5m2");
  std::ostringstream table, progress;
  ASSERT_EQ(sweep::run_sweep(spec, collect_provenance("t"), table, progress), 0) << table.str();
  const auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 6u);
  for (const auto& row : rows) {
    SCOPED_TRACE(row.variant.str() + " " + row.operand.str() + ": " + row.reason.str());
    if (row.status.str() == "skipped") {
      EXPECT_NE(row.reason.str().find("AVX512_BF16"), std::string::npos);
      continue;
    }
    ASSERT_EQ(row.status.str(), "ok");
    EXPECT_NE(row.reason.str().find(row.operand.str() + " scales: A 2^"), std::string::npos);
    EXPECT_NE(row.reason.str().find(", E 2^"), std::string::npos);
    EXPECT_LE(row.rel_loss_err_kernel, 1e-5);
    EXPECT_LE(row.rel_dA_err_kernel, 4e-3);
    EXPECT_LE(row.rel_dE_err_kernel, 4e-3);
    EXPECT_EQ(row.counts_mismatch, 0);
    EXPECT_GT(row.rel_dE_err, 2 * row.rel_dE_err_kernel);
  }
  std::filesystem::remove(path);
}

// A stand-in for a GPU variant (backend "cuda"), so that the sweep's session path and GPU memory
// limit are exercised on a machine without a GPU: the "device" step is the CPU chunked variant on the
// inputs as a GPU variant reads them (A and E rounded to bfloat16 for bf16 operands), its "device time"
// a fixed number, its device peak a marker.
class FakeSession : public DeviceSession {
 public:
  FakeSession(const StepInputs& in, const std::string& operand, int* steps) : in_(in), steps_(steps) {
    if (operand == "bf16") {  // nearest even, as the GPU kernels load them
      const precision::Quantizer bf16(precision::parse_format("bfloat16"));
      A_.assign(in.A, in.A + in.P * in.D);
      E_.assign(in.E, in.E + in.V * in.D);
      bf16.round(A_, A_);
      bf16.round(E_, E_);
      in_.A = A_.data();
      in_.E = E_.data();
    }
  }
  double run_timed() override {
    RunContext ctx{alloc_, RunOptions{}};
    out_.resize(in_.P, in_.V, in_.D);
    Registry::instance().find("chunked")->run(in_, out_, ctx);
    ++*steps_;
    return 0.25;
  }
  void download(StepOutputs& out) override { out = out_; }
  int64_t peak_working_bytes() const override { return alloc_.peak_bytes(); }
  int64_t peak_device_bytes() const override { return 4242; }
  int64_t io_device_bytes() const override { return 0; }

 private:
  StepInputs in_;
  int* steps_;
  std::vector<float> A_, E_;  // the rounded inputs (bf16)
  CountingAllocator alloc_;
  StepOutputs out_;
};

int fake_steps = 0;

class FakeGpuVariant : public Variant {
 public:
  std::string name() const override { return "test_fake_gpu"; }
  std::string backend() const override { return "cuda"; }
  std::string description() const override { return "harness test stand-in for a GPU variant"; }
  std::optional<std::string> skip_reason(const Shape&, const RunOptions&) const override { return std::nullopt; }
  // Far more than the host limit of these tests: a GPU variant's working set is not host memory.
  int64_t predicted_working_bytes(const Shape&, const RunOptions&) const override { return int64_t(8) << 30; }
  void run(const StepInputs&, StepOutputs&, RunContext&) const override { FAIL() << "timed through run()"; }
  std::unique_ptr<DeviceSession> open_session(const StepInputs& in, const RunOptions& o) const override {
    return std::make_unique<FakeSession>(in, o.operand, &fake_steps);
  }
};
LOBENCH_REGISTER_VARIANT(FakeGpuVariant);

// A CPU "variant" that does no work: its rate is far above any SGEMM, so the sweep measures the
// machine's limits again and, the row still above them, flags it a measurement error.
class InstantCpuVariant : public Variant {
 public:
  std::string name() const override { return "test_instant_cpu"; }
  std::string backend() const override { return "cpu"; }
  std::string description() const override { return "harness test: a step that takes no time"; }
  int64_t predicted_working_bytes(const Shape&, const RunOptions&) const override { return 0; }
  void run(const StepInputs&, StepOutputs&, RunContext&) const override {}
};
LOBENCH_REGISTER_VARIANT(InstantCpuVariant);

// A CPU variant whose dA is twice the right one (fused's, doubled): a plug-in's bug, say.
class DoubledGradientVariant : public Variant {
 public:
  std::string name() const override { return "test_doubled_dA_cpu"; }
  std::string backend() const override { return "cpu"; }
  std::string description() const override { return "harness test: fused with dA doubled"; }
  int64_t predicted_working_bytes(const Shape& s, const RunOptions& o) const override {
    return Registry::instance().find("fused")->predicted_working_bytes(s, o);
  }
  void run(const StepInputs& in, StepOutputs& out, RunContext& ctx) const override {
    Registry::instance().find("fused")->run(in, out, ctx);
    for (float& g : out.dA) g *= 2.0f;
  }
};
LOBENCH_REGISTER_VARIANT(DoubledGradientVariant);

// A finite but wrong result is recorded `ok` (it ran) and flagged `inaccurate`, the reason saying which
// output and how far; a right one beside it is not flagged.
TEST(Sweep, AWrongGradientIsFlaggedInaccurateWithTheReason) {
  const std::string path = testing::temp_path("sweep_inaccurate.h5");
  SweepSettings spec = small_spec(path);
  spec.axes.set("variants", "fused,test_doubled_dA_cpu");
  std::ostringstream table, progress;
  ASSERT_EQ(sweep::run_sweep(spec, collect_provenance("t"), table, progress), 0) << table.str();
  const auto rows = ResultsFile::read_all(path);
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) {
    ASSERT_EQ(r.status.str(), "ok") << r.variant.str() << ": " << r.reason.str();
    const bool wrong = r.variant.str() == "test_doubled_dA_cpu";
    EXPECT_EQ(r.flags.str().find("inaccurate") != std::string::npos, wrong) << r.variant.str() << ": " << r.flags.str();
    if (wrong) {
      EXPECT_NEAR(r.rel_dA_err_kernel, 1.0, 1e-3);
      EXPECT_EQ(r.reason.str().rfind("inaccurate: dA 100 % from the float64 reference", 0), 0u) << r.reason.str();
    }
  }
  std::filesystem::remove(path);
}

// A row with bf16 operands is compared with the larger of the best bf16 square rate (ours or oneDNN's,
// the faster: bf16_gemm_best_gflops) and the bf16 products' logit product at the row's shape, all recorded.
TEST(Sweep, Bf16RowsAreComparedWithTheBf16ProductAtTheirShape) {
  if (auto why = cpu::bf16_products_unavailable()) GTEST_SKIP() << *why;
  const std::string path = testing::temp_path("sweep_bf16_shape.h5");
  SweepSettings spec = small_spec(path);
  spec.axes.set("variants", "fused");
  spec.axes.set("operand", "bf16");
  std::ostringstream table, progress;
  ASSERT_EQ(sweep::run_sweep(spec, collect_provenance("t"), table, progress), 0) << table.str();
  const auto file = h5::open_file_read(path);
  const double bf16_square = *h5::read_attr_double(file, "bf16_gemm_best_gflops");
  const double ours = *h5::read_attr_double(file, "bf16_gemm_gflops");
  const double onednn = h5::read_attr_double(file, "bf16_gemm_onednn_gflops").value_or(std::nan(""));
  EXPECT_EQ(bf16_square, std::isnan(onednn) ? ours : std::max(ours, onednn));
  EXPECT_EQ(h5::read_attr_double(file, "bf16_gemm_onednn_gflops").has_value() ||
                h5::read_attr_string(file, "bf16_gemm_onednn_why").has_value(),
            true)
      << "oneDNN's bf16 rate or the reason it was not measured";
  const auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    ASSERT_EQ(r.status.str(), "ok") << r.reason;
    EXPECT_GT(r.shape_gemm_gflops, 0.0);
    EXPECT_EQ(r.gemm_gflops, std::max(bf16_square, r.shape_gemm_gflops));
    // every path of the shape's product, the fastest named, in the shape's attribute
    const auto paths = h5::read_attr_string(file, fmt::format("shape_gemm_paths_{}x{}x{}_t{}_bf16", r.B * r.N, r.V, r.D, r.threads));
    ASSERT_TRUE(paths.has_value()) << "no shape_gemm_paths attribute for V = " << r.V;
    EXPECT_NE(paths->find("bf16 products ("), std::string::npos) << *paths;
    EXPECT_NE(paths->find(" GFLOP/s; fastest: "), std::string::npos) << *paths;
    RunOptions o;
    o.threads = int(r.threads);
    o.operand = "bf16";
    const cpu::TileBlocks b = cpu::choose_blocks(r.B * r.N, r.V, r.D, o);
    EXPECT_NE(paths->find("; tiles: " + cpu::tile_description(b)), std::string::npos)
        << "the tiles fused and chunked chose: " << *paths;
  }
  std::filesystem::remove(path);
}

// --resume of a version-4 file (no epilogue column: its rows are fp32's) with rows of another epilogue is
// refused before anything is measured or written, the file byte for byte as it was.
TEST(Sweep, ResumingAVersion4FileWithAnotherEpilogueIsRefusedAndLeavesItAsItWas) {
  const std::string path = testing::temp_path("sweep_resume_v4_epilogue.h5");
  std::filesystem::copy_file(std::string(LOBENCH_SOURCE_DIR) + "/results/schema/run_v4.h5", path,
                             std::filesystem::copy_options::overwrite_existing);
  auto bytes = [&] {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  const std::string before = bytes();
  SweepSettings spec = small_spec(path);
  spec.axes.set("epilogue", "bf16");
  spec.out_mode = OutMode::resume;
  std::ostringstream table, progress;
  try {
    sweep::run_sweep(spec, collect_provenance("t"), table, progress);
    ADD_FAILURE() << "not refused: " << table.str();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 4"), std::string::npos) << e.what();
  }
  EXPECT_EQ(bytes(), before);
  std::filesystem::remove(path);
}

TEST(Sweep, ARowAboveTheMachineLimitRemeasuresItAndIsFlaggedAMeasurementError) {
  const std::string path = testing::temp_path("sweep_instant.h5");
  SweepSettings spec = small_spec(path);
  spec.axes.set("V", "20000");
  spec.axes.set("variants", "test_instant_cpu");
  spec.accuracy = false;
  std::ostringstream table, progress;
  ASSERT_EQ(sweep::run_sweep(spec, collect_provenance("t"), table, progress), 0) << table.str();
  const auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_GT(rows[0].gemm_fraction, 1.0);
  EXPECT_NE(rows[0].flags.str().find("above_yardstick"), std::string::npos) << rows[0].flags;
  EXPECT_EQ(rows[0].reason.str().rfind("measurement error", 0), 0u) << rows[0].reason;
  EXPECT_NE(table.str().find("error"), std::string::npos) << table.str();
  std::filesystem::remove(path);
}

TEST(Sweep, GpuVariantsAreTimedThroughTheirSessionAndCheckedAgainstTheGpuLimit) {
  const std::string path = testing::temp_path("sweep_session.h5");
  SweepSettings spec = small_spec(path);
  spec.axes.set("V", "100");
  spec.axes.set("variants", "test_fake_gpu");
  spec.axes.set("operand", "fp32,bf16");
  spec.warmup = 2;
  spec.reps.fixed_reps = 3;
  spec.gpu_mem_limit = int64_t(16) << 30;  // fits the fake's 8 GiB; the host limit (1 GiB) does not matter
  std::ostringstream table, progress;
  fake_steps = 0;
  ASSERT_EQ(sweep::run_sweep(spec, collect_provenance("t"), table, progress), 0) << table.str();
  EXPECT_EQ(fake_steps, 2 * (2 + 3));  // warm-up and timed steps, both operands
  auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    EXPECT_EQ(r.status.str(), "ok") << r.reason;
    EXPECT_EQ(r.backend.str(), "cuda");
    EXPECT_EQ(r.reps, 3);
    EXPECT_DOUBLE_EQ(r.time_median_s, 0.25);
    EXPECT_EQ(r.peak_device_bytes, 4242);
    EXPECT_GT(r.peak_bytes, 0);  // the session's own count
    // Downloaded outputs judged against the float64 reference on the inputs as the "kernel" read them.
    EXPECT_LE(r.rel_loss_err_kernel, 1e-6);
    EXPECT_LE(r.rel_dE_err_kernel, 1e-5);
    EXPECT_EQ(r.counts_mismatch, 0);
  }
  EXPECT_LE(rows[0].rel_loss_err, 1e-6);  // fp32: one reference
  EXPECT_EQ(rows[1].operand.str(), "bf16");
  EXPECT_GT(rows[1].rel_dE_err, 1e-4);  // bf16: the format's cost, against the unrounded inputs
  std::filesystem::remove(path);

  // Over the GPU limit: skipped with the reason, nothing run.
  spec.gpu_mem_limit = int64_t(4) << 30;
  fake_steps = 0;
  sweep::run_sweep(spec, collect_provenance("t"), table, progress);
  rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(fake_steps, 0);
  EXPECT_EQ(rows[0].status.str(), "skipped");
  EXPECT_EQ(rows[0].reason.str().rfind("OOM predicted: 8.00 GiB working", 0), 0u) << rows[0].reason;
  EXPECT_NE(rows[0].reason.str().find("> GPU limit 4.00 GiB"), std::string::npos) << rows[0].reason;
  auto file = h5::open_file_read(path);  // (the first file was removed, so this run created a new one)
  EXPECT_DOUBLE_EQ(h5::read_attr_double(file, "gpu_mem_limit_bytes").value(), double(int64_t(4) << 30));
  std::filesystem::remove(path);
}

// The process's resident-set growth over a dense step, an independent meter, matches the allocator's
// count: its three [P, V] buffers (logits, targets, gradient) of 5 MiB each come from the kernel.
TEST(Sweep, ResidentSetGrowthMatchesTheCountedPeakOfADenseStep) {
  const std::string path = testing::temp_path("sweep_rss.h5");
  SweepSettings spec = small_spec(path);
  spec.axes.set("B", "2");
  spec.axes.set("N", "32");
  spec.axes.set("V", "20000");
  spec.axes.set("variants", "dense");
  spec.accuracy = false;
  std::ostringstream table, progress;
  ASSERT_EQ(sweep::run_sweep(spec, collect_provenance("t"), table, progress), 0) << table.str();
  const auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 1u);
  const double peak = rows[0].peak_bytes;
  ASSERT_GT(peak, 15e6);
  EXPECT_GE(rows[0].rss_growth_bytes, 0.9 * peak) << "peak " << peak;
  EXPECT_LE(rows[0].rss_growth_bytes, peak + 16.0 * 1048576) << "peak " << peak;
  std::filesystem::remove(path);
}

// Adaptive repetitions: at least 3, then until the time and CV targets, bounded by max_reps/max_time.
TEST(Sweep, AdaptiveRepetitionsStopAtTheirTargets) {
  RepPolicy p;
  p.min_time_s = 1.0;
  p.max_time_s = 30.0;
  p.max_reps = 20;
  p.cv_target = 0.05;
  EXPECT_FALSE(p.enough(Samples{{0.5, 0.5, 0.5}}));          // fewer than 4 (the fewest lobench compare tests)
  EXPECT_TRUE(p.enough(Samples{{0.5, 0.5, 0.5, 0.5}}));      // 2 s, CV 0
  EXPECT_FALSE(p.enough(Samples{{0.1, 0.1, 0.1, 0.1}}));     // 0.4 s: under min_time
  EXPECT_FALSE(p.enough(Samples{{0.4, 0.6, 0.5, 0.5}}));     // CV 16 %
  EXPECT_TRUE(p.enough(Samples{{20.0, 15.0, 10.0, 12.0}}));  // past max_time, CV notwithstanding
  EXPECT_TRUE(p.enough(Samples{std::vector<double>(20, 0.01)}));  // max_reps
  p.fixed_reps = 2;
  EXPECT_TRUE(p.enough(Samples{{0.1, 0.9}}));
  EXPECT_FALSE(p.enough(Samples{{0.1}}));
  int calls = 0;
  RepPolicy q;
  q.min_time_s = 0.0;
  const Samples s = collect_samples([&] { return ++calls <= 2 ? 9.0 : 1.0; }, 2, q);  // 2 warm-ups dropped
  EXPECT_EQ(s.seconds, (std::vector<double>{1.0, 1.0, 1.0, 1.0}));
}

TEST(Sweep, TrustFlagsNameWhatMakesARowUntrustworthy) {
  io::ResultRow r;
  EXPECT_EQ(sweep::trust_flags(r), "");  // nothing measured: nothing flagged
  r.local_gemm_before_gflops = 100, r.local_gemm_after_gflops = 89, r.time_cv = 0.01, r.gemm_fraction = 0.8;
  EXPECT_EQ(sweep::trust_flags(r), "busy");
  r.local_gemm_after_gflops = 91, r.time_cv = 0.06, r.gemm_fraction = 1.01;
  EXPECT_EQ(sweep::trust_flags(r), "noisy,above_yardstick");
  // issue 43: loaded before and after alike (the yardstick did not move), but the step's threads waited
  r.local_gemm_after_gflops = 100, r.time_cv = 0.01, r.gemm_fraction = 0.5;
  EXPECT_EQ(sweep::trust_flags(r, 0.35), "busy");
  EXPECT_EQ(sweep::trust_flags(r, 0.05), "");
  EXPECT_EQ(sweep::cpu_wait_note(0.35), "busy: the step's threads waited for a CPU 35% of the time");
  EXPECT_EQ(sweep::cpu_wait_note(0.05), "");
  // the other reason for busy says itself too: the local yardstick's two rates
  io::ResultRow drift;
  drift.local_gemm_before_gflops = 400, drift.local_gemm_after_gflops = 300;
  EXPECT_EQ(sweep::trust_flags(drift), "busy");
  EXPECT_EQ(sweep::yardstick_drift_note(drift),
            "busy: the local yardstick moved from 400.0 to 300.0 GFLOP/s across the point (the machine's speed changed "
            "while it ran)");
  drift.local_gemm_after_gflops = 380;
  EXPECT_EQ(sweep::yardstick_drift_note(drift), "");
  // inaccurate first; flags that do not fit the column's 31 characters are dropped whole from the end
  io::ResultRow all;
  all.rel_dA_err_kernel = 1.0, all.local_gemm_before_gflops = 400, all.local_gemm_after_gflops = 300;
  all.time_cv = 0.5, all.gemm_fraction = 2.0;
  all.memory_meter.set("counting_allocator"), all.peak_bytes = 2, all.predicted_bytes = 1;
  EXPECT_EQ(sweep::trust_flags(all), "inaccurate,busy,noisy");
  all.rel_dA_err_kernel = 0.009;  // (below 1 %: a rounding)
  EXPECT_EQ(sweep::trust_flags(all), "busy,noisy,above_yardstick,mem");
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
  EXPECT_EQ(rows[0].variant.str(), "chunked");
  const std::string bad = std::string(LOBENCH_EXE) + " run --V 10,x --out " + out + " > /dev/null 2>&1";
  EXPECT_NE(std::system(bad.c_str()), 0);
  std::filesystem::remove(out);
  // An unknown operand fails before any run file is made, naming the valid ones.
  const std::string log = testing::temp_path("operand.log");
  const std::string bad_op = std::string(LOBENCH_EXE) + " run --B 1 --N 5 --V 50 --D 4 --L 2 --operand fp32,fp16 --out " +
                             out + " > " + log + " 2>&1";
  EXPECT_NE(std::system(bad_op.c_str()), 0);
  EXPECT_FALSE(std::filesystem::exists(out));
  {
    std::ifstream f(log);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("unknown operand precision 'fp16' (valid: fp32, tf32, bf16, e4m3, e5m2)"), std::string::npos) << text;
  }
  // A valid operand list and a GPU memory limit parse; the CPU variant records tf32 as skipped.
  const std::string ok_op = std::string(LOBENCH_EXE) +
                            " run --B 1 --N 5 --V 50 --D 4 --L 2 --variants chunked --reps 1 --operand fp32,tf32 "
                            "--gpu-mem-limit 2G --out " + out + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(ok_op.c_str()), 0) << ok_op;
  const auto op_rows = ResultsFile::read_all(out);
  ASSERT_EQ(op_rows.size(), 2u);
  EXPECT_EQ(op_rows[1].operand.str(), "tf32");
  EXPECT_EQ(op_rows[1].status.str(), "skipped");
  std::filesystem::remove(log);
  std::filesystem::remove(args);
  std::filesystem::remove(out);
}

// Running twice on the same --out: without --resume or --overwrite the second run is refused (exit 2)
// and the first file's rows survive; with --resume they are kept and only new rows are added.
TEST(RunCommand, ASecondRunOnTheSameOutRefusesOrResumesButNeverTruncates) {
  const std::string out = testing::temp_path("twice.h5"), log = testing::temp_path("twice.log");
  const std::string base = std::string(LOBENCH_EXE) + " run --B 1 --N 5 --D 4 --L 2 --variants chunked --reps 1 --threads 1 --out " + out;
  ASSERT_EQ(std::system((base + " --V 50 > /dev/null 2>&1").c_str()), 0);
  ASSERT_EQ(ResultsFile::read_all(out).size(), 1u);
  const int refused = std::system((base + " --V 50,60 > " + log + " 2>&1").c_str());
  EXPECT_EQ(WEXITSTATUS(refused), 2);
  {
    std::ifstream f(log);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("--resume"), std::string::npos) << text;
  }
  EXPECT_EQ(ResultsFile::read_all(out).size(), 1u);  // the first file's row survives
  ASSERT_EQ(std::system((base + " --V 50,60 --resume > /dev/null 2>&1").c_str()), 0);
  const auto rows = ResultsFile::read_all(out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].V, 50);
  EXPECT_EQ(rows[1].V, 60);
  // --list and --dry-run run nothing; a dry-run file cannot be resumed.
  const std::string dry = testing::temp_path("twice_dry.h5");
  ASSERT_EQ(std::system((std::string(LOBENCH_EXE) + " run --B 1 --N 5 --D 4 --L 2 --V 50,60 --list > " + log).c_str()), 0);
  {
    std::ifstream f(log);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("6 rows"), std::string::npos) << text;  // 2 V x 3 variants
  }
  ASSERT_EQ(std::system((std::string(LOBENCH_EXE) + " run --B 1 --N 5 --D 4 --L 2 --V 50,60 --dry-run --out " + dry + " > /dev/null").c_str()), 0);
  const auto planned = ResultsFile::read_all(dry);
  ASSERT_EQ(planned.size(), 6u);
  for (const auto& r : planned) EXPECT_TRUE(r.status == "planned" || r.status == "skipped") << r.status.str();
  EXPECT_NE(WEXITSTATUS(std::system((std::string(LOBENCH_EXE) + " run --B 1 --N 5 --D 4 --L 2 --V 50 --resume --out " + dry + " > /dev/null 2>&1").c_str())), 0);
  std::filesystem::remove(dry);
  std::filesystem::remove(log);
  std::filesystem::remove(out);
}

// --resume continues or widens the sweep a file holds, never another one: a file whose rows are not
// points of this run (another sweep's, another partition's), or made with another --pad-fraction or
// --dup-fraction (which no row records) is refused (exit 2, naming why) and kept byte for byte; widening
// the same sweep still adds only its new points. merge refuses parts of other synthetic inputs.
TEST(RunCommand, ResumeRefusesAFileOfAnotherSweep) {
  const std::string out = testing::temp_path("resume_other.h5"), log = testing::temp_path("resume_other.log");
  const std::string part1 = testing::temp_path("resume_other_p1.h5"), merged = testing::temp_path("resume_other_m.h5");
  for (const std::string& f : {out, part1, merged}) std::filesystem::remove(f);
  const std::string run = std::string(LOBENCH_EXE) + " run --N 5 --D 4 --L 2 --variants chunked --reps 1 --threads 1 ";
  ASSERT_EQ(std::system((run + "--B 1 --V 50,60 --partition 0/2 --out " + out + " > /dev/null 2>&1").c_str()), 0);
  auto bytes = [](const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  const std::string before = bytes(out);
  auto refused = [&](const std::string& args, const std::string& why) {
    const int rc = std::system((run + args + " --resume --out " + out + " > " + log + " 2>&1").c_str());
    EXPECT_EQ(WEXITSTATUS(rc), 2) << args;
    const std::string text = bytes(log);
    EXPECT_NE(text.find(why), std::string::npos) << args << ": " << text;
    EXPECT_EQ(bytes(out), before) << args << ": the file changed";
  };
  refused("--B 2 --V 70 --partition 0/2", "is a run of another sweep: 1 of its 1 rows are at points this run does not have");
  refused("--B 1 --V 50,60 --partition 1/2", "is a run of another sweep: 1 of its 1 rows are at points this run does not have");
  refused("--B 1 --V 50,60 --partition 0/2 --pad-fraction 0.5", "was made with --pad-fraction 0, not 0.5");
  refused("--B 1 --V 50,60 --partition 0/2 --dup-fraction 0.5", "was made with --dup-fraction 0, not 0.5");
  // the same partition of a wider sweep: its old row is still one of its points
  ASSERT_EQ(std::system((run + "--B 1 --V 50,60,70,80 --partition 0/2 --resume --out " + out + " > /dev/null 2>&1").c_str()), 0);
  EXPECT_EQ(ResultsFile::read_all(out).size(), 2u);
  // merge: parts of one sweep made from other synthetic inputs are refused
  ASSERT_EQ(std::system((run + "--B 1 --V 50,60,70,80 --partition 1/2 --pad-fraction 0.5 --out " + part1 + " > /dev/null 2>&1").c_str()), 0);
  const int rc = std::system((std::string(LOBENCH_EXE) + " merge " + merged + " " + out + " " + part1 + " > " + log + " 2>&1").c_str());
  EXPECT_EQ(WEXITSTATUS(rc), 2);
  EXPECT_NE(bytes(log).find("its synthetic inputs differ"), std::string::npos) << bytes(log);
  EXPECT_FALSE(std::filesystem::exists(merged));
  // other variants at the file's points are added (scripts/table2.sh's torch peer)
  const std::string fused = std::string(LOBENCH_EXE) + " run --N 5 --D 4 --L 2 --variants fused --reps 1 --threads 1 ";
  ASSERT_EQ(std::system((fused + "--B 1 --V 50,60,70,80 --partition 0/2 --resume --out " + out + " > /dev/null 2>&1").c_str()), 0);
  EXPECT_EQ(ResultsFile::read_all(out).size(), 4u);
  for (const std::string& f : {out, part1, log}) std::filesystem::remove(f);
}

// run --out makes its folder where missing (a job array's parts); where it cannot (a file stands where a
// folder would), a usage error naming --out, not a raw filesystem exception.
TEST(RunCommand, AnOutWhoseFolderCannotBeMadeIsAUsageErrorNamingOut) {
  const std::string file = testing::temp_path("out_folder_is_a_file"), log = testing::temp_path("out_folder.log");
  std::ofstream(file) << "a file";
  const std::string run = std::string(LOBENCH_EXE) + " run --B 1 --N 5 --D 4 --L 2 --V 50 --variants chunked --reps 1 --threads 1 ";
  EXPECT_EQ(WEXITSTATUS(std::system((run + "--out " + file + "/x.h5 > " + log + " 2>&1").c_str())), 2);
  std::ifstream f(log);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("--out '" + file + "/x.h5': cannot make its folder"), std::string::npos) << text;
  const std::string fresh = testing::temp_path("out_folder_made");
  std::filesystem::remove_all(fresh);
  ASSERT_EQ(std::system((run + "--out " + fresh + "/sub/x.h5 > /dev/null 2>&1").c_str()), 0);
  EXPECT_EQ(ResultsFile::read_all(fresh + "/sub/x.h5").size(), 1u);
  std::filesystem::remove_all(fresh);
  std::filesystem::remove(file);
  std::filesystem::remove(log);
}

// csv and jsonl print each row as the file records it: row_id is its index in /results (0..n-1, and on
// --resume the appended rows' indices), not the 0 of a row before append.
TEST(Sweep, CsvAndJsonlRowIdsAreTheFilesRowIndices) {
  const std::string path = testing::temp_path("sweep_row_ids.h5");
  std::ostringstream csv, jsonl, err;
  SweepSettings spec = small_spec(path);
  spec.reps.fixed_reps = 1;
  spec.accuracy = false;
  spec.sgemm_n = 64;
  spec.format = sweep::OutputFormat::csv;
  ASSERT_EQ(sweep::run_sweep(spec, collect_provenance("t"), csv, err), 0);
  std::istringstream lines(csv.str());
  std::string line;
  std::getline(lines, line);
  ASSERT_EQ(line.rfind("row_id,", 0), 0u) << line;
  std::vector<std::string> ids;
  while (std::getline(lines, line)) ids.push_back(line.substr(0, line.find(',')));
  EXPECT_EQ(ids, (std::vector<std::string>{"0", "1", "2", "3"})) << csv.str();

  spec.axes.set("V", "100,333,500");  // two new rows appended to the four
  spec.out_mode = OutMode::resume;
  spec.format = sweep::OutputFormat::jsonl;
  ASSERT_EQ(sweep::run_sweep(spec, collect_provenance("t"), jsonl, err), 0);
  EXPECT_EQ(jsonl.str().find("{\"row_id\":4,"), 0u) << jsonl.str();
  EXPECT_NE(jsonl.str().find("\n{\"row_id\":5,"), std::string::npos) << jsonl.str();
  const auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 6u);
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].row_id, int64_t(i));
  std::filesystem::remove(path);
}

// A dry run measures nothing, so its summary counts rows planned and those that would be skipped.
TEST(Sweep, DryRunSummaryCountsPlannedRows) {
  SweepSettings spec = small_spec("");
  spec.axes.set("V", "100,40000000");
  spec.mem_limit = int64_t(64) << 20;  // the V = 4e7 rows need more
  std::ostringstream out, err;
  sweep::dry_run(spec, collect_provenance("t"), out, err);
  EXPECT_NE(out.str().find("summary: 4 planned (2 would be skipped)"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find(" ok,"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace lobench
