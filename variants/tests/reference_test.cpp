// The oracle is itself checked: against a naive long-double evaluation of the contract, against finite
// differences of its own loss, and on logits that are all zero.
#include "variants/reference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "variants/tests/ragged_cases.hpp"

namespace lobench {
namespace {

struct Naive {
  long double loss = 0;
  std::vector<long double> dA, dE;
};

// The contract, term by term, with no blocking and no sparse tricks.
Naive naive(const StepInputs& in) {
  Naive r;
  r.dA.assign(size_t(in.P * in.D), 0);
  r.dE.assign(size_t(in.V * in.D), 0);
  long double wsum = 0;
  for (int64_t p = 0; p < in.P; ++p) wsum += in.weight(p);
  const long double s = in.reduction == Reduction::sum ? 1.0L : (wsum == 0 ? 0.0L : 1.0L / (in.V * wsum));
  long double total = 0;
  for (int64_t p = 0; p < in.P; ++p) {
    std::set<int32_t> pos;
    for (int64_t l = 0; l < in.L; ++l) {
      const int32_t t = in.targets[p * in.L + l];
      if (t >= 0 && t < in.V) pos.insert(t);
    }
    long double row = 0;
    for (int64_t v = 0; v < in.V; ++v) {
      long double x = 0;
      for (int64_t d = 0; d < in.D; ++d) x += (long double)in.A[p * in.D + d] * in.E[v * in.D + d];
      const long double y = pos.count(int32_t(v)) ? 1 : 0;
      row += std::log(1 + std::exp(x)) - y * x;
      const long double g = s * in.weight(p) * (1 / (1 + std::exp(-x)) - y);
      for (int64_t d = 0; d < in.D; ++d) {
        r.dA[size_t(p * in.D + d)] += g * in.E[v * in.D + d];
        r.dE[size_t(v * in.D + d)] += g * in.A[p * in.D + d];
      }
    }
    total += in.weight(p) * (in.reduction == Reduction::mean ? row / in.V : row);
  }
  r.loss = in.reduction == Reduction::sum ? total : (wsum == 0 ? 0 : total / wsum);
  return r;
}

TEST(Reference, MatchesNaiveLongDoubleOnSmallRaggedProblems) {
  int checked = 0;
  for (const auto& c : testing::ragged_cases()) {
    if (c.shape.P() * c.shape.V * c.shape.D > 2'000'000) continue;
    const StepData d = make_synthetic(c.shape, c.spec);
    CountingAllocator alloc;
    cpu::ReferenceResult r;
    cpu::reference_step(d.view(), r, alloc, c.options.threads);
    const Naive n = naive(d.view());
    EXPECT_NEAR(r.loss, double(n.loss), 1e-12 * std::max(1.0, std::abs(double(n.loss)))) << c.label();
    for (size_t i = 0; i < n.dA.size(); ++i) ASSERT_NEAR(r.dA[int64_t(i)], double(n.dA[i]), 1e-12) << c.label();
    for (size_t i = 0; i < n.dE.size(); ++i) ASSERT_NEAR(r.dE[int64_t(i)], double(n.dE[i]), 1e-12) << c.label();
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

TEST(Reference, GradientsMatchFiniteDifferencesOfTheLoss) {
  for (Reduction red : {Reduction::mean, Reduction::sum}) {
    Shape s{1, 5, 9, 3, 2, red, true};
    SyntheticSpec spec;
    spec.seed = 3;
    spec.dup_fraction = 0.3;
    StepData d = make_synthetic(s, spec);
    CountingAllocator alloc;
    cpu::ReferenceResult r;
    cpu::reference_step(d.view(), r, alloc, 1);
    auto loss_at = [&](std::vector<float>& x, size_t i, float h) {
      const float keep = x[i];
      x[i] = keep + h;
      cpu::ReferenceResult rr;
      cpu::reference_step(d.view(), rr, alloc, 1);
      x[i] = keep;
      return rr.loss;
    };
    const float h = 1e-2f;  // exactly representable steps; central differences are O(h²)
    for (size_t i = 0; i < d.A.size(); ++i) {
      const double fd = (loss_at(d.A, i, h) - loss_at(d.A, i, -h)) / (2.0 * h);
      EXPECT_NEAR(r.dA[int64_t(i)], fd, 1e-4 * std::max(1.0, std::abs(fd))) << "dA " << i;
    }
    for (size_t i = 0; i < d.E.size(); ++i) {
      const double fd = (loss_at(d.E, i, h) - loss_at(d.E, i, -h)) / (2.0 * h);
      EXPECT_NEAR(r.dE[int64_t(i)], fd, 1e-4 * std::max(1.0, std::abs(fd))) << "dE " << i;
    }
  }
}

TEST(Reference, AllZeroLogitsGiveLn2AndHalfCounts) {
  Shape s{2, 4, 37, 6, 3, Reduction::mean, false};
  StepData d = make_synthetic(s, SyntheticSpec{});
  std::fill(d.A.begin(), d.A.end(), 0.0f);
  CountingAllocator alloc;
  cpu::ReferenceResult r;
  cpu::reference_step(d.view(), r, alloc, 2);
  EXPECT_NEAR(r.loss, std::log(2.0), 1e-15);
  for (int64_t p = 0; p < d.P; ++p) {
    EXPECT_EQ(r.counts[p * 4 + kTP] + r.counts[p * 4 + kFP], 0);  // x = 0 is not > 0
    EXPECT_EQ(r.counts[p * 4 + kFN] + r.counts[p * 4 + kTN], s.V);
  }
}

}  // namespace
}  // namespace lobench
