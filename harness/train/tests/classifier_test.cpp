#include "harness/train/classifier.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "precision_sim/format.hpp"
#include "precision_sim/optimizers.hpp"
#include "harness/train/tests/test_problem.hpp"

namespace lobench::train {
namespace {

namespace lp = lobench::precision;
using testing::HeadProblem;
using testing::make_head_problem;

ClassifierConfig config_for(const HeadProblem& p, const std::string& format, const std::string& rounding,
                            UpdateMode mode, int64_t chunks, int threads, int64_t tile = 0) {
  ClassifierConfig c;
  c.V = p.V;
  c.D = p.D;
  c.format = lp::parse_format(format);
  c.rounding = parse_update_rounding(rounding);
  c.mode = mode;
  c.chunks = chunks;
  c.threads = threads;
  c.tile = tile;
  c.max_batch = p.B;
  c.max_positives = std::max<int64_t>(1, p.positives());
  c.seed = 1234;
  return c;
}

// Runs `steps` steps from weights W0 and returns (weights, last dH, losses).
struct StepRun {
  std::vector<float> W, dH;
  std::vector<double> losses;
  std::map<int64_t, std::vector<float>> grads;  // first step's dW rows by v0
};
StepRun run_steps(const HeadProblem& p, const ClassifierConfig& c, const std::vector<float>& W0, int steps, float lr) {
  CountingAllocator alloc;
  Classifier clf(c, alloc);
  clf.set_weights(W0);
  StepRun r;
  r.dH.resize(size_t(p.B * p.D));
  for (int s = 0; s < steps; ++s) {
    GradientObserver obs = nullptr;
    if (s == 0)
      obs = [&](int, int64_t v0, int64_t n, const float* g) {
#pragma omp critical
        r.grads[v0] = std::vector<float>(g, g + n * p.D);
      };
    r.losses.push_back(clf.step(p.H.data(), p.B, p.labels(), lr, uint64_t(s), r.dH.data(), obs).loss);
  }
  r.W = clf.weights();
  return r;
}

std::vector<float> gather_dW(const StepRun& r, int64_t V, int64_t D) {
  std::vector<float> dW(static_cast<size_t>(V * D), std::nanf(""));
  for (const auto& [v0, g] : r.grads) std::copy(g.begin(), g.end(), dW.begin() + v0 * D);
  return dW;
}

TEST(TrainClassifier, GradientsMatchFloat64Reference) {
  const HeadProblem p = make_head_problem(5, 37, 16, 3, 7);
  const std::vector<float> W = testing::normal_weights(p.V, p.D, 0.3, 8);
  const testing::Reference ref = testing::reference(p, W);
  for (int64_t chunks : {1, 3}) {
    for (int threads : {1, 2}) {
      for (UpdateMode mode : {UpdateMode::separate, UpdateMode::fused}) {
        const StepRun r = run_steps(p, config_for(p, "fp32", "rne", mode, chunks, threads, 8), W, 1, 0.0f);
        SCOPED_TRACE(testing::rel_l2(r.dH, ref.dH));
        EXPECT_NEAR(r.losses[0], ref.loss, 1e-5 * ref.loss);
        EXPECT_LT(testing::rel_l2(r.dH, ref.dH), 1e-5);
        EXPECT_LT(testing::rel_l2(gather_dW(r, p.V, p.D), ref.dW), 1e-5);
        EXPECT_EQ(r.W, W);  // lr = 0: unchanged
      }
    }
  }
}

// Central differences of the step's own loss (lr = 0) against its gradients.
TEST(TrainClassifier, GradientsMatchFiniteDifferences) {
  const HeadProblem p0 = make_head_problem(3, 7, 5, 2, 11);
  const std::vector<float> W0 = testing::normal_weights(p0.V, p0.D, 0.5, 12);
  const ClassifierConfig c = config_for(p0, "fp32", "rne", UpdateMode::separate, 2, 1);
  const StepRun r = run_steps(p0, c, W0, 1, 0.0f);
  const std::vector<float> dW = gather_dW(r, p0.V, p0.D);
  auto loss_at = [&](const HeadProblem& p, const std::vector<float>& W) { return run_steps(p, c, W, 1, 0.0f).losses[0]; };
  const float h = 1e-2f;
  // float logits, float64 sums: loss error ~1e-6 absolute, so the difference quotient is good to ~1e-4
  // absolute, and its O(h²) truncation error is of the same order.
  for (size_t i = 0; i < W0.size(); ++i) {
    std::vector<float> Wp = W0, Wm = W0;
    Wp[i] += h;
    Wm[i] -= h;
    const double fd = (loss_at(p0, Wp) - loss_at(p0, Wm)) / (double(Wp[i]) - double(Wm[i]));
    EXPECT_NEAR(dW[i], fd, 1e-3 + 1e-3 * std::fabs(fd)) << "dW[" << i << "]";
  }
  for (size_t i = 0; i < p0.H.size(); ++i) {
    HeadProblem pp = p0, pm = p0;
    pp.H[i] += h;
    pm.H[i] -= h;
    const double fd = (loss_at(pp, W0) - loss_at(pm, W0)) / (double(pp.H[i]) - double(pm.H[i]));
    EXPECT_NEAR(r.dH[i], fd, 1e-3 + 1e-3 * std::fabs(fd)) << "dH[" << i << "]";
  }
}

// The core promise: the fused update (no [V, D] gradient) gives the same bits as materializing the
// gradient and then updating, for every format and rounding, chunking and thread count.
TEST(TrainClassifier, FusedEqualsSeparateBitForBit) {
  const HeadProblem p = make_head_problem(6, 53, 24, 3, 21);
  const std::vector<float> W0 = testing::normal_weights(p.V, p.D, 0.05, 22);
  struct Case {
    const char* format;
    const char* rounding;
  };
  const Case cases[] = {{"fp32", "rne"},         {"bf16", "rne"},       {"bf16", "sr"},    {"bf16", "sr_exact"},
                        {"e4m3fn", "rne"},       {"e4m3fn", "sr"},      {"e4m3fn", "elmo_sr"}, {"e5m2", "sr"},
                        {"e3m4", "sr"},          {"e5m7", "rz"},        {"tf32", "sr"}};
  for (const Case& cs : cases) {
    for (int64_t chunks : {1, 4}) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::string(cs.format) + " " + cs.rounding + " chunks " + std::to_string(chunks) + " threads " +
                     std::to_string(threads));
        const StepRun sep = run_steps(p, config_for(p, cs.format, cs.rounding, UpdateMode::separate, chunks, threads, 5), W0, 3, 0.05f);
        const StepRun fus = run_steps(p, config_for(p, cs.format, cs.rounding, UpdateMode::fused, chunks, threads, 5), W0, 3, 0.05f);
        ASSERT_EQ(sep.W.size(), fus.W.size());
        EXPECT_EQ(0, std::memcmp(sep.W.data(), fus.W.data(), sep.W.size() * sizeof(float)));
        EXPECT_EQ(0, std::memcmp(sep.dH.data(), fus.dH.data(), sep.dH.size() * sizeof(float)));
        EXPECT_EQ(sep.losses, fus.losses);
        // and the weights did move
        size_t moved = 0;
        const std::vector<float> start = [&] {
          CountingAllocator a;
          Classifier c(config_for(p, cs.format, cs.rounding, UpdateMode::fused, chunks, threads), a);
          c.set_weights(W0);
          return c.weights();
        }();
        for (size_t i = 0; i < start.size(); ++i) moved += start[i] != fus.W[i];
        EXPECT_GT(moved, start.size() / 10);
      }
    }
  }
}

// The step on the shared tile scan (classifier_step.cpp) at a ragged shape with the default tile (B not
// a multiple of 16, V not a multiple of the tile, several label blocks per thread group): loss, dH and
// the updated weights are the same bits for 1, 2 and 3 threads, and the gradients match float64.
TEST(TrainClassifier, StepBitIdenticalForAnyThreadCountAtRaggedShape) {
  const HeadProblem p = make_head_problem(37, 1201, 40, 3, 51);
  const std::vector<float> W0 = testing::normal_weights(p.V, p.D, 0.1, 52);
  const testing::Reference ref = testing::reference(p, W0);
  for (int64_t chunks : {1, 2}) {
    SCOPED_TRACE("chunks " + std::to_string(chunks));
    const StepRun one = run_steps(p, config_for(p, "bf16", "sr", UpdateMode::fused, chunks, 1), W0, 2, 0.05f);
    for (int threads : {2, 3}) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      const StepRun r = run_steps(p, config_for(p, "bf16", "sr", UpdateMode::fused, chunks, threads), W0, 2, 0.05f);
      EXPECT_EQ(one.losses, r.losses);
      EXPECT_EQ(0, std::memcmp(one.dH.data(), r.dH.data(), one.dH.size() * sizeof(float)));
      EXPECT_EQ(0, std::memcmp(one.W.data(), r.W.data(), one.W.size() * sizeof(float)));
    }
    // the first step against float64 (fp32 weights, lr = 0)
    for (int threads : {1, 2}) {
      const StepRun f = run_steps(p, config_for(p, "fp32", "rne", UpdateMode::fused, chunks, threads), W0, 1, 0.0f);
      EXPECT_NEAR(f.losses[0], ref.loss, 1e-6 * ref.loss);
      EXPECT_LT(testing::rel_l2(f.dH, ref.dH), 1e-5);
      EXPECT_LT(testing::rel_l2(gather_dW(f, p.V, p.D), ref.dW), 1e-5);
    }
  }
}

// The weights do not depend on the thread count or the tile size (each element's update depends on
// its own gradient and random word only; dW rows come from the same dot products).
TEST(TrainClassifier, WeightsIndependentOfThreadsChunksAndTiles) {
  const HeadProblem p = make_head_problem(4, 40, 16, 2, 31);
  const std::vector<float> W0 = testing::normal_weights(p.V, p.D, 0.05, 32);
  const StepRun a = run_steps(p, config_for(p, "bf16", "sr", UpdateMode::fused, 1, 1, 8), W0, 1, 0.05f);
  for (int threads : {1, 2}) {
    for (int64_t chunks : {1, 3}) {
      const StepRun b = run_steps(p, config_for(p, "bf16", "sr", UpdateMode::fused, chunks, threads, 8), W0, 1, 0.05f);
      EXPECT_EQ(0, std::memcmp(a.W.data(), b.W.data(), a.W.size() * sizeof(float)));
    }
  }
}

// One update of the same weights with the same gradient, repeated with fresh random words: the mean of
// the stochastically rounded weights is the exact float32 update; nearest rounding is not.
struct UnbiasCase {
  std::string format, rounding;
  float w_lo, w_hi;  // magnitude range of the starting weights
  bool expect_unbiased;
};
void check_unbiased(const UnbiasCase& uc) {
  SCOPED_TRACE(uc.format + " " + uc.rounding);
  const HeadProblem p = make_head_problem(4, 6, 32, 2, 41);
  const lp::Format f = lp::parse_format(uc.format);
  const lp::Quantizer q(f);
  // Starting weights on the format's grid, magnitudes in [w_lo, w_hi).
  std::vector<float> W0(static_cast<size_t>(p.V * p.D));
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<float> mag(uc.w_lo, uc.w_hi);
  for (float& w : W0) w = q.round((rng() & 1 ? 1.0f : -1.0f) * mag(rng));
  ClassifierConfig c = config_for(p, uc.format, uc.rounding, UpdateMode::fused, 1, 1);
  // Learning rate: the largest update is a quarter of the smallest spacing at w_lo.
  const StepRun probe = run_steps(p, c, W0, 1, 0.0f);
  const std::vector<float> g = gather_dW(probe, p.V, p.D);
  float gmax = 0;
  for (float x : g) gmax = std::max(gmax, std::fabs(x));
  float ulp_min = INFINITY;
  for (float w : W0) {
    const float up = std::nextafter(std::fabs(w), INFINITY);
    const float next = q.round(up, lp::Rounding::up);
    ulp_min = std::min(ulp_min, next - std::fabs(w));
  }
  const float lr = 0.25f * ulp_min / gmax;
  std::vector<float> exact(W0.size());
  for (size_t i = 0; i < W0.size(); ++i) exact[i] = std::fma(-lr, g[i], W0[i]);

  const int N = 3000;
  std::vector<double> mean(W0.size(), 0.0);
  std::vector<float> dH(static_cast<size_t>(p.B * p.D));
  CountingAllocator alloc;
  Classifier clf(c, alloc);
  for (int rep = 0; rep < N; ++rep) {
    clf.set_weights(W0);
    clf.step(p.H.data(), p.B, p.labels(), lr, uint64_t(rep), dH.data());
    const std::vector<float> W = clf.weights();
    for (size_t i = 0; i < W.size(); ++i) mean[i] += double(W[i]) / N;
  }
  int64_t within = 0, biased = 0;
  for (size_t i = 0; i < W0.size(); ++i) {
    // Each rounding picks one of two neighbours `ulp` apart: std <= ulp/2, so the mean of N is within
    // 6·ulp/(2·sqrt N) of its expectation except with probability ~1e-9; plus SR's 2^-k resolution.
    const float lo = q.round(exact[i], lp::Rounding::down), hi = q.round(exact[i], lp::Rounding::up);
    const double ulp = double(hi) - double(lo);
    const double tol = 6.0 * 0.5 * ulp / std::sqrt(double(N)) + ulp * 0x1.0p-16;
    if (std::fabs(mean[i] - double(exact[i])) <= tol) ++within;
    if (std::fabs(mean[i] - double(exact[i])) > tol && std::fabs(double(exact[i]) - double(W0[i])) > tol) ++biased;
  }
  if (uc.expect_unbiased) EXPECT_EQ(within, int64_t(W0.size()));
  else EXPECT_GT(biased, int64_t(W0.size()) / 2);
}

TEST(TrainClassifier, StochasticRoundingUpdateIsUnbiased) {
  check_unbiased({"bf16", "sr", 1.0f / 32, 1.0f / 16, true});
  check_unbiased({"bf16", "sr_exact", 1.0f / 32, 1.0f / 16, true});
  check_unbiased({"e4m3fn", "sr", 1.0f / 32, 1.0f / 16, true});
  check_unbiased({"e4m3fn", "sr", 1.0f / 512, 1.0f / 64, true});  // subnormal range: still unbiased
  check_unbiased({"e5m2", "sr", 1.0f / 32, 1.0f / 16, true});
  check_unbiased({"e4m3fn", "elmo_sr", 1.0f / 32, 1.0f / 16, true});  // ELMO's SR: unbiased for normals
}

TEST(TrainClassifier, NearestRoundingLosesSmallUpdates) {
  check_unbiased({"bf16", "rne", 1.0f / 32, 1.0f / 16, false});
  check_unbiased({"e4m3fn", "rne", 1.0f / 32, 1.0f / 16, false});
  // ELMO's fp8 rounding is nearest on the subnormal grid (|w| < 2^-6): small updates vanish there.
  check_unbiased({"e4m3fn", "elmo_sr", 1.0f / 512, 1.0f / 64, false});
}

// The fused update equals precision_sim's sgd_step on the same gradient (same words, same rounding).
TEST(TrainClassifier, UpdateEqualsPrecisionSimSgdStep) {
  const HeadProblem p = make_head_problem(5, 30, 16, 2, 51);
  const std::vector<float> W0 = testing::normal_weights(p.V, p.D, 0.05, 52);
  for (const char* fmt : {"bf16", "e4m3fn", "fp32", "e3m4"}) {
    for (const char* rnd : {"rne", "sr"}) {
      SCOPED_TRACE(std::string(fmt) + " " + rnd);
      ClassifierConfig c = config_for(p, fmt, rnd, UpdateMode::fused, 2, 1, 7);
      const float lr = 0.05f;
      const StepRun r = run_steps(p, c, W0, 1, lr);
      // Expected: round(W0 on the grid) then sgd_step with the observed gradient, stream 0.
      const lp::Quantizer q(c.format);
      std::vector<float> w(W0.size());
      q.round(W0, w);
      const std::vector<float> g = gather_dW(r, p.V, p.D);
      lp::RoundingOptions opt;
      opt.mode = c.rounding.mode;
      opt.seed = c.seed;
      opt.stream = 0;
      lp::sgd_step(std::span<float>(w), std::span<const float>(g), lr, q, opt);
      EXPECT_EQ(0, std::memcmp(w.data(), r.W.data(), w.size() * sizeof(float)));
    }
  }
}

TEST(TrainClassifier, EvaluateTopKAndLoss) {
  const HeadProblem p = make_head_problem(9, 50, 8, 3, 61);
  const std::vector<float> W = testing::normal_weights(p.V, p.D, 0.5, 62);
  for (int threads : {1, 2}) {
    ClassifierConfig c = config_for(p, "fp32", "rne", UpdateMode::fused, 1, threads, 7);
    CountingAllocator alloc;
    Classifier clf(c, alloc);
    clf.set_weights(W);
    const int k = 5;
    std::vector<int32_t> ids(static_cast<size_t>(p.B * k));
    std::vector<float> scores(static_cast<size_t>(p.B * k));
    const BatchLabels labels = p.labels();
    const double loss = clf.evaluate(p.H.data(), p.B, k, ids.data(), scores.data(), &labels);
    const testing::Reference ref = testing::reference(p, W);
    EXPECT_NEAR(loss, ref.loss, 1e-5 * ref.loss);
    for (int64_t b = 0; b < p.B; ++b) {
      std::vector<std::pair<float, int32_t>> all;
      for (int32_t v = 0; v < p.V; ++v) {
        float z = 0;
        // same float products as Eigen may differ in the last bit: rank by float64 instead
        double zd = 0;
        for (int64_t d = 0; d < p.D; ++d) zd += double(p.H[size_t(b * p.D + d)]) * double(W[size_t(v * p.D + d)]);
        z = float(zd);
        all.push_back({-z, v});
      }
      std::sort(all.begin(), all.end());
      for (int j = 0; j < k; ++j) {
        EXPECT_EQ(ids[size_t(b * k + j)], all[size_t(j)].second) << "row " << b << " rank " << j;
        EXPECT_NEAR(scores[size_t(b * k + j)], -all[size_t(j)].first, 1e-5);
      }
    }
    EXPECT_EQ(alloc.current_bytes(), Classifier::predicted_bytes(c).total());
    EXPECT_EQ(alloc.peak_bytes(), Classifier::predicted_bytes(c).total() + Classifier::predicted_eval_bytes(c, p.B, k));
  }
}

// The logit-gradient observer sees G = σ(z) − y of every (label, row), before any update.
TEST(TrainClassifier, LogitObserverSeesSigmoidMinusY) {
  const HeadProblem p = make_head_problem(6, 29, 8, 2, 81);
  const std::vector<float> W = testing::normal_weights(p.V, p.D, 0.4, 82);
  ClassifierConfig c = config_for(p, "fp32", "rne", UpdateMode::fused, 3, 2, 4);
  CountingAllocator alloc;
  Classifier clf(c, alloc);
  clf.set_weights(W);
  std::vector<double> G(size_t(p.V * p.B), std::nan(""));
  std::vector<float> dH(size_t(p.B * p.D));
  clf.step(p.H.data(), p.B, p.labels(), 0.5f, 0, dH.data(), nullptr,
           [&](int, int64_t v0, int64_t n, int64_t B, const float* g, int64_t ld) {
             EXPECT_GE(ld, n);
             for (int64_t j = 0; j < n; ++j)
               for (int64_t b = 0; b < B; ++b) G[size_t((v0 + j) * B + b)] = g[b * ld + j];
           });
  for (int64_t b = 0; b < p.B; ++b) {
    for (int64_t v = 0; v < p.V; ++v) {
      double z = 0;
      for (int64_t d = 0; d < p.D; ++d) z += double(p.H[size_t(b * p.D + d)]) * double(W[size_t(v * p.D + d)]);
      bool y = false;
      for (int64_t i = p.offsets[size_t(b)]; i < p.offsets[size_t(b + 1)]; ++i) y |= p.ids[size_t(i)] == v;
      EXPECT_NEAR(G[size_t(v * p.B + b)], 1.0 / (1.0 + std::exp(-z)) - (y ? 1.0 : 0.0), 1e-6) << v << " " << b;
    }
  }
}

TEST(TrainClassifier, RejectsBadInput) {
  const HeadProblem p = make_head_problem(2, 10, 4, 1, 71);
  ClassifierConfig c = config_for(p, "bf16", "sr", UpdateMode::fused, 1, 1);
  CountingAllocator alloc;
  {
    ClassifierConfig bad = c;
    bad.chunks = 11;
    EXPECT_THROW(Classifier(bad, alloc), std::invalid_argument);
  }
  {
    ClassifierConfig bad = c;
    bad.format = lp::formats::float32();
    bad.rounding = parse_update_rounding("elmo_sr");
    EXPECT_THROW(Classifier(bad, alloc), std::invalid_argument);
  }
  EXPECT_THROW(parse_update_rounding("banana"), std::invalid_argument);
  EXPECT_THROW(parse_update_mode("both"), std::invalid_argument);
  Classifier clf(c, alloc);
  std::vector<float> dH(8);
  std::vector<int64_t> off = {0, 1, 2};
  std::vector<int32_t> ids = {3, 10};  // 10 is outside [0, 10)
  EXPECT_THROW(clf.step(p.H.data(), 2, {off, ids}, 0.1f, 0, dH.data()), std::invalid_argument);
}

}  // namespace
}  // namespace lobench::train
