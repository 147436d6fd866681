#include "harness/seqrec/sasrec_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace lobench::seqrec {

namespace {
int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r) || r > (int64_t(1) << 50))
    throw std::invalid_argument(std::string("model: ") + what + " is too large");
  return r;
}
BlockShape block_shape(const ModelConfig& c) {
  return {c.D, c.heads, c.max_batch, c.N, c.threads, c.dropout, c.seed, c.post_ln};
}
}  // namespace

void validate(const ModelConfig& c) {
  auto positive = [](int64_t v, const char* name) {
    if (v <= 0) throw std::invalid_argument(std::string("model: ") + name + " must be positive, got " + std::to_string(v));
  };
  positive(c.V, "V");
  positive(c.N, "N");
  positive(c.D, "D");
  positive(c.layers, "layers");
  positive(c.heads, "heads");
  positive(c.max_batch, "batch");
  if (c.V < 2) throw std::invalid_argument("model: V must count at least one item besides padding");
  if (c.V > INT32_MAX) throw std::invalid_argument("model: V must be below 2^31 (item ids are int32)");
  if (c.D % c.heads != 0)
    throw std::invalid_argument("model: D (" + std::to_string(c.D) + ") must be a multiple of heads (" +
                                std::to_string(c.heads) + ")");
  if (c.threads < 1) throw std::invalid_argument("model: threads must be >= 1");
  if (!(c.dropout >= 0.0f && c.dropout < 1.0f)) throw std::invalid_argument("model: dropout must be in [0, 1)");
  const int64_t R = checked_mul(c.max_batch, c.N, "batch x N");
  checked_mul(checked_mul(R, c.D, "batch x N x D"), 4 * (c.layers + 4), "the activations");
  checked_mul(checked_mul(c.max_batch * c.heads, c.N, "attention"), c.N * 4, "the attention probabilities");
  checked_mul(c.V, c.D * 4, "V x D");
}

int64_t SasRec::parameter_count(const ModelConfig& c) {
  const int64_t D = c.D;
  const int64_t per_block = 2 * 2 * D /* LNs */ + (D * 3 * D + 3 * D) + (D * D + D) + (D * 4 * D + 4 * D) + (4 * D * D + D);
  return c.V * D * (c.tied ? 1 : 2) + (c.item_bias ? c.V : 0) + c.N * D + c.layers * per_block + 2 * D;
}

int64_t SasRec::activation_bytes(const ModelConfig& c) {
  const int64_t R = c.max_batch * c.N;
  return c.layers * TransformerBlock::activation_bytes(block_shape(c)) + LayerNorm::activation_bytes(c.D, R) +
         (c.layers + 1 + 3) * 4 * R * c.D;  // the stream x0..x_L, hidden and two gradient buffers
}

SasRec::SasRec(const ModelConfig& cfg, CountingAllocator& alloc) : cfg_(cfg) {
  validate(cfg);
  items_ = params_.add("items", cfg.V * cfg.D, /*decay=*/true);
  out_ = cfg.tied ? items_ : params_.add("output_items", cfg.V * cfg.D, /*decay=*/true);
  if (cfg.item_bias) bias_ = params_.add("output_bias", cfg.V, /*decay=*/false);
  embed_ = Embedding(params_, "embed", items_, cfg.V, cfg.N, cfg.D);
  drop_embed_ = Dropout(cfg.dropout, cfg.seed, /*site=*/1);
  for (int64_t l = 0; l < cfg.layers; ++l)
    blocks_.push_back(std::make_unique<TransformerBlock>(params_, "block" + std::to_string(l), block_shape(cfg),
                                                         /*dropout_site=*/uint64_t(2 + 2 * l)));
  ln_f_ = LayerNorm(params_, cfg.post_ln ? "ln_embed" : "ln_f", cfg.D, cfg.max_batch * cfg.N);
  const int64_t before = alloc.current_bytes();
  params_.allocate(alloc);
  allocated_params_ = alloc.current_bytes() - before;
  for (auto& b : blocks_) b->allocate(alloc);
  ln_f_.allocate(alloc);
  const int64_t n = cfg.max_batch * cfg.N * cfg.D;
  for (int64_t l = 0; l <= cfg.layers; ++l) stream_.emplace_back(alloc, n);
  hidden_ = Buffer<float>(alloc, n);
  g_a_ = Buffer<float>(alloc, n);
  g_b_ = Buffer<float>(alloc, n);
  allocated_activations_ = alloc.current_bytes() - before - allocated_params_;
}

void SasRec::init() {
  const float s = cfg_.init_std, s_out = s / std::sqrt(2.0f * float(cfg_.layers));
  fill_normal(params_.value(items_), items_.size, cfg_.seed, /*stream=*/100, s);
  if (!cfg_.tied) fill_normal(params_.value(out_), out_.size, cfg_.seed, 101, s);
  fill_normal(params_.value(embed_.positions()), embed_.positions().size, cfg_.seed, 102, s / 2);
  for (size_t l = 0; l < blocks_.size(); ++l) blocks_[l]->init(params_, cfg_.seed, 200 + 10 * l, s, s_out);
  ln_f_.init(params_);
  if (bias_.valid()) std::fill_n(params_.value(bias_), bias_.size, 0.0f);
}

const float* SasRec::forward(const int32_t* ids, int64_t B, uint64_t step, bool training, int64_t first_window) {
  if (B < 1 || B > cfg_.max_batch) throw std::invalid_argument("model: batch outside [1, max_batch]");
  const int64_t R = B * cfg_.N, n = R * cfg_.D;
  for (int64_t r = 0; r < R; ++r)
    if (ids[r] < 0 || ids[r] >= cfg_.V)
      throw std::invalid_argument("model: item id " + std::to_string(ids[r]) + " outside [0, " + std::to_string(cfg_.V) + ")");
  const int T = cfg_.threads;
  const uint64_t mask_offset = uint64_t(first_window * cfg_.N * cfg_.D);
  if (cfg_.post_ln) {
    embed_.forward(params_, ids, B, hidden_.data(), T);
    ln_f_.forward(params_, hidden_.data(), R, stream_[0].data(), T);
  } else {
    embed_.forward(params_, ids, B, stream_[0].data(), T);
  }
  drop_embed_.forward(stream_[0].data(), n, step, training, stream_[0].data(), T, mask_offset);
  for (size_t l = 0; l < blocks_.size(); ++l)
    blocks_[l]->forward(params_, stream_[l].data(), ids, B, step, training, stream_[l + 1].data(), mask_offset);
  if (cfg_.post_ln) return stream_.back().data();
  ln_f_.forward(params_, stream_.back().data(), R, hidden_.data(), T);
  return hidden_.data();
}

void SasRec::backward(const int32_t* ids, int64_t B, uint64_t step, const float* d_hidden, int64_t first_window) {
  const int64_t R = B * cfg_.N, n = R * cfg_.D;
  const int T = cfg_.threads;
  const uint64_t mask_offset = uint64_t(first_window * cfg_.N * cfg_.D);
  if (cfg_.post_ln) std::copy_n(d_hidden, n, g_a_.data());
  else ln_f_.backward(params_, d_hidden, R, g_a_.data(), T);
  for (size_t l = blocks_.size(); l-- > 0;)
    blocks_[l]->backward(params_, ids, B, step, g_a_.data(), g_a_.data(), mask_offset);
  drop_embed_.backward(g_a_.data(), n, step, g_b_.data(), T, mask_offset);
  if (cfg_.post_ln) {
    ln_f_.backward(params_, g_b_.data(), R, g_a_.data(), T);  // through the embedding LayerNorm
    embed_.backward(params_, ids, B, g_a_.data(), T);
  } else {
    embed_.backward(params_, ids, B, g_b_.data(), T);
  }
}

}  // namespace lobench::seqrec
