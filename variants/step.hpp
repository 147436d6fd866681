// What a variant reads and writes: views of the inputs, and the outputs the caller owns.
#pragma once

#include <cstdint>
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

// Non-owning views of one step's inputs (DESIGN.md contract). All row-major.
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

  float weight(int64_t p) const { return weights ? weights[p] : 1.0f; }
  double weight_sum() const;  // Σ_p w_p in float64
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

// Count indices: counts[p*4 + k].
enum CountIndex { kTP = 0, kFP = 1, kFN = 2, kTN = 3 };

}  // namespace lobench
