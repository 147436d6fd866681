// The float64 oracle: exactly the contract (docs/method.md#the-float64-reference), written to be obviously right rather than fast.
// Every other variant is judged against it.
#pragma once

#include "variants/counting_allocator.hpp"
#include "variants/step.hpp"

namespace lobench::cpu {

struct ReferenceResult {
  double loss = 0.0;
  Buffer<double> per_position_loss;  // [P]
  Buffer<double> dA;                 // [P, D]
  Buffer<double> dE;                 // [V, D]
  Buffer<int64_t> counts;            // [P, 4]
  Buffer<int64_t> near_zero;         // [P]: logits with |x| < near_zero_band (counts may differ there)

  static constexpr double near_zero_band = 1e-5;
  // Bytes allocated for a result (outputs in float64).
  static int64_t bytes(int64_t P, int64_t V, int64_t D) { return P * 8 + (P * D + V * D) * 8 + P * 5 * 8; }
};

// Computes the step in float64. The logit and gradient products of each vocabulary block are float64
// GEMMs (Eigen, `threads` threads); the element-wise part is a plain loop over a dense 0/1 target tile
// built from the raw target ids, independent of the sparse-target code the fast variants share.
void reference_step(const StepInputs& in, ReferenceResult& out, CountingAllocator& alloc, int threads);

// Working bytes reference_step allocates besides its result.
int64_t reference_workspace_bytes(int64_t P, int64_t V, int64_t D);

}  // namespace lobench::cpu
