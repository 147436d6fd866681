#include "harness/seqrec/linear.hpp"

#include <algorithm>
#include <cmath>

#include "datasets/random.hpp"
#include "harness/seqrec/blocked_matmul.hpp"

namespace lobench::seqrec {

Linear::Linear(ParameterSet& params, const std::string& name, int64_t in, int64_t out) : in_(in), out_(out) {
  W_ = params.add(name + ".weight", in * out, /*decay=*/true);
  b_ = params.add(name + ".bias", out, /*decay=*/false);
}

void fill_normal(float* out, int64_t n, uint64_t seed, uint64_t stream, float std) {
  // Blocks of 4096 values share one generator keyed by the block index: independent of any threading.
  constexpr int64_t kBlock = 4096;
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    data::Rng rng(data::stream_key(seed, stream, uint64_t(b0 / kBlock)));
    const int64_t b1 = std::min(n, b0 + kBlock);
    for (int64_t i = b0; i < b1; ++i) out[i] = float(rng.normal() * double(std));
  }
}

void Linear::init(ParameterSet& params, uint64_t seed, uint64_t stream, float std) const {
  fill_normal(params.value(W_), W_.size, seed, stream, std);
  std::fill_n(params.value(b_), b_.size, 0.0f);
}

void Linear::forward(const ParameterSet& params, const float* x, int64_t rows, float* y, int threads) const {
  const float* b = params.value(b_);
  for (int64_t r = 0; r < rows; ++r) std::copy_n(b, out_, y + r * out_);
  matmul(x, Op::none, params.value(W_), Op::none, y, rows, in_, out_, /*accumulate=*/true, threads);
}

void Linear::backward(ParameterSet& params, const float* x, const float* dy, int64_t rows, float* dx,
                      int threads) const {
  matmul(x, Op::transpose, dy, Op::none, params.grad(W_), in_, rows, out_, /*accumulate=*/true, threads);
  add_column_sums(dy, rows, out_, params.grad(b_), threads);
  if (dx) matmul(dy, Op::none, params.value(W_), Op::transpose, dx, rows, out_, in_, /*accumulate=*/false, threads);
}

}  // namespace lobench::seqrec
