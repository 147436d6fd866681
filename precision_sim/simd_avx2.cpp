// AVX2 kernels (8 lanes): the AVX-512 algorithm (simd_avx512.cpp) with vector masks instead of mask
// registers. AVX2 has no unsigned compares; every compared quantity here is below 2^31 except the
// random word and threshold of stochastic_exact, which are compared after flipping their top bits.
// A 64-element Philox group is two 8-lane Philox calls (blocks 0-7 and 8-15 of the group).
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "precision_sim/detail/kernels.hpp"
#include "precision_sim/philox.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#pragma GCC push_options
// GCC 12's AVX-512 headers build results from a self-initialised "undefined" vector, which
// -Wmaybe-uninitialized reports once inlined here; it is a false positive.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC target("avx2,fma")

namespace lobench::precision::detail {
namespace {

struct Consts {
  __m256i abs_mask, sign_bit, one, c31, c32, s0v, lowmask, notlow, half_m1, half, step, all_ones;
  __m256i emin_bits, max_bits, inf_bits, code_offset, code_sign, sub_base, mant_mask, implicit, sub_code_shift;
  __m256i kv, k_mask, sr_left, sr_right, thr_shift;
  __m256 sub_step;
  __m256i nan_f[2], inf_f[2], ovf_f[2], max_f[2];
  __m256i nan_c[2], inf_c[2], ovf_c[2], max_c[2];
  bool pattern_everywhere;
  bool signed_zero;
};

inline __m256i b(uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }
inline __m256i sel(__m256i mask, __m256i if_false, __m256i if_true) { return _mm256_blendv_epi8(if_false, if_true, mask); }
inline __m256i gt(__m256i a, __m256i b) { return _mm256_cmpgt_epi32(a, b); }  // signed; operands < 2^31
inline bool any(__m256i m) { return !_mm256_testz_si256(m, m); }
inline __m256i by_sign(const __m256i v[2], __m256i neg) { return sel(neg, v[0], v[1]); }

Consts make_consts(const Plan& p, int k) {
  Consts c;
  c.abs_mask = b(0x7FFFFFFFu);
  c.sign_bit = b(0x80000000u);
  c.one = b(1);
  c.c31 = b(31);
  c.c32 = b(32);
  c.all_ones = b(0xFFFFFFFFu);
  c.s0v = b(static_cast<uint32_t>(p.s0));
  c.lowmask = b(p.lowmask);
  c.notlow = b(~p.lowmask);
  c.half_m1 = b(p.lowmask >> 1);
  c.half = b((p.lowmask >> 1) + 1);
  c.step = b(p.lowmask + 1);
  c.emin_bits = b(p.min_normal_bits);
  c.max_bits = b(p.max_bits);
  c.inf_bits = b(0x7F800000u);
  c.code_offset = b(p.code_offset);
  c.code_sign = b(p.code_sign);
  c.sub_base = b(static_cast<uint32_t>(p.s_sub_base));
  c.mant_mask = b(0x7FFFFFu);
  c.implicit = b(0x800000u);
  c.sub_code_shift = b(p.sub_code_shift);
  c.kv = b(static_cast<uint32_t>(k));
  c.k_mask = b(k >= 32 ? 0xFFFFFFFFu : (1u << k) - 1);
  c.sr_left = b(k <= p.s0 ? static_cast<uint32_t>(p.s0 - k) : 0u);
  c.sr_right = b(k <= p.s0 ? 0u : static_cast<uint32_t>(k - p.s0));
  c.thr_shift = b(static_cast<uint32_t>(32 - p.s0));
  c.sub_step = _mm256_set1_ps(p.sub_step);
  for (int s = 0; s < 2; ++s) {
    c.nan_f[s] = b(p.nan_in.f[s]);
    c.inf_f[s] = b(p.inf_in.f[s]);
    c.ovf_f[s] = b(p.overflow.f[s]);
    c.max_f[s] = b(p.max_signed.f[s]);
    c.nan_c[s] = b(p.nan_in.code[s]);
    c.inf_c[s] = b(p.inf_in.code[s]);
    c.ovf_c[s] = b(p.overflow.code[s]);
    c.max_c[s] = b(p.max_signed.code[s]);
  }
  c.pattern_everywhere = p.pattern_everywhere;
  c.signed_zero = p.signed_zero;
  return c;
}

// Unsigned a < b for full-range 32-bit values.
inline __m256i ult(__m256i a, __m256i bb, const Consts& c) {
  return _mm256_cmpgt_epi32(_mm256_xor_si256(bb, c.sign_bit), _mm256_xor_si256(a, c.sign_bit));
}

template <Rounding MODE, bool CODE>
inline void below_normal(__m256i a, __m256i neg, __m256i word, __m256i sub, const Consts& c, __m256i& mag,
                         __m256i& code) {
  const __m256i ef = _mm256_srli_epi32(a, 23);
  const __m256i e = _mm256_max_epu32(ef, c.one);
  const __m256i frac = _mm256_and_si256(a, c.mant_mask);
  const __m256i has_implicit = _mm256_andnot_si256(_mm256_cmpeq_epi32(ef, _mm256_setzero_si256()), c.implicit);
  const __m256i sig = _mm256_or_si256(frac, has_implicit);
  const __m256i s = _mm256_sub_epi32(c.sub_base, e);
  const __m256i q = _mm256_srlv_epi32(sig, s);
  const __m256i r = _mm256_and_si256(sig, _mm256_sub_epi32(_mm256_sllv_epi32(c.one, s), c.one));
  __m256i up;
  if constexpr (MODE == Rounding::nearest_even || MODE == Rounding::nearest_away) {
    const __m256i half = _mm256_sllv_epi32(c.one, _mm256_sub_epi32(_mm256_min_epu32(s, c.c31), c.one));
    __m256i m;
    if constexpr (MODE == Rounding::nearest_even)
      m = _mm256_or_si256(gt(r, half), _mm256_and_si256(_mm256_cmpeq_epi32(r, half),
                                                        _mm256_cmpeq_epi32(_mm256_and_si256(q, c.one), c.one)));
    else
      m = _mm256_xor_si256(gt(half, r), c.all_ones);  // r >= half
    up = _mm256_and_si256(m, c.one);
  } else if constexpr (MODE == Rounding::toward_zero) {
    up = _mm256_setzero_si256();
  } else if constexpr (MODE == Rounding::up || MODE == Rounding::down) {
    const __m256i nonzero = _mm256_xor_si256(_mm256_cmpeq_epi32(r, _mm256_setzero_si256()), c.all_ones);
    const __m256i dir = MODE == Rounding::up ? _mm256_xor_si256(neg, c.all_ones) : neg;
    up = _mm256_and_si256(_mm256_and_si256(nonzero, dir), c.one);
  } else if constexpr (MODE == Rounding::stochastic) {
    const __m256i kk = _mm256_min_epu32(s, c.kv);
    const __m256i rnd = _mm256_srlv_epi32(_mm256_and_si256(word, c.k_mask), _mm256_sub_epi32(c.kv, kk));
    const __m256i top = _mm256_srlv_epi32(r, _mm256_sub_epi32(s, kk));
    up = _mm256_srlv_epi32(_mm256_add_epi32(top, rnd), kk);
  } else {
    const __m256i thr = _mm256_or_si256(_mm256_sllv_epi32(r, _mm256_sub_epi32(c.c32, s)),
                                        _mm256_srlv_epi32(r, _mm256_sub_epi32(s, c.c32)));
    up = _mm256_and_si256(ult(word, thr, c), c.one);
  }
  const __m256i n = _mm256_add_epi32(q, up);
  const __m256i value = _mm256_castps_si256(_mm256_mul_ps(_mm256_cvtepi32_ps(n), c.sub_step));
  mag = sel(sub, mag, value);
  if constexpr (CODE) code = sel(sub, code, _mm256_sllv_epi32(n, c.sub_code_shift));
}

template <Rounding MODE, bool CODE>
inline void round8(__m256i x, __m256i word, const Consts& c, __m256i& f_out, __m256i& code_out) {
  const __m256i a = _mm256_and_si256(x, c.abs_mask);
  const __m256i neg = _mm256_srai_epi32(x, 31);
  __m256i mag;
  if constexpr (MODE == Rounding::nearest_even) {
    const __m256i odd = _mm256_and_si256(_mm256_srlv_epi32(a, c.s0v), c.one);
    mag = _mm256_and_si256(_mm256_add_epi32(_mm256_add_epi32(a, c.half_m1), odd), c.notlow);
  } else if constexpr (MODE == Rounding::nearest_away) {
    mag = _mm256_and_si256(_mm256_add_epi32(a, c.half), c.notlow);
  } else if constexpr (MODE == Rounding::toward_zero) {
    mag = _mm256_and_si256(a, c.notlow);
  } else if constexpr (MODE == Rounding::up) {
    mag = _mm256_and_si256(_mm256_add_epi32(a, _mm256_andnot_si256(neg, c.lowmask)), c.notlow);
  } else if constexpr (MODE == Rounding::down) {
    mag = _mm256_and_si256(_mm256_add_epi32(a, _mm256_and_si256(neg, c.lowmask)), c.notlow);
  } else if constexpr (MODE == Rounding::stochastic) {
    const __m256i inc = _mm256_srlv_epi32(_mm256_sllv_epi32(_mm256_and_si256(word, c.k_mask), c.sr_left), c.sr_right);
    mag = _mm256_and_si256(_mm256_add_epi32(a, inc), c.notlow);
  } else {
    const __m256i thr = _mm256_sllv_epi32(_mm256_and_si256(a, c.lowmask), c.thr_shift);
    const __m256i t = _mm256_and_si256(a, c.notlow);
    mag = _mm256_add_epi32(t, _mm256_and_si256(ult(word, thr, c), c.step));
  }
  __m256i code = _mm256_setzero_si256();
  if constexpr (CODE) code = _mm256_sub_epi32(_mm256_srlv_epi32(mag, c.s0v), c.code_offset);
  if (!c.pattern_everywhere) {
    const __m256i sub = gt(c.emin_bits, a);
    if (any(sub)) below_normal<MODE, CODE>(a, neg, word, sub, c, mag, code);
  }
  __m256i sneg = neg;
  if (!c.signed_zero) sneg = _mm256_andnot_si256(_mm256_cmpeq_epi32(mag, _mm256_setzero_si256()), sneg);
  __m256i f = _mm256_or_si256(mag, _mm256_and_si256(sneg, c.sign_bit));
  if constexpr (CODE) code = _mm256_or_si256(code, _mm256_and_si256(sneg, c.code_sign));

  const __m256i ovf = gt(mag, c.max_bits);
  const __m256i nan = gt(a, c.inf_bits);
  const __m256i inf = _mm256_cmpeq_epi32(a, c.inf_bits);
  const __m256i special = _mm256_or_si256(ovf, _mm256_or_si256(nan, inf));
  if (any(special)) {
    __m256i away;
    if constexpr (MODE == Rounding::toward_zero) away = _mm256_setzero_si256();
    else if constexpr (MODE == Rounding::up) away = _mm256_xor_si256(neg, c.all_ones);
    else if constexpr (MODE == Rounding::down) away = neg;
    else away = c.all_ones;
    const __m256i oa = _mm256_and_si256(ovf, away);
    const __m256i oz = _mm256_andnot_si256(away, ovf);
    f = sel(oa, f, by_sign(c.ovf_f, neg));
    f = sel(oz, f, by_sign(c.max_f, neg));
    f = sel(inf, f, by_sign(c.inf_f, neg));
    f = sel(nan, f, by_sign(c.nan_f, neg));
    if constexpr (CODE) {
      code = sel(oa, code, by_sign(c.ovf_c, neg));
      code = sel(oz, code, by_sign(c.max_c, neg));
      code = sel(inf, code, by_sign(c.inf_c, neg));
      code = sel(nan, code, by_sign(c.nan_c, neg));
    }
  }
  f_out = f;
  code_out = code;
}

template <Rounding MODE, typename Out, bool STREAM = false>
inline void process8(const float* in, Out* out, __m256i word, const Consts& c) {
  constexpr bool kCode = !std::is_same_v<Out, float>;
  __m256i f, code;
  round8<MODE, kCode>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in)), word, c, f, code);
  if constexpr (std::is_same_v<Out, float>) {
    if constexpr (STREAM) _mm256_stream_si256(reinterpret_cast<__m256i*>(out), f);
    else _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), f);
  } else if constexpr (std::is_same_v<Out, uint8_t>) {
    // Byte 0 of each 32-bit lane to the front of its 128-bit half, then the two halves together.
    const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                          0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i packed = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(code, pick), _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1));
    if constexpr (STREAM) _mm_stream_si64(reinterpret_cast<long long*>(out), _mm_cvtsi128_si64(_mm256_castsi256_si128(packed)));
    else _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(packed));
  } else {
    const __m256i pick = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                          0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i packed = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(code, pick), _mm256_setr_epi32(0, 1, 4, 5, 2, 2, 2, 2));
    if constexpr (STREAM) _mm_stream_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(packed));
    else _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(packed));
  }
}

// 8 Philox-4x32-10 blocks at once; ctr[w] lane j becomes output word w of block j.
inline void philox8(__m256i ctr[4], const __m256i rk0[10], const __m256i rk1[10]) {
  const __m256i m0 = b(philox_constants::kMul0);
  const __m256i m1 = b(philox_constants::kMul1);
  for (int r = 0; r < 10; ++r) {
    const __m256i p0e = _mm256_mul_epu32(ctr[0], m0);
    const __m256i p0o = _mm256_mul_epu32(_mm256_srli_epi64(ctr[0], 32), m0);
    const __m256i p1e = _mm256_mul_epu32(ctr[2], m1);
    const __m256i p1o = _mm256_mul_epu32(_mm256_srli_epi64(ctr[2], 32), m1);
    const __m256i hi0 = _mm256_blend_epi32(_mm256_srli_epi64(p0e, 32), p0o, 0xAA);
    const __m256i lo0 = _mm256_blend_epi32(p0e, _mm256_slli_epi64(p0o, 32), 0xAA);
    const __m256i hi1 = _mm256_blend_epi32(_mm256_srli_epi64(p1e, 32), p1o, 0xAA);
    const __m256i lo1 = _mm256_blend_epi32(p1e, _mm256_slli_epi64(p1o, 32), 0xAA);
    const __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(hi1, ctr[1]), rk0[r]);
    const __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(hi0, ctr[3]), rk1[r]);
    ctr[0] = n0;
    ctr[1] = lo1;
    ctr[2] = n2;
    ctr[3] = lo0;
  }
}

template <typename Out>
void scalar_tail(const float* in, Out* out, size_t n, const KernelArgs& args) {
  if constexpr (std::is_same_v<Out, float>)
    scalar_round(in, out, n, args);
  else if constexpr (std::is_same_v<Out, uint8_t>)
    scalar_encode8(in, out, n, args);
  else
    scalar_encode16(in, out, n, args);
}

template <Rounding MODE, typename Out>
void run(const float* in, Out* out, size_t n, const KernelArgs& args) {
  const Consts c = make_consts(*args.plan, args.sr_bits);
  size_t i = 0;
  if constexpr (is_stochastic(MODE)) {
    size_t head = static_cast<size_t>((64 - args.first_index % 64) % 64);
    if (head > n) head = n;
    scalar_tail(in, out, head, args);
    i = head;
    __m256i rk0[10], rk1[10];
    uint32_t k0 = static_cast<uint32_t>(args.seed), k1 = static_cast<uint32_t>(args.seed >> 32);
    for (int r = 0; r < 10; ++r) {
      rk0[r] = b(k0);
      rk1[r] = b(k1);
      k0 += philox_constants::kWeyl0;
      k1 += philox_constants::kWeyl1;
    }
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i stream_lo = b(static_cast<uint32_t>(args.stream));
    const __m256i stream_hi = b(static_cast<uint32_t>(args.stream >> 32));
    for (; i + 64 <= n; i += 64) {
      const uint64_t block = (args.first_index + i) / 64 * 16;
      for (uint32_t half = 0; half < 2; ++half) {  // blocks 0-7, then 8-15 of the group
        __m256i ctr[4] = {_mm256_add_epi32(b(static_cast<uint32_t>(block) + 8 * half), lanes),
                          b(static_cast<uint32_t>(block >> 32)), stream_lo, stream_hi};
        philox8(ctr, rk0, rk1);
        for (int w = 0; w < 4; ++w) process8<MODE>(in + i + 16 * w + 8 * half, out + i + 16 * w + 8 * half, ctr[w], c);
      }
    }
  } else {
    const __m256i zero = _mm256_setzero_si256();
    constexpr size_t kStoreBytes = 8 * sizeof(Out);
    const uintptr_t addr = reinterpret_cast<uintptr_t>(out);
    if (args.streaming && addr % sizeof(Out) == 0) {
      size_t head = (kStoreBytes - addr % kStoreBytes) % kStoreBytes / sizeof(Out);
      if (head > n) head = n;
      scalar_tail(in, out, head, args);
      for (i = head; i + 8 <= n; i += 8) process8<MODE, Out, true>(in + i, out + i, zero, c);
      _mm_sfence();
    } else {
      for (; i + 32 <= n; i += 32) {
        process8<MODE>(in + i, out + i, zero, c);
        process8<MODE>(in + i + 8, out + i + 8, zero, c);
        process8<MODE>(in + i + 16, out + i + 16, zero, c);
        process8<MODE>(in + i + 24, out + i + 24, zero, c);
      }
      for (; i + 8 <= n; i += 8) process8<MODE>(in + i, out + i, zero, c);
    }
  }
  if (i < n) {
    KernelArgs rest = args;
    rest.first_index += i;
    scalar_tail(in + i, out + i, n - i, rest);
  }
}

template <typename Out>
void dispatch(const float* in, Out* out, size_t n, const KernelArgs& args) {
  if (!args.plan->simd) return scalar_tail(in, out, n, args);
  switch (args.mode) {
    case Rounding::nearest_even: return run<Rounding::nearest_even>(in, out, n, args);
    case Rounding::nearest_away: return run<Rounding::nearest_away>(in, out, n, args);
    case Rounding::toward_zero: return run<Rounding::toward_zero>(in, out, n, args);
    case Rounding::up: return run<Rounding::up>(in, out, n, args);
    case Rounding::down: return run<Rounding::down>(in, out, n, args);
    case Rounding::stochastic: return run<Rounding::stochastic>(in, out, n, args);
    case Rounding::stochastic_exact: return run<Rounding::stochastic_exact>(in, out, n, args);
  }
}

void round_kernel(const float* in, float* out, size_t n, const KernelArgs& args) { dispatch(in, out, n, args); }
void encode8_kernel(const float* in, uint8_t* out, size_t n, const KernelArgs& args) { dispatch(in, out, n, args); }
void encode16_kernel(const float* in, uint16_t* out, size_t n, const KernelArgs& args) { dispatch(in, out, n, args); }

}  // namespace
}  // namespace lobench::precision::detail

#pragma GCC diagnostic pop
#pragma GCC pop_options

namespace lobench::precision::detail {
const KernelTable* avx2_kernels() {
  static const KernelTable table{"avx2", round_kernel, encode8_kernel, encode16_kernel};
  return &table;
}
}  // namespace lobench::precision::detail

#else

namespace lobench::precision::detail {
const KernelTable* avx2_kernels() { return nullptr; }
}  // namespace lobench::precision::detail

#endif
