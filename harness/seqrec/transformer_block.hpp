// One pre-LN GPT-2 block on the residual stream x [R, D]:
//   h = x + dropout(attention(LN1(x))),   y = h + dropout(feed_forward(LN2(h))).
#pragma once

#include <string>

#include "harness/seqrec/attention.hpp"
#include "harness/seqrec/dropout.hpp"
#include "harness/seqrec/feed_forward.hpp"
#include "harness/seqrec/layer_norm.hpp"

namespace lobench::seqrec {

struct BlockShape {
  int64_t D = 0, heads = 1, max_batch = 1, N = 1;
  int threads = 1;
  float dropout = 0.0f;
  uint64_t seed = 0;
};

class TransformerBlock {
 public:
  TransformerBlock(ParameterSet& params, const std::string& name, const BlockShape& s, uint64_t dropout_site);
  static int64_t activation_bytes(const BlockShape& s);
  void allocate(CountingAllocator& alloc);
  void init(ParameterSet& params, uint64_t seed, uint64_t stream, float std, float out_std) const;

  // x [B·N, D] -> y [B·N, D] (y may not alias x; x must stay alive until backward). `mask_offset`: the
  // dropout counter of x's first element in its whole step (Dropout's `first`).
  void forward(const ParameterSet& params, const float* x, const int32_t* ids, int64_t B, uint64_t step,
               bool training, float* y, uint64_t mask_offset = 0);
  // dy -> dx (overwritten; may alias dy).
  void backward(ParameterSet& params, const int32_t* ids, int64_t B, uint64_t step, const float* dy, float* dx,
                uint64_t mask_offset = 0);

 private:
  BlockShape s_;
  LayerNorm ln1_, ln2_;
  CausalSelfAttention attn_;
  FeedForward ffn_;
  Dropout drop_attn_, drop_ffn_;
  // ln1 output, attention branch, h, ln2 output, ffn branch, and two gradient scratch buffers.
  Buffer<float> a_in_, a_out_, h_, f_in_, f_out_, g1_, g2_;
};

}  // namespace lobench::seqrec
