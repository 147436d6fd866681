// Finite inputs can still overflow float32: a logit x = a·e beyond 3.4e38 is inf, softplus(x) − x is then
// inf − inf = NaN, and a variant would report loss = NaN as if nothing happened (the float64 reference
// gives a finite loss there). The float32 CPU variants check their outputs after a step (P + P·D + V·D
// values, negligible beside the 6·P·V·D flops) and refuse such inputs with a message naming the
// overflow instead of returning a silent NaN.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "variants/epilogue.hpp"
#include "variants/step.hpp"

namespace lobench::cpu {

// What float32 cannot hold: thrown by a variant whose outputs came out non-finite from finite inputs.
struct Float32Overflow : std::range_error {
  using std::range_error::range_error;
};

namespace detail {
// Whether none of x[0, n) is ±inf or NaN (its exponent bits all ones). Tested 1,024 values at a time with
// no exit inside a block, so that the compiler vectorizes the test: as an early-exit loop (Eigen's
// allFinite), one value per cycle, it took about 1 % of the fused step, checking each block of dE.
inline bool all_finite(const float* x, int64_t n) {
  constexpr int64_t kBlock = 1024;
  constexpr uint32_t kExponent = 0x7f800000u;
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t m = std::min(kBlock, n - i0);
    uint32_t non_finite = 0;
    for (int64_t i = 0; i < m; ++i) {
      uint32_t bits;
      std::memcpy(&bits, x + i0 + i, sizeof bits);
      non_finite |= uint32_t((bits & kExponent) == kExponent);
    }
    if (non_finite) return false;
  }
  return true;
}
inline int64_t first_non_finite(const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) return i;
  return -1;
}
// Whether E as the variant read it is finite: the stored (decoded) values when E is held in a narrower
// format, where values beyond its largest finite one may have become inf. Only on the error path.
inline bool stored_e_finite(const StepInputs& in) {
  if (in.E_stored == nullptr) return true;
  constexpr int64_t kRows = 256;
  std::vector<float> rows(size_t(kRows * in.D));
  for (int64_t v0 = 0; v0 < in.V; v0 += kRows) {
    const int64_t n = std::min(kRows, in.V - v0);
    in.E_stored->decode_rows(v0, n, rows.data());
    if (!all_finite(rows.data(), n * in.D)) return false;
  }
  return true;
}
}  // namespace detail

// Throws Float32Overflow naming `variant`, the first non-finite output and why, unless the loss, every
// per-position loss, dA and dE are finite. Inputs that already hold NaN or inf are named as the cause.
// `dE_known_finite`: the variant has already checked every value of dE as it finished it (while in cache;
// the scan here reads V·D floats from memory), and found them finite. `epilogue`: the precision of the
// element-wise work (an fp16 epilogue's loss overflows from a logit of 65520, long before float32 does).
inline void require_finite_outputs(const StepInputs& in, const StepOutputs& out, const std::string& variant,
                                   bool dE_known_finite = false, Epilogue epilogue = Epilogue::fp32) {
  std::string where;
  if (!std::isfinite(out.loss)) where = "the loss";
  for (int64_t p = 0; where.empty() && p < in.P; ++p)
    if (!std::isfinite(out.per_position_loss[size_t(p)])) where = fmt::format("the loss of position {}", p);
  if (where.empty() && !detail::all_finite(out.dA.data(), in.P * in.D)) {
    const int64_t i = detail::first_non_finite(out.dA.data(), in.P * in.D);
    where = fmt::format("dA[{}, {}]", i / in.D, i % in.D);
  }
  if (where.empty() && !dE_known_finite && !detail::all_finite(out.dE.data(), in.V * in.D)) {
    const int64_t i = detail::first_non_finite(out.dE.data(), in.V * in.D);
    where = fmt::format("dE[{}, {}]", i / in.D, i % in.D);
  }
  if (where.empty()) return;
  const bool inputs_finite =
      detail::all_finite(in.A, in.P * in.D) && (in.E == nullptr || detail::all_finite(in.E, in.V * in.D));
  if (!inputs_finite)
    throw Float32Overflow(fmt::format("{}: {} is not finite because A or E holds NaN or inf", variant, where));
  if (!detail::stored_e_finite(in))
    throw Float32Overflow(fmt::format("{}: {} is not finite because E as stored holds inf or NaN: values beyond the "
                                      "format's largest finite value overflowed (a saturating format, e.g. `_sat`, "
                                      "keeps them finite)",
                                      variant, where));
  if (epilogue == Epilogue::fp16)
    throw Float32Overflow(fmt::format(
        "{}: {} is not finite although A and E are: with --epilogue fp16 the logits or the loss terms overflow "
        "binary16 (a logit of 65520 or more rounds to +inf; loss terms summing past 65504 too); scale A or E down, "
        "or use --epilogue fp32 or bf16 (float32's range)",
        variant, where));
  throw Float32Overflow(fmt::format(
      "{}: {} is not finite although A and E are: the logits A·Eᵀ (or the gradients) overflow float32 "
      "(|x| > 3.4e38); scale A or E down, or compute in float64 with the variant 'reference'",
      variant, where));
}

}  // namespace lobench::cpu
