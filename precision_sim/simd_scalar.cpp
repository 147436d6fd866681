// Portable kernels: a loop over round_hd / encode_hd, the host/device scalar implementation of
// device_rounding.hpp, the same code CUDA kernels call. They define the results the SIMD
// kernels must reproduce, and run heads/tails for them. Random words are produced one Philox call per 4 elements
// by filling whole 64-element groups at a time.
#include <cstring>

#include "precision_sim/detail/kernels.hpp"
#include "precision_sim/stochastic.hpp"

namespace lobench::precision {

void random_words(uint64_t seed, uint64_t stream, uint64_t first, std::span<uint32_t> out) {
  const PhiloxKey key = philox_key(seed);
  size_t i = 0;
  const size_t n = out.size();
  while (i < n) {
    const uint64_t g = first + i;
    if (g % 64 == 0 && n - i >= 64) {
      for (uint64_t j = 0; j < 16; ++j) {
        const PhiloxCounter w = philox4x32(philox_counter(g / 64 * 16 + j, stream), key);
        for (int lane = 0; lane < 4; ++lane) out[i + 16 * lane + j] = w[lane];
      }
      i += 64;
    } else {
      out[i] = random_word(seed, stream, g);
      ++i;
    }
  }
}

namespace detail {

namespace {

// Calls fn(i, word) for i in [0, n), with the element's random word for stochastic modes.
template <typename Fn>
inline void for_each_word(size_t n, const KernelArgs& args, Fn&& fn) {
  if (!is_stochastic(args.mode)) {
    for (size_t i = 0; i < n; ++i) fn(i, 0u);
    return;
  }
  // Chunks end on global multiples of 64 so that random_words fills whole groups after the first.
  uint32_t words[256];
  for (size_t i = 0, len = 0; i < n; i += len) {
    len = 256 - static_cast<size_t>((args.first_index + i) % 64);
    if (len > n - i) len = n - i;
    random_words(args.seed, args.stream, args.first_index + i, std::span<uint32_t>(words, len));
    for (size_t j = 0; j < len; ++j) fn(i + j, words[j]);
  }
}

}  // namespace

void scalar_round(const float* in, float* out, size_t n, const KernelArgs& args) {
  const Plan& p = *args.plan;
  if (p.identity) {
    if (in != out) std::memmove(out, in, n * sizeof(float));
    return;
  }
  for_each_word(n, args, [&](size_t i, uint32_t w) {
    out[i] = round_hd(in[i], p, args.mode, w, args.sr_bits);
  });
}

void scalar_encode8(const float* in, uint8_t* out, size_t n, const KernelArgs& args) {
  const Plan& p = *args.plan;
  for_each_word(n, args, [&](size_t i, uint32_t w) {
    out[i] = static_cast<uint8_t>(encode_hd(in[i], p, args.mode, w, args.sr_bits));
  });
}

void scalar_encode16(const float* in, uint16_t* out, size_t n, const KernelArgs& args) {
  const Plan& p = *args.plan;
  for_each_word(n, args, [&](size_t i, uint32_t w) {
    out[i] = static_cast<uint16_t>(encode_hd(in[i], p, args.mode, w, args.sr_bits));
  });
}

const KernelTable& scalar_kernels() {
  static const KernelTable table{"scalar", scalar_round, scalar_encode8, scalar_encode16};
  return table;
}

}  // namespace detail
}  // namespace lobench::precision
