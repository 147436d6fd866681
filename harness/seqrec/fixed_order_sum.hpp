// The one order in which a step's micro-batch gradients (and losses) are summed, so that a step gives the
// same bits in one process and over any number of data-parallel ranks (micro_batch_step.hpp).
//
// Floating-point addition is not associative: "the gradient of the global batch" is only defined once
// the order of its sum is. A step's batch of B windows is cut into K = B / micro_batch leaves (micro-
// batches of consecutive windows); the step's gradient is the tree sum of the K leaf gradients:
//
//   tree(leaves) = the leaf itself                         for one leaf,
//                = tree(first half) + tree(second half)    for an even count,
//                = ((l_0 + l_1) + l_2) + ...               for an odd count (left to right).
//
// For R ranks, R a power of two dividing K, rank r holding leaves [r·K/R, (r+1)·K/R): every rank's block
// is a node of that tree (K/2^j is even down to the blocks), so each rank sums its block alone and the
// R block sums are combined by the same rule over R (halves all the way down). One process (R = 1)
// computes the very same expression. A leaf may be absent (the last, short batch of an epoch has fewer
// windows): an absent child leaves its sibling as it is (x, never x + 0, whose sign of zero may differ).
#pragma once

#include <cstdint>
#include <functional>

namespace lobench::seqrec {

// Whether R ranks can each sum a block of K leaves alone and reproduce tree(K): R a power of two dividing K.
inline bool ranks_split_the_tree(int64_t leaves, int64_t ranks) {
  return ranks >= 1 && (ranks & (ranks - 1)) == 0 && leaves % ranks == 0;
}

// The tree over items [lo, hi), written with callbacks so that every user (float vectors in buffers,
// per-element sums over ranks, doubles) walks the same shape:
//   leaf(i, slot)       puts item i into `slot`, returns whether it is present;
//   add(slot, from)     slot += from (both present).
//   move(slot, from)    slot = from (slot absent, from present).
// Slots are depths: the node at depth d ends in slot d; it needs depth_slots(hi − lo) slots.
struct TreeOps {
  std::function<bool(int64_t item, int slot)> leaf;
  std::function<void(int slot, int from)> add;
  std::function<void(int slot, int from)> move;
};

inline bool tree_sum(int64_t lo, int64_t hi, int slot, const TreeOps& ops) {
  const int64_t n = hi - lo;
  if (n == 1) return ops.leaf(lo, slot);
  auto combine = [&](bool left, bool right) {
    if (left && right) ops.add(slot, slot + 1);
    else if (right) ops.move(slot, slot + 1);
    return left || right;
  };
  if (n % 2 == 0) {
    const int64_t mid = lo + n / 2;
    const bool left = tree_sum(lo, mid, slot, ops);
    return combine(left, tree_sum(mid, hi, slot + 1, ops));
  }
  bool present = ops.leaf(lo, slot);
  for (int64_t i = lo + 1; i < hi; ++i) present = combine(present, ops.leaf(i, slot + 1));
  return present;
}

// Slots tree_sum(0, n, 0, ...) uses.
inline int tree_slots(int64_t n) {
  if (n <= 1) return 1;
  return n % 2 == 0 ? 1 + tree_slots(n / 2) : 2;
}

// The tree sum of x[0], x[stride], ... x[(n−1)·stride] for the items with present[i] (null: all), for
// scalars (the ranks' copies of one element, the leaves' losses). 0 when none is present.
template <typename T>
T tree_sum_values(const T* x, int64_t n, int64_t stride, const char* present = nullptr) {
  T slots[64] = {};  // tree_slots(n) ≤ 1 + log2(n)
  TreeOps ops;
  ops.leaf = [&](int64_t i, int s) {
    slots[s] = x[i * stride];
    return present == nullptr || present[i] != 0;
  };
  ops.add = [&](int s, int from) { slots[s] += slots[from]; };
  ops.move = [&](int s, int from) { slots[s] = slots[from]; };
  return tree_sum(0, n, 0, ops) ? slots[0] : T(0);
}

// The same tree over n rows of `count` elements each, in place: the sum ends in row 0 (rows[0 .. count)).
// Returns whether any row is present (present null: all are). Vectorizes over the row, for the ranks'
// copies of a gradient segment.
template <typename T>
bool tree_sum_rows(T* rows, int64_t count, int64_t lo, int64_t hi, const char* present) {
  const int64_t n = hi - lo;
  if (n == 1) return present == nullptr || present[lo] != 0;
  T* into = rows + lo * count;
  auto combine = [&](bool left, int64_t other, bool right) {
    const T* from = rows + other * count;
    if (left && right)
      for (int64_t i = 0; i < count; ++i) into[i] += from[i];
    else if (right)
      for (int64_t i = 0; i < count; ++i) into[i] = from[i];
    return left || right;
  };
  if (n % 2 == 0) {
    const int64_t mid = lo + n / 2;
    const bool left = tree_sum_rows(rows, count, lo, mid, present);
    return combine(left, mid, tree_sum_rows(rows, count, mid, hi, present));
  }
  bool p = present == nullptr || present[lo] != 0;
  for (int64_t i = lo + 1; i < hi; ++i) p = combine(p, i, present == nullptr || present[i] != 0);
  return p;
}

}  // namespace lobench::seqrec
