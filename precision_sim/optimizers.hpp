// Optimizer steps whose state lives in a low-precision format, as in ELMO (notes/elmo.md §2-3):
//
//  * sgd_step: w <- round(w - lr*g). The update is one float32 fma, fma(-lr, g, w), then rounded into
//    the format with the given options: stochastic for ELMO's classifier (bf16 with k = 16 random
//    bits, or e4m3fn), nearest_even for the naive baseline whose small updates vanish. Weights can
//    be float32 containers or packed codes. No momentum, no weight decay (ELMO uses neither).
//
//  * adam_kahan_step: Adam without float32 master weights, in the style of optimi's
//    Adam(kahan_sum=True) used for ELMO's bf16 encoder. Parameters, both moments and a compensation
//    buffer are all stored in the format (round-to-nearest-even after every stored update):
//      g  = grad + weight_decay * p                         (L2, optimi's default coupling)
//      b1 = beta1 (1 - beta1^(t-1)) / (1 - beta1^t)         (debiased betas: no bias correction step)
//      m  = round(m + (1 - b1) (g - m))                     (lerp)
//      v  = round(b2 v + (1 - b2) g^2)
//      c  = round(c - lr m / (sqrt(v) + eps));  p_new = round(p + c);  c = round(c + (p - p_new))
//    so the compensation carries what the rounded parameter could not absorb.
//
// Every step is elementwise and computed from element indices only, so results do not depend on
// `threads`. Stochastic options: use a new `stream` (or seed) per step, e.g. stream = step.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "precision_sim/quantizer.hpp"

namespace lobench::precision {

// One weight: round(fma(-lr, g, w)) with the element's random word (stochastic.hpp: random_word).
inline float sgd_update(float w, float g, float lr, const Quantizer& q, Rounding mode = Rounding::nearest_even,
                        uint32_t word = 0, int sr_bits = 0) {
  return q.round(std::fma(-lr, g, w), mode, word, sr_bits);
}

void sgd_step(std::span<float> w, std::span<const float> grad, float lr, const Quantizer& q,
              const RoundingOptions& opt, int threads = 1);
// Packed weights: decode, update, round and encode in place.
void sgd_step(std::span<uint8_t> w_codes, std::span<const float> grad, float lr, const Quantizer& q,
              const RoundingOptions& opt, int threads = 1);
void sgd_step(std::span<uint16_t> w_codes, std::span<const float> grad, float lr, const Quantizer& q,
              const RoundingOptions& opt, int threads = 1);

struct AdamOptions {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.99f;  // optimi's defaults
  float eps = 1e-6f;
  float weight_decay = 0.0f;
};

// Moments and compensation, stored as float32 containers holding values of the format.
struct KahanAdamState {
  explicit KahanAdamState(size_t n) : m(n, 0.0f), v(n, 0.0f), comp(n, 0.0f) {}
  std::vector<float> m, v, comp;
  int64_t step = 0;  // completed steps
};

// One step; `q` is the storage format of params and state (rounding: nearest_even).
void adam_kahan_step(std::span<float> params, std::span<const float> grad, KahanAdamState& state,
                     const AdamOptions& opt, const Quantizer& q, int threads = 1);

}  // namespace lobench::precision
