// The head with bf16 operands (ClassifierConfig::operand, `train-xmc --operand bf16`, head_products.hpp):
//   - a step equals the float64 reference on the bf16-rounded embeddings and weights within the bf16
//     accuracy rule of `lobench run --operand bf16` (loss 1e-5, gradients 4e-3: the logit gradient is
//     rounded too), through each instruction family's scalar model on any CPU and through the kernel
//     this CPU runs, and is far from the unrounded reference by what the format costs;
//   - the rounding is inside the step: rounding H and W to bf16 first gives the same bits;
//   - each SIMD/AMX kernel gives its model's bits, the thread count and the update mode change no bit;
//   - evaluation's scores are bf16 products too; tf32 is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "harness/train/classifier.hpp"
#include "harness/train/tests/test_problem.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "variants/cpu/bf16_products.hpp"
#include "variants/tests/bf16_test_kernels.hpp"

namespace lobench::train {
namespace {

namespace lp = lobench::precision;
using cpu::Bf16Kernel;
using testing::HeadProblem;
using testing::make_head_problem;
using lobench::testing::ForcedBf16Kernel;
using lobench::testing::bf16_kernels_to_test;
using lobench::testing::rounded_bf16;

// A kernel's scalar model (bf16_products.hpp).
Bf16Kernel model_of(Bf16Kernel k) {
  return k == Bf16Kernel::amx_bf16 || k == Bf16Kernel::emulated_amx ? Bf16Kernel::emulated_amx : Bf16Kernel::emulated;
}


ClassifierConfig bf16_config(const HeadProblem& p, const std::string& format, UpdateMode mode, int64_t chunks,
                             int threads, int64_t tile) {
  ClassifierConfig c;
  c.V = p.V;
  c.D = p.D;
  c.format = lp::parse_format(format);
  c.rounding = parse_update_rounding(format == "fp32" ? "rne" : "sr");
  c.mode = mode;
  c.chunks = chunks;
  c.threads = threads;
  c.tile = tile;
  c.max_batch = p.B;
  c.max_positives = std::max<int64_t>(1, p.positives());
  c.seed = 77;
  c.operand = Operand::bf16;
  return c;
}

struct StepsRun {
  std::vector<float> W, dH, dW;  // dW: the first step's, gathered from the observer
  std::vector<double> losses;
};
StepsRun run_steps(const HeadProblem& p, const ClassifierConfig& c, const std::vector<float>& W0, int steps, float lr) {
  CountingAllocator alloc;
  Classifier clf(c, alloc);
  clf.set_weights(W0);
  StepsRun r;
  r.dH.resize(size_t(p.B * p.D));
  r.dW.assign(size_t(p.V * p.D), std::nanf(""));
  for (int s = 0; s < steps; ++s) {
    GradientObserver obs = nullptr;
    if (s == 0) obs = [&](int, int64_t v0, int64_t n, const float* g) { std::copy(g, g + n * p.D, r.dW.begin() + v0 * p.D); };
    r.losses.push_back(clf.step(p.H.data(), p.B, p.labels(), lr, uint64_t(s), r.dH.data(), obs).loss);
  }
  r.W = clf.weights();
  return r;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(TrainClassifierBf16, StepMatchesTheReferenceOnRoundedInputsThroughEveryKernel) {
  // Ragged: an odd D (a missing pair partner), V not a multiple of the tile, several chunks.
  const HeadProblem p = make_head_problem(7, 61, 13, 3, 5);
  const std::vector<float> W = testing::normal_weights(p.V, p.D, 0.3, 6);
  HeadProblem rounded = p;
  rounded.H = rounded_bf16(p.H);
  const testing::Reference ref = testing::reference(rounded, rounded_bf16(W));
  const testing::Reference unrounded = testing::reference(p, W);
  for (Bf16Kernel k : bf16_kernels_to_test()) {
    ForcedBf16Kernel forced(k);
    for (int64_t chunks : {1, 3})
      for (int threads : {1, 2}) {
        SCOPED_TRACE(::testing::Message() << cpu::to_string(k) << " chunks " << chunks << " threads " << threads);
        const StepsRun r = run_steps(p, bf16_config(p, "fp32", UpdateMode::separate, chunks, threads, 8), W, 1, 0.0f);
        EXPECT_LE(std::abs(r.losses[0] - ref.loss) / ref.loss, 1e-5);
        EXPECT_LE(testing::rel_l2(r.dH, ref.dH), 4e-3);
        EXPECT_LE(testing::rel_l2(r.dW, ref.dW), 4e-3);
        // A step that ignored the operand would be within fp32's 1e-5 of the unrounded reference.
        EXPECT_GT(testing::rel_l2(r.dW, unrounded.dW), 1e-4);
      }
  }
}

// The operands are rounded inside the step: the same step on H and W rounded to bf16 beforehand (fp32
// storage) gives the same loss, dH and dW bit for bit.
TEST(TrainClassifierBf16, RoundingTheInputsFirstChangesNoBit) {
  const HeadProblem p = make_head_problem(9, 40, 22, 2, 15);
  const std::vector<float> W = testing::normal_weights(p.V, p.D, 0.3, 16);
  HeadProblem rounded = p;
  rounded.H = rounded_bf16(p.H);
  ForcedBf16Kernel forced(Bf16Kernel::emulated);
  const ClassifierConfig c = bf16_config(p, "fp32", UpdateMode::fused, 1, 2, 16);
  const StepsRun a = run_steps(p, c, W, 1, 0.0f), b = run_steps(rounded, c, rounded_bf16(W), 1, 0.0f);
  EXPECT_EQ(a.losses, b.losses);
  EXPECT_TRUE(same_bits(a.dH, b.dH));
  EXPECT_TRUE(same_bits(a.dW, b.dW));
}

// Three steps of ELMO's bf16 recipe (bf16 storage, stochastic rounding, bf16 operands): each kernel this
// CPU runs gives its scalar model's bits, and neither the thread count nor the update mode changes any.
TEST(TrainClassifierBf16, KernelsEqualTheirModelsAndThreadsAndUpdateModesChangeNoBit) {
  const HeadProblem p = make_head_problem(11, 83, 30, 3, 25, 0.5f);
  const std::vector<float> W0 = testing::normal_weights(p.V, p.D, 0.05, 26);
  std::map<Bf16Kernel, StepsRun> first;  // by model
  for (Bf16Kernel k : bf16_kernels_to_test()) {
    ForcedBf16Kernel forced(k);
    for (UpdateMode mode : {UpdateMode::fused, UpdateMode::separate})
      for (int threads : {1, 2, 3}) {
        SCOPED_TRACE(::testing::Message() << cpu::to_string(k) << " " << to_string(mode) << " threads " << threads);
        const StepsRun r = run_steps(p, bf16_config(p, "bf16", mode, 2, threads, 16), W0, 3, 0.05f);
        const auto [it, inserted] = first.emplace(model_of(k), r);
        if (inserted) {
          EXPECT_FALSE(same_bits(r.W, rounded_bf16(W0)));  // the weights moved
          continue;
        }
        EXPECT_EQ(r.losses, it->second.losses);
        EXPECT_TRUE(same_bits(r.W, it->second.W));
        EXPECT_TRUE(same_bits(r.dH, it->second.dH));
      }
  }
}

// Evaluation scores with bf16 operands: the top scores are the reference's logits on rounded inputs (to
// float32 accumulation: a bf16 product is exact in float32, so only the sums round), not the unrounded ones.
TEST(TrainClassifierBf16, EvaluationScoresAreBf16Products) {
  const HeadProblem p = make_head_problem(6, 45, 19, 2, 35);
  const std::vector<float> W = testing::normal_weights(p.V, p.D, 0.3, 36);
  const std::vector<float> Hr = rounded_bf16(p.H), Wr = rounded_bf16(W);
  for (Bf16Kernel k : bf16_kernels_to_test()) {
    ForcedBf16Kernel forced(k);
    CountingAllocator alloc;
    Classifier clf(bf16_config(p, "fp32", UpdateMode::fused, 1, 2, 8), alloc);
    clf.set_weights(W);
    const int top = 4;
    std::vector<int32_t> ids(size_t(p.B * top));
    std::vector<float> scores(size_t(p.B * top));
    clf.evaluate(p.H.data(), p.B, top, ids.data(), scores.data());
    double worst_rounded = 0, worst_unrounded = 0;
    for (int64_t b = 0; b < p.B; ++b)
      for (int j = 0; j < top; ++j) {
        const int64_t v = ids[size_t(b * top + j)];
        double z = 0, z_unrounded = 0, size = 0;
        for (int64_t d = 0; d < p.D; ++d) {
          z += double(Hr[size_t(b * p.D + d)]) * Wr[size_t(v * p.D + d)];
          z_unrounded += double(p.H[size_t(b * p.D + d)]) * W[size_t(v * p.D + d)];
          size += std::abs(double(Hr[size_t(b * p.D + d)]) * Wr[size_t(v * p.D + d)]);
        }
        worst_rounded = std::max(worst_rounded, std::abs(scores[size_t(b * top + j)] - z) / size);
        worst_unrounded = std::max(worst_unrounded, std::abs(scores[size_t(b * top + j)] - z_unrounded) / size);
      }
    EXPECT_LE(worst_rounded, double(p.D) * 0x1.0p-24) << cpu::to_string(k);
    EXPECT_GT(worst_unrounded, 1e-4) << cpu::to_string(k);
  }
}

TEST(TrainClassifierBf16, Tf32IsRefused) {
  const HeadProblem p = make_head_problem(2, 10, 4, 1, 1);
  ClassifierConfig c = bf16_config(p, "fp32", UpdateMode::fused, 1, 1, 0);
  c.operand = Operand::tf32;
  CountingAllocator alloc;
  try {
    Classifier clf(c, alloc);
    FAIL() << "a tf32 head was built";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tf32"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lobench::train
