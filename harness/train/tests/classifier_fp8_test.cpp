// The head with fp8 operands (`train-xmc --operand e4m3|e5m2`, head_products.hpp, variants/fp8_scaling.hpp):
//   - a step is bit for bit the bf16-operand step on H and W rounded with their per-tensor scales, and
//     matches the float64 reference on those rounded inputs within the bf16 rule (loss 1e-5, gradients
//     4e-3: only G's rounding to bf16 and float32 sums remain), through the scalar models and the kernels
//     this CPU runs; weights stored in E4M3 (ELMO's FP8 recipe) are read exactly;
//   - evaluation's scores are products of the rounded operands;
//   - ELMO's FP8 recipe (e4m3fn weights, ELMO's SR, e4m3 operands) trains a tiny synthetic problem end to end.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "harness/train/classifier.hpp"
#include "harness/train/tests/test_problem.hpp"
#include "harness/train/tests/tiny_data.hpp"
#include "harness/train/trainer.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "variants/fp8_scaling.hpp"
#include "variants/tests/bf16_test_kernels.hpp"

namespace lobench::train {
namespace {

namespace lp = lobench::precision;
using cpu::Bf16Kernel;
using lobench::testing::ForcedBf16Kernel;
using testing::HeadProblem;
using testing::make_head_problem;

std::vector<float> rounded_fp8(Operand op, const std::vector<float>& x) {
  std::vector<float> r(x.size());
  Fp8Scaling::of(op, x.data(), int64_t(x.size())).round(x.data(), r.data(), int64_t(x.size()));
  return r;
}

ClassifierConfig config(const HeadProblem& p, const std::string& format, Operand op, int threads) {
  ClassifierConfig c;
  c.V = p.V;
  c.D = p.D;
  c.format = lp::parse_format(format);
  c.rounding = parse_update_rounding("rne");
  c.mode = UpdateMode::fused;
  c.chunks = 2;
  c.threads = threads;
  c.tile = 8;
  c.max_batch = p.B;
  c.max_positives = std::max<int64_t>(1, p.positives());
  c.seed = 5;
  c.operand = op;
  return c;
}

struct Step {
  double loss = 0;
  std::vector<float> dH, dW;
};
Step one_step(const HeadProblem& p, const ClassifierConfig& c, const std::vector<float>& W) {
  CountingAllocator alloc;
  Classifier clf(c, alloc);
  clf.set_weights(W);
  Step s;
  s.dH.resize(size_t(p.B * p.D));
  s.dW.assign(size_t(p.V * p.D), std::nanf(""));
  GradientObserver obs = [&](int, int64_t v0, int64_t n, const float* g) { std::copy(g, g + n * p.D, s.dW.begin() + v0 * p.D); };
  s.loss = clf.step(p.H.data(), p.B, p.labels(), 0.0f, 0, s.dH.data(), obs).loss;
  return s;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(TrainClassifierFp8, StepIsTheBf16StepOnRoundedInputsAndMatchesTheReference) {
  const HeadProblem p = make_head_problem(7, 61, 13, 3, 5);  // odd D, V not a multiple of the tile
  for (Operand op : {Operand::e4m3, Operand::e5m2})
    for (const char* storage : {"fp32", "e4m3fn"}) {
      // The weights as stored (E4M3 storage: already on its grid, which the scale only moves along).
      std::vector<float> W = testing::normal_weights(p.V, p.D, 0.05, 6);
      lp::Quantizer(lp::parse_format(storage)).round(W, W);
      HeadProblem rounded = p;
      rounded.H = rounded_fp8(op, p.H);
      const std::vector<float> Wr = rounded_fp8(op, W);
      if (std::string(storage) == "e4m3fn" && op == Operand::e4m3) {
        EXPECT_TRUE(same_bits(Wr, W));  // read exactly
      }
      const testing::Reference ref = testing::reference(rounded, Wr);
      for (Bf16Kernel k : lobench::testing::bf16_kernels_to_test()) {
        ForcedBf16Kernel forced(k);
        SCOPED_TRACE(::testing::Message() << to_string(op) << " " << storage << " " << cpu::to_string(k));
        const Step s = one_step(p, config(p, storage, op, 2), W);
        const Step b = one_step(rounded, config(rounded, "fp32", Operand::bf16, 1), Wr);
        EXPECT_EQ(s.loss, b.loss);
        EXPECT_TRUE(same_bits(s.dH, b.dH));
        EXPECT_TRUE(same_bits(s.dW, b.dW));
        EXPECT_LE(std::abs(s.loss - ref.loss) / ref.loss, 1e-5);
        EXPECT_LE(testing::rel_l2(s.dH, ref.dH), 4e-3);
        EXPECT_LE(testing::rel_l2(s.dW, ref.dW), 4e-3);
      }
    }
}

TEST(TrainClassifierFp8, EvaluationScoresAreProductsOfTheRoundedOperands) {
  const HeadProblem p = make_head_problem(6, 45, 19, 2, 35);
  const std::vector<float> W = testing::normal_weights(p.V, p.D, 0.3, 36);
  const std::vector<float> Hr = rounded_fp8(Operand::e4m3, p.H), Wr = rounded_fp8(Operand::e4m3, W);
  ForcedBf16Kernel forced(Bf16Kernel::emulated);
  CountingAllocator alloc;
  Classifier clf(config(p, "fp32", Operand::e4m3, 2), alloc);
  clf.set_weights(W);
  const int top = 4;
  std::vector<int32_t> ids(size_t(p.B * top));
  std::vector<float> scores(size_t(p.B * top));
  clf.evaluate(p.H.data(), p.B, top, ids.data(), scores.data());
  for (int64_t b = 0; b < p.B; ++b)
    for (int j = 0; j < top; ++j) {
      const int64_t v = ids[size_t(b * top + j)];
      double z = 0, size = 0;
      for (int64_t d = 0; d < p.D; ++d) {
        z += double(Hr[size_t(b * p.D + d)]) * Wr[size_t(v * p.D + d)];
        size += std::abs(double(Hr[size_t(b * p.D + d)]) * Wr[size_t(v * p.D + d)]);
      }
      // exact products, float32 sums
      EXPECT_LE(std::abs(scores[size_t(b * top + j)] - z), double(p.D) * 0x1.0p-24 * size) << b << "," << j;
    }
}

TEST(TrainXmcFp8, ElmosFp8RecipeTrainsEndToEnd) {
  // E4M3 weights updated with ELMO's stochastic rounding, e4m3 operands: a short run learns.
  std::optional<ForcedBf16Kernel> emulated;
  if (cpu::bf16_simd_unavailable() && cpu::bf16_amx_unavailable()) emulated.emplace(Bf16Kernel::emulated);
  const data::TrainTest d = testing::tiny_xmc();
  TrainConfig c;
  c.D = 64;
  c.batch = 64;
  c.epochs = 4;
  c.dropout = 0.2f;
  c.enc_lr = 3e-3f;
  c.clf_lr = 0.05f;
  c.threads = 2;
  c.clf_format = "e4m3fn";
  c.clf_rounding = "elmo_sr";
  c.operand = "e4m3";
  const RunOutcome o = train_xmc(d, c);
  ASSERT_EQ(o.epochs.size(), 4u);
  const double chance = double(d.test.labels.nnz()) / double(d.test.rows()) / double(d.test.num_labels);
  for (const EpochRecord& e : o.epochs) EXPECT_TRUE(std::isfinite(e.train_loss) && std::isfinite(e.test_loss));
  EXPECT_LT(o.epochs.back().train_loss, o.epochs.front().train_loss);
  EXPECT_GT(o.epochs.back().p[0], 10 * chance) << "chance is " << chance;
}

}  // namespace
}  // namespace lobench::train
