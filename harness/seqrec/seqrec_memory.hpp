// The predicted memory of a SASRec training run, by part. Every part but the loss outputs is counted by
// a CountingAllocator (the model's for parameters, gradients, optimizer state, activations and the
// d hidden buffer; the loss's own for the variant's workspace), so predicted and measured can be set
// side by side and must be equal; the loss outputs (StepOutputs: dA, dE, per-position losses and
// counts, std::vectors sized exactly) are known by construction. The data (sequences and windows) is
// not included; the process RSS is recorded beside as an independent check.
#pragma once

#include <cstdint>

#include "harness/seqrec/sasrec_model.hpp"
#include "harness/seqrec/seqrec_config.hpp"

namespace lobench::seqrec {

class Objective;

struct SeqrecMemory {
  int64_t parameters = 0, gradients = 0, optimizer_state = 0, activations = 0, loss_workspace = 0, loss_outputs = 0;
  // The micro-batches' partial gradient sums (micro_batch_step.hpp) and, data-parallel, the largest
  // receive buffer of the ranks' sum (GradientExchange::sum_buffer_bytes).
  int64_t gradient_sums = 0;
  int64_t model_total() const { return parameters + gradients + optimizer_state + activations + gradient_sums; }
  int64_t total() const { return model_total() + loss_workspace + loss_outputs; }
};

// The micro-batch a run's model is sized for (c.micro_batch, or B / ranks, or B).
int64_t micro_batch_of(const SeqrecConfig& c);
ModelConfig model_config(const SeqrecConfig& c, int64_t V);
// One rank's (activations and loss at the micro-batch; `sum_buffer_bytes`: the exchange's receive buffer).
SeqrecMemory predict_memory(const SeqrecConfig& c, int64_t V, const Objective& objective, int64_t sum_buffer_bytes = 0);

}  // namespace lobench::seqrec
