#include "datasets/sparse_dataset.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace lobench::data {
namespace {

SparseDataset small() {
  SparseDataset d;
  d.num_features = 6;
  d.num_labels = 4;
  d.add_row(std::vector<int32_t>{5, 0, 2}, std::vector<float>{0.5f, 1.0f, 2.0f}, std::vector<int32_t>{3, 1, 3});
  d.add_row({}, {}, {});
  d.add_row(std::vector<int32_t>{1}, std::vector<float>{-1.0f}, std::vector<int32_t>{1});
  return d;
}

TEST(DatasetsSparseDataset, AddRowSortsFeaturesWithValuesAndDeduplicatesLabels) {
  const SparseDataset d = small();
  ASSERT_EQ(d.rows(), 3);
  EXPECT_EQ(d.features.offsets, (std::vector<int64_t>{0, 3, 3, 4}));
  EXPECT_EQ(d.features.indices, (std::vector<int32_t>{0, 2, 5, 1}));
  EXPECT_EQ(d.features.values, (std::vector<float>{1.0f, 2.0f, 0.5f, -1.0f}));
  EXPECT_EQ(d.labels.offsets, (std::vector<int64_t>{0, 2, 2, 3}));
  EXPECT_EQ(d.labels.ids, (std::vector<int32_t>{1, 3, 1}));
  EXPECT_NO_THROW(d.validate());
  EXPECT_EQ(d.features.row_indices(0).size(), 3u);
  EXPECT_EQ(d.features.row_values(2)[0], -1.0f);
  EXPECT_EQ(d.labels.row(0)[1], 3);
}

TEST(DatasetsSparseDataset, AddRowRejectsBadInput) {
  SparseDataset d = small();
  EXPECT_THROW(d.add_row(std::vector<int32_t>{6}, std::vector<float>{1}, {}), std::invalid_argument);
  EXPECT_THROW(d.add_row(std::vector<int32_t>{-1}, std::vector<float>{1}, {}), std::invalid_argument);
  EXPECT_THROW(d.add_row(std::vector<int32_t>{2, 2}, std::vector<float>{1, 1}, {}), std::invalid_argument);
  EXPECT_THROW(d.add_row(std::vector<int32_t>{2}, std::vector<float>{1, 1}, {}), std::invalid_argument);
  EXPECT_THROW(d.add_row({}, {}, std::vector<int32_t>{4}), std::invalid_argument);
  EXPECT_THROW(d.add_row(std::vector<int32_t>{1}, std::vector<float>{std::numeric_limits<float>::infinity()}, {}),
               std::invalid_argument);
  EXPECT_EQ(d.rows(), 3);  // nothing appended by the failed calls
  EXPECT_NO_THROW(d.validate());
}

TEST(DatasetsSparseDataset, ValidateFindsBrokenInvariants) {
  {
    SparseDataset d = small();
    d.labels.ids[0] = 3;  // row 0 labels {3, 3}: not strictly increasing
    EXPECT_THROW(d.validate(), std::invalid_argument);
  }
  {
    SparseDataset d = small();
    d.features.indices[3] = 6;  // out of range
    EXPECT_THROW(d.validate(), std::invalid_argument);
  }
  {
    SparseDataset d = small();
    d.labels.offsets.pop_back();  // rows differ
    EXPECT_THROW(d.validate(), std::invalid_argument);
  }
  {
    SparseDataset d = small();
    d.label_names = {"a", "b"};  // not num_labels names
    EXPECT_THROW(d.validate(), std::invalid_argument);
  }
  {
    SparseDataset d = small();
    d.features.offsets[1] = 4;  // 4 > 3 then decreasing to 3
    EXPECT_THROW(d.validate(), std::invalid_argument);
  }
}

TEST(DatasetsSparseDataset, FrequenciesCountsAndSummary) {
  const SparseDataset d = small();
  EXPECT_EQ(label_frequencies(d), (std::vector<int64_t>{0, 2, 0, 1}));
  EXPECT_EQ(labels_per_row(d), (std::vector<int32_t>{2, 0, 1}));
  EXPECT_EQ(features_per_row(d), (std::vector<int32_t>{3, 0, 1}));
  const DatasetSummary s = summarize(d);
  EXPECT_EQ(s.rows, 3);
  EXPECT_EQ(s.label_nnz, 3);
  EXPECT_EQ(s.feature_nnz, 4);
  EXPECT_DOUBLE_EQ(s.mean_labels_per_row, 1.0);
  EXPECT_DOUBLE_EQ(s.mean_features_per_row, 4.0 / 3.0);
  EXPECT_EQ(s.max_labels_per_row, 2);
  EXPECT_EQ(s.rows_without_labels, 1);
  EXPECT_EQ(s.labels_without_rows, 2);
  EXPECT_NE(to_string(s).find("labels/row 1.000"), std::string::npos) << to_string(s);
}

TEST(DatasetsSparseDataset, EmptyDatasetIsValid) {
  SparseDataset d;
  EXPECT_EQ(d.rows(), 0);
  EXPECT_NO_THROW(d.validate());
  EXPECT_EQ(summarize(d).mean_labels_per_row, 0.0);
}

}  // namespace
}  // namespace lobench::data
