// Histogram of gradient magnitudes on a log2 scale, exact at every power of two, so that "what fraction
// of the gradients underflows fp8 format X" is a sum of whole bins (ELMO's argument for keeping the
// gradients in bf16: notes/elmo.md §5).
//
// Bins: [0] exact zeros; [1] 0 < |g| < 2^kMinExp; then kSub bins per octave 2^e ≤ |g| < 2^(e+1) for
// e in [kMinExp, kMaxExp), split at 2^e·(1 + q/kSub) (linear in the mantissa); then |g| ≥ 2^kMaxExp
// (finite); last: NaN and inf.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace lobench::train {

struct GradientHistogram {
  static constexpr int kMinExp = -48;
  static constexpr int kMaxExp = 16;
  static constexpr int kSub = 4;
  static constexpr int kOctaveBins = (kMaxExp - kMinExp) * kSub;
  static constexpr int kBins = 2 + kOctaveBins + 2;
  static constexpr int kZero = 0, kTiny = 1, kFirstOctave = 2, kHuge = 2 + kOctaveBins, kNonFinite = kHuge + 1;

  std::vector<int64_t> counts = std::vector<int64_t>(kBins, 0);

  static int bin(float x) {
    const uint32_t bits = std::bit_cast<uint32_t>(x) & 0x7FFFFFFFu;
    if (bits == 0) return kZero;
    const int biased = int(bits >> 23);
    if (biased == 255) return kNonFinite;
    const int e = biased - 127;  // fp32 subnormals have biased 0: far below kMinExp
    if (biased == 0 || e < kMinExp) return kTiny;
    if (e >= kMaxExp) return kHuge;
    const int q = int((bits >> (23 - 2)) & 3u) * kSub / 4;  // top mantissa bits -> sub-bin (kSub <= 4)
    return kFirstOctave + (e - kMinExp) * kSub + q;
  }
  void add(const float* g, int64_t n) {
    for (int64_t i = 0; i < n; ++i) ++counts[size_t(bin(g[i]))];
  }
  void merge(const GradientHistogram& o) {
    for (int i = 0; i < kBins; ++i) counts[size_t(i)] += o.counts[size_t(i)];
  }
  void clear() { std::fill(counts.begin(), counts.end(), 0); }
  int64_t total() const {
    int64_t s = 0;
    for (int64_t c : counts) s += c;
    return s;
  }
  bool empty() const { return total() == 0; }
  // Finite values with 0 < |g| < 2^e (e in [kMinExp, kMaxExp]).
  int64_t nonzero_below_pow2(int e) const {
    int64_t s = counts[kTiny];
    for (int i = 0; i < (e - kMinExp) * kSub; ++i) s += counts[size_t(kFirstOctave + i)];
    return s;
  }
  // Finite values with |g| ≥ 2^e.
  int64_t at_or_above_pow2(int e) const {
    int64_t s = counts[kHuge];
    for (int i = (e - kMinExp) * kSub; i < kOctaveBins; ++i) s += counts[size_t(kFirstOctave + i)];
    return s;
  }
  // Lower edges (log2) of the octave bins, kOctaveBins + 1 values (the last is kMaxExp).
  static std::vector<double> octave_edges_log2() {
    std::vector<double> e;
    for (int o = kMinExp; o < kMaxExp; ++o)
      for (int q = 0; q < kSub; ++q) e.push_back(double(o) + std::log2(1.0 + double(q) / kSub));
    e.push_back(double(kMaxExp));
    return e;
  }
};

}  // namespace lobench::train
