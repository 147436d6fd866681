// The ELMO classifier update on the GPU: one fused BCE step over weights W [V, D] stored in a narrow
// format (bfloat16 or an 8-bit format such as float8_e4m3fn), in which every weight-gradient tile is
// applied where it is computed,
//     W[v, d] ← round(fma(−lr, dW[v, d], W[v, d]))
// with the random word of index v·D + d in stream `step` (precision_sim's Philox mapping, so the device
// rounds exactly as the CPU library would given the same values), and is never stored. Loss, counts
// and dA (for the layers below) come out as in the step contract; dE is not formed.
// Plain C++ header; defined in fused_sr_sgd.cu (CUDA builds only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "precision_sim/rounding.hpp"
#include "variants/step.hpp"

namespace lobench::cuda {

struct SrSgdOptions {
  std::string format = "bfloat16";  // storage format of W: bfloat16, or any format of at most 8 bits
  precision::Rounding rounding = precision::Rounding::stochastic;
  int sr_bits = 0;  // k random bits for stochastic rounding (0: the format's default)
  uint64_t seed = 0;
};

struct SrSgdReport {
  int64_t peak_working_bytes = 0;  // counted by the device allocator (W, inputs and outputs excluded)
  double seconds = 0.0;            // the step on the device, by events
};

// One step: reads A, targets, weights and reduction from `in` (in.E and in.E_stored are ignored),
// W's values from `W` ([V, D] float32, each exactly a value of the format), computes with bf16
// operands, writes loss, per-position loss, counts and dA into `out` (out.dE is left empty: it is never
// formed), and replaces `W` by the updated weights (decoded to float32).
SrSgdReport fused_sr_sgd_step(const StepInputs& in, std::vector<float>& W, const SrSgdOptions& options, float lr,
                              uint64_t step, StepOutputs& out);

}  // namespace lobench::cuda
