// AVX-512 kernels (16 lanes). Same arithmetic as detail::round_one, lane-parallel:
//  * normal range of the format: add a rounding increment to the float32 bit pattern and clear the
//    low s0 = 23 - M bits (a carry moves into the exponent by itself);
//  * below the smallest normal (skipped when no lane is there): per-lane shift s from the lane's
//    exponent, q = sig >> s, r = sig mod 2^s, decide, n = q + up, value = n * spacing (one exact
//    float multiply);
//  * inf / NaN / overflow lanes (skipped when there are none) take per-sign constants.
// Stochastic modes draw 64 random words per Philox call batch: 16 lanes, one Philox block each,
// whose 4 outputs are the words of 4 consecutive 16-element vectors (stochastic.hpp).
//
// The file is compiled with the project's flags; the functions below get AVX-512 through
// `#pragma GCC target`, so a portable build still links and the dispatcher only calls them on CPUs
// that have AVX-512F/BW/VL/DQ. Headers are included before the pragma so that their inline functions
// stay baseline code.
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
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")

namespace lobench::precision::detail {
namespace {

struct Consts {
  __m512i abs_mask, sign_bit, one, c31, c32, s0v, lowmask, notlow, half_m1, half, step;
  __m512i emin_bits, max_bits, inf_bits, code_offset, code_sign, sub_base, mant_mask, implicit, sub_code_shift;
  __m512i kv, k_mask, sr_left, sr_right, thr_shift;
  __m512 sub_step;
  __m512i nan_f[2], inf_f[2], ovf_f[2], max_f[2];
  __m512i nan_c[2], inf_c[2], ovf_c[2], max_c[2];
  bool pattern_everywhere;
  bool signed_zero;
};

inline __m512i b(uint32_t v) { return _mm512_set1_epi32(static_cast<int>(v)); }

Consts make_consts(const Plan& p, int k) {
  Consts c;
  c.abs_mask = b(0x7FFFFFFFu);
  c.sign_bit = b(0x80000000u);
  c.one = b(1);
  c.c31 = b(31);
  c.c32 = b(32);
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
  // Normal range, stochastic: increment = R << (s0 - k) when k <= s0, else R >> (k - s0).
  c.sr_left = b(k <= p.s0 ? static_cast<uint32_t>(p.s0 - k) : 0u);
  c.sr_right = b(k <= p.s0 ? 0u : static_cast<uint32_t>(k - p.s0));
  c.thr_shift = b(static_cast<uint32_t>(32 - p.s0));
  c.sub_step = _mm512_set1_ps(p.sub_step);
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

inline __m512i by_sign(const __m512i v[2], __mmask16 neg) { return _mm512_mask_mov_epi32(v[0], neg, v[1]); }

// Lanes below the format's smallest normal: fixed spacing, per-lane shift.
template <Rounding MODE, bool CODE>
inline void below_normal(__m512i a, __mmask16 neg, __m512i word, __mmask16 sub, const Consts& c, __m512i& mag,
                         __m512i& code) {
  const __m512i ef = _mm512_srli_epi32(a, 23);
  const __m512i e = _mm512_max_epu32(ef, c.one);
  const __m512i frac = _mm512_and_si512(a, c.mant_mask);
  const __m512i sig = _mm512_mask_or_epi32(frac, _mm512_test_epi32_mask(ef, ef), frac, c.implicit);
  const __m512i s = _mm512_sub_epi32(c.sub_base, e);
  const __m512i q = _mm512_srlv_epi32(sig, s);                                    // 0 when s >= 32
  const __m512i r = _mm512_and_si512(sig, _mm512_sub_epi32(_mm512_sllv_epi32(c.one, s), c.one));  // all of sig when s >= 32
  __m512i up;
  if constexpr (MODE == Rounding::nearest_even || MODE == Rounding::nearest_away) {
    const __m512i half = _mm512_sllv_epi32(c.one, _mm512_sub_epi32(_mm512_min_epu32(s, c.c31), c.one));
    __mmask16 m;
    if constexpr (MODE == Rounding::nearest_even)
      m = _mm512_cmpgt_epu32_mask(r, half) | (_mm512_cmpeq_epu32_mask(r, half) & _mm512_test_epi32_mask(q, c.one));
    else
      m = _mm512_cmpge_epu32_mask(r, half);
    up = _mm512_maskz_mov_epi32(m, c.one);
  } else if constexpr (MODE == Rounding::toward_zero) {
    up = _mm512_setzero_si512();
  } else if constexpr (MODE == Rounding::up) {
    up = _mm512_maskz_mov_epi32(_mm512_test_epi32_mask(r, r) & static_cast<__mmask16>(~neg), c.one);
  } else if constexpr (MODE == Rounding::down) {
    up = _mm512_maskz_mov_epi32(_mm512_test_epi32_mask(r, r) & neg, c.one);
  } else if constexpr (MODE == Rounding::stochastic) {
    const __m512i kk = _mm512_min_epu32(s, c.kv);
    const __m512i rnd = _mm512_srlv_epi32(_mm512_and_si512(word, c.k_mask), _mm512_sub_epi32(c.kv, kk));
    const __m512i top = _mm512_srlv_epi32(r, _mm512_sub_epi32(s, kk));
    up = _mm512_srlv_epi32(_mm512_add_epi32(top, rnd), kk);
  } else {  // stochastic_exact: threshold = r * 2^(32 - s), as r << (32-s) or r >> (s-32)
    const __m512i thr = _mm512_or_si512(_mm512_sllv_epi32(r, _mm512_sub_epi32(c.c32, s)),
                                        _mm512_srlv_epi32(r, _mm512_sub_epi32(s, c.c32)));
    up = _mm512_maskz_mov_epi32(_mm512_cmplt_epu32_mask(word, thr), c.one);
  }
  const __m512i n = _mm512_add_epi32(q, up);
  const __m512i value = _mm512_castps_si512(_mm512_mul_ps(_mm512_cvtepi32_ps(n), c.sub_step));
  mag = _mm512_mask_mov_epi32(mag, sub, value);
  if constexpr (CODE) code = _mm512_mask_mov_epi32(code, sub, _mm512_sllv_epi32(n, c.sub_code_shift));
}

template <Rounding MODE, bool CODE>
inline void round16(__m512i x, __m512i word, const Consts& c, __m512i& f_out, __m512i& code_out) {
  const __m512i a = _mm512_and_si512(x, c.abs_mask);
  const __mmask16 neg = _mm512_movepi32_mask(x);
  __m512i mag;
  if constexpr (MODE == Rounding::nearest_even) {
    const __m512i odd = _mm512_and_si512(_mm512_srlv_epi32(a, c.s0v), c.one);
    mag = _mm512_and_si512(_mm512_add_epi32(_mm512_add_epi32(a, c.half_m1), odd), c.notlow);
  } else if constexpr (MODE == Rounding::nearest_away) {
    mag = _mm512_and_si512(_mm512_add_epi32(a, c.half), c.notlow);
  } else if constexpr (MODE == Rounding::toward_zero) {
    mag = _mm512_and_si512(a, c.notlow);
  } else if constexpr (MODE == Rounding::up) {
    mag = _mm512_and_si512(_mm512_add_epi32(a, _mm512_maskz_mov_epi32(static_cast<__mmask16>(~neg), c.lowmask)), c.notlow);
  } else if constexpr (MODE == Rounding::down) {
    mag = _mm512_and_si512(_mm512_add_epi32(a, _mm512_maskz_mov_epi32(neg, c.lowmask)), c.notlow);
  } else if constexpr (MODE == Rounding::stochastic) {
    const __m512i inc = _mm512_srlv_epi32(_mm512_sllv_epi32(_mm512_and_si512(word, c.k_mask), c.sr_left), c.sr_right);
    mag = _mm512_and_si512(_mm512_add_epi32(a, inc), c.notlow);
  } else {
    const __m512i thr = _mm512_sllv_epi32(_mm512_and_si512(a, c.lowmask), c.thr_shift);
    const __m512i t = _mm512_and_si512(a, c.notlow);
    mag = _mm512_mask_add_epi32(t, _mm512_cmplt_epu32_mask(word, thr), t, c.step);
  }
  __m512i code = _mm512_setzero_si512();
  if constexpr (CODE) code = _mm512_sub_epi32(_mm512_srlv_epi32(mag, c.s0v), c.code_offset);
  if (!c.pattern_everywhere) {
    const __mmask16 sub = _mm512_cmplt_epu32_mask(a, c.emin_bits);
    if (sub) below_normal<MODE, CODE>(a, neg, word, sub, c, mag, code);
  }
  __mmask16 sneg = neg;
  if (!c.signed_zero) sneg &= _mm512_test_epi32_mask(mag, mag);
  __m512i f = _mm512_mask_or_epi32(mag, sneg, mag, c.sign_bit);
  if constexpr (CODE) code = _mm512_mask_or_epi32(code, sneg, code, c.code_sign);

  const __mmask16 ovf = _mm512_cmpgt_epu32_mask(mag, c.max_bits);
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(a, c.inf_bits);
  const __mmask16 inf = _mm512_cmpeq_epu32_mask(a, c.inf_bits);
  if (ovf | nan | inf) {
    __mmask16 away;
    if constexpr (MODE == Rounding::toward_zero) away = 0;
    else if constexpr (MODE == Rounding::up) away = static_cast<__mmask16>(~neg);
    else if constexpr (MODE == Rounding::down) away = neg;
    else away = 0xFFFF;
    const __mmask16 oa = ovf & away;
    const __mmask16 oz = ovf & static_cast<__mmask16>(~away);
    f = _mm512_mask_mov_epi32(f, oa, by_sign(c.ovf_f, neg));
    f = _mm512_mask_mov_epi32(f, oz, by_sign(c.max_f, neg));
    f = _mm512_mask_mov_epi32(f, inf, by_sign(c.inf_f, neg));
    f = _mm512_mask_mov_epi32(f, nan, by_sign(c.nan_f, neg));
    if constexpr (CODE) {
      code = _mm512_mask_mov_epi32(code, oa, by_sign(c.ovf_c, neg));
      code = _mm512_mask_mov_epi32(code, oz, by_sign(c.max_c, neg));
      code = _mm512_mask_mov_epi32(code, inf, by_sign(c.inf_c, neg));
      code = _mm512_mask_mov_epi32(code, nan, by_sign(c.nan_c, neg));
    }
  }
  f_out = f;
  code_out = code;
}

template <Rounding MODE, typename Out, bool STREAM = false>
inline void process16(const float* in, Out* out, __m512i word, const Consts& c) {
  constexpr bool kCode = !std::is_same_v<Out, float>;
  __m512i f, code;
  round16<MODE, kCode>(_mm512_loadu_si512(in), word, c, f, code);
  if constexpr (std::is_same_v<Out, float>) {
    if constexpr (STREAM) _mm512_stream_si512(reinterpret_cast<__m512i*>(out), f);
    else _mm512_storeu_si512(out, f);
  } else if constexpr (std::is_same_v<Out, uint8_t>) {
    if constexpr (STREAM) _mm_stream_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(code));
    else _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(code));
  } else {
    if constexpr (STREAM) _mm256_stream_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtepi32_epi16(code));
    else _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtepi32_epi16(code));
  }
}

// 16 Philox-4x32-10 blocks at once; ctr[w] lane j becomes output word w of block j.
inline void philox16(__m512i ctr[4], const __m512i rk0[10], const __m512i rk1[10]) {
  const __m512i m0 = b(philox_constants::kMul0);
  const __m512i m1 = b(philox_constants::kMul1);
  constexpr __mmask16 kOdd = 0xAAAA;
  for (int r = 0; r < 10; ++r) {
    const __m512i p0e = _mm512_mul_epu32(ctr[0], m0);
    const __m512i p0o = _mm512_mul_epu32(_mm512_srli_epi64(ctr[0], 32), m0);
    const __m512i p1e = _mm512_mul_epu32(ctr[2], m1);
    const __m512i p1o = _mm512_mul_epu32(_mm512_srli_epi64(ctr[2], 32), m1);
    const __m512i hi0 = _mm512_mask_blend_epi32(kOdd, _mm512_srli_epi64(p0e, 32), p0o);
    const __m512i lo0 = _mm512_mask_blend_epi32(kOdd, p0e, _mm512_slli_epi64(p0o, 32));
    const __m512i hi1 = _mm512_mask_blend_epi32(kOdd, _mm512_srli_epi64(p1e, 32), p1o);
    const __m512i lo1 = _mm512_mask_blend_epi32(kOdd, p1e, _mm512_slli_epi64(p1o, 32));
    const __m512i n0 = _mm512_ternarylogic_epi32(hi1, ctr[1], rk0[r], 0x96);  // three-way xor
    const __m512i n2 = _mm512_ternarylogic_epi32(hi0, ctr[3], rk1[r], 0x96);
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
    // Scalar up to the next global multiple of 64, so vector groups line up with Philox groups.
    size_t head = static_cast<size_t>((64 - args.first_index % 64) % 64);
    if (head > n) head = n;
    scalar_tail(in, out, head, args);
    i = head;
    __m512i rk0[10], rk1[10];
    uint32_t k0 = static_cast<uint32_t>(args.seed), k1 = static_cast<uint32_t>(args.seed >> 32);
    for (int r = 0; r < 10; ++r) {
      rk0[r] = b(k0);
      rk1[r] = b(k1);
      k0 += philox_constants::kWeyl0;
      k1 += philox_constants::kWeyl1;
    }
    const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i stream_lo = b(static_cast<uint32_t>(args.stream));
    const __m512i stream_hi = b(static_cast<uint32_t>(args.stream >> 32));
    for (; i + 64 <= n; i += 64) {
      const uint64_t block = (args.first_index + i) / 64 * 16;  // multiple of 16: lanes never carry
      __m512i ctr[4] = {_mm512_add_epi32(b(static_cast<uint32_t>(block)), lanes), b(static_cast<uint32_t>(block >> 32)),
                        stream_lo, stream_hi};
      philox16(ctr, rk0, rk1);
      process16<MODE>(in + i, out + i, ctr[0], c);
      process16<MODE>(in + i + 16, out + i + 16, ctr[1], c);
      process16<MODE>(in + i + 32, out + i + 32, ctr[2], c);
      process16<MODE>(in + i + 48, out + i + 48, ctr[3], c);
    }
  } else {
    const __m512i zero = _mm512_setzero_si512();
    constexpr size_t kStoreBytes = 16 * sizeof(Out);  // one vector store; streaming needs it aligned
    const uintptr_t addr = reinterpret_cast<uintptr_t>(out);
    if (args.streaming && addr % sizeof(Out) == 0) {
      size_t head = (kStoreBytes - addr % kStoreBytes) % kStoreBytes / sizeof(Out);
      if (head > n) head = n;
      scalar_tail(in, out, head, args);
      for (i = head; i + 16 <= n; i += 16) process16<MODE, Out, true>(in + i, out + i, zero, c);
      _mm_sfence();  // non-temporal stores are weakly ordered: publish them before returning
    } else {
      for (; i + 64 <= n; i += 64) {
        process16<MODE>(in + i, out + i, zero, c);
        process16<MODE>(in + i + 16, out + i + 16, zero, c);
        process16<MODE>(in + i + 32, out + i + 32, zero, c);
        process16<MODE>(in + i + 48, out + i + 48, zero, c);
      }
      for (; i + 16 <= n; i += 16) process16<MODE>(in + i, out + i, zero, c);
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
// Outside the target region: this accessor runs on every CPU.
const KernelTable* avx512_kernels() {
  static const KernelTable table{"avx512", round_kernel, encode8_kernel, encode16_kernel};
  return &table;
}
}  // namespace lobench::precision::detail

#else

namespace lobench::precision::detail {
const KernelTable* avx512_kernels() { return nullptr; }
}  // namespace lobench::precision::detail

#endif
