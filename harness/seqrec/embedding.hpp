// SASRec's input layer: x[b, n] = (E[id] + P[n]) · [id is not padding], with E the item table [V, D]
// (row 0 is the padding item; SASRec's timeline mask zeroes padded positions, so no gradient reaches
// row 0 or the positions there) and P the learned positional table [N, D]. Positions are absolute
// slots of the left-padded window, as in SASRec.
#pragma once

#include <cstdint>
#include <string>

#include "harness/seqrec/parameters.hpp"

namespace lobench::seqrec {

class Embedding {
 public:
  Embedding() = default;
  // `items` is the item table, registered by the model (it may be the tied output table).
  Embedding(ParameterSet& params, const std::string& name, ParamRef items, int64_t V, int64_t N, int64_t D);

  ParamRef items() const { return items_; }
  ParamRef positions() const { return pos_; }

  // ids [B, N] in [0, V) (0 = padding; validated by the caller) -> x [B·N, D].
  void forward(const ParameterSet& params, const int32_t* ids, int64_t B, float* x, int threads) const;
  // dE[id] += dx[r], dP[n] += dx[r] for non-padding rows. Threads split the D columns and each walks
  // the rows in order, so every sum has one fixed order.
  void backward(ParameterSet& params, const int32_t* ids, int64_t B, const float* dx, int threads) const;

 private:
  int64_t V_ = 0, N_ = 0, D_ = 0;
  ParamRef items_, pos_;
};

}  // namespace lobench::seqrec
