// `train-seqrec --operand bf16` (SeqrecConfig::operand): the full-vocabulary loss with bf16 operands
// against the float64 reference on the bf16-rounded hidden states, output table and bias (the bias is
// the widened table's last column, so it is rounded too) within the bf16 accuracy rule of `lobench run
// --operand bf16` (loss 1e-5, gradients 4e-3), through each instruction family's scalar model and the
// kernels this CPU runs; a whole run bit-identical at 1 and 2 threads; the run file records the operand;
// what it refuses.
#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <vector>

#include "harness/io/h5_io.hpp"
#include "harness/meters/products_choice.hpp"
#include "harness/seqrec/seqrec_loss.hpp"
#include "harness/seqrec/seqrec_run_file.hpp"
#include "harness/seqrec/seqrec_runner.hpp"
#include "harness/seqrec/seqrec_sweep.hpp"
#include "harness/seqrec/tests/loss_reference.hpp"
#include "harness/seqrec/tests/seqrec_test_support.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "variants/cpu/bf16_products.hpp"
#include "variants/tests/bf16_test_kernels.hpp"

namespace lobench::seqrec {
namespace {

using cpu::Bf16Kernel;
using testing::relative_l2;
using lobench::testing::ForcedBf16Kernel;
using lobench::testing::bf16_kernels_to_test;
using lobench::testing::rounded_bf16;


TEST(SeqrecOperand, Bf16LossMatchesTheReferenceOnRoundedInputs) {
  const testing::Inputs in = testing::make_inputs(5);
  testing::Inputs rounded = in;
  rounded.hidden = rounded_bf16(in.hidden);
  rounded.table = rounded_bf16(in.table);
  rounded.bias = rounded_bf16(in.bias);
  for (Bf16Kernel k : bf16_kernels_to_test()) {
    ForcedBf16Kernel forced(k);
    for (bool bias : {false, true}) {
      testing::Inputs unbiased = rounded;  // without a bias: the reference with b = 0
      if (!bias) std::fill(unbiased.bias.begin(), unbiased.bias.end(), 0.0f);
      const testing::Gradients ref = testing::reference(bias ? rounded : unbiased, /*mean=*/true);
      SeqrecConfig c;
      c.variant = "fused";
      c.operand = "bf16";
      c.threads = 2;
      c.block_v = 64;
      for (const char* v : {"dense", "chunked", "fused"}) {
        SCOPED_TRACE(::testing::Message() << cpu::to_string(k) << " " << v << (bias ? " with bias" : ""));
        c.variant = v;
        FullVocabularyLoss loss(v, loss_options(c), LossReduction::mean, bias);
        LossBatch b = in.batch();  // the unrounded inputs: the loss rounds them
        if (!bias) b.bias = nullptr;
        std::vector<float> dh(size_t(in.P * in.D)), dt(size_t(in.V * in.D), 0.0f), db(size_t(in.V), 0.0f);
        const LossResult r = loss.compute(b, dh.data(), dt.data(), bias ? db.data() : nullptr);
        EXPECT_LE(std::abs(r.loss - ref.loss) / ref.loss, 1e-5);
        EXPECT_LE(relative_l2(dh, ref.d_hidden), 4e-3);
        EXPECT_LE(relative_l2(dt, ref.d_table), 4e-3);
        if (bias) {
          EXPECT_LE(relative_l2(db, ref.d_bias), 4e-3);
        }
        EXPECT_EQ(loss.workspace_peak_bytes(), loss.predicted_working_bytes(in.P, in.V, in.D, in.L));
      }
    }
  }
  // A loss that ignored the operand would be within fp32's 1e-5 of the unrounded reference.
  ForcedBf16Kernel forced(Bf16Kernel::emulated);
  SeqrecConfig c;
  c.operand = "bf16";
  FullVocabularyLoss loss("fused", loss_options(c), LossReduction::mean, true);
  std::vector<float> dh(size_t(in.P * in.D)), dt(size_t(in.V * in.D), 0.0f), db(size_t(in.V), 0.0f);
  loss.compute(in.batch(), dh.data(), dt.data(), db.data());
  EXPECT_GT(relative_l2(dt, testing::reference(in, true).d_table), 1e-4);
}

// A run with bf16 operands gives the same bits at 1 and 2 threads (every step's loss, the trained
// parameters), and its run file says which operand and kernel it used.
TEST(SeqrecOperand, ARunIsBitIdenticalAtOneAndTwoThreads) {
  testing::TempDir dir("seqrec_operand_");
  // Where this CPU has no bf16 products, through the emulation.
  ForcedBf16Kernel forced(cpu::bf16_products_unavailable() ? std::optional(Bf16Kernel::emulated) : std::nullopt);
  for (const char* v : {"fused", "chunked", "dense"}) {
    std::vector<std::string> hashes;
    std::vector<std::vector<StepRow>> steps;
    for (int threads : {1, 2}) {
      SeqrecConfig c = testing::tiny_run(v, dir.path / (std::string(v) + std::to_string(threads) + ".h5"));
      c.operand = "bf16";
      c.threads = threads;
      std::ostringstream log, progress;
      const SeqrecOutcome o = run_seqrec(c, collect_provenance("test"), log, progress);
      ASSERT_EQ(o.status, "ok") << v << ": " << o.reason;
      auto f = h5::open_file_read(c.out);
      EXPECT_EQ(h5::read_attr_string(f, "operand").value_or(""), "bf16");
      EXPECT_FALSE(h5::read_attr_string(f, "bf16_kernel").value_or("").empty());
      hashes.push_back(h5::read_attr_string(f, "parameters_hash").value_or(""));
      steps.push_back(SeqrecRunFile::read_steps(c.out));
    }
    EXPECT_FALSE(hashes[0].empty());
    EXPECT_EQ(hashes[0], hashes[1]) << v;
    ASSERT_EQ(steps[0].size(), steps[1].size());
    for (size_t s = 0; s < steps[0].size(); ++s) EXPECT_EQ(steps[0][s].loss, steps[1][s].loss) << v << " step " << s;
  }
}

// A run with fp32 operands records the products its loss's tiles took (harness/meters/products_choice.hpp);
// a run with bf16 operands, which never takes them, does not.
TEST(SeqrecOperand, AnFp32RunRecordsItsProductsChoice) {
  testing::TempDir dir("seqrec_products_");
  meters::adopt_fp32_products(0, "test: the library's products everywhere");
  for (const char* operand : {"fp32", "bf16"}) {
    ForcedBf16Kernel forced(cpu::bf16_products_unavailable() ? std::optional(Bf16Kernel::emulated) : std::nullopt);
    SeqrecConfig c = testing::tiny_run("chunked", dir.path / (std::string(operand) + ".h5"));
    c.operand = operand;
    std::ostringstream log, progress;
    const SeqrecOutcome o = run_seqrec(c, collect_provenance("test"), log, progress);
    ASSERT_EQ(o.status, "ok") << operand << ": " << o.reason;
    auto f = h5::open_file_read(c.out);
    const bool fp32 = std::string(operand) == "fp32";
    EXPECT_EQ(h5::read_attr_string(f, "fp32_products").value_or(""),
              fp32 ? meters::products_path_name(meters::ProductsPath::library) : "")
        << operand;
    EXPECT_EQ(h5::read_attr_string(f, "fp32_products_basis").value_or(""),
              fp32 ? "test: the library's products everywhere" : "")
        << operand;
  }
}

TEST(SeqrecOperand, RefusesTf32UnknownNamesAndTheSampledObjective) {
  SeqrecConfig c;
  auto message = [&] {
    try {
      validate(c);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  c.operand = "tf32";
  EXPECT_NE(message().find("--operand tf32"), std::string::npos) << message();
  c.operand = "fp16";
  EXPECT_NE(message().find("--operand"), std::string::npos) << message();
  c.operand = "bf16";
  c.variant = "sampled";
  const std::string m = message();
  EXPECT_NE(m.find("--operand bf16"), std::string::npos) << m;
  EXPECT_NE(m.find("--variant sampled"), std::string::npos) << m;
  c.variant = "fused";
  EXPECT_EQ(message(), "");
  c.operand = "bfloat16";  // the alias
  EXPECT_EQ(message(), "");
  EXPECT_EQ(loss_options(c).operand, "bf16");
}

// The sweep: the operand is an axis (its canonical name in the file names), and a point with a refused
// combination stops the sweep before any run file is written.
TEST(SeqrecOperand, IsASweepAxisAndABadPointWritesNothing) {
  testing::TempDir dir("seqrec_operand_sweep_");
  SeqrecSweepSpec s;
  s.base.syn_scale = 0.002;
  s.base.progress = false;
  s.axes.set("L", "2");
  s.axes.set("N", "16");
  s.axes.set("D", "16");
  s.axes.set("layers", "1");
  s.axes.set("heads", "2");
  s.axes.set("steps", "1");
  s.axes.set("operand", "fp32,bfloat16");
  s.out_dir = dir.path.string();
  const auto points = expand_seqrec_sweep(s);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_NE(points[0].name.find("_op-fp32"), std::string::npos) << points[0].name;
  EXPECT_NE(points[1].name.find("_op-bf16"), std::string::npos) << points[1].name;
  EXPECT_EQ(points[1].config.operand, "bf16");
  s.axes.set("variant", "fused,sampled");
  std::ostringstream out, err;
  try {
    run_seqrec_sweep(s, collect_provenance("test"), out, err);
    FAIL() << "a sweep with --variant sampled and --operand bf16 ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--variant sampled"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path));
}

}  // namespace
}  // namespace lobench::seqrec
