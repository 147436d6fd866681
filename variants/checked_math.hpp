// Integer arithmetic on sizes that refuses to wrap: element counts and byte counts of shapes read from
// files or options are multiplied here before anything is allocated, so a file claiming D = 2^62 is an
// error message, not an out-of-bounds read.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace lobench {

// a·b, or nothing when it does not fit in int64 (negative factors included: sizes are never negative,
// and a negative one is refused as if it overflowed).
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The product of every factor, or nothing when any partial product overflows (or a factor is negative).
inline std::optional<int64_t> checked_product(std::initializer_list<int64_t> factors) {
  int64_t r = 1;
  for (int64_t f : factors) {
    const auto next = checked_mul(r, f);
    if (!next) return std::nullopt;
    r = *next;
  }
  return r;
}

}  // namespace lobench
