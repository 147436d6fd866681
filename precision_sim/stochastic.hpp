// Which random word each element gets for stochastic rounding.
//
// Element i of a stream uses one 32-bit output of Philox-4x32-10 with
//   key     = (seed mod 2^32, seed >> 32)
//   counter = (block mod 2^32, block >> 32, stream mod 2^32, stream >> 32)
//   block   = 16 * floor(i / 64) + (i mod 16),   output word = floor((i mod 64) / 16).
// So one Philox call serves 4 elements (a 4x saving over one call per element, which is what
// Triton's tl.randint(seed, offset) does, so these words differ from ELMO's). The interleave makes
// the layout SIMD-friendly: 16 lanes each compute one block and the 4 outputs are then 4 whole
// vectors of words for 64 consecutive elements, with no transposes. The mapping depends on the index
// only, so any split of the work between threads or ISAs gives the same words.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "precision_sim/philox.hpp"

namespace lobench::precision {

constexpr uint64_t philox_block(uint64_t index) { return (index / 64) * 16 + index % 16; }
constexpr int philox_word(uint64_t index) { return static_cast<int>((index % 64) / 16); }

constexpr PhiloxKey philox_key(uint64_t seed) {
  return {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
}
constexpr PhiloxCounter philox_counter(uint64_t block, uint64_t stream) {
  return {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), static_cast<uint32_t>(stream),
          static_cast<uint32_t>(stream >> 32)};
}

// The random word of element `index` (one Philox call; use random_words for many).
constexpr uint32_t random_word(uint64_t seed, uint64_t stream, uint64_t index) {
  return philox4x32(philox_counter(philox_block(index), stream), philox_key(seed))[philox_word(index)];
}

// Words of elements first .. first + out.size() - 1 (one Philox call per 4 elements).
void random_words(uint64_t seed, uint64_t stream, uint64_t first, std::span<uint32_t> out);

// A uniform float in [0, 1) from a word (24 bits), for tests and simple users.
constexpr float word_to_unit_float(uint32_t w) { return static_cast<float>(w >> 8) * 0x1.0p-24f; }

}  // namespace lobench::precision
