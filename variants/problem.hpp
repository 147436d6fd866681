// The BCE step's problem: shapes, reduction, and how synthetic inputs are drawn.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace lobench {

// How the per-element losses become one scalar (docs/method.md#reductions).
enum class Reduction {
  mean,  // Keras / Cut BCE: position-weighted mean of the per-position mean over V
  sum,   // Renee / ELMO: position-weighted sum over positions and V
};

std::string to_string(Reduction r);
Reduction parse_reduction(const std::string& s);  // throws std::invalid_argument

// The shape of one step: P = B*N positions of width D against V embeddings, L target ids each.
struct Shape {
  int64_t B = 1;
  int64_t N = 1;
  int64_t V = 1;
  int64_t D = 1;
  int64_t L = 1;
  Reduction reduction = Reduction::mean;
  bool weighted = false;  // position weights present (otherwise all 1)

  int64_t P() const { return B * N; }
  // Useful work of a single pass producing loss and both gradients: 2PVD each for logits, dA, dE.
  double flops_fused() const { return 6.0 * double(P()) * double(V) * double(D); }
};

// Synthetic input protocol of the Cut BCE paper (A, E ~ N(0,1) float32, targets uniform in [0, V)),
// plus knobs that exercise the ragged cases every variant must handle.
struct SyntheticSpec {
  uint64_t seed = 0;
  double pad_fraction = 0.0;  // fraction of target slots replaced by padding ids (-1 or V)
  double dup_fraction = 0.0;  // fraction of target slots that repeat another id of the same row
  double zero_weight_fraction = 0.0;  // with weights: fraction of positions whose weight is 0
  float scale_A = 1.0f;  // standard deviation of A's entries
  float scale_E = 1.0f;  // standard deviation of E's entries
};

// Throws std::invalid_argument naming the first field that is out of range.
void validate(const Shape& s);

}  // namespace lobench
