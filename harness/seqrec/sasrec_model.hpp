// SASRec (Kang & McAuley 2018) with a GPT-2 style backbone, as the Cut BCE paper trains it:
//   x0 = dropout(E[ids] + P)  (padding positions zero),  x_{l+1} = block_l(x_l)  (pre-LN, causal),
//   hidden = LayerNorm_f(x_L)  [B·N, D],
// or, with ModelConfig::post_ln, the BERT-style encoder of S3-Rec's SASRec:
//   x0 = dropout(LayerNorm_e(E[ids] + P)),  x_{l+1} = block_l(x_l)  (post-LN, causal),  hidden = x_L
// (every block already ends in a LayerNorm, so there is none after the last; LayerNorm_e takes ln_f's
// place, so both layouts have the same parameters);  logits = hidden · Oᵀ (+ b)  with O = E (tied, SASRec) or a
// separate output table [V, D], and b an optional learned per-item logit bias [V] (not SASRec's; see
// ModelConfig::item_bias). The loss (harness/seqrec/seqrec_loss.hpp) takes hidden and O; its gradients come
// back as d hidden (backward) and an accumulation into O's gradient.
// Every buffer (parameters, gradients, activations) comes from the counting allocator at construction;
// activation_bytes() is the exact count.
#pragma once

#include <memory>
#include <vector>

#include "harness/seqrec/embedding.hpp"
#include "harness/seqrec/layer_norm.hpp"
#include "harness/seqrec/transformer_block.hpp"

namespace lobench::seqrec {

struct ModelConfig {
  int64_t V = 0;  // items including the padding item 0
  int64_t N = 0;  // window length
  int64_t D = 64;
  int64_t layers = 2;
  int64_t heads = 1;
  int64_t max_batch = 1;
  float dropout = 0.0f;
  bool tied = true;  // output table = item table
  // A learned per-item logit bias b [V] (no weight decay). Full-vocabulary BCE must first push all V
  // logits down to about −ln V before anything ranks; without a bias the tables do it through a direction
  // shared by every row, which in a tied table also swamps the input embeddings (results/seqrec-cpu.md,
  // section 3). The runner initialises b at each item's best constant logit
  // (constant_predictor_logits, written through mutable_output_bias()).
  bool item_bias = false;
  // The block layout (transformer_block.hpp): pre-LN GPT-2 (false) or post-LN BERT with a LayerNorm on
  // the embeddings and none at the end (true, S3-Rec's SASRec).
  bool post_ln = false;
  float init_std = 0.02f;  // GPT-2's
  uint64_t seed = 0;
  int threads = 1;
};

// Throws std::invalid_argument naming the field (positive sizes, D % heads, products overflow-checked).
void validate(const ModelConfig& c);

class SasRec {
 public:
  SasRec(const ModelConfig& cfg, CountingAllocator& alloc);
  const ModelConfig& config() const { return cfg_; }

  static int64_t parameter_count(const ModelConfig& c);
  static int64_t activation_bytes(const ModelConfig& c);

  // GPT-2 initialisation: N(0, std²) matrices and item table, positions N(0, (std/2)²), output
  // projections of each branch N(0, std²/(2·layers)), LayerNorms γ = 1, β = 0, biases 0 (the item
  // logit bias too: the runner then sets it from the data, see item_bias).
  void init();

  // Bytes the constructor took from the allocator for parameters + gradients, and for activations
  // (measured as the allocator's growth around each, to set beside the prediction).
  int64_t allocated_parameter_bytes() const { return allocated_params_; }
  int64_t allocated_activation_bytes() const { return allocated_activations_; }

  ParameterSet& params() { return params_; }
  const ParameterSet& params() const { return params_; }
  // The output table O [V, D] and its gradient.
  const float* output_table() const { return params_.value(out_); }
  float* output_grad() { return params_.grad(out_); }
  // The per-item logit bias [V] and its gradient, or null without ModelConfig::item_bias.
  const float* output_bias() const { return bias_.valid() ? params_.value(bias_) : nullptr; }
  float* output_bias_grad() { return bias_.valid() ? params_.grad(bias_) : nullptr; }
  float* mutable_output_bias() { return bias_.valid() ? params_.value(bias_) : nullptr; }

  // ids [B, N] with values in [0, V) (0 = padding; std::invalid_argument otherwise). Returns hidden
  // [B·N, D], valid until the next forward. `first_window`: where these B windows start in their step's
  // batch (a micro-batch, micro_batch_step.hpp), so that dropout draws the masks of those windows.
  const float* forward(const int32_t* ids, int64_t B, uint64_t step, bool training, int64_t first_window = 0);
  // From d hidden [B·N, D] of the last forward (the same first_window): accumulates every parameter's gradient.
  void backward(const int32_t* ids, int64_t B, uint64_t step, const float* d_hidden, int64_t first_window = 0);

 private:
  ModelConfig cfg_;
  ParameterSet params_;
  ParamRef items_, out_, bias_;
  Embedding embed_;
  Dropout drop_embed_;
  std::vector<std::unique_ptr<TransformerBlock>> blocks_;
  LayerNorm ln_f_;
  std::vector<Buffer<float>> stream_;  // x0 .. x_L
  // Pre-LN: hidden = ln_f(x_L). Post-LN: the embeddings before ln_f (the embedding LayerNorm) and dropout.
  Buffer<float> hidden_, g_a_, g_b_;
  int64_t allocated_params_ = 0, allocated_activations_ = 0;
};

}  // namespace lobench::seqrec
