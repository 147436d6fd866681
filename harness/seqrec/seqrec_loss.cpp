#include "harness/seqrec/seqrec_loss.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
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

NegativeSampling parse_negative_sampling(const std::string& s) {
  if (s == "positive") return NegativeSampling::positive;
  if (s == "history") return NegativeSampling::history;
  throw std::invalid_argument("train-seqrec: --negatives must be positive or history, got '" + s + "'");
}

std::vector<float> constant_predictor_logits(const int32_t* targets, const float* weights, int64_t P, int64_t L, int64_t V) {
  std::vector<double> n(size_t(V), 0.0);
  double W = 0.0;
  for (int64_t p = 0; p < P; ++p) {
    const double w = weights[p];
    if (w == 0.0) continue;
    W += w;
    const int32_t* t = targets + p * L;
    for (int64_t l = 0; l < L; ++l) {
      if (t[l] < 1 || t[l] >= V || std::find(t, t + l, t[l]) != t + l) continue;  // padding, or a repeat
      n[size_t(t[l])] += w;
    }
  }
  std::vector<float> b(static_cast<size_t>(V));
  for (int64_t v = 0; v < V; ++v) b[size_t(v)] = float(std::log((n[size_t(v)] + 0.5) / (W - n[size_t(v)] + 0.5)));
  return b;
}

FullVocabularyLoss::FullVocabularyLoss(const std::string& name, const RunOptions& options, LossReduction reduction,
                                       bool item_bias)
    : options_(options), reduction_(reduction), item_bias_(item_bias) {
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
  s.D = variant_D(D);
  s.L = L;
  s.reduction = contract_reduction();
  s.weighted = true;
  return s;
}

int64_t FullVocabularyLoss::predicted_working_bytes(int64_t P, int64_t V, int64_t D, int64_t L) const {
  const int64_t scaled = reduction_ == LossReduction::mean_positions ? P * int64_t(sizeof(float)) : 0;
  const int64_t widened = item_bias_ ? (P + V) * (D + 1) * int64_t(sizeof(float)) : 0;
  return variant_->predicted_working_bytes(shape(P, V, D, L), options_) + scaled + widened;
}

const float* FullVocabularyLoss::variant_weights(const LossBatch& b) {
  if (reduction_ != LossReduction::mean_positions) return b.weights;
  if (scaled_.size() != b.P) scaled_ = Buffer<float>(alloc_, b.P);
  double wsum = b.step_weight_sum;
  if (std::isnan(wsum)) {
    wsum = 0.0;
    for (int64_t p = 0; p < b.P; ++p) wsum += b.weights[p];
  }
  const float inv = wsum > 0.0 ? float(1.0 / wsum) : 0.0f;  // no weight at all: loss and gradients 0
  for (int64_t p = 0; p < b.P; ++p) scaled_[p] = b.weights[p] * inv;
  return scaled_.data();
}

std::optional<std::string> FullVocabularyLoss::skip_reason(int64_t P, int64_t V, int64_t D, int64_t L) const {
  return variant_->skip_reason(shape(P, V, D, L), options_);
}

void FullVocabularyLoss::widen(const LossBatch& b) {
  const int64_t D = b.D, W = D + 1;
  if (widened_a_.size() != b.P * W) widened_a_ = Buffer<float>(alloc_, b.P * W);
  if (widened_e_.size() != b.V * W) widened_e_ = Buffer<float>(alloc_, b.V * W);
  float* a = widened_a_.data();
  float* e = widened_e_.data();
#pragma omp parallel for schedule(static) num_threads(options_.threads)
  for (int64_t p = 0; p < b.P; ++p) {
    std::copy_n(b.hidden + p * D, D, a + p * W);
    a[p * W + D] = 1.0f;
  }
#pragma omp parallel for schedule(static) num_threads(options_.threads)
  for (int64_t v = 0; v < b.V; ++v) {
    std::copy_n(b.table + v * D, D, e + v * W);
    e[v * W + D] = b.bias[v];
  }
}

LossResult FullVocabularyLoss::compute(const LossBatch& b, float* d_hidden, float* d_table, float* d_bias) {
  if (item_bias_ != (b.bias != nullptr) || (item_bias_ && d_bias == nullptr))
    throw std::invalid_argument(item_bias_ ? "FullVocabularyLoss: made for a per-item bias, called without one (or its gradient)"
                                           : "FullVocabularyLoss: a bias was given to a loss made without item_bias");
  const int64_t W = variant_D(b.D);
  StepInputs in;
  in.P = b.P;
  in.V = b.V;
  in.D = W;
  in.L = b.L;
  in.A = b.hidden;
  in.E = b.table;
  in.targets = b.targets;
  in.reduction = contract_reduction();
  in.global_weight_sum = b.step_weight_sum;  // NaN: this batch's own (the contract's default)
  // Sized when the shape changes only: every variant overwrites all of its outputs (the step contract's
  // run() computes them; `lobench run` times repeated runs into one StepOutputs the same way), so
  // zeroing them every step would be a [V, D] pass on one thread that the step benchmark does not pay
  // (tested: SeqrecModel.AStepDoesNotDependOnThePreviousStepsLossOutputs).
  if (out_.dA.size() != size_t(b.P * W) || out_.dE.size() != size_t(b.V * W)) out_.resize(b.P, b.V, W);
  if (item_bias_) {
    widen(b);  // before the peak's reset: like the outputs, they stay allocated from step to step
    in.A = widened_a_.data();
    in.E = widened_e_.data();
  }
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
  hand_back_gradients(b, d_hidden, d_table, d_bias);
  return r;
}

void FullVocabularyLoss::hand_back_gradients(const LossBatch& b, float* d_hidden, float* d_table, float* d_bias) const {
  const float* dA = out_.dA.data();
  const float* dE = out_.dE.data();
  const int64_t D = b.D, W = variant_D(D);
  if (!item_bias_) {
    std::copy_n(dA, b.P * D, d_hidden);
    const int64_t n = b.V * D;
#pragma omp parallel for schedule(static) num_threads(options_.threads)
    for (int64_t i = 0; i < n; ++i) d_table[i] += dE[i];
    return;
  }
  for (int64_t p = 0; p < b.P; ++p) std::copy_n(dA + p * W, D, d_hidden + p * D);  // the 1s' column is dropped
#pragma omp parallel for schedule(static) num_threads(options_.threads)
  for (int64_t v = 0; v < b.V; ++v) {
    for (int64_t d = 0; d < D; ++d) d_table[v * D + d] += dE[v * W + d];
    d_bias[v] += dE[v * W + D];
  }
}

int64_t FullVocabularyLoss::allocated_output_bytes() const {
  return int64_t(out_.per_position_loss.capacity() * sizeof(double) + out_.dA.capacity() * sizeof(float) +
                 out_.dE.capacity() * sizeof(float) + out_.counts.capacity() * sizeof(int64_t));
}

int32_t SampledNegativeLoss::negative(uint64_t step, int64_t p, int32_t positive, int64_t V,
                                      std::span<const int32_t> avoid) const {
  data::Rng rng(data::stream_key(seed_, 0x5A5E0000ull + step, uint64_t(p)));
  const bool positive_in_range = positive >= 1 && positive < V;
  const bool positive_listed = positive_in_range && std::binary_search(avoid.begin(), avoid.end(), positive);
  const int64_t avoided = int64_t(avoid.size()) + (positive_in_range && !positive_listed ? 1 : 0);
  const int64_t free = V - 1 - avoided;
  if (free <= 0) return 0;
  // The k-th free item: start at 1 + k and step over every avoided item at or below it, in ascending order
  // (the avoid list merged with the positive).
  int64_t v = 1 + int64_t(rng.below(uint64_t(free)));
  bool positive_pending = positive_in_range && !positive_listed;
  for (size_t i = 0;;) {
    const int64_t listed = i < avoid.size() ? avoid[i] : INT64_MAX;
    const int64_t next = positive_pending ? std::min<int64_t>(listed, positive) : listed;
    if (next > v) break;
    ++v;
    if (positive_pending && next == positive) positive_pending = false;
    else ++i;
  }
  return int32_t(v);
}

double SampledNegativeLoss::weight_sum(const LossBatch& b) {
  double wsum = 0.0;
  for (int64_t p = 0; p < b.P; ++p)
    if (b.weights[p] != 0.0f && b.targets[p * b.L] >= 1 && b.targets[p * b.L] < b.V) wsum += b.weights[p];
  return wsum;
}

LossResult SampledNegativeLoss::compute(const LossBatch& b, uint64_t step, float* d_hidden, float* d_table) const {
  const int64_t P = b.P, D = b.D, V = b.V;
  if (sampling_ == NegativeSampling::history && (!b.avoid || b.window_positions < 1))
    throw std::invalid_argument("sampled negatives outside the history: the batch carries no histories (LossBatch::avoid)");
  const double wsum = std::isnan(b.step_weight_sum) ? weight_sum(b) : b.step_weight_sum;
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
    const int32_t n = negative(step, b.first_position + p, t, V,
                               b.avoid ? b.avoid[size_t(p / b.window_positions)] : std::span<const int32_t>{});
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

Objective::Objective(const std::string& name, const RunOptions& options, uint64_t seed, LossReduction reduction,
                     bool item_bias, NegativeSampling negatives)
    : name_(name), sampled_(seed, options.threads, negatives) {
  if (name != "sampled" && negatives != NegativeSampling::positive) {
    throw std::invalid_argument("negatives outside the history (--negatives history) apply to `sampled`, the "
                                "one-negative objective, not to " + name);
  } else if (name != "sampled") {
    full_.emplace(name, options, reduction, item_bias);
  } else if (item_bias) {
    throw std::invalid_argument("the per-item logit bias (--output-bias item) applies to the full-vocabulary variants "
                                "(dense, chunked, fused), not to `sampled`");
  } else if (reduction == LossReduction::sum) {
    throw std::invalid_argument("the reduction 'sum' does not apply to `sampled` (its loss is the mean over positions "
                                "of its two terms: give --reduction mean or mean_positions)");
  }
}

LossResult Objective::compute(const LossBatch& b, uint64_t step, float* d_hidden, float* d_table, float* d_bias) {
  return full_ ? full_->compute(b, d_hidden, d_table, d_bias) : sampled_.compute(b, step, d_hidden, d_table);
}

double Objective::weight_sum(const LossBatch& b) const {
  if (!full_) return SampledNegativeLoss::weight_sum(b);
  // The full-vocabulary loss's: every position's weight (the step contract's StepInputs::weight_sum).
  double wsum = 0.0;
  for (int64_t p = 0; p < b.P; ++p) wsum += b.weights[p];
  return wsum;
}

int64_t Objective::predicted_working_bytes(int64_t P, int64_t V, int64_t D, int64_t L) const {
  return full_ ? full_->predicted_working_bytes(P, V, D, L) : 0;
}

int64_t Objective::output_bytes(int64_t P, int64_t V, int64_t D) const {
  return full_ ? full_->output_bytes(P, V, D) : 0;
}

std::optional<std::string> Objective::skip_reason(int64_t P, int64_t V, int64_t D, int64_t L) const {
  return full_ ? full_->skip_reason(P, V, D, L) : std::nullopt;
}

}  // namespace lobench::seqrec
