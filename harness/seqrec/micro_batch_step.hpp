// One training step of a global batch cut into micro-batches (gradient accumulation), in one process or
// data-parallel over ranks, with the same bits either way.
//
// The step's batch of B windows is cut into K = B / micro_batch leaves of consecutive windows; each
// leaf runs forward, loss and backward alone (dropout masks and sampled negatives are drawn by the
// windows' places in the whole batch, the loss's mean is scaled by the whole batch's Σw), and the leaf
// gradients and losses are summed by fixed_order_sum.hpp's tree. With a GradientExchange of R ranks,
// rank r runs leaves [r·K/R, (r+1)·K/R), sums them, and the exchange sums the R block sums by the same
// tree: every rank ends with the gradient one process computes, bit for bit, then takes the same AdamW
// step. K = 1 (micro_batch = B, one process) is the plain step (TrainStep::run), unchanged.
//
// Memory: with k = K/R > 1 leaves per rank, tree_slots(k) gradient-sized partial sums from the model's
// allocator (partial_sum_bytes), allocated at construction; k = 1 sums in the gradient itself.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/seqrec/gradient_exchange.hpp"
#include "harness/seqrec/train_step.hpp"

namespace lobench::seqrec {

struct MicroBatchPlan {
  int64_t B = 1, micro = 1, ranks = 1;
  bool micro_given = false;  // whether the user gave --micro-batch (else micro_batch_of's default), for messages
  int64_t leaves() const { return B / micro; }
  int64_t leaves_per_rank() const { return leaves() / ranks; }
};

// std::invalid_argument unless micro divides B and the ranks split the tree (fixed_order_sum.hpp).
void validate(const MicroBatchPlan& p);

class MicroBatchStep {
 public:
  // The model's max_batch must be plan.micro. `exchange`: null for one process (plan.ranks must be 1).
  MicroBatchStep(SasRec& model, Objective& objective, CountingAllocator& alloc, const MicroBatchPlan& plan,
                 GradientExchange* exchange);
  static int64_t partial_sum_bytes(int64_t parameters, const MicroBatchPlan& plan);
  int64_t allocated_partial_bytes() const { return int64_t(slots_.size()) * grad_floats_ * 4; }

  // `whole`: the step's batch (whole.B ≤ plan.B windows; the last batch of an epoch may be short), the
  // same on every rank. The record's loss and counts are the whole step's; its times are this rank's
  // (comm_s: the exchange's collectives).
  StepRecord run(const Batch& whole, uint64_t step, AdamW* opt);

 private:
  // Leaf i of `whole` into the model's gradient; false when it holds no window.
  bool run_leaf(const Batch& whole, int64_t leaf, uint64_t step, double step_weight_sum, StepRecord& total,
                std::vector<double>& losses, std::vector<int64_t>& counts);
  SasRec& model_;
  Objective& objective_;
  MicroBatchPlan plan_;
  GradientExchange* exchange_;
  TrainStep step_;
  int64_t grad_floats_;
  std::vector<Buffer<float>> slots_;  // the tree's partial sums (k > 1)
};

}  // namespace lobench::seqrec
