#include "harness/seqrec/seqrec_memory.hpp"

#include "harness/seqrec/adamw.hpp"
#include "harness/seqrec/seqrec_loss.hpp"
#include "harness/seqrec/train_step.hpp"

namespace lobench::seqrec {

ModelConfig model_config(const SeqrecConfig& c, int64_t V) {
  ModelConfig m;
  m.V = V;
  m.N = c.N;
  m.D = c.D;
  m.layers = c.layers;
  m.heads = c.heads;
  m.max_batch = c.B;
  m.dropout = c.dropout;
  m.tied = c.tied;
  m.item_bias = c.item_bias;
  m.seed = c.seed;
  m.threads = c.threads;
  return m;
}

SeqrecMemory predict_memory(const SeqrecConfig& c, int64_t V, const Objective& objective) {
  const ModelConfig m = model_config(c, V);
  validate(m);
  const int64_t n = SasRec::parameter_count(m);
  SeqrecMemory r;
  r.parameters = n * 4;
  r.gradients = n * 4;
  r.optimizer_state = AdamW::state_bytes(n, parse_optimizer_precision(c.optimizer_precision));
  r.activations = SasRec::activation_bytes(m) + TrainStep::buffer_bytes(m);
  const int64_t P = c.B * c.N;
  r.loss_workspace = objective.predicted_working_bytes(P, V, c.D, c.L);
  r.loss_outputs = objective.output_bytes(P, V, c.D);
  return r;
}

}  // namespace lobench::seqrec
