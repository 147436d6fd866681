#include "datasets/alias_table.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace lobench::data {

AliasTable::AliasTable(std::span<const double> weights) {
  const size_t n = weights.size();
  if (n == 0 || n > UINT32_MAX) throw std::invalid_argument("AliasTable: need between 1 and 2^32 weights");
  double total = 0;
  for (double w : weights) {
    if (!(w >= 0) || !std::isfinite(w)) throw std::invalid_argument("AliasTable: weights must be finite and >= 0");
    total += w;
  }
  if (total <= 0) throw std::invalid_argument("AliasTable: weights sum to zero");
  std::vector<double> scaled(n);
  std::vector<uint32_t> small, large;
  for (size_t i = 0; i < n; ++i) {
    scaled[i] = weights[i] * static_cast<double>(n) / total;
    (scaled[i] < 1.0 ? small : large).push_back(static_cast<uint32_t>(i));
  }
  prob_.assign(n, 1.0f);
  alias_.resize(n);
  for (size_t i = 0; i < n; ++i) alias_[i] = static_cast<uint32_t>(i);
  while (!small.empty() && !large.empty()) {
    const uint32_t s = small.back();
    small.pop_back();
    const uint32_t l = large.back();
    prob_[s] = static_cast<float>(scaled[s]);
    alias_[s] = l;
    scaled[l] = (scaled[l] + scaled[s]) - 1.0;
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // Leftovers are 1 up to rounding: they keep prob 1 (always themselves).
}

double AliasTable::probability(uint32_t i) const {
  const double n = static_cast<double>(prob_.size());
  // Quantised as sample() sees it: u takes the values k / 2^24.
  const auto q = [](float p) { return std::min(1.0, std::ceil(static_cast<double>(p) * 0x1.0p24) * 0x1.0p-24); };
  double p = q(prob_[i]);
  for (size_t j = 0; j < prob_.size(); ++j) {
    if (alias_[j] == i && j != i) p += 1.0 - q(prob_[j]);
  }
  return p / n;
}

std::vector<double> zipf_weights(int64_t n, double exponent) {
  std::vector<double> w(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) w[r] = std::pow(static_cast<double>(r + 1), -exponent);
  return w;
}

}  // namespace lobench::data
