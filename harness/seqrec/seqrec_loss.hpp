// The training objectives of the SASRec model.
//
// FullVocabularyLoss: multi-label BCE of every position's hidden state against all V items through
// the step contract (variants/step.hpp): any registered CPU variant (`dense` = the framework BCE
// that materializes [P, V] logits, `chunked` = Cut BCE, `fused`) computes the loss, d hidden (dA) and
// d O (dE), with the next L items as targets, padding positions at weight 0 and, by default, `mean`
// reduction (Σ_p w_p·mean_v BCE / Σ_p w_p), exactly the Cut BCE paper's objective (see LossReduction).
//
// With a per-item logit bias b (SasRec's ModelConfig::item_bias) the logits are hidden·Oᵀ + b. The step
// contract has no bias, so FullVocabularyLoss gives the variant one more column on each side,
// [hidden | 1]·[O | b]ᵀ, which is the same sum exactly; the extra column of dE is b's gradient and the
// extra column of dA is dropped.
//
// SampledNegativeLoss: SASRec's own objective: for each position with weight > 0, BCE on its next item
// (the first target) and on one item drawn uniformly from [1, V) other than it (NegativeSampling::positive)
// or outside the user's whole sequence (NegativeSampling::history, S3-Rec's code: its neg_sample draws
// again while the item is in set(items), the user's sequence with its dev and test items):
//   ℓ_p = softplus(−h·o_pos) + softplus(h·o_neg),  loss = Σ w_p ℓ_p / Σ w_p.
// The negative of position p at step t is a function of (seed, t, p) and what it avoids only.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "variants/counting_allocator.hpp"
#include "variants/step.hpp"
#include "variants/variant.hpp"

namespace lobench::seqrec {

// How the full-vocabulary loss turns its P·V element losses l[p, v] into one scalar. All three have the
// same minimiser (they differ by a constant factor for a given batch); what differs is the gradient's
// scale, which matters to AdamW through its ε (results/seqrec-cpu.md, section 3):
//   mean            Σ_p w_p·(1/V)·Σ_v l / Σ_p w_p   the Cut BCE paper's (Keras), the default
//   sum             Σ_p w_p·Σ_v l                   Renee / ELMO (the step contract's `sum`)
//   mean_positions  Σ_p w_p·Σ_v l / Σ_p w_p         = V × mean: the mean over positions of the sum over V
// mean_positions runs the contract's `sum` with the weights w_p / Σ_p w_p (a [P] buffer from the loss's
// counting allocator), so every variant computes it as it is.
enum class LossReduction { mean, sum, mean_positions };
std::string to_string(LossReduction r);
LossReduction parse_loss_reduction(const std::string& s);  // std::invalid_argument listing the valid ones

// What the sampled objective's negative avoids besides the positive: nothing (positive) or the user's
// whole sequence (history; LossBatch::avoid).
enum class NegativeSampling { positive, history };
NegativeSampling parse_negative_sampling(const std::string& s);  // positive | history

struct LossBatch {
  int64_t P = 0, V = 0, D = 0, L = 0;
  const float* hidden = nullptr;    // [P, D]
  const float* table = nullptr;     // [V, D] output table O
  const int32_t* targets = nullptr; // [P, L]; ids outside [1, V) are padding
  const float* weights = nullptr;   // [P]
  const float* bias = nullptr;      // [V] per-item logit bias, or null (no bias)
  // When this batch is one micro-batch of a larger step (micro_batch_step.hpp): the whole step's Σw as
  // the objective counts it (Objective::weight_sum of the whole batch), which sets the mean's scale, and
  // the index of this batch's first position in the step (the sampled negatives are drawn by it).
  // NaN and 0: this batch is the whole step.
  double step_weight_sum = std::numeric_limits<double>::quiet_NaN();
  int64_t first_position = 0;
  // NegativeSampling::history: per window of this batch (position p is in window p / window_positions),
  // the items its sampled negative avoids: the user's sequence, sorted ascending, unique, inside [1, V).
  const std::span<const int32_t>* avoid = nullptr;
  int64_t window_positions = 0;
};

struct LossResult {
  double loss = 0.0;
  int64_t tp = 0, fp = 0, fn = 0, tn = 0;  // weighted-position cut metrics at logit > 0 (full-vocabulary only)
  int64_t working_peak_bytes = 0;          // the loss's own peak working memory, as counted
};

// Each item's best constant logit under the full-vocabulary BCE, from the training targets [P, L] and
// position weights [P]: with n_v = Σ_p w_p·[v among p's targets] (repeats once, ids outside [1, V)
// ignored) and W = Σ_p w_p, b_v = ln((n_v + ½) / (W − n_v + ½)), i.e. σ(b_v) = (n_v + ½)/(W + 1): the
// Krichevsky–Trofimov estimate of the item's frequency, finite for items never seen. At these logits the
// bias gradient of the sum over positions, Σ_p w_p (σ(b_v) − y_pv) = (W/2 − n_v)/(W + 1), is at most ½
// in magnitude against W for the uncalibrated start; the model starts as the popularity predictor.
std::vector<float> constant_predictor_logits(const int32_t* targets, const float* weights, int64_t P, int64_t L, int64_t V);

class FullVocabularyLoss {
 public:
  // Throws std::invalid_argument for an unknown variant name (listing the registered CPU ones).
  // `item_bias`: every batch carries a bias (LossBatch::bias) and compute() is given its gradient.
  FullVocabularyLoss(const std::string& variant, const RunOptions& options,
                     LossReduction reduction = LossReduction::mean, bool item_bias = false);
  const Variant& variant() const { return *variant_; }
  LossReduction reduction() const { return reduction_; }
  bool item_bias() const { return item_bias_; }
  // The variant's analytic working bytes at this shape (+ the [P] scaled weights of mean_positions, + the
  // [P, D+1] and [V, D+1] widened inputs of a bias).
  int64_t predicted_working_bytes(int64_t P, int64_t V, int64_t D, int64_t L) const;
  // The step outputs' bytes (dA and dE one column wider with a bias).
  int64_t output_bytes(int64_t P, int64_t V, int64_t D) const { return StepOutputs::bytes(P, V, variant_D(D)); }
  std::optional<std::string> skip_reason(int64_t P, int64_t V, int64_t D, int64_t L) const;

  // d_hidden [P, D] is overwritten; d_table [V, D] (and, with a bias, d_bias [V]) are accumulated into.
  // std::invalid_argument when the batch's bias does not match item_bias(). The variant's working memory
  // comes from this loss's own counting allocator (the model's buffers are all allocated up front, so
  // the step's peak is the model's bytes + this peak + the outputs).
  LossResult compute(const LossBatch& b, float* d_hidden, float* d_table, float* d_bias = nullptr);
  int64_t workspace_peak_bytes() const { return max_peak_; }  // largest step peak so far
  // Bytes the StepOutputs' vectors hold now (their capacities).
  int64_t allocated_output_bytes() const;

 private:
  Shape shape(int64_t P, int64_t V, int64_t D, int64_t L) const;  // D: the model's (widened here for a bias)
  int64_t variant_D(int64_t D) const { return item_bias_ ? D + 1 : D; }
  // [hidden | 1] and [O | b] into widened_a_ / widened_e_.
  void widen(const LossBatch& b);
  // dA into d_hidden, dE added into d_table (and, with a bias, its last column into d_bias).
  void hand_back_gradients(const LossBatch& b, float* d_hidden, float* d_table, float* d_bias) const;
  Reduction contract_reduction() const { return reduction_ == LossReduction::mean ? Reduction::mean : Reduction::sum; }
  // The weights the variant sees: b.weights, or w_p / Σ_p w_p for mean_positions (into scaled_).
  const float* variant_weights(const LossBatch& b);
  const Variant* variant_ = nullptr;
  RunOptions options_;
  LossReduction reduction_ = LossReduction::mean;
  bool item_bias_ = false;
  StepOutputs out_;
  CountingAllocator alloc_;
  Buffer<float> scaled_;  // after alloc_: it returns its bytes there when destroyed
  Buffer<float> widened_a_, widened_e_;
  int64_t max_peak_ = 0;
};

class SampledNegativeLoss {
 public:
  SampledNegativeLoss(uint64_t seed, int threads, NegativeSampling sampling = NegativeSampling::positive)
      : seed_(seed), threads_(threads), sampling_(sampling) {}
  // With NegativeSampling::history, std::invalid_argument unless the batch carries LossBatch::avoid.
  LossResult compute(const LossBatch& b, uint64_t step, float* d_hidden, float* d_table) const;
  // Σ w_p over the positions that count (weight > 0 and a next item in [1, V)).
  static double weight_sum(const LossBatch& b);
  // The negative drawn for position p at `step` (exposed for tests): uniform over the items of [1, V) that
  // are neither the positive nor in `avoid` (sorted ascending, unique, inside [1, V)), by one draw k below
  // their count mapped to the k-th of them (the same law as S3-Rec's redrawing, in one draw); 0 when
  // there is none. With `avoid` empty this is the positive-only draw, bit for bit as before the option.
  int32_t negative(uint64_t step, int64_t p, int32_t positive, int64_t V, std::span<const int32_t> avoid = {}) const;

 private:
  uint64_t seed_;
  int threads_;
  NegativeSampling sampling_;
};

}  // namespace lobench::seqrec

namespace lobench::seqrec {

// The objective a run trains with: "sampled" (SASRec's one negative) or the name of a CPU step
// variant (full-vocabulary BCE).
class Objective {
 public:
  // `reduction` applies to the full-vocabulary variants. `sampled` always computes the weighted mean over
  // positions of the sum of its two terms, i.e. mean_positions over the items it scores; it accepts mean
  // (the default) and mean_positions for that, and refuses sum (std::invalid_argument).
  // `item_bias` (a per-item logit bias) applies to the full-vocabulary variants only; with `sampled` it
  // is refused (std::invalid_argument).
  // `negatives` applies to `sampled` only (history elsewhere: std::invalid_argument).
  Objective(const std::string& name, const RunOptions& options, uint64_t seed,
            LossReduction reduction = LossReduction::mean, bool item_bias = false,
            NegativeSampling negatives = NegativeSampling::positive);
  bool full_vocabulary() const { return full_.has_value(); }
  const std::string& name() const { return name_; }
  LossResult compute(const LossBatch& b, uint64_t step, float* d_hidden, float* d_table, float* d_bias = nullptr);
  // The Σw the objective's mean divides by, over all of b (a whole step's batch): what a micro-batch of
  // it is given as LossBatch::step_weight_sum.
  double weight_sum(const LossBatch& b) const;
  // Working bytes of the loss (the variant's, counted by its own allocator) and its outputs.
  int64_t predicted_working_bytes(int64_t P, int64_t V, int64_t D, int64_t L) const;
  int64_t output_bytes(int64_t P, int64_t V, int64_t D) const;
  int64_t workspace_peak_bytes() const { return full_ ? full_->workspace_peak_bytes() : 0; }
  int64_t allocated_output_bytes() const { return full_ ? full_->allocated_output_bytes() : 0; }
  std::optional<std::string> skip_reason(int64_t P, int64_t V, int64_t D, int64_t L) const;

 private:
  std::string name_;
  std::optional<FullVocabularyLoss> full_;
  SampledNegativeLoss sampled_;
};

}  // namespace lobench::seqrec
