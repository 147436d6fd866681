// Causal multi-head self-attention (GPT-2): qkv = x·W_qkv + b, per head h with d_h = D/H
//   S = Q_h K_hᵀ / sqrt(d_h), masked, P = softmax_rows(S), O_h = P V_h,  y = concat_h(O_h)·W_o + b_o.
// Query i sees keys j <= i that are not padding, and always itself (so a padded row's softmax is
// defined; its output is discarded downstream by weight 0). No dropout on the attention probabilities.
// Threads take (batch, head) pairs: each writes its own slice, so results do not depend on them.
#pragma once

#include <string>

#include "variants/counting_allocator.hpp"
#include "harness/seqrec/linear.hpp"

namespace lobench::seqrec {

class CausalSelfAttention {
 public:
  CausalSelfAttention() = default;
  CausalSelfAttention(ParameterSet& params, const std::string& name, int64_t D, int64_t heads, int64_t max_batch,
                      int64_t N, int threads);
  // Bytes allocate() takes: qkv, probabilities, context, their gradients, per-thread score gradient.
  static int64_t activation_bytes(int64_t D, int64_t heads, int64_t max_batch, int64_t N, int threads);
  void allocate(CountingAllocator& alloc);
  void init(ParameterSet& params, uint64_t seed, uint64_t stream, float std, float out_std) const;

  // x [B·N, D] (the LayerNorm output, kept alive by the caller until backward), ids [B, N] for the key
  // mask; y [B·N, D].
  void forward(const ParameterSet& params, const float* x, const int32_t* ids, int64_t B, float* y);
  // dy -> dx (overwritten); parameter gradients accumulated.
  void backward(ParameterSet& params, const float* x, const int32_t* ids, int64_t B, const float* dy, float* dx);

 private:
  int64_t D_ = 0, H_ = 0, dh_ = 0, max_batch_ = 0, N_ = 0;
  int threads_ = 1;
  Linear qkv_, proj_;
  Buffer<float> qkv_buf_, probs_, ctx_, dqkv_, dctx_, dscore_;
};

}  // namespace lobench::seqrec
