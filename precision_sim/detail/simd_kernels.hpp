// Internal: the SIMD array kernels, written once over a vector-operations type `S` and instantiated by
// each instruction set's translation unit (simd_avx2.cpp: 8 lanes, simd_avx512.cpp: 16 lanes). Same
// arithmetic as detail::round_bits (device_rounding.hpp), lane-parallel:
//  * normal range of the format: add a rounding increment to the float32 bit pattern and clear the
//    low s0 = 23 - M bits (a carry moves into the exponent by itself);
//  * below the smallest normal (skipped when no lane is there): per-lane shift s from the lane's
//    exponent, q = sig >> s, r = sig mod 2^s, decide, n = q + up, value = n * spacing (one exact
//    float multiply);
//  * inf / NaN / overflow lanes (skipped when there are none) take per-sign constants.
// Stochastic modes draw 64 random words per 64-element group: 16 Philox blocks (16 / width calls of
// `width` lanes, one block per lane) whose 4 outputs are the words of 4 consecutive 16-element runs
// (stochastic.hpp).
//
// How it is compiled. The including translation unit
//  1. includes <immintrin.h>, kernels.hpp, philox.hpp and the standard headers included below first
//     (their inline functions stay baseline code; include guards keep them from being read again here),
//  2. switches its ISA on (`#pragma GCC target`), defines its `S` in an anonymous namespace,
//  3. includes this header inside that region, so every function here is compiled for that ISA.
// Every template here takes `S`, so every instantiation has internal linkage (S is in an anonymous
// namespace): the linker can never merge AVX-512 code into the AVX2 path or the other way round.
// This header emits no code by itself and uses no intrinsic directly.
//
// `S` provides (V: 32-bit integer lanes, M: lane mask, F: float lanes; `width` lanes):
//   set1(uint32_t) -> V; set1f(float) -> F; zero() -> V; lane_index() -> V (0, 1, ..., width-1);
//   load(const float*) -> V; store<STREAM>(float* | uint8_t* | uint16_t*, V) (codes: low 8/16 bits
//   of each lane, packed); fence() (after streaming stores);
//   and_, or_, xor3, add, sub, srl (variable), sll (variable), srli<N>, min_u, max_u;
//   to_float_times(V n, F step) -> V (bits of float(n) * step);
//   mul_epu32, srli64_32, slli64_32, blend_odd(even, odd) (32-bit lanes: odd ones from `odd`);
//   sign(V) -> M (top bit set); eq, gt (signed or unsigned: operands below 2^31 where it matters),
//   ge (likewise), ult (unsigned, full range), nonzero(V), bit_set(V, single-bit V) -> M;
//   m_and, m_andnot (~a & b), m_not, m_none, m_all, any(M) -> bool;
//   sel(M, if_false, if_true), keep(M, v) (v where M, else 0), keep_not(M, v),
//   or_where(M, a, v) (a | v where M), add_where(M, a, v) (a + v where M).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "precision_sim/detail/kernels.hpp"
#include "precision_sim/philox.hpp"

namespace lobench::precision::detail::simd {

template <class S>
struct Consts {
  using V = typename S::V;
  V abs_mask, sign_bit, one, c31, c32, s0v, lowmask, notlow, half_m1, half, step;
  V emin_bits, max_bits, inf_bits, code_offset, code_sign, sub_base, mant_mask, implicit, sub_code_shift;
  // Nearest even: the largest magnitude (float32 bits) that rounds to at most max_bits; every larger one
  // overflows, or is inf or NaN (inf_bits lies above it). One comparison finds a vector's special lanes.
  V nearest_even_in_range;
  bool nearest_even_one_compare;
  V kv, k_mask, sr_left, sr_right, thr_shift;
  typename S::F sub_step;
  V nan_f[2], inf_f[2], ovf_f[2], max_f[2];
  V nan_c[2], inf_c[2], ovf_c[2], max_c[2];
  bool pattern_everywhere;
  bool signed_zero;
};

template <class S>
Consts<S> make_consts(const Plan& p, int k) {
  Consts<S> c;
  c.abs_mask = S::set1(0x7FFFFFFFu);
  c.sign_bit = S::set1(0x80000000u);
  c.one = S::set1(1);
  c.c31 = S::set1(31);
  c.c32 = S::set1(32);
  c.s0v = S::set1(static_cast<uint32_t>(p.s0));
  c.lowmask = S::set1(p.lowmask);
  c.notlow = S::set1(~p.lowmask);
  c.half_m1 = S::set1(p.lowmask >> 1);
  c.half = S::set1((p.lowmask >> 1) + 1);
  c.step = S::set1(p.lowmask + 1);
  c.emin_bits = S::set1(p.min_normal_bits);
  c.max_bits = S::set1(p.max_bits);
  c.inf_bits = S::set1(0x7F800000u);
  // a = max + half rounds to max when max's last kept bit is even (the tie to even), up when it is odd.
  const uint64_t in_range = uint64_t(p.max_bits) + (p.lowmask >> 1) + 1 - ((p.max_bits >> p.s0) & 1u);
  c.nearest_even_one_compare = p.s0 > 0 && in_range < 0x7F800000u;
  c.nearest_even_in_range = S::set1(static_cast<uint32_t>(c.nearest_even_one_compare ? in_range : 0u));
  c.code_offset = S::set1(p.code_offset);
  c.code_sign = S::set1(p.code_sign);
  c.sub_base = S::set1(static_cast<uint32_t>(p.s_sub_base));
  c.mant_mask = S::set1(0x7FFFFFu);
  c.implicit = S::set1(0x800000u);
  c.sub_code_shift = S::set1(p.sub_code_shift);
  c.kv = S::set1(static_cast<uint32_t>(k));
  c.k_mask = S::set1(k >= 32 ? 0xFFFFFFFFu : (1u << k) - 1);
  // Normal range, stochastic: increment = R << (s0 - k) when k <= s0, else R >> (k - s0).
  c.sr_left = S::set1(k <= p.s0 ? static_cast<uint32_t>(p.s0 - k) : 0u);
  c.sr_right = S::set1(k <= p.s0 ? 0u : static_cast<uint32_t>(k - p.s0));
  c.thr_shift = S::set1(static_cast<uint32_t>(32 - p.s0));
  c.sub_step = S::set1f(p.sub_step);
  for (int s = 0; s < 2; ++s) {
    c.nan_f[s] = S::set1(p.nan_in.f[s]);
    c.inf_f[s] = S::set1(p.inf_in.f[s]);
    c.ovf_f[s] = S::set1(p.overflow.f[s]);
    c.max_f[s] = S::set1(p.max_signed.f[s]);
    c.nan_c[s] = S::set1(p.nan_in.code[s]);
    c.inf_c[s] = S::set1(p.inf_in.code[s]);
    c.ovf_c[s] = S::set1(p.overflow.code[s]);
    c.max_c[s] = S::set1(p.max_signed.code[s]);
  }
  c.pattern_everywhere = p.pattern_everywhere;
  c.signed_zero = p.signed_zero;
  return c;
}

template <class S>
inline typename S::V by_sign(const typename S::V v[2], typename S::M neg) {
  return S::sel(neg, v[0], v[1]);
}

// Lanes below the format's smallest normal: fixed spacing, per-lane shift.
template <class S, Rounding MODE, bool CODE>
inline void below_normal(typename S::V a, typename S::M neg, typename S::V word, typename S::M sub,
                         const Consts<S>& c, typename S::V& mag, typename S::V& code) {
  using V = typename S::V;
  using M = typename S::M;
  const V ef = S::template srli<23>(a);
  const V e = S::max_u(ef, c.one);
  const V frac = S::and_(a, c.mant_mask);
  const V sig = S::or_where(S::nonzero(ef), frac, c.implicit);
  const V s = S::sub(c.sub_base, e);
  const V q = S::srl(sig, s);                                          // 0 when s >= 32
  const V r = S::and_(sig, S::sub(S::sll(c.one, s), c.one));           // all of sig when s >= 32
  V up;
  if constexpr (MODE == Rounding::nearest_even || MODE == Rounding::nearest_away) {
    const V half = S::sll(c.one, S::sub(S::min_u(s, c.c31), c.one));
    M m;
    if constexpr (MODE == Rounding::nearest_even)
      m = S::m_or(S::gt(r, half), S::m_and(S::eq(r, half), S::bit_set(q, c.one)));
    else
      m = S::ge(r, half);
    up = S::keep(m, c.one);
  } else if constexpr (MODE == Rounding::toward_zero) {
    up = S::zero();
  } else if constexpr (MODE == Rounding::up) {
    up = S::keep(S::m_andnot(neg, S::nonzero(r)), c.one);
  } else if constexpr (MODE == Rounding::down) {
    up = S::keep(S::m_and(S::nonzero(r), neg), c.one);
  } else if constexpr (MODE == Rounding::stochastic) {
    const V kk = S::min_u(s, c.kv);
    const V rnd = S::srl(S::and_(word, c.k_mask), S::sub(c.kv, kk));
    const V top = S::srl(r, S::sub(s, kk));
    up = S::srl(S::add(top, rnd), kk);
  } else {  // stochastic_exact: threshold = r * 2^(32 - s), as r << (32-s) or r >> (s-32)
    const V thr = S::or_(S::sll(r, S::sub(c.c32, s)), S::srl(r, S::sub(s, c.c32)));
    up = S::keep(S::ult(word, thr), c.one);
  }
  const V n = S::add(q, up);
  mag = S::sel(sub, mag, S::to_float_times(n, c.sub_step));
  if constexpr (CODE) code = S::sel(sub, code, S::sll(n, c.sub_code_shift));
}

// One vector of inputs (bit patterns) to rounded float32 bits and, when CODE, codes.
template <class S, Rounding MODE, bool CODE>
inline void round_vec(typename S::V x, typename S::V word, const Consts<S>& c, typename S::V& f_out,
                      typename S::V& code_out) {
  using V = typename S::V;
  using M = typename S::M;
  const V a = S::and_(x, c.abs_mask);
  const M neg = S::sign(x);
  V mag;
  if constexpr (MODE == Rounding::nearest_even) {
    const V odd = S::and_(S::srl(a, c.s0v), c.one);
    mag = S::and_(S::add(S::add(a, c.half_m1), odd), c.notlow);
  } else if constexpr (MODE == Rounding::nearest_away) {
    mag = S::and_(S::add(a, c.half), c.notlow);
  } else if constexpr (MODE == Rounding::toward_zero) {
    mag = S::and_(a, c.notlow);
  } else if constexpr (MODE == Rounding::up) {
    mag = S::and_(S::add(a, S::keep_not(neg, c.lowmask)), c.notlow);
  } else if constexpr (MODE == Rounding::down) {
    mag = S::and_(S::add(a, S::keep(neg, c.lowmask)), c.notlow);
  } else if constexpr (MODE == Rounding::stochastic) {
    const V inc = S::srl(S::sll(S::and_(word, c.k_mask), c.sr_left), c.sr_right);
    mag = S::and_(S::add(a, inc), c.notlow);
  } else {
    const V thr = S::sll(S::and_(a, c.lowmask), c.thr_shift);
    const V t = S::and_(a, c.notlow);
    mag = S::add_where(S::ult(word, thr), t, c.step);
  }
  V code = S::zero();
  if constexpr (CODE) code = S::sub(S::srl(mag, c.s0v), c.code_offset);
  if (!c.pattern_everywhere) {
    const M sub = S::gt(c.emin_bits, a);
    if (S::any(sub)) below_normal<S, MODE, CODE>(a, neg, word, sub, c, mag, code);
  }
  M sneg = neg;
  if (!c.signed_zero) sneg = S::m_and(sneg, S::nonzero(mag));
  V f = S::or_where(sneg, mag, c.sign_bit);
  if constexpr (CODE) code = S::or_where(sneg, code, c.code_sign);

  // Whether any lane overflows or is inf or NaN (then each mask is made): for nearest even, one comparison.
  if (MODE == Rounding::nearest_even && c.nearest_even_one_compare
          ? S::any(S::gt(a, c.nearest_even_in_range))
          : S::any(S::m_or(S::gt(mag, c.max_bits), S::m_or(S::gt(a, c.inf_bits), S::eq(a, c.inf_bits))))) {
    const M ovf = S::gt(mag, c.max_bits);
    const M nan = S::gt(a, c.inf_bits);
    const M inf = S::eq(a, c.inf_bits);
    M away;
    if constexpr (MODE == Rounding::toward_zero) away = S::m_none();
    else if constexpr (MODE == Rounding::up) away = S::m_not(neg);
    else if constexpr (MODE == Rounding::down) away = neg;
    else away = S::m_all();
    const M oa = S::m_and(ovf, away);
    const M oz = S::m_andnot(away, ovf);
    f = S::sel(oa, f, by_sign<S>(c.ovf_f, neg));
    f = S::sel(oz, f, by_sign<S>(c.max_f, neg));
    f = S::sel(inf, f, by_sign<S>(c.inf_f, neg));
    f = S::sel(nan, f, by_sign<S>(c.nan_f, neg));
    if constexpr (CODE) {
      code = S::sel(oa, code, by_sign<S>(c.ovf_c, neg));
      code = S::sel(oz, code, by_sign<S>(c.max_c, neg));
      code = S::sel(inf, code, by_sign<S>(c.inf_c, neg));
      code = S::sel(nan, code, by_sign<S>(c.nan_c, neg));
    }
  }
  f_out = f;
  code_out = code;
}

template <class S, Rounding MODE, typename Out, bool STREAM = false>
inline void process(const float* in, Out* out, typename S::V word, const Consts<S>& c) {
  constexpr bool kCode = !std::is_same_v<Out, float>;
  typename S::V f, code;
  round_vec<S, MODE, kCode>(S::load(in), word, c, f, code);
  if constexpr (kCode) S::template store<STREAM>(out, code);
  else S::template store<STREAM>(out, f);
}

// `width` Philox-4x32-10 blocks at once; ctr[w] lane j becomes output word w of block j.
template <class S>
inline void philox(typename S::V ctr[4], const typename S::V rk0[10], const typename S::V rk1[10]) {
  using V = typename S::V;
  const V m0 = S::set1(philox_constants::kMul0);
  const V m1 = S::set1(philox_constants::kMul1);
  for (int r = 0; r < 10; ++r) {
    const V p0e = S::mul_epu32(ctr[0], m0);
    const V p0o = S::mul_epu32(S::srli64_32(ctr[0]), m0);
    const V p1e = S::mul_epu32(ctr[2], m1);
    const V p1o = S::mul_epu32(S::srli64_32(ctr[2]), m1);
    const V hi0 = S::blend_odd(S::srli64_32(p0e), p0o);
    const V lo0 = S::blend_odd(p0e, S::slli64_32(p0o));
    const V hi1 = S::blend_odd(S::srli64_32(p1e), p1o);
    const V lo1 = S::blend_odd(p1e, S::slli64_32(p1o));
    const V n0 = S::xor3(hi1, ctr[1], rk0[r]);
    const V n2 = S::xor3(hi0, ctr[3], rk1[r]);
    ctr[0] = n0;
    ctr[1] = lo1;
    ctr[2] = n2;
    ctr[3] = lo0;
  }
}

// Takes S only so that this instantiation, too, is private to its translation unit.
template <class S, typename Out>
void scalar_tail(const float* in, Out* out, size_t n, const KernelArgs& args) {
  if constexpr (std::is_same_v<Out, float>)
    scalar_round(in, out, n, args);
  else if constexpr (std::is_same_v<Out, uint8_t>)
    scalar_encode8(in, out, n, args);
  else
    scalar_encode16(in, out, n, args);
}

template <class S, Rounding MODE, typename Out>
void run(const float* in, Out* out, size_t n, const KernelArgs& args) {
  using V = typename S::V;
  constexpr size_t W = S::width;
  static_assert(16 % W == 0, "a Philox group of 16 blocks must split into whole vectors");
  const Consts<S> c = make_consts<S>(*args.plan, args.sr_bits);
  size_t i = 0;
  if constexpr (is_stochastic(MODE)) {
    // Scalar up to the next global multiple of 64, so vector groups line up with Philox groups.
    size_t head = static_cast<size_t>((64 - args.first_index % 64) % 64);
    if (head > n) head = n;
    scalar_tail<S>(in, out, head, args);
    i = head;
    V rk0[10], rk1[10];
    uint32_t k0 = static_cast<uint32_t>(args.seed), k1 = static_cast<uint32_t>(args.seed >> 32);
    for (int r = 0; r < 10; ++r) {
      rk0[r] = S::set1(k0);
      rk1[r] = S::set1(k1);
      k0 += philox_constants::kWeyl0;
      k1 += philox_constants::kWeyl1;
    }
    const V lanes = S::lane_index();
    const V stream_lo = S::set1(static_cast<uint32_t>(args.stream));
    const V stream_hi = S::set1(static_cast<uint32_t>(args.stream >> 32));
    for (; i + 64 <= n; i += 64) {
      const uint64_t block = (args.first_index + i) / 64 * 16;  // multiple of 16: lanes never carry
      for (uint32_t part = 0; part < 16 / W; ++part) {  // blocks W*part .. W*part + W-1 of the group
        V ctr[4] = {S::add(S::set1(static_cast<uint32_t>(block) + static_cast<uint32_t>(W) * part), lanes),
                    S::set1(static_cast<uint32_t>(block >> 32)), stream_lo, stream_hi};
        philox<S>(ctr, rk0, rk1);
        for (size_t w = 0; w < 4; ++w)
          process<S, MODE>(in + i + 16 * w + W * part, out + i + 16 * w + W * part, ctr[w], c);
      }
    }
  } else {
    const V zero = S::zero();
    constexpr size_t kStoreBytes = W * sizeof(Out);  // one vector store; streaming needs it aligned
    const uintptr_t addr = reinterpret_cast<uintptr_t>(out);
    if (args.streaming && addr % sizeof(Out) == 0) {
      size_t head = (kStoreBytes - addr % kStoreBytes) % kStoreBytes / sizeof(Out);
      if (head > n) head = n;
      scalar_tail<S>(in, out, head, args);
      for (i = head; i + W <= n; i += W) process<S, MODE, Out, true>(in + i, out + i, zero, c);
      S::fence();  // non-temporal stores are weakly ordered: publish them before returning
    } else {
      for (; i + 4 * W <= n; i += 4 * W) {
        process<S, MODE>(in + i, out + i, zero, c);
        process<S, MODE>(in + i + W, out + i + W, zero, c);
        process<S, MODE>(in + i + 2 * W, out + i + 2 * W, zero, c);
        process<S, MODE>(in + i + 3 * W, out + i + 3 * W, zero, c);
      }
      for (; i + W <= n; i += W) process<S, MODE>(in + i, out + i, zero, c);
    }
  }
  if (i < n) {
    KernelArgs rest = args;
    rest.first_index += i;
    scalar_tail<S>(in + i, out + i, n - i, rest);
  }
}

template <class S, typename Out>
void kernel(const float* in, Out* out, size_t n, const KernelArgs& args) {
  if (!args.plan->simd) return scalar_tail<S>(in, out, n, args);
  switch (args.mode) {
    case Rounding::nearest_even: return run<S, Rounding::nearest_even>(in, out, n, args);
    case Rounding::nearest_away: return run<S, Rounding::nearest_away>(in, out, n, args);
    case Rounding::toward_zero: return run<S, Rounding::toward_zero>(in, out, n, args);
    case Rounding::up: return run<S, Rounding::up>(in, out, n, args);
    case Rounding::down: return run<S, Rounding::down>(in, out, n, args);
    case Rounding::stochastic: return run<S, Rounding::stochastic>(in, out, n, args);
    case Rounding::stochastic_exact: return run<S, Rounding::stochastic_exact>(in, out, n, args);
  }
}

}  // namespace lobench::precision::detail::simd
