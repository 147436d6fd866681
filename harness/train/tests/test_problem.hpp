// Small deterministic problems for the train tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "variants/accuracy.hpp"
#include "harness/train/classifier.hpp"

namespace lobench::train::testing {

// Embeddings H [B, D] ~ N(0, scale²) and a few positives per row.
struct HeadProblem {
  int64_t B = 0, V = 0, D = 0;
  std::vector<float> H;
  std::vector<int64_t> offsets;
  std::vector<int32_t> ids;
  BatchLabels labels() const {
    return {std::span<const int64_t>(offsets.data(), offsets.size()), std::span<const int32_t>(ids.data(), ids.size())};
  }
  int64_t positives() const { return int64_t(ids.size()); }
};

inline HeadProblem make_head_problem(int64_t B, int64_t V, int64_t D, int per_row, uint64_t seed, float scale = 1.0f) {
  HeadProblem p;
  p.B = B;
  p.V = V;
  p.D = D;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> n(0.0f, scale);
  p.H.resize(size_t(B * D));
  for (float& x : p.H) x = n(rng);
  std::uniform_int_distribution<int32_t> lab(0, int32_t(V - 1));
  p.offsets.push_back(0);
  for (int64_t b = 0; b < B; ++b) {
    for (int j = 0; j < per_row; ++j) p.ids.push_back(lab(rng));
    p.offsets.push_back(int64_t(p.ids.size()));
  }
  return p;
}

inline std::vector<float> normal_weights(int64_t V, int64_t D, double std, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0.0, std);
  std::vector<float> w(size_t(V * D));
  for (float& x : w) x = float(n(rng));
  return w;
}

// Float64 reference of the summed BCE and its gradients for weights W [V, D] (float values).
struct Reference {
  double loss = 0;
  std::vector<double> dH, dW;
};
inline Reference reference(const HeadProblem& p, const std::vector<float>& W) {
  Reference r;
  r.dH.assign(size_t(p.B * p.D), 0.0);
  r.dW.assign(size_t(p.V * p.D), 0.0);
  for (int64_t b = 0; b < p.B; ++b) {
    std::vector<char> y(size_t(p.V), 0);
    for (int64_t i = p.offsets[size_t(b)]; i < p.offsets[size_t(b + 1)]; ++i) y[size_t(p.ids[size_t(i)])] = 1;
    for (int64_t v = 0; v < p.V; ++v) {
      double z = 0;
      for (int64_t d = 0; d < p.D; ++d) z += double(p.H[size_t(b * p.D + d)]) * double(W[size_t(v * p.D + d)]);
      r.loss += std::max(z, 0.0) + std::log1p(std::exp(-std::fabs(z))) - (y[size_t(v)] ? z : 0.0);
      const double g = 1.0 / (1.0 + std::exp(-z)) - (y[size_t(v)] ? 1.0 : 0.0);
      for (int64_t d = 0; d < p.D; ++d) {
        r.dH[size_t(b * p.D + d)] += g * double(W[size_t(v * p.D + d)]);
        r.dW[size_t(v * p.D + d)] += g * double(p.H[size_t(b * p.D + d)]);
      }
    }
  }
  return r;
}

inline double rel_l2(const std::vector<float>& a, const std::vector<double>& b) {
  return relative_l2_error(a.data(), b.data(), int64_t(a.size()));
}

}  // namespace lobench::train::testing
