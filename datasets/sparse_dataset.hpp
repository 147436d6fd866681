// The sparse multi-label dataset every XMC loader and generator produces: features and labels as two
// CSR matrices over the same rows.
//
// Invariants (checked by validate(), kept by every loader and generator in this folder):
// - features: offsets has rows+1 entries, starts at 0 and never decreases; within a row the feature
//   indices are strictly increasing (sorted, no duplicates) and lie in [0, num_features); values are
//   finite float32.
// - labels: the same shape rules with label ids in [0, num_labels); a row's labels are a set (sorted,
//   no duplicates); a row may have no labels.
// - label_names / feature_names are empty (unknown) or have exactly num_labels / num_features entries.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace lobench::data {

// Row-major sparse features: row r has indices[offsets[r] .. offsets[r+1]) and the matching values.
struct SparseFeatures {
  std::vector<int64_t> offsets{0};
  std::vector<int32_t> indices;
  std::vector<float> values;

  int64_t rows() const { return static_cast<int64_t>(offsets.size()) - 1; }
  int64_t nnz() const { return static_cast<int64_t>(indices.size()); }
  std::span<const int32_t> row_indices(int64_t r) const {
    return {indices.data() + offsets[r], static_cast<size_t>(offsets[r + 1] - offsets[r])};
  }
  std::span<const float> row_values(int64_t r) const {
    return {values.data() + offsets[r], static_cast<size_t>(offsets[r + 1] - offsets[r])};
  }
};

// Row-major label sets (a CSR pattern without values: every stored entry is a positive).
struct LabelSets {
  std::vector<int64_t> offsets{0};
  std::vector<int32_t> ids;

  int64_t rows() const { return static_cast<int64_t>(offsets.size()) - 1; }
  int64_t nnz() const { return static_cast<int64_t>(ids.size()); }
  std::span<const int32_t> row(int64_t r) const {
    return {ids.data() + offsets[r], static_cast<size_t>(offsets[r + 1] - offsets[r])};
  }
};

struct SparseDataset {
  SparseFeatures features;
  LabelSets labels;
  int64_t num_features = 0;
  int64_t num_labels = 0;
  std::vector<std::string> label_names;    // optional: empty or num_labels entries
  std::vector<std::string> feature_names;  // optional: empty or num_features entries

  int64_t rows() const { return labels.rows(); }

  // Appends a row given in any order: sorts features by index (values follow), sorts and de-duplicates
  // labels. Throws std::invalid_argument when an index or id is out of range, a feature index repeats,
  // a value is not finite, or the two spans of the features differ in length.
  void add_row(std::span<const int32_t> feature_indices, std::span<const float> feature_values,
               std::span<const int32_t> label_ids);

  // The loaders' append, for a row whose feature indices and label ids they have range-checked:
  // features as (index, value) pairs and labels in any order (both are sorted in place, labels
  // de-duplicated). When a feature index repeats, nothing is appended and that index is returned (for
  // the loader's own error message); otherwise nullopt.
  std::optional<int32_t> append_checked_row(std::vector<std::pair<int32_t, float>>& features,
                                            std::vector<int32_t>& label_ids);

  // Throws std::invalid_argument naming the first broken invariant (see the top of this file).
  void validate() const;
};

struct TrainTest {
  SparseDataset train;
  SparseDataset test;
};

// Number of rows each label is positive in: [num_labels].
std::vector<int64_t> label_frequencies(const SparseDataset& d);
// Number of labels / features of each row: [rows].
std::vector<int32_t> labels_per_row(const SparseDataset& d);
std::vector<int32_t> features_per_row(const SparseDataset& d);

struct DatasetSummary {
  int64_t rows = 0;
  int64_t num_features = 0;
  int64_t num_labels = 0;
  int64_t feature_nnz = 0;
  int64_t label_nnz = 0;
  double mean_labels_per_row = 0;    // label_nnz / rows (0 for no rows)
  double mean_features_per_row = 0;  // feature_nnz / rows
  int32_t max_labels_per_row = 0;
  int64_t rows_without_labels = 0;
  int64_t labels_without_rows = 0;  // labels positive in no row
};

DatasetSummary summarize(const SparseDataset& d);
// One line: "rows 4880, features 1836, labels 159, labels/row 2.402, features/row 68.5, ...".
std::string to_string(const DatasetSummary& s);

}  // namespace lobench::data
