#include "harness/seqrec/train_step.hpp"

#include <chrono>

namespace lobench::seqrec {

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

TrainStep::TrainStep(SasRec& model, Objective& objective, CountingAllocator& alloc)
    : model_(model), objective_(objective), d_hidden_(alloc, buffer_bytes(model.config()) / 4) {}

StepRecord TrainStep::run(const Batch& batch, uint64_t step, AdamW* opt) {
  const ModelConfig& c = model_.config();
  StepRecord r;
  auto t0 = std::chrono::steady_clock::now();
  model_.params().zero_grad();
  const float* hidden = model_.forward(batch.ids, batch.B, step, /*training=*/true, batch.first_window);
  r.forward_s = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  LossBatch lb;
  lb.P = batch.B * c.N;
  lb.V = c.V;
  lb.D = c.D;
  lb.L = batch.L;
  lb.hidden = hidden;
  lb.table = model_.output_table();
  lb.targets = batch.targets;
  lb.weights = batch.weights;
  lb.bias = model_.output_bias();
  lb.step_weight_sum = batch.step_weight_sum;
  lb.first_position = batch.first_window * c.N;
  lb.avoid = batch.avoid;
  lb.window_positions = c.N;
  const LossResult loss = objective_.compute(lb, step, d_hidden_.data(), model_.output_grad(), model_.output_bias_grad());
  r.loss_s = seconds_since(t0);
  r.loss = loss.loss;
  r.tp = loss.tp;
  r.fp = loss.fp;
  r.fn = loss.fn;
  r.tn = loss.tn;
  r.loss_workspace_peak = loss.working_peak_bytes;

  t0 = std::chrono::steady_clock::now();
  model_.backward(batch.ids, batch.B, step, d_hidden_.data(), batch.first_window);
  r.backward_s = seconds_since(t0);

  if (opt) {
    t0 = std::chrono::steady_clock::now();
    opt->step(model_.params(), c.threads);
    r.optimizer_s = seconds_since(t0);
  }
  return r;
}

}  // namespace lobench::seqrec
