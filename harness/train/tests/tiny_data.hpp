// Small synthetic XMC splits for the train tests (datasets' generator: learnable from the features).
#pragma once

#include "datasets/synthetic_xmc.hpp"

namespace lobench::train::testing {

inline data::SyntheticXmcConfig tiny_xmc_config(int64_t train_rows = 3000, int64_t labels = 200, uint64_t seed = 5) {
  data::SyntheticXmcConfig c;
  c.rows = train_rows;
  c.num_features = 1000;
  c.num_labels = labels;
  c.labels_per_row.mean = 3.0;
  c.features_per_row.mean = 20.0;
  c.prototypes_per_label = 6;
  c.signal_fraction = 0.6;
  c.seed = seed;
  return c;
}

inline data::TrainTest tiny_xmc(int64_t train_rows = 3000, int64_t test_rows = 1000, int64_t labels = 200,
                                uint64_t seed = 5) {
  return data::generate_synthetic_xmc_split(tiny_xmc_config(train_rows, labels, seed), test_rows);
}

}  // namespace lobench::train::testing
