// The encoder of the XMC model: sparse features [B, F] -> embeddings H [B, D] by one linear layer, a
// nonlinearity and dropout: H = dropout(act(X·W + b)), trained by Adam.
//
// Precision (ELMO keeps its encoder in bf16 with optimi's Kahan-summed Adam, notes/elmo.md §3):
//   fp32       W, b, Adam moments in float32; plain Adam (debiased betas, so no separate bias
//              correction step: m and v equal Adam's bias-corrected moments).
//   bf16       W, b, m, v and a Kahan compensation buffer all stored as packed bfloat16 (2 bytes), with
//              exactly precision_sim's adam_kahan_step arithmetic (tests check bit equality); H and the
//              input gradient dH are rounded to bf16 as in ELMO (its embedding and grad_input are bf16).
// The gradient of W and b is float32 in both (only rows of features present in the batch are nonzero;
// Adam still updates every row, as a dense-gradient PyTorch optimizer does).
//
// Dropout draws its mask from Philox (seed, step, element), so a step can be replayed exactly (the
// backward recomputes the mask instead of storing it). Every buffer comes from the CountingAllocator.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "variants/counting_allocator.hpp"
#include "precision_sim/optimizers.hpp"

namespace lobench::train {

enum class Activation { relu, gelu };
std::string to_string(Activation a);
Activation parse_activation(const std::string& s);  // relu | gelu (tanh form); throws std::invalid_argument

enum class EncoderPrecision { fp32, bf16 };
std::string to_string(EncoderPrecision p);
EncoderPrecision parse_encoder_precision(const std::string& s);  // fp32 | bf16 (bf16 = bf16 + Kahan Adam)

struct EncoderConfig {
  int64_t F = 0;  // input features
  int64_t D = 0;  // embedding width
  Activation activation = Activation::relu;
  float dropout = 0.0f;  // probability of zeroing an embedding entry while training
  EncoderPrecision precision = EncoderPrecision::fp32;
  precision::AdamOptions adam;  // lr is set per step (schedules); weight_decay is L2 on W only (not b)
  int64_t max_batch = 0;
  uint64_t seed = 0;
  int threads = 1;
};

// Sparse rows of the batch: row b has features idx[off[b] .. off[b+1]) with values val[...].
struct SparseRows {
  std::span<const int64_t> offsets;  // [B + 1]
  std::span<const int32_t> indices;
  std::span<const float> values;
  int64_t rows() const { return int64_t(offsets.size()) - 1; }
};

class Encoder {
 public:
  Encoder(const EncoderConfig& cfg, CountingAllocator& alloc);
  ~Encoder();
  Encoder(const Encoder&) = delete;
  Encoder& operator=(const Encoder&) = delete;

  const EncoderConfig& config() const { return cfg_; }
  // Exactly what the constructor allocates.
  static int64_t predicted_bytes(const EncoderConfig& cfg);

  // W ~ U(-1/sqrt(F_eff), 1/sqrt(F_eff)) (PyTorch's Linear default with fan_in = mean nonzeros per row
  // when given, else F), b = 0.
  void init(uint64_t seed, double fan_in = 0);

  // H [B, D] (owned by the encoder, valid until the next forward). `step` keys the dropout mask;
  // training = false turns dropout off.
  const float* forward(const SparseRows& x, bool training, uint64_t step);
  // From dH [B, D] of the last forward: accumulates the parameter gradient (cleared by adam_step).
  void backward(const SparseRows& x, const float* dH, uint64_t step);
  // One Adam step with learning rate lr on the accumulated gradient, then clears it.
  void adam_step(float lr);

  // Parameters as float32: W [F, D] then b [D].
  std::vector<float> parameters() const;
  void set_parameters(std::span<const float> p);  // rounded to the precision (nearest-even)
  // The accumulated gradient (float32, W then b).
  std::span<const float> gradient() const;
  int64_t num_parameters() const { return (cfg_.F + 1) * cfg_.D; }

 private:
  struct Impl;
  EncoderConfig cfg_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lobench::train
