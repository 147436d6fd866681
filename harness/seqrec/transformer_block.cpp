#include "harness/seqrec/transformer_block.hpp"

#include <algorithm>

#include "harness/seqrec/residual.hpp"

namespace lobench::seqrec {

TransformerBlock::TransformerBlock(ParameterSet& params, const std::string& name, const BlockShape& s,
                                   uint64_t dropout_site)
    : s_(s),
      ln1_(params, name + ".ln1", s.D, s.max_batch * s.N),
      ln2_(params, name + ".ln2", s.D, s.max_batch * s.N),
      attn_(params, name + ".attn", s.D, s.heads, s.max_batch, s.N, s.threads),
      ffn_(params, name + ".ffn", s.D, 4 * s.D, s.max_batch * s.N, s.threads),
      drop_attn_(s.dropout, s.seed, dropout_site),
      drop_ffn_(s.dropout, s.seed, dropout_site + 1) {}

int64_t TransformerBlock::activation_bytes(const BlockShape& s) {
  const int64_t R = s.max_batch * s.N;
  return 2 * LayerNorm::activation_bytes(s.D, R) +
         CausalSelfAttention::activation_bytes(s.D, s.heads, s.max_batch, s.N, s.threads) +
         FeedForward::activation_bytes(4 * s.D, R) + 7 * 4 * R * s.D;
}

void TransformerBlock::allocate(CountingAllocator& alloc) {
  const int64_t n = s_.max_batch * s_.N * s_.D;
  ln1_.allocate(alloc);
  ln2_.allocate(alloc);
  attn_.allocate(alloc);
  ffn_.allocate(alloc);
  for (Buffer<float>* b : {&a_in_, &a_out_, &h_, &f_in_, &f_out_, &g1_, &g2_}) *b = Buffer<float>(alloc, n);
}

void TransformerBlock::init(ParameterSet& params, uint64_t seed, uint64_t stream, float std, float out_std) const {
  ln1_.init(params);
  ln2_.init(params);
  attn_.init(params, seed, stream, std, out_std);
  ffn_.init(params, seed, stream + 2, std, out_std);
}

void TransformerBlock::forward(const ParameterSet& params, const float* x, const int32_t* ids, int64_t B,
                               uint64_t step, bool training, float* y, uint64_t mask_offset) {
  if (s_.post_ln) return forward_post_ln(params, x, ids, B, step, training, y, mask_offset);
  const int64_t R = B * s_.N, n = R * s_.D;
  const int T = s_.threads;
  ln1_.forward(params, x, R, a_in_.data(), T);
  attn_.forward(params, a_in_.data(), ids, B, a_out_.data());
  drop_attn_.forward(a_out_.data(), n, step, training, a_out_.data(), T, mask_offset);
  residual_add(x, a_out_.data(), n, h_.data(), T);
  ln2_.forward(params, h_.data(), R, f_in_.data(), T);
  ffn_.forward(params, f_in_.data(), R, f_out_.data());
  drop_ffn_.forward(f_out_.data(), n, step, training, f_out_.data(), T, mask_offset);
  residual_add(h_.data(), f_out_.data(), n, y, T);
}

void TransformerBlock::backward(ParameterSet& params, const int32_t* ids, int64_t B, uint64_t step, const float* dy,
                                float* dx, uint64_t mask_offset) {
  if (s_.post_ln) return backward_post_ln(params, ids, B, step, dy, dx, mask_offset);
  const int64_t R = B * s_.N, n = R * s_.D;
  const int T = s_.threads;
  // Feed-forward branch: g1 = dropout'(dy) -> ffn -> g2 = d f_in -> ln2 -> g1 = d h (branch part).
  drop_ffn_.backward(dy, n, step, g1_.data(), T, mask_offset);
  ffn_.backward(params, f_in_.data(), g1_.data(), R, g2_.data());
  ln2_.backward(params, g2_.data(), R, g1_.data(), T);
  residual_backward(dy, g1_.data(), n, g1_.data(), T);  // g1 = dh
  // Attention branch.
  drop_attn_.backward(g1_.data(), n, step, g2_.data(), T, mask_offset);
  attn_.backward(params, a_in_.data(), ids, B, g2_.data(), a_out_.data());  // a_out reused as d a_in
  ln1_.backward(params, a_out_.data(), R, g2_.data(), T);
  residual_backward(g1_.data(), g2_.data(), n, dx, T);
}

void TransformerBlock::forward_post_ln(const ParameterSet& params, const float* x, const int32_t* ids, int64_t B,
                                       uint64_t step, bool training, float* y, uint64_t mask_offset) {
  const int64_t R = B * s_.N, n = R * s_.D;
  const int T = s_.threads;
  // The attention's backward reads its input; x belongs to the caller, so the block keeps its own copy.
  std::copy_n(x, n, a_in_.data());
  attn_.forward(params, a_in_.data(), ids, B, a_out_.data());
  drop_attn_.forward(a_out_.data(), n, step, training, a_out_.data(), T, mask_offset);
  residual_add(x, a_out_.data(), n, a_out_.data(), T);  // s1 = x + dropout(attention(x))
  ln1_.forward(params, a_out_.data(), R, h_.data(), T);  // h = LN1(s1)
  ffn_.forward(params, h_.data(), R, f_out_.data());
  drop_ffn_.forward(f_out_.data(), n, step, training, f_out_.data(), T, mask_offset);
  residual_add(h_.data(), f_out_.data(), n, f_out_.data(), T);  // s2 = h + dropout(ffn(h))
  ln2_.forward(params, f_out_.data(), R, y, T);                  // y = LN2(s2)
}

void TransformerBlock::backward_post_ln(ParameterSet& params, const int32_t* ids, int64_t B, uint64_t step,
                                        const float* dy, float* dx, uint64_t mask_offset) {
  const int64_t R = B * s_.N, n = R * s_.D;
  const int T = s_.threads;
  ln2_.backward(params, dy, R, g1_.data(), T);                        // g1 = d s2 (dy is not read after this)
  drop_ffn_.backward(g1_.data(), n, step, g2_.data(), T, mask_offset);  // g2 = d ffn(h)
  ffn_.backward(params, h_.data(), g2_.data(), R, a_out_.data());      // a_out = d h through the ffn
  residual_backward(g1_.data(), a_out_.data(), n, g1_.data(), T);      // g1 = d h
  ln1_.backward(params, g1_.data(), R, g2_.data(), T);                 // g2 = d s1
  drop_attn_.backward(g2_.data(), n, step, g1_.data(), T, mask_offset);  // g1 = d attention(x)
  attn_.backward(params, a_in_.data(), ids, B, g1_.data(), a_out_.data());  // a_out = d x through the attention
  residual_backward(g2_.data(), a_out_.data(), n, dx, T);
}

}  // namespace lobench::seqrec
