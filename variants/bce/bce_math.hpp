// The element-wise functions of the BCE step, written once over a vector-operations type `S` and
// compiled once per instruction set (bce_tile_avx512.cpp, bce_tile_avx2.cpp, bce_tile_portable.cpp).
//
// Everything here is a template over `S`, and every `S` lives in an anonymous namespace of its own
// translation unit, so each instantiation has internal linkage: code compiled with AVX-512 flags can
// never be picked by the linker for a caller on a CPU without AVX-512. For the same reason this header
// includes nothing that emits code.
//
// Per logit x, with a = |x| and e = exp(−a) ∈ (0, 1]:
//   softplus(x) = max(x, 0) + log1p(e)           (the stable form of the contract)
//   σ(x)        = 1/(1+e) for x > 0, e/(1+e) otherwise (each one division)
// so one exponential, one log1p of an argument in [0, 1] and one division serve both. Neither needs a
// general-purpose exp or log: exp's argument is never positive and log1p's lies in [0, 1], which is what
// lets these be short polynomials (coefficients from tools/fit_bce_polynomials.py).
//
// What `S` provides (F: a vector of `S::width` floats, M: a lane mask):
//   set1, add, sub, mul, div, fma (a·b + c, fused where the ISA has it), negative_abs (−|a|: the sign bit
//   set, one operation where abs and a subtraction from 0 were two),
//   min(a, b) and max(a, b) returning b when either is NaN (x86 semantics), round (to nearest even),
//   ldexp(p, n) = p·2^n for integral n ∈ [−150, 0] rounded once (subnormal results included),
//   greater(a, b) → M, select(M, a, b).
#pragma once

namespace lobench::cpu::bce_math {

// Every function here is forced inline: GCC left 358 calls to them in the unrolled register-block
// epilogues of fused_tile_avx512.cpp, each spilling the block's live accumulators (every vector register
// is caller-saved) and returning its results through memory. Inlining changes no result
// (-ffp-contract=off in every path).
#define LOBENCH_BCE_INLINE [[gnu::always_inline]] inline

// e^f ≈ Σ c_k f^k on |f| ≤ ln2/2; relative error 2e-9 in exact arithmetic, 7e-8 evaluated in float.
inline constexpr float kExpCoeffs[] = {1.0f,          1.0f,          0.49999994f,   0.166664317f,
                                       0.0416680016f, 0.0083741555f, 0.00138436537f};
// log1p(e)/e ≈ Σ c_k e^k on e ∈ [0, 1]; relative error 3e-8 exact, 1.1e-7 in float.
inline constexpr float kLog1pCoeffs[] = {1.0f,          -0.499996483f, 0.33321324f,
                                         -0.248571634f, 0.191536546f,  -0.137538016f,
                                         0.0792045221f, -0.0300657861f, 0.00536482269f};

// Beyond a = 104, e^{−a} < 2^{−150} rounds to 0 in float; the clamp keeps 2^n within ldexp's range.
inline constexpr float kExpArgLimit = 104.0f;
inline constexpr float kLog2e = 1.44269504088896341f;
// ln 2 split so that n·kLn2Hi is exact for |n| ≤ 150 (kLn2Hi has 9 significant bits): Cody–Waite.
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;

template <class S, int N>
LOBENCH_BCE_INLINE typename S::F horner(typename S::F t, const float (&c)[N]) {
  typename S::F acc = S::set1(c[N - 1]);
  for (int k = N - 2; k >= 0; --k) acc = S::fma(acc, t, S::set1(c[k]));
  return acc;
}

// e^{−|x|} (x = ±inf gives 0, NaN gives NaN). Relative error ≲ 1.5e-7 down to the subnormals.
template <class S>
LOBENCH_BCE_INLINE typename S::F exp_neg_abs(typename S::F x) {
  using F = typename S::F;
  const F minus_a = S::max(S::set1(-kExpArgLimit), S::negative_abs(x));  // operand order: a NaN passes through
  const F n = S::round(S::mul(minus_a, S::set1(kLog2e)));                 // e^{−a} = 2^n · e^f
  F f = S::fma(n, S::set1(-kLn2Hi), minus_a);                             // exact (Cody–Waite)
  f = S::fma(n, S::set1(-kLn2Lo), f);
  return S::ldexp(horner<S>(f, kExpCoeffs), n);
}

// log1p(e) for e ∈ [0, 1], relative error ≲ 1.5e-7 (also for subnormal e, where it returns e).
template <class S>
LOBENCH_BCE_INLINE typename S::F log1p_unit(typename S::F e) {
  return S::mul(e, horner<S>(e, kLog1pCoeffs));
}

// softplus(x) and σ(x) from one exponential.
template <class S>
struct SoftplusSigmoid {
  typename S::F softplus;
  typename S::F sigmoid;
};

template <class S>
LOBENCH_BCE_INLINE typename S::F softplus_from(typename S::F x, typename S::F e) {
  return S::add(S::max(x, S::set1(0.0f)), log1p_unit<S>(e));
}

// σ(x) = (x > 0 ? 1 : e)/(1 + e): one division and one rounding of it. (Until 2026-12-06 e/(1 + e) was
// e·(1/(1 + e)): a multiplication and a second rounding more, on the pipes the epilogue is short of.)
template <class S>
LOBENCH_BCE_INLINE typename S::F sigmoid_from(typename S::F x, typename S::F e) {
  const typename S::F numerator = S::select(S::greater(x, S::set1(0.0f)), S::set1(1.0f), e);
  return S::div(numerator, S::add(S::set1(1.0f), e));
}

template <class S>
LOBENCH_BCE_INLINE SoftplusSigmoid<S> softplus_sigmoid(typename S::F x) {
  const typename S::F e = exp_neg_abs<S>(x);
  return {softplus_from<S>(x, e), sigmoid_from<S>(x, e)};
}

template <class S>
LOBENCH_BCE_INLINE typename S::F softplus(typename S::F x) {
  return softplus_from<S>(x, exp_neg_abs<S>(x));
}

template <class S>
LOBENCH_BCE_INLINE typename S::F sigmoid(typename S::F x) {
  return sigmoid_from<S>(x, exp_neg_abs<S>(x));
}

// ---- The loss of a block of logits from one logarithm (the fused tile kernels, cpu/fused_tile.hpp) ----
//
// Σ_j softplus(x_j) = Σ_j max(x_j, 0) + log1p(q) with 1 + q = Π_j (1 + e_j): one logarithm per block of
// logits instead of one log1p polynomial per logit (what the element-wise work of a logit costs most of,
// after its exponential). q is kept as q ← q + e + q·e, which keeps the relative accuracy of small e
// (1 + q itself would lose every e below 2^−24): each step adds ≲ 2 roundings of q to its relative error.
template <class S>
LOBENCH_BCE_INLINE typename S::F log1p_product_step(typename S::F q, typename S::F e) {
  return S::fma(q, e, S::add(q, e));
}

// 2·atanh(s)/s − 2 ≈ z·Σ c_k z^k with z = s², |s| ≤ 1/5: the Taylor coefficients 2/3, 2/5, 2/7, 2/9;
// the first term left out, 2z⁵/11, is below 1e-8 of the result.
inline constexpr float kAtanhCoeffs[] = {0.666666667f, 0.4f, 0.285714286f, 0.222222222f};
inline constexpr float kLn2 = 0.693147181f;

// log1p(q) for q ∈ [0, 2^24) (a NaN q gives NaN), relative error ≲ 2.5e-7 (q ≤ 2^−24: q itself).
// Needs two more operations of S than the rest of this header (AVX-512's getexp and getmant):
//   exponent(u) = ⌊log2 u⌋ and mantissa(u) = u·2^−⌊log2 u⌋ ∈ [1, 2), for normal u ≥ 1 (NaN → NaN).
// With u = 1 + q rounded and c = q − (u − 1) its rounding error (exact for q ≥ 0), 1 + q = 2^k·(1 + f)
// with f = (m − 1) + c·2^−k, m ∈ [0.75, 1.5]; then log1p(f) = 2·atanh(s), s = f/(2 + f), written as
// f − s·(f − z·Σ c_k z^k) so that a small f passes through exactly.
template <class S>
LOBENCH_BCE_INLINE typename S::F log1p_nonnegative(typename S::F q) {
  using F = typename S::F;
  const F one = S::set1(1.0f);
  const F u = S::add(one, q);
  const F c = S::sub(q, S::sub(u, one));
  F k = S::exponent(u), m = S::mantissa(u);
  const auto high = S::greater(m, S::set1(1.5f));
  m = S::select(high, S::mul(m, S::set1(0.5f)), m);
  k = S::select(high, S::add(k, one), k);
  const F f = S::add(S::sub(m, one), S::ldexp(c, S::sub(S::set1(0.0f), k)));
  const F s = S::div(f, S::add(S::set1(2.0f), f));
  const F z = S::mul(s, s);
  const F w = S::fma(S::sub(S::set1(0.0f), z), horner<S>(z, kAtanhCoeffs), f);
  return S::fma(k, S::set1(kLn2), S::fma(S::sub(S::set1(0.0f), s), w, f));
}

}  // namespace lobench::cpu::bce_math
