// --grad-format: the logit gradient G = σ(Z) − Y of the head's step rounded into a format before dH and
// dW use it. fp32 leaves every bit as it was; a coarse format changes G exactly as its rounding
// predicts (nearest: round_to_format; stochastic: the word of element (b, v) in the gradient's stream),
// and dW, dH are the products of that rounded G.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "harness/train/classifier.hpp"
#include "harness/train/tests/test_problem.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/rounding.hpp"

namespace lobench::train {
namespace {

namespace lp = lobench::precision;
using testing::HeadProblem;

ClassifierConfig grad_config(const HeadProblem& p, const std::string& grad_format, const std::string& rounding,
                             int threads) {
  ClassifierConfig c;
  c.V = p.V;
  c.D = p.D;
  c.format = lp::parse_format("e4m3fn");
  c.grad_format = lp::parse_format(grad_format);
  c.rounding = parse_update_rounding(rounding);
  c.mode = UpdateMode::fused;
  c.threads = threads;
  c.tile = 8;  // several tiles: the words must not depend on where a tile starts
  c.max_batch = p.B;
  c.max_positives = p.positives();
  c.seed = 77;
  return c;
}

// One step from W0: the logit gradient as the step used it [B, V], dH, dW [V, D] and the weights after.
struct OneStep {
  std::vector<float> G, dH, dW, W;
};
OneStep one_step(const HeadProblem& p, const ClassifierConfig& c, const std::vector<float>& W0) {
  CountingAllocator alloc;
  Classifier clf(c, alloc);
  clf.set_weights(W0);
  OneStep r;
  r.G.assign(size_t(p.B * p.V), 0.0f);
  r.dW.assign(size_t(p.V * p.D), 0.0f);
  r.dH.resize(size_t(p.B * p.D));
  const LogitGradientObserver on_G = [&](int, int64_t v0, int64_t n, int64_t B, const float* G, int64_t ld) {
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < n; ++j) r.G[size_t(b * p.V + v0 + j)] = G[b * ld + j];
  };
  const GradientObserver on_dW = [&](int, int64_t v0, int64_t n, const float* dW) {
    std::memcpy(r.dW.data() + v0 * p.D, dW, size_t(n * p.D) * sizeof(float));
  };
  clf.step(p.H.data(), p.B, p.labels(), 0.5f, /*step=*/3, r.dH.data(), on_dW, on_G);
  r.W = clf.weights();
  return r;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(GradFormat, Fp32LeavesEveryBitUnchanged) {
  const HeadProblem p = testing::make_head_problem(6, 29, 16, 3, 5);
  const std::vector<float> W0 = testing::normal_weights(p.V, p.D, 0.3, 6);
  for (const char* rounding : {"rne", "sr"}) {
    ClassifierConfig plain = grad_config(p, "fp32", rounding, 2);
    plain.grad_format = lp::formats::float32();  // the default a config has without the option
    const OneStep a = one_step(p, plain, W0), b = one_step(p, grad_config(p, "float32", rounding, 2), W0);
    EXPECT_TRUE(same_bits(a.G, b.G) && same_bits(a.dH, b.dH) && same_bits(a.dW, b.dW) && same_bits(a.W, b.W));
    // ... and G is σ(z) − y as computed (the float64 reference's dW is Gᵀ·H, with the weights as stored).
    std::vector<float> stored(W0.size());
    lp::round_to_format(W0, stored, lp::parse_format("e4m3fn"));
    const testing::Reference ref = testing::reference(p, stored);
    EXPECT_LT(testing::rel_l2(a.dW, ref.dW), 1e-5);
  }
}

// The rounded G of a coarse format against G of the fp32 run (the same logits: the same W0), rounded here.
TEST(GradFormat, CoarseFormatRoundsAsItsRoundingPredicts) {
  const HeadProblem p = testing::make_head_problem(6, 29, 16, 3, 5);
  const std::vector<float> W0 = testing::normal_weights(p.V, p.D, 0.3, 6);
  const lp::Format coarse = lp::parse_format("e3m1");
  const OneStep exact = one_step(p, grad_config(p, "fp32", "rne", 1), W0);
  std::map<std::string, std::vector<float>> used;
  for (const char* rounding : {"rne", "sr"}) {
    const OneStep r1 = one_step(p, grad_config(p, "e3m1", rounding, 1), W0);
    const OneStep r2 = one_step(p, grad_config(p, "e3m1", rounding, 2), W0);
    EXPECT_TRUE(same_bits(r1.W, r2.W) && same_bits(r1.G, r2.G)) << rounding << ": depends on the threads";
    int64_t changed = 0;
    for (int64_t b = 0; b < p.B; ++b) {
      for (int64_t v = 0; v < p.V; ++v) {
        const float g = exact.G[size_t(b * p.V + v)];
        float want;
        if (std::string(rounding) == "rne") {
          want = lp::round_to_format(g, coarse);
        } else {
          lp::RoundingOptions opt;
          opt.mode = lp::Rounding::stochastic;
          opt.seed = 77;
          opt.stream = kGradStreamTag | 3;
          opt.index_offset = (uint64_t(b) << 32) | uint64_t(v);
          lp::round_to_format(std::span<const float>(&g, 1), std::span<float>(&want, 1), coarse, opt);
        }
        const float got = r1.G[size_t(b * p.V + v)];
        ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want))
            << rounding << " at row " << b << ", label " << v << ": G " << g;
        changed += std::bit_cast<uint32_t>(got) != std::bit_cast<uint32_t>(g);
      }
    }
    EXPECT_GT(changed, p.B * p.V / 2) << rounding << ": e3m1 should change most of G";
    // dW = Gᵀ·H with the rounded G.
    std::vector<double> dW(size_t(p.V * p.D), 0.0);
    for (int64_t b = 0; b < p.B; ++b)
      for (int64_t v = 0; v < p.V; ++v)
        for (int64_t d = 0; d < p.D; ++d)
          dW[size_t(v * p.D + d)] += double(r1.G[size_t(b * p.V + v)]) * double(p.H[size_t(b * p.D + d)]);
    EXPECT_LT(testing::rel_l2(r1.dW, dW), 1e-5) << rounding;
    used[rounding] = r1.G;
  }
  EXPECT_FALSE(same_bits(used["rne"], used["sr"])) << "stochastic rounding drew no different value";
}

TEST(GradFormat, ElmoRoundingIsRefusedForTheGradient) {
  const HeadProblem p = testing::make_head_problem(2, 8, 4, 1, 1);
  CountingAllocator alloc;
  EXPECT_THROW(Classifier(grad_config(p, "e5m2", "elmo_sr", 1), alloc), std::invalid_argument);
}

}  // namespace
}  // namespace lobench::train
