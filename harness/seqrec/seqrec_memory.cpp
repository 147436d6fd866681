#include "harness/seqrec/seqrec_memory.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "harness/seqrec/adamw.hpp"
#include "harness/seqrec/seqrec_loss.hpp"
#include "harness/seqrec/micro_batch_step.hpp"
#include "harness/seqrec/train_step.hpp"

namespace lobench::seqrec {

int64_t micro_batch_of(const SeqrecConfig& c) {
  if (c.micro_batch > 0) return c.micro_batch;
  return c.ranks > 1 && c.B % c.ranks == 0 ? c.B / c.ranks : c.B;
}

ModelConfig model_config(const SeqrecConfig& c, int64_t V) {
  ModelConfig m;
  m.V = V;
  m.N = c.N;
  m.D = c.D;
  m.layers = c.layers;
  m.heads = c.heads;
  m.max_batch = micro_batch_of(c);
  m.dropout = c.dropout;
  m.tied = c.tied;
  m.item_bias = c.item_bias;
  m.post_ln = c.block == "post_ln";
  m.seed = c.seed;
  m.threads = c.threads;
  return m;
}

namespace {

// The sizes below are int64 products of the shape (V * D, B * heads * N * N, P * V, ...): a large enough
// shape (--D 3221225472) wraps them to negative numbers. This bound, in long double, is larger than every
// one of those products and every part's bytes (generous factors: every float the model, its optimizer,
// its activations and any loss variant keeps), so when it fits below 2^61 none of them can overflow.
void refuse_unrepresentable_shape(const SeqrecConfig& c, int64_t V) {
  using ld = long double;
  const ld D = ld(c.D), N = ld(c.N), B = ld(c.B), R = B * N, layers = ld(c.layers), heads = ld(c.heads);
  const ld params = 2 * ld(V) * D + ld(V) + N * D + layers * (16 * D * D + 32 * D) + 8 * D;
  const ld activations = (layers + 4) * (64 * R * D + B * heads * N * N + ld(c.threads) * N * N + 64 * R);
  const ld loss = 8 * R * ld(V) + 8 * (R + ld(V)) * (D + 1) + 8 * R * ld(c.L) + 64 * R;
  const ld bytes = 4 * (16 * params + activations + loss);
  constexpr ld kLimit = ld(int64_t(1) << 61);
  if (!(bytes < kLimit))
    throw std::invalid_argument(fmt::format(
        "train-seqrec: the shape (V {}, D {}, N {}, B {}, layers {}, heads {}, L {}) would need about {:.3g} bytes, "
        "beyond what can be counted (2^61); refusing it",
        V, c.D, c.N, c.B, c.layers, c.heads, c.L, double(bytes)));
}

}  // namespace

SeqrecMemory predict_memory(const SeqrecConfig& c, int64_t V, const Objective& objective, int64_t sum_buffer_bytes) {
  const ModelConfig m = model_config(c, V);
  validate(m);
  refuse_unrepresentable_shape(c, V);
  const int64_t n = SasRec::parameter_count(m);
  SeqrecMemory r;
  r.parameters = n * 4;
  r.gradients = n * 4;
  r.optimizer_state = AdamW::state_bytes(n, parse_optimizer_precision(c.optimizer_precision));
  r.activations = SasRec::activation_bytes(m) + TrainStep::buffer_bytes(m);
  r.gradient_sums = MicroBatchStep::partial_sum_bytes(n, {c.B, m.max_batch, c.ranks}) + sum_buffer_bytes;
  const int64_t P = m.max_batch * c.N;
  r.loss_workspace = objective.predicted_working_bytes(P, V, c.D, c.L);
  r.loss_outputs = objective.output_bytes(P, V, c.D);
  return r;
}

}  // namespace lobench::seqrec
