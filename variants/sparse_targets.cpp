#include "variants/sparse_targets.hpp"

#include <algorithm>

namespace lobench {

SparseTargets::SparseTargets(const StepInputs& in, CountingAllocator& alloc)
    : row_start_(alloc, in.P + 1), ids_(alloc, in.P * in.L), by_id_(alloc, in.P * in.L) {
  int64_t n = 0;
  for (int64_t p = 0; p < in.P; ++p) {
    row_start_[p] = n;
    const int32_t* row = in.targets + p * in.L;
    int32_t* out = ids_.data() + n;
    int64_t k = 0;
    for (int64_t l = 0; l < in.L; ++l)
      if (row[l] >= 0 && int64_t(row[l]) < in.V) out[k++] = row[l];  // anything else is padding
    std::sort(out, out + k);
    k = std::unique(out, out + k) - out;  // a repeated id counts once
    for (int64_t i = 0; i < k; ++i) by_id_[n + i] = (int64_t(out[i]) << 32) | p;
    n += k;
  }
  row_start_[in.P] = n;
  nnz_ = n;
  std::sort(by_id_.data(), by_id_.data() + n);
}

std::pair<int64_t, int64_t> SparseTargets::pairs_in(int64_t v0, int64_t v1) const {
  const int64_t* b = by_id_.data();
  const int64_t* e = b + nnz_;
  const int64_t* lo = std::lower_bound(b, e, v0 << 32);
  const int64_t* hi = std::lower_bound(lo, e, v1 << 32);
  return {lo - b, hi - b};
}

}  // namespace lobench
