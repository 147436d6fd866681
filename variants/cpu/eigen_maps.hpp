// Eigen views over the row-major buffers every CPU variant works on.
#pragma once

#include <Eigen/Core>

namespace lobench::cpu {

using RowMatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Stride = Eigen::OuterStride<>;

// A row-major [rows, cols] float matrix whose rows are `ld` elements apart.
inline Eigen::Map<RowMatF, 0, Stride> mat(float* p, int64_t rows, int64_t cols, int64_t ld) {
  return {p, rows, cols, Stride(ld)};
}
inline Eigen::Map<const RowMatF, 0, Stride> cmat(const float* p, int64_t rows, int64_t cols, int64_t ld) {
  return {p, rows, cols, Stride(ld)};
}
inline Eigen::Map<RowMatD, 0, Stride> mat(double* p, int64_t rows, int64_t cols, int64_t ld) {
  return {p, rows, cols, Stride(ld)};
}

}  // namespace lobench::cpu
