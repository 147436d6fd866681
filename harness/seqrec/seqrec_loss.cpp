#include "harness/seqrec/seqrec_loss.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "datasets/random.hpp"

namespace lobench::seqrec {

std::string to_string(LossReduction r) {
  switch (r) {
    case LossReduction::mean: return "mean";
    case LossReduction::sum: return "sum";
    case LossReduction::mean_positions: return "mean_positions";
  }
  return "?";
}

LossReduction parse_loss_reduction(const std::string& s) {
  if (s == "mean") return LossReduction::mean;
  if (s == "sum") return LossReduction::sum;
  if (s == "mean_positions") return LossReduction::mean_positions;
  throw std::invalid_argument("unknown loss reduction '" + s + "' (valid: mean, sum, mean_positions)");
}

FullVocabularyLoss::FullVocabularyLoss(const std::string& name, const RunOptions& options, LossReduction reduction)
    : options_(options), reduction_(reduction) {
  variant_ = Registry::instance().find(name);
  if (!variant_ || variant_->backend() != "cpu" || name == "reference") {
    std::string valid;
    for (const Variant* v : Registry::instance().all())
      if (v->backend() == "cpu" && v->name() != "reference") valid += (valid.empty() ? "" : ", ") + v->name();
    throw std::invalid_argument("unknown loss variant '" + name + "' (valid CPU variants: " + valid + ", or sampled)");
  }
}

Shape FullVocabularyLoss::shape(int64_t P, int64_t V, int64_t D, int64_t L) const {
  Shape s;
  s.B = 1;
  s.N = P;
  s.V = V;
  s.D = D;
  s.L = L;
  s.reduction = contract_reduction();
  s.weighted = true;
  return s;
}

int64_t FullVocabularyLoss::predicted_working_bytes(int64_t P, int64_t V, int64_t D, int64_t L) const {
  const int64_t scaled = reduction_ == LossReduction::mean_positions ? P * int64_t(sizeof(float)) : 0;
  return variant_->predicted_working_bytes(shape(P, V, D, L), options_) + scaled;
}

const float* FullVocabularyLoss::variant_weights(const LossBatch& b) {
  if (reduction_ != LossReduction::mean_positions) return b.weights;
  if (scaled_.size() != b.P) scaled_ = Buffer<float>(alloc_, b.P);
  double wsum = 0.0;
  for (int64_t p = 0; p < b.P; ++p) wsum += b.weights[p];
  const float inv = wsum > 0.0 ? float(1.0 / wsum) : 0.0f;  // no weight at all: loss and gradients 0
  for (int64_t p = 0; p < b.P; ++p) scaled_[p] = b.weights[p] * inv;
  return scaled_.data();
}

std::optional<std::string> FullVocabularyLoss::skip_reason(int64_t P, int64_t V, int64_t D, int64_t L) const {
  return variant_->skip_reason(shape(P, V, D, L), options_);
}

LossResult FullVocabularyLoss::compute(const LossBatch& b, float* d_hidden, float* d_table) {
  StepInputs in;
  in.P = b.P;
  in.V = b.V;
  in.D = b.D;
  in.L = b.L;
  in.A = b.hidden;
  in.E = b.table;
  in.targets = b.targets;
  in.reduction = contract_reduction();
  // Sized when the shape changes only: every variant overwrites all of its outputs (the step contract's
  // run() computes them; `lobench run` times repeated runs into one StepOutputs the same way), so
  // zeroing them every step would be a [V, D] pass on one thread that the step benchmark does not pay
  // (tested: SeqrecModel.AStepDoesNotDependOnThePreviousStepsLossOutputs).
  if (out_.dA.size() != size_t(b.P * b.D) || out_.dE.size() != size_t(b.V * b.D)) out_.resize(b.P, b.V, b.D);
  alloc_.reset_peak();
  in.weights = variant_weights(b);  // after the reset: a new [P] buffer counts in this step's peak
  RunContext ctx{alloc_, options_};
  variant_->run(in, out_, ctx);
  LossResult r;
  r.loss = out_.loss;
  r.working_peak_bytes = alloc_.peak_bytes();
  max_peak_ = std::max(max_peak_, r.working_peak_bytes);
  for (int64_t p = 0; p < b.P; ++p) {
    if (b.weights[p] == 0.0f) continue;  // counts of weighted positions only (all weights are 0 or 1 here)
    r.tp += out_.counts[size_t(p * 4 + kTP)];
    r.fp += out_.counts[size_t(p * 4 + kFP)];
    r.fn += out_.counts[size_t(p * 4 + kFN)];
    r.tn += out_.counts[size_t(p * 4 + kTN)];
  }
  std::copy(out_.dA.begin(), out_.dA.end(), d_hidden);
  const int64_t n = b.V * b.D;
  const float* dE = out_.dE.data();
#pragma omp parallel for schedule(static) num_threads(options_.threads)
  for (int64_t i = 0; i < n; ++i) d_table[i] += dE[i];
  return r;
}

int64_t FullVocabularyLoss::allocated_output_bytes() const {
  return int64_t(out_.per_position_loss.capacity() * sizeof(double) + out_.dA.capacity() * sizeof(float) +
                 out_.dE.capacity() * sizeof(float) + out_.counts.capacity() * sizeof(int64_t));
}

int32_t SampledNegativeLoss::negative(uint64_t step, int64_t p, int32_t positive, int64_t V) const {
  data::Rng rng(data::stream_key(seed_, 0x5A5E0000ull + step, uint64_t(p)));
  // Uniform over [1, V) without the positive: draw from V − 2 values and skip over it.
  if (V <= 2) return positive == 1 ? 0 : 1;
  int64_t v = 1 + int64_t(rng.below(uint64_t(V - 2)));
  if (v >= positive && positive >= 1) ++v;
  return int32_t(v);
}

LossResult SampledNegativeLoss::compute(const LossBatch& b, uint64_t step, float* d_hidden, float* d_table) const {
  const int64_t P = b.P, D = b.D, V = b.V;
  double wsum = 0.0;
  for (int64_t p = 0; p < P; ++p)
    if (b.weights[p] != 0.0f && b.targets[p * b.L] >= 1 && b.targets[p * b.L] < V) wsum += b.weights[p];
  std::vector<int32_t> pos(size_t(P), -1), neg(size_t(P), -1);
  std::vector<float> gp(size_t(P), 0.0f), gn(size_t(P), 0.0f);
  std::vector<double> loss(size_t(P), 0.0);
  const double inv = wsum > 0 ? 1.0 / wsum : 0.0;
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (int64_t p = 0; p < P; ++p) {
    float* dh = d_hidden + p * D;
    std::fill_n(dh, D, 0.0f);
    const int32_t t = b.targets[p * b.L];
    if (b.weights[p] == 0.0f || t < 1 || t >= V) continue;
    const int32_t n = negative(step, p, t, V);
    const float* h = b.hidden + p * D;
    const float* op = b.table + int64_t(t) * D;
    const float* on = b.table + int64_t(n) * D;
    double sp = 0.0, sn = 0.0;
    for (int64_t d = 0; d < D; ++d) {
      sp += double(h[d]) * op[d];
      sn += double(h[d]) * on[d];
    }
    auto softplus = [](double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))); };
    loss[size_t(p)] = b.weights[p] * (softplus(-sp) + softplus(sn));
    const double c = b.weights[p] * inv;
    gp[size_t(p)] = float(-c / (1.0 + std::exp(sp)));  // d/d s_pos of softplus(−s) = −σ(−s)
    gn[size_t(p)] = float(c / (1.0 + std::exp(-sn)));  // σ(s_neg)
    for (int64_t d = 0; d < D; ++d) dh[d] = gp[size_t(p)] * op[d] + gn[size_t(p)] * on[d];
    pos[size_t(p)] = t;
    neg[size_t(p)] = n;
  }
  // Scatter into the table's gradient: threads split the columns, positions in order (fixed sums).
  constexpr int64_t kCols = 16;
  const int64_t blocks = (D + kCols - 1) / kCols;
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t d0 = blk * kCols, d1 = std::min(D, d0 + kCols);
    for (int64_t p = 0; p < P; ++p) {
      if (pos[size_t(p)] < 0) continue;
      const float* h = b.hidden + p * D;
      float* tp = d_table + int64_t(pos[size_t(p)]) * D;
      float* tn = d_table + int64_t(neg[size_t(p)]) * D;
      for (int64_t d = d0; d < d1; ++d) {
        tp[d] += gp[size_t(p)] * h[d];
        tn[d] += gn[size_t(p)] * h[d];
      }
    }
  }
  LossResult r;
  double s = 0.0;
  for (double l : loss) s += l;
  r.loss = s * inv;
  return r;
}

}  // namespace lobench::seqrec

namespace lobench::seqrec {

Objective::Objective(const std::string& name, const RunOptions& options, uint64_t seed, LossReduction reduction)
    : name_(name), sampled_(seed, options.threads) {
  if (name != "sampled") {
    full_.emplace(name, options, reduction);
  } else if (reduction == LossReduction::sum) {
    throw std::invalid_argument("the reduction 'sum' does not apply to `sampled` (its loss is the mean over positions "
                                "of its two terms: give --reduction mean or mean_positions)");
  }
}

LossResult Objective::compute(const LossBatch& b, uint64_t step, float* d_hidden, float* d_table) {
  return full_ ? full_->compute(b, d_hidden, d_table) : sampled_.compute(b, step, d_hidden, d_table);
}

int64_t Objective::predicted_working_bytes(int64_t P, int64_t V, int64_t D, int64_t L) const {
  return full_ ? full_->predicted_working_bytes(P, V, D, L) : 0;
}

int64_t Objective::output_bytes(int64_t P, int64_t V, int64_t D) const {
  return full_ ? FullVocabularyLoss::output_bytes(P, V, D) : 0;
}

std::optional<std::string> Objective::skip_reason(int64_t P, int64_t V, int64_t D, int64_t L) const {
  return full_ ? full_->skip_reason(P, V, D, L) : std::nullopt;
}

}  // namespace lobench::seqrec
