// The loops over a logit tile that apply bce_math.hpp, written once over a vector-operations type `S`
// and instantiated by each instruction set's translation unit (see bce_tile.hpp for what each kernel
// computes, and bce_math.hpp for why everything here is a template with no other includes).
//
// Besides the operations bce_math.hpp lists, `S` provides:
//   width; load, store; load_first(p, n) (lanes ≥ n read as 0, never touched in memory), store_first;
//   first_lanes(n) → M; count(M) → int (lanes set);
//   Acc with acc_zero(), acc_add(Acc&, F) (adds the lanes in float64), acc_total(Acc) → double.
//
// Loss accuracy: each softplus is rounded once to float, pairs of adjacent ones are added in float,
// and everything else is summed in float64, so the relative error of a row's sum stays within a few
// float ulps whatever the row length (P·V ≈ 10^9 terms included).
#pragma once

#include <cstdint>

#include "variants/bce/bce_math.hpp"
#include "variants/bce/bce_tile_kernels.hpp"

namespace lobench::cpu::bce_loops {

// The gradient's row scale s and s·σ: S::set1 and S::mul, unless S keeps the scale apart from its own
// arithmetic (S::scale_constant, S::scaled: the rounded epilogues of bce_tile_rounded.cpp apply it in
// float32, epilogue.hpp says why).
template <class S>
LOBENCH_BCE_INLINE typename S::F scale_constant(float s) {
  if constexpr (requires { S::scale_constant(s); }) return S::scale_constant(s);
  else return S::set1(s);
}
template <class S>
LOBENCH_BCE_INLINE typename S::F scaled(typename S::F c, typename S::F g) {
  if constexpr (requires { S::scaled(c, g); }) return S::scaled(c, g);
  else return S::mul(c, g);
}

// The logits the predicted count compares with 0: those loaded (`loaded`, the first n lanes of p), unless
// S reads logits rounded (the rounded epilogues): then the float32 logits as the product made them, so that
// the counts are fp32's and agree with the true positives the caller counts at the targets (a logit in
// (0, 2^-25] reads as 0 in binary16).
template <class S>
LOBENCH_BCE_INLINE typename S::F counted(const float* p, int n, typename S::F loaded) {
  if constexpr (requires { S::load_unrounded(p, n); }) return S::load_unrounded(p, n);
  else return loaded;
}

template <class S>
void softplus_rows(const float* X, int64_t rows, int64_t cols, int64_t ld, double* loss_rows,
                   int64_t* predicted_rows) {
  using F = typename S::F;
  constexpr int W = S::width;
  const F zero = S::set1(0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = X + r * ld;
    typename S::Acc acc = S::acc_zero();
    int64_t positive = 0;
    int64_t j = 0;
    for (; j + 2 * W <= cols; j += 2 * W) {  // two vectors per step: independent work for the pipeline
      const F a = S::load(x + j), b = S::load(x + j + W);
      positive += S::count(S::greater(counted<S>(x + j, W, a), zero)) + S::count(S::greater(counted<S>(x + j + W, W, b), zero));
      S::acc_add(acc, S::add(bce_math::softplus<S>(a), bce_math::softplus<S>(b)));
    }
    for (; j < cols; j += W) {
      const int n = cols - j < W ? int(cols - j) : W;
      const F a = S::load_first(x + j, n);  // padding lanes are 0: not counted as predicted
      positive += S::count(S::greater(counted<S>(x + j, n, a), zero));
      S::acc_add(acc, S::select(S::first_lanes(n), bce_math::softplus<S>(a), zero));
    }
    loss_rows[r] += S::acc_total(acc);
    predicted_rows[r] += positive;
  }
}

template <class S>
void sigmoid_scaled(float* X, int64_t rows, int64_t cols, int64_t ld, const float* row_scale) {
  using F = typename S::F;
  constexpr int W = S::width;
  for (int64_t r = 0; r < rows; ++r) {
    float* x = X + r * ld;
    const F c = scale_constant<S>(row_scale[r]);
    int64_t j = 0;
    for (; j + 2 * W <= cols; j += 2 * W) {
      const F a = S::load(x + j), b = S::load(x + j + W);
      S::store(x + j, scaled<S>(c, bce_math::sigmoid<S>(a)));
      S::store(x + j + W, scaled<S>(c, bce_math::sigmoid<S>(b)));
    }
    for (; j < cols; j += W) {
      const int n = cols - j < W ? int(cols - j) : W;
      S::store_first(x + j, scaled<S>(c, bce_math::sigmoid<S>(S::load_first(x + j, n))), n);
    }
  }
}

template <class S>
void softplus_and_sigmoid(float* X, int64_t rows, int64_t cols, int64_t ld, double* loss_rows,
                          int64_t* predicted_rows, const float* row_scale) {
  using F = typename S::F;
  constexpr int W = S::width;
  const F zero = S::set1(0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    float* x = X + r * ld;
    const F c = scale_constant<S>(row_scale[r]);
    typename S::Acc acc = S::acc_zero();
    int64_t positive = 0;
    int64_t j = 0;
    for (; j + 2 * W <= cols; j += 2 * W) {
      const F a = S::load(x + j), b = S::load(x + j + W);
      positive += S::count(S::greater(counted<S>(x + j, W, a), zero)) + S::count(S::greater(counted<S>(x + j + W, W, b), zero));
      const auto ta = bce_math::softplus_sigmoid<S>(a), tb = bce_math::softplus_sigmoid<S>(b);
      S::acc_add(acc, S::add(ta.softplus, tb.softplus));
      S::store(x + j, scaled<S>(c, ta.sigmoid));
      S::store(x + j + W, scaled<S>(c, tb.sigmoid));
    }
    for (; j < cols; j += W) {
      const int n = cols - j < W ? int(cols - j) : W;
      const F a = S::load_first(x + j, n);
      positive += S::count(S::greater(counted<S>(x + j, n, a), zero));
      const auto ta = bce_math::softplus_sigmoid<S>(a);
      S::acc_add(acc, S::select(S::first_lanes(n), ta.softplus, zero));
      S::store_first(x + j, scaled<S>(c, ta.sigmoid), n);
    }
    loss_rows[r] += S::acc_total(acc);
    predicted_rows[r] += positive;
  }
}

// Element by element, for the accuracy tests: softplus[i] and sigmoid[i] of x[i].
template <class S>
void softplus_sigmoid_elements(const float* x, int64_t n, float* softplus, float* sigmoid) {
  constexpr int W = S::width;
  for (int64_t j = 0; j < n; j += W) {
    const int k = n - j < W ? int(n - j) : W;
    const auto t = bce_math::softplus_sigmoid<S>(S::load_first(x + j, k));
    S::store_first(softplus + j, t.softplus, k);
    S::store_first(sigmoid + j, t.sigmoid, k);
  }
}

// The table of S's kernels (bce_tile_kernels.hpp), for the translation unit that defines S.
template <class S>
constexpr BceTileKernels kernel_table(SimdPath path) {
  return {path, softplus_rows<S>, sigmoid_scaled<S>, softplus_and_sigmoid<S>, softplus_sigmoid_elements<S>};
}

}  // namespace lobench::cpu::bce_loops
