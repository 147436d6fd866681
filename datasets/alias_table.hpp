// Sampling from a fixed discrete distribution in O(1) per draw (Walker's alias method, built with
// Vose's stable two-list construction). 8 bytes per outcome; used for the Zipf label and feature
// popularities of the synthetic generator.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "datasets/random.hpp"

namespace lobench::data {

class AliasTable {
 public:
  AliasTable() = default;
  // weights: non-negative, finite, not all zero (std::invalid_argument otherwise); at most 2^32 outcomes.
  explicit AliasTable(std::span<const double> weights);

  uint32_t sample(Rng& rng) const {
    const uint64_t r = rng.next();
    const auto column = static_cast<uint32_t>((static_cast<unsigned __int128>(r) * prob_.size()) >> 64);
    const float u = static_cast<float>(r & 0xFFFFFF) * 0x1.0p-24f;  // low 24 bits
    return u < prob_[column] ? column : alias_[column];
  }
  size_t size() const { return prob_.size(); }

  // Probability of outcome i as the table represents it (for tests).
  double probability(uint32_t i) const;

 private:
  std::vector<float> prob_;
  std::vector<uint32_t> alias_;
};

// Weights of ranks 1..n under a Zipf law: w_r = r^(-exponent).
std::vector<double> zipf_weights(int64_t n, double exponent);

}  // namespace lobench::data
