// Named shapes of public XMC benchmarks, for the synthetic generator (the real files are hundreds of MB
// to GB and not available offline). Sources and certainty are given per preset in xmc_presets.cpp and
// in README.md; feature counts per row and the label-frequency exponent are estimates, not published
// statistics.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "datasets/synthetic_xmc.hpp"

namespace lobench::data {

struct XmcPreset {
  std::string_view name;
  int64_t train_rows;
  int64_t test_rows;
  int64_t num_features;       // BoW vocabulary of the repository's feature files
  int64_t num_labels;
  double labels_per_row;      // mean over training rows
  double features_per_row;    // mean nonzeros per BoW row (estimate)
  double label_exponent;      // Zipf exponent for the generator (estimate)
  double propensity_a;        // PSP propensity constants conventionally used for this set
  double propensity_b;
  std::string_view source;    // where the numbers come from, and how sure they are
};

std::span<const XmcPreset> xmc_presets();
// Case-sensitive lookup by name (e.g. "Amazon-3M"); std::invalid_argument listing the names otherwise.
const XmcPreset& xmc_preset(std::string_view name);

// A generator configuration with the preset's shape. row_scale multiplies the training rows (labels,
// features and per-row means are kept), e.g. 0.01 for a quick run; at least one row is kept.
SyntheticXmcConfig synthetic_config(const XmcPreset& p, double row_scale = 1.0, uint64_t seed = 0);
// Test rows scaled the same way.
int64_t scaled_test_rows(const XmcPreset& p, double row_scale = 1.0);

}  // namespace lobench::data
