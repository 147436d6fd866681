// fp8 operands with a per-tensor power-of-two scale (`--operand e4m3|e5m2`): how A and E (and the
// training head's H and W) become the values the products read.
//
// A tensor x with largest magnitude amax gets the scale 2^s, s the largest integer with
// amax·2^s <= the format's largest finite value (448 for E4M3, 57344 for E5M2): its largest value lands
// at or just below the top of the format (Hopper's FP8 recipe: per-tensor amax scaling). Each value is
// then rounded to the format, nearest-even, and the products read q·2^-s, q = round(x·2^s). That is one
// rounding onto the format's grid scaled by 2^-s: the same format with its exponent bias raised by s
// (precision_sim does it, the ml_dtypes-exact rounding every format here uses; no second rounding
// routine). Every E4M3/E5M2 value times a power of two is exact in bfloat16 while it stays in
// bfloat16's normal range (3 or 2 mantissa bits against bfloat16's 7, the same exponent range as
// float32), so the bf16 products compute on these values exactly, and a product chain on q·2^-s equals
// 2^-(sA+sE) times the chain on the fp8 values q themselves, bit for bit, while no partial sum leaves
// float32's normal range (scaling by a power of two commutes with each rounding): the inverse scales
// applied to the float32 results, as Hopper's FP8 GEMM does (tested, variants/tests/fp8_operands_test.cpp).
//
// Rounding does not saturate (ml_dtypes' and torch's `.to(float8_*)` default): with the scale taken from
// amax no finite value can overflow, so saturation would change only inf and NaN inputs, and those must
// stay visible (inf becomes E4M3's NaN or E5M2's inf; the outputs are then not finite and the row fails
// with that reason). amax 0, inf or NaN gives s = 0. s is clamped to the range in which the scaled grid
// is still a float32 grid (E4M3: -119..120, E5M2: -112..112), which only a tensor whose amax is beyond
// 2^±110 meets.
#pragma once

#include <cstdint>
#include <string>

#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "variants/operand.hpp"

namespace lobench {

// The number format of an fp8 operand: float8_e4m3fn (OCP E4M3, no inf, max 448) for e4m3, float8_e5m2
// for e5m2; std::invalid_argument for any other operand.
precision::Format fp8_format(Operand op);

// max |x[i]| over n values: the largest magnitude as a float, inf if any value is infinite and NaN if any
// is NaN (ordered by the magnitude's bits). 0 for n = 0. Splits the work over `threads` (the result does
// not depend on it).
float max_abs(const float* x, int64_t n, int threads = 1);

// The largest integer s with amax·2^s <= f.max_finite(), clamped (see above); 0 where amax is 0 or not
// finite.
int fp8_scale_exponent(const precision::Format& f, float amax);

class Fp8Scaling {
 public:
  // The scaling of a tensor of operand `op` whose largest magnitude is amax.
  Fp8Scaling(Operand op, float amax);
  // The scaling of x [n], its amax measured here.
  static Fp8Scaling of(Operand op, const float* x, int64_t n, int threads = 1);

  int exponent() const { return s_; }  // s: the tensor is multiplied by 2^s before rounding
  // out[i] = round(in[i]·2^s)·2^-s (in place allowed), on `threads` threads (same bits for any count).
  void round(const float* in, float* out, int64_t n, int threads = 1) const;
  // "2^s" as a row's note shows it.
  std::string describe() const;

 private:
  int s_;
  precision::Quantizer q_;  // the operand's format, its bias raised by s
};

}  // namespace lobench
