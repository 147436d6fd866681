// Seeded random numbers for the generators, with results fixed by the code here (not by the standard
// library's distributions, whose output differs between implementations): SplitMix64 for seeding and
// hashing, xoshiro256** (Blackman & Vigna) for streams, and the few distributions the generators need.
// Streams are keyed (seed, purpose, index), so any row can be generated independently of the others
// and results do not depend on the number of threads.
#pragma once

#include <cmath>
#include <cstdint>

namespace lobench::data {

// SplitMix64 finaliser: a bijective 64-bit mix.
constexpr uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A key for (seed, purpose, index) triples; different triples give unrelated keys.
constexpr uint64_t stream_key(uint64_t seed, uint64_t purpose, uint64_t index) {
  return mix64(mix64(mix64(seed) ^ purpose) + index);
}

class Rng {
 public:
  explicit Rng(uint64_t key) {
    uint64_t x = key;
    for (uint64_t& w : s_) {
      x += 0x9E3779B97F4A7C15ull;
      w = mix64(x);
    }
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in (0, 1]: safe for log().
  double uniform_pos() { return (static_cast<double>(next() >> 11) + 1.0) * 0x1.0p-53; }

  // Uniform integer in [0, n), n > 0 (multiply-shift; bias below n / 2^64).
  uint64_t below(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64); }

  double normal() {  // Box-Muller, one value per call
    const double u = uniform_pos();
    const double v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }

  // Poisson(mean): exact by inversion for mean <= 64, normal approximation (rounded, >= 0) above.
  int64_t poisson(double mean) {
    if (mean <= 0) return 0;
    if (mean > 64) {
      const double x = std::round(mean + std::sqrt(mean) * normal());
      return x < 0 ? 0 : static_cast<int64_t>(x);
    }
    double p = std::exp(-mean);
    double cdf = p;
    const double u = uniform();
    int64_t k = 0;
    while (u > cdf && k < 1000) {
      ++k;
      p *= mean / static_cast<double>(k);
      cdf += p;
    }
    return k;
  }

  // Geometric on {0, 1, ...} with the given mean (success probability 1 / (mean + 1)).
  int64_t geometric(double mean) {
    if (mean <= 0) return 0;
    const double q = mean / (mean + 1.0);  // failure probability
    return static_cast<int64_t>(std::floor(std::log(uniform_pos()) / std::log(q)));
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace lobench::data
