#include "datasets/synthetic_xmc.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "datasets/alias_table.hpp"

namespace lobench::data {

namespace {

// Stream purposes (any distinct constants).
constexpr uint64_t kRowStream = 0x726f7773;        // "rows"
constexpr uint64_t kLabelPermStream = 0x6c61626c;  // "labl"
constexpr uint64_t kFeaturePermStream = 0x66656174;
constexpr uint64_t kPrototypeStream = 0x70726f74;
constexpr uint64_t kAppendStream = 0x61707064;

constexpr int64_t kBlockRows = 2048;

// Distinct keys with counts; reset in O(used).
class SmallCounter {
 public:
  void reset(int64_t expected) {
    for (uint32_t slot : used_) keys_[slot] = -1;
    used_.clear();
    size_t cap = 16;
    while (cap < static_cast<size_t>(expected) * 2 + 2) cap *= 2;
    if (cap > keys_.size()) {
      keys_.assign(cap, -1);
      counts_.assign(cap, 0);
    }
  }
  // Returns true when key is new.
  bool add(int32_t key) {
    const size_t mask = keys_.size() - 1;
    size_t slot = static_cast<size_t>(mix64(static_cast<uint64_t>(key))) & mask;
    while (keys_[slot] != -1 && keys_[slot] != key) slot = (slot + 1) & mask;
    if (keys_[slot] == key) {
      ++counts_[slot];
      return false;
    }
    keys_[slot] = key;
    counts_[slot] = 1;
    used_.push_back(static_cast<uint32_t>(slot));
    return true;
  }
  int64_t size() const { return static_cast<int64_t>(used_.size()); }
  // Keys and counts in insertion order.
  int32_t key(int64_t i) const { return keys_[used_[i]]; }
  int32_t count(int64_t i) const { return counts_[used_[i]]; }

 private:
  std::vector<int32_t> keys_;
  std::vector<int32_t> counts_;
  std::vector<uint32_t> used_;
};

void check_config(const SyntheticXmcConfig& c) {
  const auto fail = [](const std::string& what) { throw std::invalid_argument("SyntheticXmcConfig: " + what); };
  if (c.rows < 0) fail("rows < 0");
  if (c.num_features < 1 || c.num_features > INT32_MAX) fail("num_features outside [1, 2^31)");
  if (c.num_labels < 1 || c.num_labels > INT32_MAX) fail("num_labels outside [1, 2^31)");
  if (!(c.label_exponent >= 0) || !(c.feature_exponent >= 0)) fail("exponents must be >= 0");
  if (!(c.signal_fraction >= 0 && c.signal_fraction <= 1)) fail("signal_fraction outside [0, 1]");
  if (c.prototypes_per_label < 0) fail("prototypes_per_label < 0");
  for (const CountSpec* s : {&c.labels_per_row, &c.features_per_row}) {
    if (s->min < 0 || s->max < s->min) fail("count spec needs 0 <= min <= max");
    if (!(s->mean >= static_cast<double>(s->min))) fail(fmt::format("count spec mean {} below min {}", s->mean, s->min));
  }
}

std::vector<int32_t> id_of_rank(int64_t n, bool shuffle, uint64_t seed, uint64_t purpose) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  std::iota(ids.begin(), ids.end(), 0);
  if (shuffle) {
    Rng rng(stream_key(seed, purpose, 0));
    for (int64_t i = n - 1; i > 0; --i) std::swap(ids[i], ids[rng.below(static_cast<uint64_t>(i) + 1)]);
  }
  return ids;
}

int32_t prototype_of(uint64_t seed, int64_t num_features, int32_t label, int32_t j) {
  const uint64_t h = mix64(stream_key(seed, kPrototypeStream, static_cast<uint64_t>(label)) + static_cast<uint64_t>(j));
  return static_cast<int32_t>((static_cast<unsigned __int128>(h) * static_cast<uint64_t>(num_features)) >> 64);
}

class Generator {
 public:
  explicit Generator(const SyntheticXmcConfig& c)
      : c_(c),
        labels_(zipf_weights(c.num_labels, c.label_exponent)),
        features_(zipf_weights(c.num_features, c.feature_exponent)),
        label_id_(id_of_rank(c.num_labels, c.shuffle_ids, c.seed, kLabelPermStream)),
        feature_id_(id_of_rank(c.num_features, c.shuffle_ids, c.seed, kFeaturePermStream)) {}

  struct Block {
    std::vector<int32_t> label_counts, feature_counts;  // per row
    std::vector<int32_t> labels, features;
    std::vector<float> values;
  };

  void rows(int64_t first, int64_t count, Block& out) const {
    SmallCounter label_set, feature_set;
    std::vector<int32_t> row_labels;
    std::vector<std::pair<int32_t, float>> row_features;
    for (int64_t i = first; i < first + count; ++i) {
      Rng rng(stream_key(c_.seed, kRowStream, static_cast<uint64_t>(i)));
      // Labels.
      const int64_t V = c_.num_labels;
      const int64_t k = std::min(c_.labels_per_row.draw(rng), V);
      label_set.reset(k);
      for (int64_t attempts = 0; label_set.size() < k && attempts < 32 * k + 64; ++attempts) {
        label_set.add(label_id_[labels_.sample(rng)]);
      }
      if (label_set.size() < k) {  // degenerate settings (k close to V): fill from a random start
        const uint64_t start = rng.below(static_cast<uint64_t>(V));
        for (int64_t r = 0; label_set.size() < k; ++r) label_set.add(label_id_[(start + r) % V]);
      }
      row_labels.clear();
      for (int64_t j = 0; j < label_set.size(); ++j) row_labels.push_back(label_set.key(j));
      // Features.
      const int64_t F = c_.num_features;
      const int64_t n = std::min(c_.features_per_row.draw(rng), F);
      const bool signal = k > 0 && c_.prototypes_per_label > 0 && c_.signal_fraction > 0;
      feature_set.reset(n);
      for (int64_t attempts = 0; feature_set.size() < n && attempts < 32 * n + 64; ++attempts) {
        int32_t f;
        if (signal && rng.uniform() < c_.signal_fraction) {
          const int32_t l = row_labels[rng.below(static_cast<uint64_t>(k))];
          f = prototype_of(c_.seed, F, l, static_cast<int32_t>(rng.below(static_cast<uint64_t>(c_.prototypes_per_label))));
        } else {
          f = feature_id_[features_.sample(rng)];
        }
        feature_set.add(f);
      }
      if (feature_set.size() < n) {
        const uint64_t start = rng.below(static_cast<uint64_t>(F));
        for (int64_t r = 0; feature_set.size() < n; ++r) feature_set.add(static_cast<int32_t>((start + r) % F));
      }
      row_features.clear();
      double norm2 = 0;
      for (int64_t j = 0; j < feature_set.size(); ++j) {
        const double v = c_.values == FeatureValues::binary ? 1.0 : 1.0 + std::log(static_cast<double>(feature_set.count(j)));
        norm2 += v * v;
        row_features.emplace_back(feature_set.key(j), static_cast<float>(v));
      }
      if (c_.normalize_rows && norm2 > 0) {
        const double scale = 1.0 / std::sqrt(norm2);
        for (auto& fv : row_features) fv.second = static_cast<float>(fv.second * scale);
      }
      std::sort(row_labels.begin(), row_labels.end());
      std::sort(row_features.begin(), row_features.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      out.label_counts.push_back(static_cast<int32_t>(row_labels.size()));
      out.labels.insert(out.labels.end(), row_labels.begin(), row_labels.end());
      out.feature_counts.push_back(static_cast<int32_t>(row_features.size()));
      for (const auto& [f, v] : row_features) {
        out.features.push_back(f);
        out.values.push_back(v);
      }
    }
  }

 private:
  const SyntheticXmcConfig& c_;
  AliasTable labels_;
  AliasTable features_;
  std::vector<int32_t> label_id_;
  std::vector<int32_t> feature_id_;
};

}  // namespace

int64_t CountSpec::draw(Rng& rng) const {
  int64_t n = min;
  switch (distribution) {
    case CountDistribution::fixed:
      n = static_cast<int64_t>(std::llround(mean));
      break;
    case CountDistribution::poisson:
      n = min + rng.poisson(mean - static_cast<double>(min));
      break;
    case CountDistribution::geometric:
      n = min + rng.geometric(mean - static_cast<double>(min));
      break;
  }
  return std::clamp(n, min, max);
}

SparseDataset generate_synthetic_xmc_rows(const SyntheticXmcConfig& c, int64_t first_row, int64_t count) {
  check_config(c);
  if (first_row < 0 || count < 0) throw std::invalid_argument("generate_synthetic_xmc_rows: negative range");
  const Generator gen(c);
  const int64_t blocks = (count + kBlockRows - 1) / kBlockRows;
  std::vector<Generator::Block> out(static_cast<size_t>(blocks));
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t begin = first_row + b * kBlockRows;
    gen.rows(begin, std::min(kBlockRows, first_row + count - begin), out[b]);
  }
  SparseDataset d;
  d.num_features = c.num_features;
  d.num_labels = c.num_labels;
  int64_t label_nnz = 0, feature_nnz = 0;
  for (const auto& b : out) {
    label_nnz += static_cast<int64_t>(b.labels.size());
    feature_nnz += static_cast<int64_t>(b.features.size());
  }
  d.labels.offsets.reserve(static_cast<size_t>(count) + 1);
  d.features.offsets.reserve(static_cast<size_t>(count) + 1);
  d.labels.ids.reserve(static_cast<size_t>(label_nnz));
  d.features.indices.reserve(static_cast<size_t>(feature_nnz));
  d.features.values.reserve(static_cast<size_t>(feature_nnz));
  for (auto& b : out) {
    for (int32_t n : b.label_counts) d.labels.offsets.push_back(d.labels.offsets.back() + n);
    for (int32_t n : b.feature_counts) d.features.offsets.push_back(d.features.offsets.back() + n);
    d.labels.ids.insert(d.labels.ids.end(), b.labels.begin(), b.labels.end());
    d.features.indices.insert(d.features.indices.end(), b.features.begin(), b.features.end());
    d.features.values.insert(d.features.values.end(), b.values.begin(), b.values.end());
    b = Generator::Block{};
  }
  return d;
}

SparseDataset generate_synthetic_xmc(const SyntheticXmcConfig& c) { return generate_synthetic_xmc_rows(c, 0, c.rows); }

TrainTest generate_synthetic_xmc_split(const SyntheticXmcConfig& c, int64_t test_rows) {
  return {generate_synthetic_xmc_rows(c, 0, c.rows), generate_synthetic_xmc_rows(c, c.rows, test_rows)};
}

std::vector<int32_t> synthetic_label_ids_by_rank(const SyntheticXmcConfig& c) {
  check_config(c);
  return id_of_rank(c.num_labels, c.shuffle_ids, c.seed, kLabelPermStream);
}

int32_t synthetic_prototype(const SyntheticXmcConfig& c, int32_t label, int32_t j) {
  return prototype_of(c.seed, c.num_features, label, j);
}

void append_random_labels(SparseDataset& d, int64_t extra_labels, double positives_per_label, uint64_t seed) {
  if (extra_labels < 0) throw std::invalid_argument("append_random_labels: extra_labels < 0");
  if (d.num_labels + extra_labels > INT32_MAX) throw std::invalid_argument("append_random_labels: more than 2^31 - 1 labels");
  if (!(positives_per_label >= 0)) throw std::invalid_argument("append_random_labels: positives_per_label < 0");
  const int64_t V0 = d.num_labels;
  const int64_t rows = d.rows();
  if (positives_per_label > 0 && rows > 0) {
    // (row, new label) pairs; new ids exceed all old ones, so each row's set stays sorted when they are
    // appended in label order.
    std::vector<std::pair<int64_t, int32_t>> pairs;
    SmallCounter chosen;
    for (int64_t l = 0; l < extra_labels; ++l) {
      Rng rng(stream_key(seed, kAppendStream, static_cast<uint64_t>(l)));
      const int64_t c = std::min(rng.poisson(positives_per_label), rows);
      chosen.reset(c);
      while (chosen.size() < c) chosen.add(static_cast<int32_t>(rng.below(static_cast<uint64_t>(rows))));
      for (int64_t j = 0; j < chosen.size(); ++j) pairs.emplace_back(chosen.key(j), static_cast<int32_t>(V0 + l));
    }
    std::sort(pairs.begin(), pairs.end());
    LabelSets grown;
    grown.ids.reserve(d.labels.ids.size() + pairs.size());
    grown.offsets.reserve(static_cast<size_t>(rows) + 1);
    size_t p = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const auto old = d.labels.row(r);
      grown.ids.insert(grown.ids.end(), old.begin(), old.end());
      for (; p < pairs.size() && pairs[p].first == r; ++p) grown.ids.push_back(pairs[p].second);
      grown.offsets.push_back(grown.nnz());
    }
    d.labels = std::move(grown);
  }
  if (!d.label_names.empty()) {
    d.label_names.reserve(static_cast<size_t>(V0 + extra_labels));
    for (int64_t l = V0; l < V0 + extra_labels; ++l) d.label_names.push_back(fmt::format("appended_{}", l));
  }
  d.num_labels = V0 + extra_labels;
}

}  // namespace lobench::data
