// Inverted dropout with a counter-based mask: element i of call (site, step) is kept iff its Philox
// word (precision_sim/stochastic.hpp, key = seed, stream = site·2^32 + step, counter = i) is at least
// p·2^32, and a kept element is scaled by 1/(1 − p). The mask is a function of (seed, site, step, i)
// only, so it is the same at any thread count and the backward recomputes it instead of storing it.
// `first` offsets the counter: a micro-batch whose windows start at window w of its step passes
// w·N·D, so that its masks are those the whole step's batch would draw for the same elements.
#pragma once

#include <cstdint>

namespace lobench::seqrec {

class Dropout {
 public:
  Dropout() = default;
  Dropout(float p, uint64_t seed, uint64_t site);  // throws std::invalid_argument unless 0 <= p < 1

  float probability() const { return p_; }
  // y[i] = x[i] · mask[i] (in place allowed). With p = 0 or training = false, y = x.
  void forward(const float* x, int64_t n, uint64_t step, bool training, float* y, int threads, uint64_t first = 0) const;
  // dx[i] = dy[i] · mask[i] for the same step (in place allowed).
  void backward(const float* dy, int64_t n, uint64_t step, float* dx, int threads, uint64_t first = 0) const {
    forward(dy, n, step, /*training=*/true, dx, threads, first);
  }

 private:
  float p_ = 0.0f;
  uint64_t seed_ = 0, site_ = 0;
};

}  // namespace lobench::seqrec
