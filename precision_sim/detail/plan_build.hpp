// Internal: building a Plan from a Format, the slow, table-free decode used to fill lookup tables, and
// the code-magnitude arithmetic they share with Format.
#pragma once

#include <cstdint>

#include "precision_sim/detail/plan.hpp"

namespace lobench::precision {
struct Format;
}

namespace lobench::precision::detail {

Plan make_plan(const Format& f);
// Float32 bits of a code (NaN codes decode to the quiet NaN 0x7FC00000 with the code's sign).
uint32_t decode_bits(const Format& f, uint32_t code);

// Defined in format.cpp. The largest finite code magnitude (sign bit excluded), the one definition
// every other limit follows from; and the value of a finite code magnitude.
uint32_t max_code_magnitude(const Format& f);
double magnitude_value(const Format& f, uint32_t mag);

}  // namespace lobench::precision::detail
