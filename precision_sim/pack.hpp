// Packing: formats of at most 16 bits are stored as codes, one uint8 per value up to 8 bits (fp4 and
// fp6 too, one code per byte as ml_dtypes does) and one uint16 up to 16 bits. Wider formats (tf32,
// float32) stay in float32 containers: there is nothing to gain from packing them.
//
// A code is the format's bit pattern: sign (if any) in bit bits()-1, then exponent, then mantissa.
// These free functions are conveniences over Quantizer (quantizer.hpp), which avoids re-deriving the
// format's constants on every call.
#pragma once

#include <cstdint>
#include <span>

#include "precision_sim/format.hpp"
#include "precision_sim/rounding.hpp"

namespace lobench::precision {

inline bool can_pack(const Format& f) { return f.bits() <= 16; }
// 1, 2, or 0 when the format is not packed.
inline int code_bytes(const Format& f) { return f.bits() <= 8 ? 1 : f.bits() <= 16 ? 2 : 0; }

void encode(std::span<const float> in, std::span<uint8_t> out, const Format& f, const RoundingOptions& opt = {},
            int threads = 1);
void encode(std::span<const float> in, std::span<uint16_t> out, const Format& f, const RoundingOptions& opt = {},
            int threads = 1);
void decode(std::span<const uint8_t> in, std::span<float> out, const Format& f, int threads = 1);
void decode(std::span<const uint16_t> in, std::span<float> out, const Format& f, int threads = 1);

}  // namespace lobench::precision
