// One rank's shard of a step's inputs: its rows of E, its positions' rows of A, targets and weights,
// with the target ids rebased to its rows (Cut BCE's per-shard vocabulary offset). No MPI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "variants/problem.hpp"
#include "variants/step.hpp"
#include "harness/shard/layout.hpp"

namespace lobench::shard {

struct ShardData {
  Range vocab, positions;  // the blocks of the whole step this rank holds
  int64_t V = 0, P = 0;    // of the whole step
  int64_t D = 0, L = 0;
  Reduction reduction = Reduction::mean;
  std::vector<float> A;           // [positions, D]
  std::vector<float> E;           // [vocab, D]
  std::vector<int32_t> targets;   // [positions, L]: ids local to `vocab` (id − v0), −1 for ids outside it
  bool weighted = false;          // the step has position weights (a shard without positions has none to hold)
  std::vector<float> weights;     // [positions] when weighted

  // The shard as a step of its own: P and V the shard's, the mean's scale the whole step's V. Set
  // global_weight_sum on it when the shard holds only some positions.
  StepInputs view() const;
  int64_t bytes() const {
    return int64_t(A.size() + E.size() + weights.size() + targets.size()) * 4;
  }
};

// Why this shard cannot be stepped: arrays whose sizes do not match its ranges, a non-finite value in
// A or E, a negative or non-finite weight (the rules of `lobench check`); "" when it is fine. The
// message names the array and the whole step's row.
std::string check_shard(const ShardData& s);

// Rebases target ids to the rows [vocab.begin, vocab.end) of E: id − begin inside, −1 (padding)
// outside, so that a shard's step sees exactly its share of the targets. Duplicates stay duplicates.
void rebase_targets(const int32_t* ids, int64_t count, Range vocab, int32_t* local);

// Rank `rank`'s shard of make_synthetic(shape, spec), with the same values, drawn without the rest of
// E (make_synthetic_slice).
ShardData synthetic_shard(const Shape& shape, const SyntheticSpec& spec, const ShardLayout& layout, int rank);

// Rank `rank`'s shard of a problem held whole in memory.
ShardData shard_of(const StepData& whole, const ShardLayout& layout, int rank);

}  // namespace lobench::shard
