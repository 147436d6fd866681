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
//   σ(x)        = 1/(1+e) for x > 0, e/(1+e) otherwise
// so one exponential, one log1p of an argument in [0, 1] and one division serve both. Neither needs a
// general-purpose exp or log: exp's argument is never positive and log1p's lies in [0, 1], which is what
// lets these be short polynomials (coefficients from tools/fit_bce_polynomials.py).
//
// What `S` provides (F: a vector of `S::width` floats, M: a lane mask):
//   set1, add, sub, mul, div, fma (a·b + c, fused where the ISA has it), abs,
//   min(a, b) and max(a, b) returning b when either is NaN (x86 semantics), round (to nearest even),
//   ldexp(p, n) = p·2^n for integral n ∈ [−150, 0] rounded once (subnormal results included),
//   greater(a, b) → M, select(M, a, b).
#pragma once

namespace lobench::cpu::bce_math {

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
typename S::F horner(typename S::F t, const float (&c)[N]) {
  typename S::F acc = S::set1(c[N - 1]);
  for (int k = N - 2; k >= 0; --k) acc = S::fma(acc, t, S::set1(c[k]));
  return acc;
}

// e^{−a} for a ≥ 0 (a = +inf gives 0, NaN gives NaN). Relative error ≲ 1.5e-7 down to the subnormals.
template <class S>
typename S::F exp_neg(typename S::F a) {
  using F = typename S::F;
  a = S::min(S::set1(kExpArgLimit), a);  // operand order: a NaN `a` passes through
  const F minus_a = S::sub(S::set1(0.0f), a);
  const F n = S::round(S::mul(minus_a, S::set1(kLog2e)));  // e^{−a} = 2^n · e^f
  F f = S::fma(n, S::set1(-kLn2Hi), minus_a);              // exact (Cody–Waite)
  f = S::fma(n, S::set1(-kLn2Lo), f);
  return S::ldexp(horner<S>(f, kExpCoeffs), n);
}

// log1p(e) for e ∈ [0, 1], relative error ≲ 1.5e-7 (also for subnormal e, where it returns e).
template <class S>
typename S::F log1p_unit(typename S::F e) {
  return S::mul(e, horner<S>(e, kLog1pCoeffs));
}

// softplus(x) and σ(x) from one exponential.
template <class S>
struct SoftplusSigmoid {
  typename S::F softplus;
  typename S::F sigmoid;
};

template <class S>
typename S::F softplus_from(typename S::F x, typename S::F e) {
  return S::add(S::max(x, S::set1(0.0f)), log1p_unit<S>(e));
}

template <class S>
typename S::F sigmoid_from(typename S::F x, typename S::F e) {
  const typename S::F r = S::div(S::set1(1.0f), S::add(S::set1(1.0f), e));
  return S::select(S::greater(x, S::set1(0.0f)), r, S::mul(e, r));
}

template <class S>
SoftplusSigmoid<S> softplus_sigmoid(typename S::F x) {
  const typename S::F e = exp_neg<S>(S::abs(x));
  return {softplus_from<S>(x, e), sigmoid_from<S>(x, e)};
}

template <class S>
typename S::F softplus(typename S::F x) {
  return softplus_from<S>(x, exp_neg<S>(S::abs(x)));
}

template <class S>
typename S::F sigmoid(typename S::F x) {
  return sigmoid_from<S>(x, exp_neg<S>(S::abs(x)));
}

}  // namespace lobench::cpu::bce_math
