// Number formats simulated in float32 containers: what a format is, the named presets (one per
// ml_dtypes floating type, plus float16, tf32 and float32), and parsing of format names.
//
// A format is sign (optional) + E exponent bits + M mantissa bits with an exponent bias. What the
// all-ones exponent means differs between families, and that is the part people get wrong, so it is
// an explicit field (`Specials`):
//   ieee    top exponent = inf (mantissa 0) or NaN (otherwise): float16, bfloat16, e5m2, e4m3, e3m4.
//   fn      no inf; only the all-ones code S.1..1.1..1 is NaN, the rest of the top binade is finite
//           (OCP e4m3fn: max 448). With M = 0 (e8m0fnu) the top binade is that one NaN code.
//           Unsigned fn formats (e8m0fnu, e5m3fnu) have one NaN, the all-ones code 0xFF.
//   fnuz    no inf, no negative zero; the code "sign bit only" (0x80) is NaN; every exponent is finite.
//   finite  every code is a finite number (OCP MX fp4/fp6: e2m1fn, e2m3fn, e3m2fn; ml_dtypes keeps the
//           "fn" suffix for them although they have no NaN).
// Every value of every valid format is exactly representable in float32 (checked by validate()).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lobench::precision {

enum class Specials : uint8_t { ieee, fn, fnuz, finite };

// What a finite value too large for the format becomes (see rounding.hpp for the per-mode rules).
//   special   : the format's infinity if it has one, else its NaN, else its largest value. This is
//               ml_dtypes' default (non-saturating) behaviour.
//   saturate  : the largest finite value of that sign (ml_dtypes' C++ ConvertFrom<kSaturate=true>).
// Infinite and NaN *inputs* are not overflow: they follow the format's specials under both policies.
enum class Overflow : uint8_t { special, saturate };

struct Format {
  std::string name;  // canonical name, e.g. "float8_e4m3fn" or "e5m7"; "_sat" appended when saturating
  int exponent_bits = 8;
  int mantissa_bits = 23;
  int bias = 127;
  // Exponent field 0 holds subnormals (0.m * 2^(1-bias)). When off, the only values below the
  // smallest normal are zero (codes with exponent field 0 and a non-zero mantissa decode as zero).
  bool subnormals = true;
  // False only for exponent-only scale formats (e8m0fnu): exponent field 0 is the value 2^-bias and
  // there is no zero. Requires mantissa_bits == 0 and subnormals off.
  bool has_zero = true;
  Specials specials = Specials::ieee;
  Overflow overflow = Overflow::special;
  bool is_signed = true;  // unsigned formats (e8m0fnu, e5m3fnu) have no sign bit; they require Specials::fn

  // Storage width in bits (sign + exponent + mantissa).
  int bits() const { return (is_signed ? 1 : 0) + exponent_bits + mantissa_bits; }
  bool has_inf() const { return specials == Specials::ieee; }
  bool has_nan() const { return specials != Specials::finite; }
  bool has_negative_zero() const { return is_signed && has_zero && specials != Specials::fnuz; }
  // Unbiased exponent of the smallest normal number, 1 - bias.
  int emin() const { return 1 - bias; }
  // Unbiased exponent of the largest finite binade.
  int emax() const;
  double max_finite() const;     // largest finite value
  double min_normal() const;     // 2^emin (for has_zero == false: the smallest value, 2^-bias)
  double min_positive() const;   // smallest positive value (subnormal if subnormals are on)
  // Structural equality (the name is ignored).
  bool same_encoding(const Format& o) const;
  bool operator==(const Format& o) const { return same_encoding(o) && name == o.name; }
};

// Throws std::invalid_argument describing the first problem (bit counts, bias out of float32's
// range, unsigned without NaN, ...). Every Format handed out by this library passes.
void validate(const Format& f);

// Builds and validates a format. The name is generated ("e5m7", "e4m3b11", ... ) unless given.
Format make_format(int exponent_bits, int mantissa_bits, int bias, bool subnormals, Specials specials,
                   Overflow overflow = Overflow::special, bool is_signed = true, std::string name = {});

// IEEE-like eXmY: bias 2^(E-1)-1, subnormals on, inf/NaN in the top exponent. Needs M >= 1 (an
// IEEE-like format without mantissa bits would have no NaN code).
Format ieee_like(int exponent_bits, int mantissa_bits);

namespace formats {
Format float32();
Format tf32();       // e8m10, 19 bits: float32's range, 10 mantissa bits (NVIDIA TensorFloat-32)
Format bfloat16();
Format float16();
Format float8_e3m4();
Format float8_e4m3();      // IEEE-like e4m3 (max 240, has inf): NOT the OCP/NVIDIA "E4M3"
Format float8_e4m3fn();    // OCP E4M3 (max 448, 0x7F/0xFF NaN, no inf): what PyTorch/NVIDIA call fp8 e4m3
Format float8_e4m3fnuz();  // bias 8, 0x80 NaN (AMD/Graphcore)
Format float8_e4m3b11fnuz();  // bias 11, 0x80 NaN
Format float8_e5m2();
Format float8_e5m2fnuz();  // bias 16, 0x80 NaN
Format float8_e5m3fnu();   // unsigned e5m3, bias 15, subnormals, max 114688, 0xFF NaN, no inf
Format float8_e8m0fnu();   // unsigned exponent-only scale: 2^-127 .. 2^127, 0xFF NaN, no zero
Format float6_e2m3fn();    // OCP MX, all finite, max 7.5
Format float6_e3m2fn();    // OCP MX, all finite, max 28
Format float4_e2m1fn();    // OCP MX, all finite, max 6
// The presets above that ml_dtypes (or NumPy, for float16) implements: the oracle test covers these.
std::vector<Format> ml_dtypes_presets();
// Every preset (ml_dtypes_presets() + float32 + tf32).
std::vector<Format> all_presets();
}  // namespace formats

// Parses a format name. Accepted:
//   * the ml_dtypes names (float8_e4m3fn, bfloat16, float6_e3m2fn, ...), float16, float32, tf32;
//   * short aliases: bf16, fp16, half, fp32, f32, e4m3fn, e4m3fnuz, e4m3b11fnuz, e5m2fnuz, e5m3fnu, e8m0fnu,
//     e2m1fn, e2m3fn, e3m2fn, fp8_e4m3 (= float8_e4m3fn, the OCP format), fp8_e5m2, fp6_e2m3,
//     fp6_e3m2, fp4_e2m1;
//   * a bare eXmY (1 <= X <= 8, 1 <= Y <= 23): the IEEE-like generic format. Beware that e4m3 is
//     therefore ml_dtypes' IEEE-like float8_e4m3 (max 240), not OCP e4m3fn (max 448); and e2m1 is not
//     the MX fp4 (use e2m1fn);
//   * any of the above followed by "_sat" for the saturating overflow policy.
// Case-insensitive. Throws std::invalid_argument listing the valid names.
Format parse_format(std::string_view name);

// The names parse_format accepts (presets and aliases; eXmY is described, not enumerated).
std::vector<std::string> format_names();

// One line describing the format, e.g. "float8_e4m3fn: e4m3 bias 7, fn, subnormals, max 448".
std::string describe(const Format& f);

}  // namespace lobench::precision
