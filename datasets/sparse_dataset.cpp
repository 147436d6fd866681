#include "datasets/sparse_dataset.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace lobench::data {

void SparseDataset::add_row(std::span<const int32_t> feature_indices, std::span<const float> feature_values,
                            std::span<const int32_t> label_ids) {
  if (feature_indices.size() != feature_values.size()) {
    throw std::invalid_argument(fmt::format("add_row: {} feature indices but {} values",
                                            feature_indices.size(), feature_values.size()));
  }
  const size_t n = feature_indices.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return feature_indices[a] < feature_indices[b]; });
  for (size_t k = 0; k < n; ++k) {
    const int32_t f = feature_indices[order[k]];
    if (f < 0 || f >= num_features) {
      throw std::invalid_argument(fmt::format("add_row: feature index {} outside [0, {})", f, num_features));
    }
    if (k > 0 && f == feature_indices[order[k - 1]]) {
      throw std::invalid_argument(fmt::format("add_row: feature index {} repeated", f));
    }
    if (!std::isfinite(feature_values[order[k]])) {
      throw std::invalid_argument(fmt::format("add_row: feature {} has a non-finite value", f));
    }
  }
  std::vector<int32_t> l(label_ids.begin(), label_ids.end());
  std::sort(l.begin(), l.end());
  l.erase(std::unique(l.begin(), l.end()), l.end());
  for (int32_t id : l) {
    if (id < 0 || id >= num_labels) {
      throw std::invalid_argument(fmt::format("add_row: label id {} outside [0, {})", id, num_labels));
    }
  }
  for (size_t k = 0; k < n; ++k) {
    features.indices.push_back(feature_indices[order[k]]);
    features.values.push_back(feature_values[order[k]]);
  }
  features.offsets.push_back(features.nnz());
  labels.ids.insert(labels.ids.end(), l.begin(), l.end());
  labels.offsets.push_back(labels.nnz());
}

std::optional<int32_t> SparseDataset::append_checked_row(std::vector<std::pair<int32_t, float>>& row_features,
                                                         std::vector<int32_t>& label_ids) {
  std::sort(row_features.begin(), row_features.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t k = 1; k < row_features.size(); ++k) {
    if (row_features[k].first == row_features[k - 1].first) return row_features[k].first;
  }
  for (const auto& [f, v] : row_features) {
    features.indices.push_back(f);
    features.values.push_back(v);
  }
  features.offsets.push_back(features.nnz());
  std::sort(label_ids.begin(), label_ids.end());
  label_ids.erase(std::unique(label_ids.begin(), label_ids.end()), label_ids.end());
  labels.ids.insert(labels.ids.end(), label_ids.begin(), label_ids.end());
  labels.offsets.push_back(labels.nnz());
  return std::nullopt;
}

namespace {

void check_offsets(const std::vector<int64_t>& offsets, int64_t entries, const char* what) {
  if (offsets.empty() || offsets.front() != 0) {
    throw std::invalid_argument(fmt::format("{}: offsets must start with 0", what));
  }
  for (size_t r = 1; r < offsets.size(); ++r) {
    if (offsets[r] < offsets[r - 1]) {
      throw std::invalid_argument(fmt::format("{}: offsets decrease at row {}", what, r - 1));
    }
  }
  if (offsets.back() != entries) {
    throw std::invalid_argument(
        fmt::format("{}: last offset {} but {} entries", what, offsets.back(), entries));
  }
}

void check_row_sets(const std::vector<int64_t>& offsets, const std::vector<int32_t>& ids, int64_t limit,
                    const char* what) {
  for (size_t r = 0; r + 1 < offsets.size(); ++r) {
    for (int64_t k = offsets[r]; k < offsets[r + 1]; ++k) {
      if (ids[k] < 0 || ids[k] >= limit) {
        throw std::invalid_argument(
            fmt::format("{}: row {} has index {} outside [0, {})", what, r, ids[k], limit));
      }
      if (k > offsets[r] && ids[k] <= ids[k - 1]) {
        throw std::invalid_argument(
            fmt::format("{}: row {} is not sorted without duplicates at index {}", what, r, ids[k]));
      }
    }
  }
}

}  // namespace

void SparseDataset::validate() const {
  if (num_features < 0 || num_labels < 0 || num_features > INT32_MAX || num_labels > INT32_MAX) {
    throw std::invalid_argument("num_features and num_labels must lie in [0, 2^31)");
  }
  if (features.indices.size() != features.values.size()) {
    throw std::invalid_argument("features: indices and values differ in length");
  }
  check_offsets(features.offsets, features.nnz(), "features");
  check_offsets(labels.offsets, labels.nnz(), "labels");
  if (features.rows() != labels.rows()) {
    throw std::invalid_argument(
        fmt::format("features have {} rows but labels have {}", features.rows(), labels.rows()));
  }
  check_row_sets(features.offsets, features.indices, num_features, "features");
  check_row_sets(labels.offsets, labels.ids, num_labels, "labels");
  for (float v : features.values) {
    if (!std::isfinite(v)) throw std::invalid_argument("features: a value is not finite");
  }
  if (!label_names.empty() && static_cast<int64_t>(label_names.size()) != num_labels) {
    throw std::invalid_argument(
        fmt::format("{} label names for {} labels", label_names.size(), num_labels));
  }
  if (!feature_names.empty() && static_cast<int64_t>(feature_names.size()) != num_features) {
    throw std::invalid_argument(
        fmt::format("{} feature names for {} features", feature_names.size(), num_features));
  }
}

std::vector<int64_t> label_frequencies(const SparseDataset& d) {
  std::vector<int64_t> freq(static_cast<size_t>(d.num_labels), 0);
  for (int32_t id : d.labels.ids) ++freq[id];
  return freq;
}

std::vector<int32_t> labels_per_row(const SparseDataset& d) {
  std::vector<int32_t> n(static_cast<size_t>(d.rows()));
  for (int64_t r = 0; r < d.rows(); ++r) {
    n[r] = static_cast<int32_t>(d.labels.offsets[r + 1] - d.labels.offsets[r]);
  }
  return n;
}

std::vector<int32_t> features_per_row(const SparseDataset& d) {
  std::vector<int32_t> n(static_cast<size_t>(d.features.rows()));
  for (int64_t r = 0; r < d.features.rows(); ++r) {
    n[r] = static_cast<int32_t>(d.features.offsets[r + 1] - d.features.offsets[r]);
  }
  return n;
}

DatasetSummary summarize(const SparseDataset& d) {
  DatasetSummary s;
  s.rows = d.rows();
  s.num_features = d.num_features;
  s.num_labels = d.num_labels;
  s.feature_nnz = d.features.nnz();
  s.label_nnz = d.labels.nnz();
  if (s.rows > 0) {
    s.mean_labels_per_row = static_cast<double>(s.label_nnz) / static_cast<double>(s.rows);
    s.mean_features_per_row = static_cast<double>(s.feature_nnz) / static_cast<double>(s.rows);
  }
  for (int32_t n : labels_per_row(d)) {
    s.max_labels_per_row = std::max(s.max_labels_per_row, n);
    if (n == 0) ++s.rows_without_labels;
  }
  for (int64_t f : label_frequencies(d)) {
    if (f == 0) ++s.labels_without_rows;
  }
  return s;
}

std::string to_string(const DatasetSummary& s) {
  return fmt::format(
      "rows {}, features {}, labels {}, labels/row {:.3f} (max {}), features/row {:.2f}, "
      "rows without labels {}, labels without rows {}",
      s.rows, s.num_features, s.num_labels, s.mean_labels_per_row, s.max_labels_per_row,
      s.mean_features_per_row, s.rows_without_labels, s.labels_without_rows);
}

}  // namespace lobench::data
