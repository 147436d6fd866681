// How a variant's outputs are judged against the float64 reference (docs/method.md#accuracy).
#pragma once

#include <cmath>
#include <cstdint>

namespace lobench {

// |a − ref| / |ref|; when ref is 0, the absolute error.
inline double relative_error(double a, double ref) {
  const double d = std::abs(a - ref);
  return ref == 0.0 ? d : d / std::abs(ref);
}

// ‖a − ref‖₂ / ‖ref‖₂ over n elements (the absolute L2 error when ref is all zeros).
template <typename T>
double relative_l2_error(const T* a, const double* ref, int64_t n) {
  double num = 0.0, den = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = double(a[i]) - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return den == 0.0 ? std::sqrt(num) : std::sqrt(num / den);
}

// Positions whose four counts differ from the reference although none of their logits lies within the
// reference's near-zero band (where float rounding may legitimately flip the prediction).
inline int64_t count_mismatches(const int64_t* counts, const int64_t* ref_counts, const int64_t* near_zero,
                                int64_t P) {
  int64_t bad = 0;
  for (int64_t p = 0; p < P; ++p) {
    if (near_zero[p] != 0) continue;
    for (int k = 0; k < 4; ++k)
      if (counts[p * 4 + k] != ref_counts[p * 4 + k]) {
        ++bad;
        break;
      }
  }
  return bad;
}

}  // namespace lobench
