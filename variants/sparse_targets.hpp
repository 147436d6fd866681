// The targets as the chunked and fused algorithms need them: each position's unique valid ids, and
// every (id, position) pair sorted by id so that a vocabulary block finds its positives by binary
// search. O(P·L) memory, never a [P, V] multi-hot tensor.
#pragma once

#include <cstdint>
#include <utility>

#include "variants/counting_allocator.hpp"
#include "variants/step.hpp"

namespace lobench {

class SparseTargets {
 public:
  SparseTargets(const StepInputs& in, CountingAllocator& alloc);

  // Working bytes the constructor allocates (exact, for the variants' predictions).
  static int64_t bytes(int64_t P, int64_t L) { return (P + 1) * 8 + P * L * 4 + P * L * 8; }

  // Unique valid ids of position p, ascending: ids()[row_begin(p) .. row_begin(p+1)).
  int64_t row_begin(int64_t p) const { return row_start_[p]; }
  const int32_t* ids() const { return ids_.data(); }
  int64_t positives(int64_t p) const { return row_start_[p + 1] - row_start_[p]; }
  int64_t nnz() const { return nnz_; }

  // Pairs (id, position) with id in [v0, v1), as a range of indices into pair_id()/pair_pos().
  std::pair<int64_t, int64_t> pairs_in(int64_t v0, int64_t v1) const;
  int32_t pair_id(int64_t i) const { return int32_t(by_id_[i] >> 32); }
  int32_t pair_pos(int64_t i) const { return int32_t(by_id_[i] & 0xffffffff); }

 private:
  int64_t nnz_ = 0;
  Buffer<int64_t> row_start_;  // [P+1]
  Buffer<int32_t> ids_;        // [P·L] capacity, nnz used
  Buffer<int64_t> by_id_;      // [P·L] capacity: id << 32 | position, sorted
};

}  // namespace lobench
