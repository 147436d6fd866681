#include "datasets/propensity.hpp"

#include <cmath>
#include <stdexcept>

namespace lobench::data {

std::vector<double> inverse_propensities(std::span<const int64_t> label_frequencies, int64_t num_rows,
                                         PropensityParams params) {
  if (num_rows < 3) throw std::invalid_argument("propensities: need at least 3 training rows (ln N > 1)");
  if (!(params.a >= 0) || !(params.b > 0)) throw std::invalid_argument("propensities: need A >= 0 and B > 0");
  const double c = (std::log(static_cast<double>(num_rows)) - 1.0) * std::pow(params.b + 1.0, params.a);
  std::vector<double> w(label_frequencies.size());
  for (size_t l = 0; l < w.size(); ++l) {
    if (label_frequencies[l] < 0) throw std::invalid_argument("propensities: negative label frequency");
    w[l] = 1.0 + c * std::pow(static_cast<double>(label_frequencies[l]) + params.b, -params.a);
  }
  return w;
}

std::vector<double> propensities(std::span<const int64_t> label_frequencies, int64_t num_rows,
                                 PropensityParams params) {
  std::vector<double> p = inverse_propensities(label_frequencies, num_rows, params);
  for (double& x : p) x = 1.0 / x;
  return p;
}

}  // namespace lobench::data
