// Rounding modes for float32 -> format, and the options an array rounding call takes.
//
// Every mode first rounds |x| onto the format's grid extended without an upper bound (the binades
// above the largest finite value continue with the same spacing rule), then applies these rules:
//
//   mode            | result on the unbounded grid                 | when that result > max finite
//   ----------------+----------------------------------------------+------------------------------
//   nearest_even    | nearest, ties to even mantissa (IEEE RNE)    | overflow value (below)
//   nearest_away    | nearest, ties away from zero                 | overflow value
//   toward_zero     | truncate the magnitude                       | ±max (never inf/NaN)
//   up              | toward +inf                                  | x > 0: overflow value; x < 0: -max
//   down            | toward -inf                                  | x < 0: overflow value; x > 0: +max
//   stochastic      | one of the two neighbours, see below         | overflow value
//   stochastic_exact| one of the two neighbours, see below         | overflow value
//
// The overflow value is set by the format's policy (format.hpp): `special` gives the format's inf,
// else its NaN (fn: S.1111.111; fnuz: 0x80), else ±max (MX fp4/fp6 have neither); `saturate` gives
// ±max. With `special` and nearest_even this is exactly ml_dtypes: e4m3fn 464 -> 448 (tie to even),
// 465 -> NaN; e5m2 61440 -> inf; bfloat16 FLT_MAX -> inf.
//
// Inputs that are not finite numbers, identical in every mode and under both policies (as ml_dtypes,
// including its ConvertFrom<kSaturate=true>):
//   ±inf -> ±inf if the format has inf, else NaN (fn keeps the sign, fnuz has one NaN), else ±max.
//   NaN  -> the format's quiet NaN with the input's sign (ieee: S.1..1.10..0; fn: S.1..1.1..1;
//           fnuz: 0x80). Payloads are not kept. Formats without NaN (MX fp4/fp6) give a zero of the
//           *opposite* sign (+NaN -> -0): that is what ml_dtypes does (its "NaN" for these types is
//           the code 0b1000..., negated for a negative NaN), reproduced so codes match bit for bit.
//   Unsigned formats (e8m0fnu, e5m3fnu): negative inputs (not -0) -> NaN, or the smallest value (zero
//           if the format has one) under `saturate`. Formats without zero (e8m0fnu): ±0 -> NaN, or the
//           smallest value under `saturate`. Below 2^-126 the only values are 2^-127 and 2^-126: every
//           input at or below 2^-127 gives 2^-127 in every mode (nothing lies below it), and inputs in
//           (2^-127, 2^-126) round between those two neighbours; ties (1.5 * 2^-127) round up, as in
//           every binade of a format whose significand is the implicit 1 alone (ml_dtypes 0.7.0 agrees
//           on every float32 input; 0.6.0 rounded as if code 0x00 were zero, sending (2^-127,
//           1.5 * 2^-127) to 2^-126). Stochastic rounding is then unbiased above 2^-127 only.
//   Zero results keep the input's sign, except in fnuz and unsigned formats (no -0).
//
// Stochastic rounding. Let r be the discarded part of |x| measured in units of 2^-k of the target
// spacing (ulp) at |x|; this is the target grid, so it is correct in the subnormal range too.
//   stochastic      : add k random bits just below the kept bits, then truncate (CPFloat's
//                     SR-proportional, QPyTorch, ELMO). R = the low k bits of the element's random
//                     word; rounds up iff floor(r) + R >= 2^k, i.e. with probability floor(r)/2^k.
//                     k = sr_bits, default 23 - M (every bit float32 discards in the normal range:
//                     16 for bfloat16, 20 for e4m3). With k = 16, bfloat16 and the same random words
//                     this is bit-identical to ELMO's `(bits + (r & 0xFFFF)) & 0xFFFF0000`.
//   stochastic_exact: rounds up iff the 32-bit word u < floor(distance/ulp * 2^32): probability
//                     distance/ulp exactly whenever the discarded part fits in 32 bits (always in
//                     the normal range), within 2^-32 otherwise.
// Neither depends on the sign, so both are unbiased: E[round(x)] = x up to the 2^-k resolution.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lobench::precision {

struct Format;

enum class Rounding : uint8_t {
  nearest_even,
  nearest_away,
  toward_zero,
  up,
  down,
  stochastic,
  stochastic_exact,
};

inline constexpr Rounding kAllRoundings[] = {Rounding::nearest_even, Rounding::nearest_away, Rounding::toward_zero,
                                             Rounding::up,           Rounding::down,         Rounding::stochastic,
                                             Rounding::stochastic_exact};

// Accepts the enum names and the short forms rne, nearest, rna, rz, truncate, ru, rd, sr, sr_exact.
// Throws std::invalid_argument listing the valid names.
Rounding parse_rounding(std::string_view name);
std::string_view rounding_name(Rounding mode);
std::vector<std::string> rounding_names();
constexpr bool is_stochastic(Rounding m) { return m == Rounding::stochastic || m == Rounding::stochastic_exact; }

// Default k for `stochastic`: 23 - M (at least 1).
int default_sr_bits(const Format& f);

// How to round an array. The random word of element i (0-based in the array) is
// random_word(seed, stream, index_offset + i) (stochastic.hpp): results depend only on these
// numbers, never on the thread count or the ISA.
struct RoundingOptions {
  Rounding mode = Rounding::nearest_even;
  int sr_bits = 0;            // k for `stochastic`, 1..31; 0 = default_sr_bits(format)
  uint64_t seed = 0;          // e.g. one per run
  uint64_t stream = 0;        // e.g. step * n_tensors + tensor id: a new stream gives new bits
  uint64_t index_offset = 0;  // global index of element 0, so a slice rounds as the whole tensor does
};

// Conveniences over Quantizer (quantizer.hpp) for one-off calls: values on the format's grid, in
// float32. The scalar form derives the format's constants on every call (slow in a loop).
void round_to_format(std::span<const float> in, std::span<float> out, const Format& f, const RoundingOptions& opt = {},
                     int threads = 1);
float round_to_format(float x, const Format& f, Rounding mode = Rounding::nearest_even, uint32_t word = 0,
                      int sr_bits = 0);

}  // namespace lobench::precision
