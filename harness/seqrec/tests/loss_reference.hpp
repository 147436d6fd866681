// The full-vocabulary loss's float64 reference for the seqrec tests: ragged inputs (hidden states, output
// table, a per-item bias, weights and targets with padding and repeats) and BCE(h·o + b) with its
// gradients under the step contract's mean or sum reduction.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "datasets/random.hpp"
#include "harness/seqrec/seqrec_loss.hpp"

namespace lobench::seqrec::testing {

// Ragged inputs: weight 0 at every fifth position, padding ids (-1 and V) and repeats among the targets,
// a bias of the size the constant predictor gives (about −ln V) with a spread.
struct Inputs {
  int64_t P = 41, V = 233, D = 12, L = 3;
  std::vector<float> hidden, table, bias, weights;
  std::vector<int32_t> targets;
  LossBatch batch() const {
    LossBatch b{P, V, D, L, hidden.data(), table.data(), targets.data(), weights.data()};
    b.bias = bias.data();
    return b;
  }
};

inline Inputs make_inputs(uint64_t seed) {
  Inputs in;
  data::Rng rng(data::stream_key(seed, 3, 0));
  for (int64_t i = 0; i < in.P * in.D; ++i) in.hidden.push_back(float(rng.normal()));
  for (int64_t i = 0; i < in.V * in.D; ++i) in.table.push_back(float(0.3 * rng.normal()));
  for (int64_t v = 0; v < in.V; ++v) in.bias.push_back(float(-std::log(double(in.V)) + rng.normal()));
  for (int64_t p = 0; p < in.P; ++p) {
    in.weights.push_back(p % 5 == 0 ? 0.0f : 1.0f);
    for (int64_t l = 0; l < in.L; ++l) {
      const uint64_t u = rng.below(8);
      in.targets.push_back(u == 0 ? -1 : u == 1 ? int32_t(in.V) : u == 2 && l > 0 ? in.targets.back()
                                                                                  : int32_t(1 + rng.below(uint64_t(in.V - 1))));
    }
  }
  return in;
}

inline bool is_target(const Inputs& in, int64_t p, int64_t v) {
  const int32_t* t = in.targets.data() + p * in.L;
  return std::find(t, t + in.L, int32_t(v)) != t + in.L;
}

struct Gradients {
  double loss = 0;
  std::vector<double> d_hidden, d_table, d_bias;
};

// float64: x = h·o + b, element loss softplus(x) − y·x, reduced as the step contract's mean (Σ_p w_p ·
// mean over V / Σ_p w_p) or sum (Σ_p w_p · Σ_v).
inline Gradients reference(const Inputs& in, bool mean) {
  double W = 0;
  for (float w : in.weights) W += w;
  const double s = mean ? 1.0 / (double(in.V) * W) : 1.0;
  Gradients g;
  g.d_hidden.assign(size_t(in.P * in.D), 0.0);
  g.d_table.assign(size_t(in.V * in.D), 0.0);
  g.d_bias.assign(size_t(in.V), 0.0);
  for (int64_t p = 0; p < in.P; ++p) {
    const double w = in.weights[size_t(p)];
    for (int64_t v = 0; v < in.V; ++v) {
      double x = in.bias[size_t(v)];
      for (int64_t d = 0; d < in.D; ++d) x += double(in.hidden[size_t(p * in.D + d)]) * in.table[size_t(v * in.D + d)];
      const double y = is_target(in, p, v) ? 1.0 : 0.0;
      g.loss += s * w * (std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))) - y * x);
      const double e = s * w * (1.0 / (1.0 + std::exp(-x)) - y);
      for (int64_t d = 0; d < in.D; ++d) {
        g.d_hidden[size_t(p * in.D + d)] += e * in.table[size_t(v * in.D + d)];
        g.d_table[size_t(v * in.D + d)] += e * in.hidden[size_t(p * in.D + d)];
      }
      g.d_bias[size_t(v)] += e;
    }
  }
  return g;
}

}  // namespace lobench::seqrec::testing
