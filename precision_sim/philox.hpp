// Philox-4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as 1, 2, 3", SC'11),
// the counter-based generator of Random123, cuRAND and Triton's tl.rand/tl.randint. Counter-based
// means output = f(key, counter) with no state, so element i's random bits can be computed by any
// thread, on any ISA or on a GPU, in any order: stochastic rounding is then reproducible and
// independent of the thread count. Written from the paper's description; checked against the
// Random123 known-answer vectors in tests/philox_test.cpp.
#pragma once

#include <array>
#include <cstdint>

namespace lobench::precision {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

namespace philox_constants {
inline constexpr uint32_t kMul0 = 0xD2511F53u;   // round multipliers (chosen by the authors for avalanche)
inline constexpr uint32_t kMul1 = 0xCD9E8D57u;
inline constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // key schedule increments: golden ratio, sqrt(3) - 1
inline constexpr uint32_t kWeyl1 = 0xBB67AE85u;
}  // namespace philox_constants

// One Philox round: two 32x32->64 products; the high halves are mixed with the other counter words
// and the key, the low halves are carried over.
constexpr PhiloxCounter philox4x32_round(const PhiloxCounter& c, const PhiloxKey& k) {
  const uint64_t p0 = uint64_t{philox_constants::kMul0} * c[0];
  const uint64_t p1 = uint64_t{philox_constants::kMul1} * c[2];
  return {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
          static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
}

// Philox-4x32 with R rounds (10 is the standard, "Crush-resistant with a safety margin").
template <int R = 10>
constexpr PhiloxCounter philox4x32(PhiloxCounter c, PhiloxKey k) {
  for (int i = 0; i < R; ++i) {
    if (i > 0) {
      k[0] += philox_constants::kWeyl0;
      k[1] += philox_constants::kWeyl1;
    }
    c = philox4x32_round(c, k);
  }
  return c;
}

}  // namespace lobench::precision
