// The tile kernels with the element-wise work computed in bfloat16 or binary16 (variants/epilogue.hpp): the
// portable path's operations (bce_vectors_portable.hpp), each result rounded to the format, nearest even,
// over the same templates (bce_math.hpp, bce_tile_loops.hpp), so that the algorithm is the fp32 kernels'
// and only the precision differs. Compiled with the build's own flags and -ffp-contract=off (CMake), as
// the portable file: the same bits on every CPU.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "variants/bce/bce_tile.hpp"
#include "variants/bce/bce_tile_kernels.hpp"
#include "variants/bce/bce_tile_loops.hpp"

namespace lobench::cpu {
namespace {

#include "variants/bce/bce_vectors_portable.hpp"

typedef uint32_t Words __attribute__((vector_size(kLanes * sizeof(uint32_t))));
typedef int64_t Longs __attribute__((vector_size(kLanes * sizeof(int64_t))));

inline Words bits_of(Floats x) {
  Words w;
  std::memcpy(&w, &x, sizeof w);
  return w;
}
inline Floats floats_of(Words w) {
  Floats x;
  std::memcpy(&x, &w, sizeof x);
  return x;
}

inline Doubles widened(Floats x) { return __builtin_convertvector(x, Doubles); }

// x rounded to float32 to odd: where x is not a float, the one of its two float neighbours whose last bit is
// 1 (truncate, then set that bit); exact values, infinities and NaN as float32 gives them.
inline Floats round_to_odd_float(Doubles x) {
  const Floats nearest = __builtin_convertvector(x, Floats);
  const Doubles back = widened(nearest);
  const Ints inexact = __builtin_convertvector((Longs)(back != x), Ints);
  const Ints overshot = __builtin_convertvector((Longs)((back > x) & (x > 0.0)) | (Longs)((back < x) & (x < 0.0)), Ints);
  Words w = bits_of(nearest);
  const Ints finite = (Ints)((w & 0x7fffffffu) < 0x7f800000u);
  w -= (Words)(overshot & finite) & 1u;  // the truncated neighbour (one step toward zero in magnitude)
  w |= (Words)(inexact & finite) & 1u;   // its odd neighbour
  return floats_of(w);
}

// A format with kE exponent bits and kM mantissa bits (IEEE layout: subnormals, inf, NaN), kE ≤ 8.
template <int kE, int kM>
struct Grid {
  static_assert(kE >= 2 && kE <= 8 && kM >= 1 && kM <= 22);
  static constexpr int kShift = 23 - kM;  // the float32 mantissa bits dropped
  static constexpr int kBias = (1 << (kE - 1)) - 1;
  static constexpr uint32_t kMinNormalBits = uint32_t(127 + 1 - kBias) << 23;  // 2^(1 − bias)
  // The largest finite value, as float32 bits: exponent bias, every kept mantissa bit set.
  static constexpr uint32_t kMaxFiniteBits = (uint32_t(127 + kBias) << 23) | (((1u << kM) - 1) << kShift);
  // A float32 whose spacing is the format's subnormal spacing 2^(1 − bias − kM): adding it rounds a value
  // below the smallest normal onto the subnormal grid (nearest even), subtracting it gives that value.
  static constexpr uint32_t kSubnormalShifterBits = uint32_t(127 + 1 - kBias - kM + 23) << 23;

  // x rounded to the format (nearest even; above the largest finite: ±inf; inf and NaN as they are).
  static Floats round(Floats x) {
    const Words u = bits_of(x), magnitude = u & 0x7fffffffu;
    // Nearest even at kM mantissa bits, on the bits: a carry into the exponent is the next binade (or inf).
    const Words rounded = (u + ((1u << (kShift - 1)) - 1) + ((u >> kShift) & 1u)) & ~((1u << kShift) - 1);
    Floats y = floats_of(rounded);
    if constexpr (kE < 8) {  // (bfloat16 shares float32's exponent range: the rounding on the bits above is
                             // also right below 2^-126, bfloat16's subnormals being every 2^16th float32 one)
      const Floats shifter = floats_of(Words{} + kSubnormalShifterBits);
      const Floats tiny = (floats_of(magnitude) + shifter) - shifter;  // |x| < 2^(1 − bias): exact steps
      const Words tiny_signed = bits_of(tiny) | (u & 0x80000000u);
      y = floats_of(magnitude < kMinNormalBits ? tiny_signed : bits_of(y));
      const Words y_magnitude = bits_of(y) & 0x7fffffffu;
      y = floats_of(y_magnitude > kMaxFiniteBits ? (u & 0x80000000u) | 0x7f800000u : bits_of(y));
    }
    return floats_of(magnitude >= 0x7f800000u ? u : bits_of(y));
  }
};

// bce_math's `S` with every arithmetic result rounded to Grid G. Comparisons, selections, min, max, −|a|
// and rounding to an integer are exact; loads read values rounded; the row scale and the float64 sums
// stay wide (epilogue.hpp).
template <class G>
struct RoundedVectors : Vectors {
  static F set1(float s) { return G::round(Vectors::set1(s)); }
  static F load(const float* p) { return G::round(Vectors::load(p)); }
  static F load_first(const float* p, int n) { return G::round(Vectors::load_first(p, n)); }
  // The logits as they are, for the predicted count (bce_tile_loops.hpp's counted).
  static F load_unrounded(const float* p, int n) { return n == kLanes ? Vectors::load(p) : Vectors::load_first(p, n); }
  static F add(F a, F b) { return G::round(a + b); }
  static F sub(F a, F b) { return G::round(a - b); }
  static F mul(F a, F b) { return G::round(a * b); }
  static F div(F a, F b) { return G::round(a / b); }
  // a·b + c in float64, rounded to odd at float32 (so that rounding that to the format's fewer bits is
  // rounding the float64 value once), then to the format. a·b is exact in float64 (48 bits at most). The
  // sum is exact too where both terms are on the format's grid and within a factor 2^30 of each other in
  // magnitude (53 bits hold both), as in every multiply-add of bce_math's polynomials and reduction; where
  // one were far smaller,
  // its float64 rounding would come first and could decide a tie the other way (not a true fused
  // multiply-add in the format).
  static F fma(F a, F b, F c) { return G::round(round_to_odd_float(widened(a) * widened(b) + widened(c))); }
  static F ldexp(F p, F n) { return G::round(Vectors::ldexp(p, n)); }
  // The row scale of s·σ, in float32 (bce_tile_loops.hpp).
  static F scale_constant(float s) { return Vectors::set1(s); }
  static F scaled(F c, F g) { return c * g; }
};

using Bf16 = RoundedVectors<Grid<8, 7>>;
using Fp16 = RoundedVectors<Grid<5, 10>>;

template <class G>
void round_elements(const float* in, int64_t n, float* out) {
  for (int64_t j = 0; j < n; j += kLanes) {
    const int k = n - j < kLanes ? int(n - j) : kLanes;
    Vectors::store_first(out + j, G::round(Vectors::load_first(in + j, k)), k);
  }
}

}  // namespace

extern const BceTileKernels kBceTileKernelsBf16Epilogue = bce_loops::kernel_table<Bf16>(SimdPath::portable);

extern const BceTileKernels kBceTileKernelsFp16Epilogue = bce_loops::kernel_table<Fp16>(SimdPath::portable);

template <class S>
void fma_elements(const float* a, const float* b, const float* c, int64_t n, float* out) {
  for (int64_t j = 0; j < n; j += kLanes) {
    const int k = n - j < kLanes ? int(n - j) : kLanes;
    Vectors::store_first(out + j, S::fma(Vectors::load_first(a + j, k), Vectors::load_first(b + j, k),
                                         Vectors::load_first(c + j, k)), k);
  }
}

void epilogue_fma(Epilogue e, const float* a, const float* b, const float* c, int64_t n, float* out) {
  if (e == Epilogue::bf16) fma_elements<Bf16>(a, b, c, n, out);
  if (e == Epilogue::fp16) fma_elements<Fp16>(a, b, c, n, out);
  if (e == Epilogue::fp32)
    for (int64_t i = 0; i < n; ++i) out[i] = std::fma(a[i], b[i], c[i]);
}

void round_to_bf16_grid(const float* in, int64_t n, float* out) { round_elements<Grid<8, 7>>(in, n, out); }
void round_to_fp16_grid(const float* in, int64_t n, float* out) { round_elements<Grid<5, 10>>(in, n, out); }

}  // namespace lobench::cpu
