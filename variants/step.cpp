#include "variants/step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace lobench {

double StepInputs::weight_sum() const {
  if (!std::isnan(global_weight_sum)) return global_weight_sum;
  if (!weights) return double(P);
  double s = 0.0;
  for (int64_t p = 0; p < P; ++p) s += weights[p];
  return s;
}

double StepInputs::gradient_scale() const {
  if (reduction == Reduction::sum) return 1.0;
  const double ws = weight_sum();
  return ws == 0.0 ? 0.0 : 1.0 / (double(mean_V()) * ws);
}

void StepOutputs::resize(int64_t P, int64_t V, int64_t D) {
  loss = 0.0;
  per_position_loss.assign(size_t(P), 0.0);
  dA.assign(size_t(P * D), 0.0f);
  dE.assign(size_t(V * D), 0.0f);
  counts.assign(size_t(P * 4), 0);
}

void StepOutputs::reduce_loss(const StepInputs& in) {
  double weighted = 0.0;
  for (int64_t p = 0; p < in.P; ++p) weighted += double(in.weight(p)) * per_position_loss[size_t(p)];
  if (in.reduction == Reduction::sum) {
    loss = weighted;
  } else {
    const double ws = in.weight_sum();
    loss = ws == 0.0 ? 0.0 : weighted / ws;  // no weight at all: the loss is 0 by definition
  }
}

StepInputs StepData::view() const {
  StepInputs in;
  in.P = P;
  in.V = V;
  in.D = D;
  in.L = L;
  in.A = A.data();
  in.E = E.data();
  in.targets = targets.data();
  in.weights = weights.empty() ? nullptr : weights.data();
  in.reduction = reduction;
  return in;
}

namespace {
bool has_valid_before(const int32_t* row, int64_t l, int64_t V) {
  for (int64_t k = 0; k < l; ++k)
    if (row[k] >= 0 && row[k] < V) return true;
  return false;
}
}  // namespace

StepData make_synthetic(const Shape& shape, const SyntheticSpec& spec) {
  SyntheticBlock b = make_synthetic_slice(shape, spec, SyntheticSlice{0, shape.V, 0, shape.P()});
  StepData d;
  d.P = shape.P();
  d.V = shape.V;
  d.D = shape.D;
  d.L = shape.L;
  d.reduction = shape.reduction;
  d.A = std::move(b.A);
  d.E = std::move(b.E);
  d.targets = std::move(b.targets);
  d.weights = std::move(b.weights);
  return d;
}

SyntheticBlock make_synthetic_slice(const Shape& shape, const SyntheticSpec& spec, const SyntheticSlice& s) {
  validate(shape);
  const int64_t P = shape.P(), V = shape.V, D = shape.D, L = shape.L;
  if (s.v0 < 0 || s.v1 < s.v0 || s.v1 > V || s.p0 < 0 || s.p1 < s.p0 || s.p1 > P)
    throw std::invalid_argument(fmt::format("synthetic slice rows [{}, {}) x positions [{}, {}) is outside V = {}, P = {}",
                                            s.v0, s.v1, s.p0, s.p1, V, P));
  SyntheticBlock b;
  // Separate streams per tensor, so changing one knob does not reshuffle the others. A and E share one
  // normal distribution object (as the protocol always has: it may carry a cached value from A's last
  // draw into E's first), so A is drawn whole even when only a slice of it is kept.
  std::mt19937_64 rng_a(spec.seed * 4 + 0), rng_e(spec.seed * 4 + 1), rng_t(spec.seed * 4 + 2),
      rng_w(spec.seed * 4 + 3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  b.A.resize(size_t((s.p1 - s.p0) * D));
  for (int64_t i = 0; i < P * D; ++i) {
    const float x = spec.scale_A * normal(rng_a);
    if (i >= s.p0 * D && i < s.p1 * D) b.A[size_t(i - s.p0 * D)] = x;
  }
  b.E.resize(size_t((s.v1 - s.v0) * D));
  for (int64_t i = 0; i < s.v1 * D; ++i) {  // the rows after v1 are never needed
    const float x = spec.scale_E * normal(rng_e);
    if (i >= s.v0 * D) b.E[size_t(i - s.v0 * D)] = x;
  }

  std::uniform_int_distribution<int32_t> id(0, int32_t(V - 1));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  b.targets.resize(size_t((s.p1 - s.p0) * L));
  std::vector<int32_t> row(static_cast<size_t>(L));
  for (int64_t p = 0; p < P; ++p) {
    for (int64_t l = 0; l < L; ++l) {
      const double r = u(rng_t);
      if (r < spec.pad_fraction) {
        row[l] = (u(rng_t) < 0.5) ? -1 : int32_t(V);  // both padding conventions
      } else if (r < spec.pad_fraction + spec.dup_fraction && has_valid_before(row.data(), l, V)) {
        // Repeat one of this row's earlier valid ids (a repeat of padding would be padding, not a duplicate).
        int32_t pick;
        do pick = row[std::uniform_int_distribution<int64_t>(0, l - 1)(rng_t)];
        while (pick < 0 || pick >= V);
        row[l] = pick;
      } else {
        row[l] = id(rng_t);
      }
    }
    if (p >= s.p0 && p < s.p1) std::copy(row.begin(), row.end(), b.targets.begin() + (p - s.p0) * L);
  }
  if (shape.weighted) {
    b.weights.resize(size_t(s.p1 - s.p0));
    std::uniform_real_distribution<float> wdist(0.25f, 2.0f);
    for (int64_t p = 0; p < P; ++p) {
      const float w = (u(rng_w) < spec.zero_weight_fraction) ? 0.0f : wdist(rng_w);
      if (p >= s.p0 && p < s.p1) b.weights[size_t(p - s.p0)] = w;
    }
  }
  return b;
}

}  // namespace lobench
