// AdamW (Loshchilov & Hutter: decoupled weight decay) with a linear warm-up of the learning rate, in
// two precisions:
//   fp32        moments m, v in float32 (8 bytes of state per parameter).
//   bf16_kahan  the XMC encoder's scheme (harness/train/encoder.cpp, ELMO / optimi Adam(kahan_sum)):
//               parameters take bfloat16 values, and m, v and a Kahan compensation buffer are stored as
//               packed bfloat16 codes (6 bytes of state per parameter); every stored update is rounded to
//               nearest-even, and the compensation carries what the rounded parameter could not absorb.
//               The parameters stay in float32 containers (ParameterSet) holding bf16 values, so the
//               forward reads them as they are; memory counts them at 4 bytes.
// Both use debiased betas b = β(1 − β^(t−1))/(1 − β^t) (so m and v are the bias-corrected moments):
//   m = m + (1 − b1)(g − m),  v = b2 v + (1 − b2) g²,  u = m/(sqrt(v) + ε) + λ·p (λ only where decay),
//   fp32: p = p − lr·u;   bf16_kahan: c = r(c − lr·u), p' = r(p + c), c = r(c + (p − p')), p = p'.
// Element-wise over blocks of fixed size: results do not depend on the thread count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "variants/counting_allocator.hpp"
#include "harness/seqrec/parameters.hpp"

namespace lobench::seqrec {

enum class OptimizerPrecision { fp32, bf16_kahan };
std::string to_string(OptimizerPrecision p);
OptimizerPrecision parse_optimizer_precision(const std::string& s);  // fp32 | bf16 (bf16_kahan)

struct AdamWConfig {
  float lr = 5e-4f;  // the paper's
  float beta1 = 0.9f, beta2 = 0.98f, eps = 1e-8f;
  float weight_decay = 0.0f;
  int64_t warmup_steps = 0;  // lr rises linearly from lr/warmup to lr over these steps, then stays
  OptimizerPrecision precision = OptimizerPrecision::fp32;
};

// The optimizer's whole state, what a checkpoint keeps (harness/seqrec/seqrec_checkpoint.hpp): the steps
// taken and the moments as stored in its precision (fp32: m, v; bf16_kahan: the bfloat16 codes of m, v
// and of the Kahan compensation). The weight-decay mask is not state: the model's tensors give it.
struct AdamWState {
  OptimizerPrecision precision = OptimizerPrecision::fp32;
  int64_t steps = 0;
  std::vector<float> m, v;               // fp32
  std::vector<uint16_t> m16, v16, c16;   // bf16_kahan
};

class AdamW {
 public:
  AdamW(const AdamWConfig& cfg, ParameterSet& params, CountingAllocator& alloc);
  static int64_t state_bytes(int64_t parameters, OptimizerPrecision p) {
    return parameters * (p == OptimizerPrecision::fp32 ? 8 : 6) + parameters;  // + the 1-byte decay mask
  }
  // The learning rate of step t (1-based).
  float lr_at(int64_t t) const;
  // Rounds the parameters to bfloat16 in bf16_kahan mode (call after initialising them).
  void prepare(ParameterSet& params) const;
  // One step on params.grads() (not cleared; the caller zeroes them before the next backward).
  void step(ParameterSet& params, int threads);
  int64_t steps_done() const { return t_; }
  // A copy of the state, and its restoration (continuing from it equals never having stopped, bit for
  // bit). restore throws std::invalid_argument when the precision or a length is not this optimizer's.
  AdamWState state() const;
  void restore(const AdamWState& s);
  // The bias-corrected second moment v̂ (fp32 only; nullptr for bf16_kahan): what ε is added to the root
  // of, for diagnostics (harness/seqrec/bench/grad_scale_bench.cpp).
  const float* second_moment() const { return cfg_.precision == OptimizerPrecision::fp32 ? v32_.data() : nullptr; }

 private:
  AdamWConfig cfg_;
  int64_t t_ = 0;
  Buffer<float> m32_, v32_;
  Buffer<uint16_t> m16_, v16_, c16_;
  Buffer<uint8_t> decay_;  // 1 where weight decay applies
};

}  // namespace lobench::seqrec
