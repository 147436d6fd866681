#include "variants/step.hpp"

#include <algorithm>
#include <random>

namespace lobench {

double StepInputs::weight_sum() const {
  if (!weights) return double(P);
  double s = 0.0;
  for (int64_t p = 0; p < P; ++p) s += weights[p];
  return s;
}

double StepInputs::gradient_scale() const {
  if (reduction == Reduction::sum) return 1.0;
  const double ws = weight_sum();
  return ws == 0.0 ? 0.0 : 1.0 / (double(V) * ws);
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
  validate(shape);
  StepData d;
  d.P = shape.P();
  d.V = shape.V;
  d.D = shape.D;
  d.L = shape.L;
  d.reduction = shape.reduction;
  // Separate streams per tensor, so changing one knob does not reshuffle the others.
  std::mt19937_64 rng_a(spec.seed * 4 + 0), rng_e(spec.seed * 4 + 1), rng_t(spec.seed * 4 + 2),
      rng_w(spec.seed * 4 + 3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  d.A.resize(size_t(d.P * d.D));
  for (auto& x : d.A) x = spec.scale_A * normal(rng_a);
  d.E.resize(size_t(d.V * d.D));
  for (auto& x : d.E) x = spec.scale_E * normal(rng_e);

  std::uniform_int_distribution<int32_t> id(0, int32_t(d.V - 1));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  d.targets.resize(size_t(d.P * d.L));
  for (int64_t p = 0; p < d.P; ++p) {
    int32_t* row = d.targets.data() + p * d.L;
    for (int64_t l = 0; l < d.L; ++l) {
      const double r = u(rng_t);
      if (r < spec.pad_fraction) {
        row[l] = (u(rng_t) < 0.5) ? -1 : int32_t(d.V);  // both padding conventions
      } else if (r < spec.pad_fraction + spec.dup_fraction && has_valid_before(row, l, d.V)) {
        // Repeat one of this row's earlier valid ids (a repeat of padding would be padding, not a duplicate).
        int32_t pick;
        do pick = row[std::uniform_int_distribution<int64_t>(0, l - 1)(rng_t)];
        while (pick < 0 || pick >= d.V);
        row[l] = pick;
      } else {
        row[l] = id(rng_t);
      }
    }
  }
  if (shape.weighted) {
    d.weights.resize(size_t(d.P));
    std::uniform_real_distribution<float> wdist(0.25f, 2.0f);
    for (auto& w : d.weights) w = (u(rng_w) < spec.zero_weight_fraction) ? 0.0f : wdist(rng_w);
  }
  return d;
}

}  // namespace lobench
