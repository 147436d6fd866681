// One training step of the SASRec model, timed in its four parts: backbone forward, loss (forward and
// backward of the objective), backbone backward, optimizer.
#pragma once

#include <cstdint>
#include <limits>
#include <span>

#include "harness/seqrec/adamw.hpp"
#include "harness/seqrec/sasrec_model.hpp"
#include "harness/seqrec/seqrec_loss.hpp"

namespace lobench::seqrec {

// A batch of B windows of N: ids [B, N] (0 = padding), targets [B·N, L], weights [B·N].
struct Batch {
  int64_t B = 0, L = 0;
  const int32_t* ids = nullptr;
  const int32_t* targets = nullptr;
  const float* weights = nullptr;
  // A micro-batch of a larger step (micro_batch_step.hpp): where its windows start in the step's batch,
  // and the step's Σw (Objective::weight_sum); 0 and NaN for a whole step.
  int64_t first_window = 0;
  double step_weight_sum = std::numeric_limits<double>::quiet_NaN();
  // --negatives history: per window, the items its sampled negatives avoid (LossBatch::avoid); else null.
  const std::span<const int32_t>* avoid = nullptr;
};

struct StepRecord {
  double loss = 0.0;
  int64_t tp = 0, fp = 0, fn = 0, tn = 0;
  double forward_s = 0, loss_s = 0, backward_s = 0, optimizer_s = 0;
  double comm_s = 0;  // data-parallel: inside the collectives that sum the ranks' gradients
  int64_t loss_workspace_peak = 0;
  double total_s() const { return forward_s + loss_s + backward_s + optimizer_s + comm_s; }
};

class TrainStep {
 public:
  // d hidden [max_batch·N, D] comes from `alloc` (the model's).
  TrainStep(SasRec& model, Objective& objective, CountingAllocator& alloc);
  static int64_t buffer_bytes(const ModelConfig& c) { return c.max_batch * c.N * c.D * 4; }
  // Zeroes the gradients, runs forward, loss and backward, then the optimizer step when `opt` is not
  // null (gradients are left in model.params().grads() either way).
  StepRecord run(const Batch& batch, uint64_t step, AdamW* opt);

 private:
  SasRec& model_;
  Objective& objective_;
  Buffer<float> d_hidden_;
};

}  // namespace lobench::seqrec
