// What a variant reads and writes: views of the inputs, and the outputs the caller owns.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "variants/problem.hpp"

namespace lobench {

// A [rows, cols] float matrix held in a narrower number format (packed codes): how the low-precision
// variants receive E. They decode the rows of one vocabulary block at a time into float32 and
// accumulate in float32. Implemented by the harness with precision_sim (harness/stored_matrix.hpp).
class StoredMatrix {
 public:
  virtual ~StoredMatrix() = default;
  virtual void decode_rows(int64_t first, int64_t count, float* out) const = 0;  // out: [count, cols]
  virtual int64_t stored_bytes() const = 0;
  virtual std::string format_name() const = 0;
};

// Non-owning views of one step's inputs (docs/method.md#inputs). All row-major.
struct StepInputs {
  int64_t P = 0, V = 0, D = 0, L = 0;
  const float* A = nullptr;          // [P, D] activations
  const float* E = nullptr;          // [V, D] embeddings
  const int32_t* targets = nullptr;  // [P, L] ids; outside [0, V) is padding, repeats count once
  const float* weights = nullptr;    // [P] position weights, or nullptr for all ones
  Reduction reduction = Reduction::mean;
  // When set, E's values are these (decoded), and `E` may be null: a variant either reads E_stored or
  // declines the point in skip_reason (RunOptions::e_format tells it beforehand).
  const StoredMatrix* E_stored = nullptr;
  // When this step is one shard of a larger step (harness/shard/: a range of E's rows or of the
  // positions), the V and Σw of the whole step, which set the mean's scale: 1/V per position and
  // s = 1/(V·Σw). 0 and NaN: this step's own V and Σw.
  int64_t global_V = 0;
  double global_weight_sum = std::numeric_limits<double>::quiet_NaN();

  float weight(int64_t p) const { return weights ? weights[p] : 1.0f; }
  double weight_sum() const;  // Σ_p w_p in float64 (of the whole step when global_weight_sum is set)
  int64_t mean_V() const { return global_V > 0 ? global_V : V; }  // the V a mean divides by
  // The factor s in g = s·w·(σ(x) − y): 1/(V·Σw) for mean (0 when Σw = 0), 1 for sum.
  double gradient_scale() const;
};

// Outputs, owned by the caller and sized by `resize` (they are not working memory).
struct StepOutputs {
  double loss = 0.0;
  std::vector<double> per_position_loss;  // [P] unweighted: mean (or sum) over V of the element loss
  std::vector<float> dA;                  // [P, D]
  std::vector<float> dE;                  // [V, D]
  std::vector<int64_t> counts;            // [P, 4]: TP, FP, FN, TN at logit > 0

  void resize(int64_t P, int64_t V, int64_t D);
  // Sets `loss` from per_position_loss by the reduction (position-weighted mean or sum).
  void reduce_loss(const StepInputs& in);
  static int64_t bytes(int64_t P, int64_t V, int64_t D) {
    return P * 8 + (P * D + V * D) * 4 + P * 4 * 8;
  }
};

// Inputs owned in memory: synthetic problems and files read by `lobench check`.
struct StepData {
  int64_t P = 0, V = 0, D = 0, L = 0;
  Reduction reduction = Reduction::mean;
  std::vector<float> A, E, weights;  // weights empty: all ones
  std::vector<int32_t> targets;

  StepInputs view() const;
  int64_t bytes() const {
    return int64_t(A.size() + E.size() + weights.size()) * 4 + int64_t(targets.size()) * 4;
  }
};

// Draws inputs by the Cut BCE protocol (see SyntheticSpec). Deterministic in spec.seed.
StepData make_synthetic(const Shape& shape, const SyntheticSpec& spec);

// A block of make_synthetic's inputs: rows [v0, v1) of E, and rows [p0, p1) of A, the targets and the
// weights. How one rank of a sharded step draws only its shard (harness/shard/).
struct SyntheticSlice {
  int64_t v0 = 0, v1 = 0, p0 = 0, p1 = 0;
};
struct SyntheticBlock {
  std::vector<float> A, E, weights;  // [p1−p0, D], [v1−v0, D], [p1−p0] (empty when not weighted)
  std::vector<int32_t> targets;      // [p1−p0, L], ids of the whole vocabulary [0, V) (and padding)
};
// The same values as make_synthetic's at those rows, bit for bit: every stream is drawn from its start
// and only the slice is kept, so memory is O(slice) but time O(P·(D + L) + v1·D) (the protocol's
// generators are sequential). Throws std::invalid_argument for a slice outside [0, V) x [0, P).
SyntheticBlock make_synthetic_slice(const Shape& shape, const SyntheticSpec& spec, const SyntheticSlice& slice);

// Count indices: counts[p*4 + k].
enum CountIndex { kTP = 0, kFP = 1, kFN = 2, kTN = 3 };

}  // namespace lobench
