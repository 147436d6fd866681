// Seeded synthetic XMC data with the shape of real sets (power-law label frequencies, a few labels per
// row, sparse bag-of-words features) and labels that can be learned from the features.
//
// Generative model (all draws from counter-keyed streams: row i depends on (seed, i) only, so results
// do not depend on threads, and train/test rows are disjoint stretches of one stream):
//
// 1. Popularity. Labels have popularity ranks r = 1..V with weight r^(-label_exponent) (Zipf); features
//    likewise with feature_exponent (background words). With shuffle_ids the id of each rank is a
//    seeded random permutation (head labels spread over the id range, as after lexicographic label
//    maps; set it false for id = rank - 1, head labels first, as ELMO's label_sort=True).
// 2. Prototypes. Label l owns prototypes_per_label feature ids, drawn uniformly from [0, F) by a hash of
//    (seed, l, j) — its "topic words".
// 3. Labels of row i: k ~ labels_per_row (min + Fixed/Poisson/Geometric with the given mean, clamped to
//    [min, min(max, V)]); k distinct labels drawn by popularity (repeated draws redrawn; so for very
//    head-heavy settings the head saturates: a label cannot occur twice in a row).
// 4. Features of row i: n ~ features_per_row distinct features (clamped to F). Tokens are drawn until n
//    distinct features are seen: with probability signal_fraction (if the row has labels) a token is a
//    prototype of one of the row's labels (label and prototype uniform), otherwise a background
//    feature by popularity. A feature's value is 1 + ln(token count) (FeatureValues::log_tf) or 1
//    (binary), and with normalize_rows each row is scaled to unit L2 norm (tf-idf-like, as XMC BoW
//    files are).
//
// So a row's features are signal_fraction prototypes of its labels plus Zipf noise: a linear
// classifier can learn label l from its prototype features, and P@k of an oracle that scores labels by
// prototype overlap is far above chance (tested).
//
// append_random_labels grows V as ELMO does for its memory-versus-labels figure: new label ids after
// the existing ones, positive in (almost) no rows, everything else unchanged.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "datasets/random.hpp"
#include "datasets/sparse_dataset.hpp"

namespace lobench::data {

enum class CountDistribution {
  fixed,      // always round(mean)
  poisson,    // min + Poisson(mean - min)
  geometric,  // min + Geometric(mean - min): a heavier tail (mode at min)
};

struct CountSpec {
  double mean = 1.0;
  CountDistribution distribution = CountDistribution::poisson;
  int64_t min = 1;
  int64_t max = std::numeric_limits<int32_t>::max();

  int64_t draw(Rng& rng) const;
};

enum class FeatureValues {
  log_tf,  // 1 + ln(token count): tf-like weights, as XMC BoW files (default)
  binary,  // 1 for every present feature, as the Mulan sets (bibtex, delicious)
};

struct SyntheticXmcConfig {
  int64_t rows = 10000;
  int64_t num_features = 20000;
  int64_t num_labels = 10000;
  double label_exponent = 1.0;
  CountSpec labels_per_row{5.0};
  CountSpec features_per_row{30.0};
  double feature_exponent = 1.0;
  int32_t prototypes_per_label = 8;
  double signal_fraction = 0.5;
  bool shuffle_ids = true;
  FeatureValues values = FeatureValues::log_tf;
  bool normalize_rows = true;  // scale each row to unit L2 norm (after the values above)
  uint64_t seed = 0;
};

// Rows [0, c.rows). Throws std::invalid_argument for impossible configurations (sizes < 1 or >= 2^31,
// mean < min, fractions outside [0, 1], ...).
SparseDataset generate_synthetic_xmc(const SyntheticXmcConfig& c);
// Rows [first_row, first_row + count) of the same stream.
SparseDataset generate_synthetic_xmc_rows(const SyntheticXmcConfig& c, int64_t first_row, int64_t count);
// Train = rows [0, c.rows), test = rows [c.rows, c.rows + test_rows): same distribution, disjoint draws.
TrainTest generate_synthetic_xmc_split(const SyntheticXmcConfig& c, int64_t test_rows);

// The model's ground truth, for tests and oracle experiments.
// Label id of each popularity rank (index 0 = most popular).
std::vector<int32_t> synthetic_label_ids_by_rank(const SyntheticXmcConfig& c);
// Feature id of prototype j (0 <= j < prototypes_per_label) of label id l.
int32_t synthetic_prototype(const SyntheticXmcConfig& c, int32_t label, int32_t j);

// Appends extra_labels label ids [V, V + extra_labels) to d. Each new label is positive in
// Poisson(positives_per_label) distinct random rows (0: never; the default), drawn from seed; rows,
// features and existing labels are unchanged; label names, when present, get "appended_<id>".
void append_random_labels(SparseDataset& d, int64_t extra_labels, double positives_per_label = 0.0,
                          uint64_t seed = 0);

}  // namespace lobench::data
