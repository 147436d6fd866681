// Internal: building a Plan from a Format, and the slow, table-free decode used to fill lookup tables.
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
// Code magnitude of a non-negative value on the format's grid.
uint32_t encode_magnitude(const Format& f, uint32_t bits);

}  // namespace lobench::precision::detail
