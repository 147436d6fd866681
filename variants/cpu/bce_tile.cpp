#include "bce_tile.hpp"

#include <Eigen/Core>

namespace lobench::cpu {
namespace {

using Row = Eigen::Map<Eigen::ArrayXf>;
using ConstRow = Eigen::Map<const Eigen::ArrayXf>;

// softplus(x) = max(x, 0) + log1p(exp(-|x|)): stable for any x. Eigen vectorises exp and log1p.
template <typename A>
auto softplus(const A& x) {
  return x.max(0.0f) + (-x.abs()).exp().log1p();
}

// σ(x) = 1 / (1 + exp(-x)) is stable in IEEE float: exp overflows to inf and the quotient to 0.
template <typename A>
auto sigmoid(const A& x) {
  return (1.0f + (-x).exp()).inverse();
}

}  // namespace

void tile_softplus_rows(const float* X, int64_t rows, int64_t cols, int64_t ld, double* loss_rows,
                        int64_t* predicted_rows) {
  for (int64_t r = 0; r < rows; ++r) {
    ConstRow x(X + r * ld, cols);
    loss_rows[r] += double(softplus(x).sum());
    predicted_rows[r] += (x > 0.0f).count();
  }
}

void tile_sigmoid_scaled(float* X, int64_t rows, int64_t cols, int64_t ld, const float* row_scale) {
  for (int64_t r = 0; r < rows; ++r) {
    Row x(X + r * ld, cols);
    x = row_scale[r] * sigmoid(x);
  }
}

void tile_softplus_and_sigmoid(float* X, int64_t rows, int64_t cols, int64_t ld, double* loss_rows,
                               int64_t* predicted_rows, const float* row_scale) {
  for (int64_t r = 0; r < rows; ++r) {
    Row x(X + r * ld, cols);
    loss_rows[r] += double(softplus(x).sum());
    predicted_rows[r] += (x > 0.0f).count();
    x = row_scale[r] * sigmoid(x);
  }
}

}  // namespace lobench::cpu
