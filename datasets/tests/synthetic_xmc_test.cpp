#include "datasets/synthetic_xmc.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "datasets/sparse_dataset.hpp"

namespace lobench::data {
namespace {

SyntheticXmcConfig small_config() {
  SyntheticXmcConfig c;
  c.rows = 5000;
  c.num_features = 3000;
  c.num_labels = 1000;
  c.labels_per_row = {4.0, CountDistribution::poisson, 1};
  c.features_per_row = {20.0, CountDistribution::poisson, 1};
  c.seed = 42;
  return c;
}

bool identical(const SparseDataset& a, const SparseDataset& b) {
  return a.num_features == b.num_features && a.num_labels == b.num_labels && a.features.offsets == b.features.offsets &&
         a.features.indices == b.features.indices && a.features.values == b.features.values &&
         a.labels.offsets == b.labels.offsets && a.labels.ids == b.labels.ids;
}

// Least-squares slope of log(count) against log(rank) over ranks [lo, hi] (1-based) of the sorted
// label frequencies.
double log_log_slope(std::vector<int64_t> freq, int64_t lo, int64_t hi) {
  std::sort(freq.begin(), freq.end(), std::greater<>());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = static_cast<double>(hi - lo + 1);
  for (int64_t r = lo; r <= hi; ++r) {
    const double x = std::log(static_cast<double>(r));
    const double y = std::log(static_cast<double>(std::max<int64_t>(freq[r - 1], 1)));
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

TEST(DatasetsSyntheticXmc, ShapesAndMeans) {
  const SyntheticXmcConfig c = small_config();
  const SparseDataset d = generate_synthetic_xmc(c);
  EXPECT_NO_THROW(d.validate());
  EXPECT_EQ(d.rows(), c.rows);
  EXPECT_EQ(d.num_features, c.num_features);
  EXPECT_EQ(d.num_labels, c.num_labels);
  const DatasetSummary s = summarize(d);
  EXPECT_NEAR(s.mean_labels_per_row, 4.0, 0.1);     // sd of the mean ~ sqrt(3/5000) = 0.025
  EXPECT_NEAR(s.mean_features_per_row, 20.0, 0.3);  // sd ~ 0.06
  EXPECT_EQ(s.rows_without_labels, 0);              // min 1
  // Rows are unit-norm with positive values.
  for (int64_t r = 0; r < 50; ++r) {
    double n2 = 0;
    for (float v : d.features.row_values(r)) {
      EXPECT_GT(v, 0.0f);
      n2 += double(v) * v;
    }
    EXPECT_NEAR(n2, 1.0, 1e-5);
  }
}

TEST(DatasetsSyntheticXmc, BinaryValuesWithoutNormalisation) {
  SyntheticXmcConfig c = small_config();
  c.rows = 300;
  c.values = FeatureValues::binary;
  c.normalize_rows = false;
  const SparseDataset d = generate_synthetic_xmc(c);
  for (float v : d.features.values) ASSERT_EQ(v, 1.0f);
  // Same structure as the default (values are the only difference).
  const SparseDataset ref = generate_synthetic_xmc_rows(small_config(), 0, 300);
  EXPECT_EQ(d.features.indices, ref.features.indices);
  EXPECT_EQ(d.labels.ids, ref.labels.ids);
}

TEST(DatasetsSyntheticXmc, DeterministicInTheSeedAndIndependentOfRowSplits) {
  const SyntheticXmcConfig c = small_config();
  const SparseDataset a = generate_synthetic_xmc(c);
  const SparseDataset b = generate_synthetic_xmc(c);
  EXPECT_TRUE(identical(a, b));
  // Row i depends on (seed, i) only: generating in two pieces (across a block boundary) gives the same rows.
  const SparseDataset p1 = generate_synthetic_xmc_rows(c, 0, 2345);
  const SparseDataset p2 = generate_synthetic_xmc_rows(c, 2345, c.rows - 2345);
  ASSERT_EQ(p1.rows() + p2.rows(), a.rows());
  for (int64_t r : {int64_t{0}, int64_t{2344}, int64_t{2345}, int64_t{4999}}) {
    const SparseDataset& p = r < 2345 ? p1 : p2;
    const int64_t rr = r < 2345 ? r : r - 2345;
    EXPECT_TRUE(std::ranges::equal(p.labels.row(rr), a.labels.row(r))) << r;
    EXPECT_TRUE(std::ranges::equal(p.features.row_indices(rr), a.features.row_indices(r))) << r;
    EXPECT_TRUE(std::ranges::equal(p.features.row_values(rr), a.features.row_values(r))) << r;
  }
  SyntheticXmcConfig other = c;
  other.seed = 43;
  EXPECT_FALSE(identical(a, generate_synthetic_xmc(other)));
  // The split: train is rows [0, rows), test the next rows of the same stream.
  const TrainTest tt = generate_synthetic_xmc_split(c, 100);
  EXPECT_TRUE(identical(tt.train, a));
  EXPECT_EQ(tt.test.rows(), 100);
  EXPECT_TRUE(identical(tt.test, generate_synthetic_xmc_rows(c, c.rows, 100)));
}

TEST(DatasetsSyntheticXmc, LabelFrequenciesFollowThePowerLaw) {
  for (const auto& [exponent, lo, hi] : {std::tuple{0.6, 5, 500}, std::tuple{1.0, 5, 500}, std::tuple{1.5, 10, 150}}) {
    SyntheticXmcConfig c;
    c.rows = 50000;
    c.num_features = 2000;
    c.num_labels = 20000;
    c.label_exponent = exponent;
    c.labels_per_row = {4.0, CountDistribution::poisson, 1};
    c.features_per_row = {5.0, CountDistribution::poisson, 1};
    c.seed = 7;
    const SparseDataset d = generate_synthetic_xmc(c);
    const double slope = log_log_slope(label_frequencies(d), lo, hi);
    EXPECT_NEAR(slope, -exponent, 0.05) << "exponent " << exponent;  // observed within 0.02 over seeds
  }
}

TEST(DatasetsSyntheticXmc, PopularityOrderFollowsIdsWithoutShuffle) {
  SyntheticXmcConfig c = small_config();
  c.shuffle_ids = false;
  const auto freq = label_frequencies(generate_synthetic_xmc(c));
  EXPECT_EQ(std::max_element(freq.begin(), freq.end()) - freq.begin(), 0);
  EXPECT_GT(freq[0], freq[10]);
  EXPECT_GT(freq[10], freq[500]);
  const auto ids = synthetic_label_ids_by_rank(c);
  EXPECT_EQ(ids[0], 0);
  EXPECT_EQ(ids[999], 999);
  // With shuffling the most frequent label is the id of rank 0.
  const SyntheticXmcConfig s = small_config();
  const auto sfreq = label_frequencies(generate_synthetic_xmc(s));
  EXPECT_EQ(std::max_element(sfreq.begin(), sfreq.end()) - sfreq.begin(), synthetic_label_ids_by_rank(s)[0]);
}

// P@1 of an oracle that scores each label by the summed values of its prototype features in the row.
double prototype_oracle_p_at_1(const SyntheticXmcConfig& c, const SparseDataset& d) {
  std::unordered_multimap<int32_t, int32_t> labels_of_feature;
  for (int32_t l = 0; l < c.num_labels; ++l) {
    for (int32_t j = 0; j < c.prototypes_per_label; ++j) labels_of_feature.emplace(synthetic_prototype(c, l, j), l);
  }
  int64_t hits = 0;
  for (int64_t r = 0; r < d.rows(); ++r) {
    std::unordered_map<int32_t, double> score;
    const auto idx = d.features.row_indices(r);
    const auto val = d.features.row_values(r);
    for (size_t k = 0; k < idx.size(); ++k) {
      auto [b, e] = labels_of_feature.equal_range(idx[k]);
      for (; b != e; ++b) score[b->second] += val[k];
    }
    int32_t best = -1;
    double best_score = 0;
    for (const auto& [l, s] : score) {
      if (s > best_score || (s == best_score && l < best)) {
        best = l;
        best_score = s;
      }
    }
    const auto y = d.labels.row(r);
    if (best >= 0 && std::binary_search(y.begin(), y.end(), best)) ++hits;
  }
  return static_cast<double>(hits) / static_cast<double>(d.rows());
}

TEST(DatasetsSyntheticXmc, LabelsAreLearnableFromFeatures) {
  SyntheticXmcConfig c = small_config();
  c.rows = 2000;
  const double with_signal = prototype_oracle_p_at_1(c, generate_synthetic_xmc(c));
  SyntheticXmcConfig noise = c;
  noise.signal_fraction = 0.0;
  const double without = prototype_oracle_p_at_1(noise, generate_synthetic_xmc(noise));
  // Most popular label alone: p_1 = 1 / H(1000) ~ 0.13 per draw, ~0.4 of rows contain it at 4 labels/row;
  // the oracle without signal does far worse than that, with signal far better.
  EXPECT_GT(with_signal, 0.8);
  EXPECT_LT(without, 0.1);
}

TEST(DatasetsSyntheticXmc, CountDistributions) {
  Rng rng(stream_key(1, 0, 0));
  const CountSpec fixed{3.4, CountDistribution::fixed, 1};
  const CountSpec geo{6.0, CountDistribution::geometric, 2, 50};
  double sum = 0;
  int64_t mx = 0, mn = 1000;
  for (int i = 0; i < 100000; ++i) {
    EXPECT_EQ(fixed.draw(rng), 3);
    const int64_t g = geo.draw(rng);
    sum += static_cast<double>(g);
    mx = std::max(mx, g);
    mn = std::min(mn, g);
  }
  EXPECT_EQ(mn, 2);
  EXPECT_EQ(mx, 50);                      // clamped
  EXPECT_NEAR(sum / 100000, 6.0, 0.1);    // clamping at 50 removes ~ 0.02 of the mean
}

TEST(DatasetsSyntheticXmc, AppendRandomLabelsKeepsTheDataOtherwiseIdentical) {
  const SyntheticXmcConfig c = small_config();
  const SparseDataset base = generate_synthetic_xmc(c);
  SparseDataset grown = base;
  append_random_labels(grown, 2'000'000);
  EXPECT_EQ(grown.num_labels, 2'001'000);
  EXPECT_EQ(grown.labels.ids, base.labels.ids);
  EXPECT_EQ(grown.labels.offsets, base.labels.offsets);
  EXPECT_EQ(grown.features.values, base.features.values);
  EXPECT_NO_THROW(grown.validate());

  SparseDataset rare = base;
  rare.label_names.assign(static_cast<size_t>(rare.num_labels), "x");
  append_random_labels(rare, 100000, 0.01, 5);  // ~1000 new positives
  EXPECT_NO_THROW(rare.validate());
  EXPECT_EQ(rare.label_names.back(), "appended_100999");
  const auto freq = label_frequencies(rare);
  const int64_t new_pos = std::accumulate(freq.begin() + 1000, freq.end(), int64_t{0});
  EXPECT_NEAR(static_cast<double>(new_pos), 1000.0, 150.0);  // Poisson sd ~32
  EXPECT_EQ(rare.labels.nnz(), base.labels.nnz() + new_pos);
  for (int64_t r = 0; r < rare.rows(); ++r) {  // old labels of every row unchanged, new ones after them
    const auto o = base.labels.row(r);
    const auto n = rare.labels.row(r);
    ASSERT_GE(n.size(), o.size());
    EXPECT_TRUE(std::equal(o.begin(), o.end(), n.begin()));
    for (size_t k = o.size(); k < n.size(); ++k) EXPECT_GE(n[k], 1000);
  }
  SparseDataset again = base;
  again.label_names.assign(static_cast<size_t>(again.num_labels), "x");
  append_random_labels(again, 100000, 0.01, 5);
  EXPECT_EQ(again.labels.ids, rare.labels.ids);  // deterministic in the seed
  EXPECT_THROW(append_random_labels(again, -1), std::invalid_argument);
  EXPECT_THROW(append_random_labels(again, int64_t{1} << 31), std::invalid_argument);
}

TEST(DatasetsSyntheticXmc, RejectsImpossibleConfigs) {
  SyntheticXmcConfig c = small_config();
  c.num_labels = 0;
  EXPECT_THROW(generate_synthetic_xmc(c), std::invalid_argument);
  c = small_config();
  c.signal_fraction = 1.5;
  EXPECT_THROW(generate_synthetic_xmc(c), std::invalid_argument);
  c = small_config();
  c.labels_per_row = {0.5, CountDistribution::poisson, 1};  // mean below min
  EXPECT_THROW(generate_synthetic_xmc(c), std::invalid_argument);
  c = small_config();
  c.num_features = int64_t{1} << 31;
  EXPECT_THROW(generate_synthetic_xmc(c), std::invalid_argument);
}

TEST(DatasetsSyntheticXmc, TinyVocabulariesStillGiveDistinctLabels) {
  SyntheticXmcConfig c = small_config();
  c.rows = 200;
  c.num_labels = 3;
  c.num_features = 4;
  c.labels_per_row = {5.0, CountDistribution::fixed, 1};    // more than V: clamped to 3
  c.features_per_row = {10.0, CountDistribution::fixed, 1};  // more than F: clamped to 4
  c.label_exponent = 3.0;
  const SparseDataset d = generate_synthetic_xmc(c);
  EXPECT_NO_THROW(d.validate());
  EXPECT_EQ(d.labels.nnz(), 600);
  EXPECT_EQ(d.features.nnz(), 800);
}

}  // namespace
}  // namespace lobench::data
