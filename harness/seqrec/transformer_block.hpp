// One transformer block on the residual stream x [R, D], in one of two layouts (BlockShape::post_ln):
//   pre-LN (GPT-2's, the default):  h = x + dropout(attention(LN1(x))),   y = h + dropout(feed_forward(LN2(h)))
//   post-LN (BERT's, as S3-Rec's SASRec encoder):
//                                   h = LN1(x + dropout(attention(x))),   y = LN2(h + dropout(feed_forward(h)))
// The same parameters either way (two LayerNorms, attention, feed-forward), so only where the LayerNorms
// sit differs.
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
  bool post_ln = false;
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
  void forward_post_ln(const ParameterSet& params, const float* x, const int32_t* ids, int64_t B, uint64_t step,
                       bool training, float* y, uint64_t mask_offset);
  void backward_post_ln(ParameterSet& params, const int32_t* ids, int64_t B, uint64_t step, const float* dy,
                        float* dx, uint64_t mask_offset);
  BlockShape s_;
  LayerNorm ln1_, ln2_;
  CausalSelfAttention attn_;
  FeedForward ffn_;
  Dropout drop_attn_, drop_ffn_;
  // The attention's input (pre-LN: the ln1 output; post-LN: a copy of x), attention branch, h, ln2
  // output (pre-LN only), ffn branch, and two gradient scratch buffers. Post-LN keeps the sums x + branch
  // in the branch buffers (the LayerNorms keep what their backward needs).
  Buffer<float> a_in_, a_out_, h_, f_in_, f_out_, g1_, g2_;
};

}  // namespace lobench::seqrec
