// Label propensities for propensity-scored metrics (Jain, Prabhu & Varma, KDD 2016):
//
//   p_l = 1 / (1 + C · (N_l + B)^(−A)),   C = (ln N − 1) · (B + 1)^A
//
// N: number of training rows, N_l: training rows where label l is positive. Rare labels get small
// propensities (large weights 1/p_l), so PSP@k rewards getting the tail right. Defaults A = 0.55,
// B = 1.5 (the paper's general setting); the XMC literature uses A = 0.6, B = 2.6 for Amazon sets and
// A = 0.5, B = 0.4 for Wikipedia sets (xmc_presets.hpp carries them per preset).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace lobench::data {

struct PropensityParams {
  double a = 0.55;
  double b = 1.5;
};

// Throws std::invalid_argument when num_rows < 3 (ln N − 1 must be positive), a frequency is negative,
// or A < 0 or B <= 0.
std::vector<double> propensities(std::span<const int64_t> label_frequencies, int64_t num_rows,
                                 PropensityParams params = {});
// 1 / p_l = 1 + C · (N_l + B)^(−A): the weights PSP@k uses.
std::vector<double> inverse_propensities(std::span<const int64_t> label_frequencies, int64_t num_rows,
                                         PropensityParams params = {});

}  // namespace lobench::data
