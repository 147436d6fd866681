#include "datasets/xmc_presets.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "datasets/sparse_dataset.hpp"

namespace lobench::data {
namespace {

TEST(DatasetsXmcPresets, NamesAndPublishedLabelCounts) {
  std::set<std::string> names;
  for (const XmcPreset& p : xmc_presets()) {
    EXPECT_TRUE(names.insert(std::string(p.name)).second) << p.name;
    EXPECT_GT(p.train_rows, 0);
    EXPECT_GT(p.labels_per_row, 1.0);
    EXPECT_FALSE(p.source.empty());
  }
  EXPECT_EQ(names.size(), 6u);
  EXPECT_EQ(xmc_preset("LF-AmazonTitles-131K").num_labels, 131'073);
  EXPECT_EQ(xmc_preset("LF-AmazonTitles-1.3M").num_labels, 1'305'265);
  EXPECT_EQ(xmc_preset("Amazon-670K").num_labels, 670'091);
  EXPECT_EQ(xmc_preset("Wiki-500K").num_labels, 501'070);
  EXPECT_EQ(xmc_preset("Amazon-3M").num_labels, 2'812'281);
  EXPECT_EQ(xmc_preset("LF-Paper2Keywords-8.6M").num_labels, 8'623'847);
  try {
    xmc_preset("Amazon-3m");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("Amazon-3M"), std::string::npos) << e.what();
  }
}

TEST(DatasetsXmcPresets, ScaledGenerationHasThePresetShape) {
  const XmcPreset& p = xmc_preset("Amazon-670K");
  const SyntheticXmcConfig c = synthetic_config(p, 0.005, 3);
  EXPECT_EQ(c.rows, 2452);  // round(490449 * 0.005)
  EXPECT_EQ(scaled_test_rows(p, 0.005), 765);
  const SparseDataset d = generate_synthetic_xmc(c);
  EXPECT_EQ(d.num_labels, 670'091);
  EXPECT_EQ(d.num_features, 135'909);
  const DatasetSummary s = summarize(d);
  EXPECT_NEAR(s.mean_labels_per_row, p.labels_per_row, 0.3);     // geometric: sd of the mean ~ 0.1
  EXPECT_NEAR(s.mean_features_per_row, p.features_per_row, 1.0);
  EXPECT_THROW(synthetic_config(p, 0.0), std::invalid_argument);
}

TEST(DatasetsXmcPresets, Amazon3MShapeAndGrowingToEighteenMillionLabels) {
  const XmcPreset& p = xmc_preset("Amazon-3M");
  SparseDataset d = generate_synthetic_xmc(synthetic_config(p, 0.0005, 1));  // 859 rows
  EXPECT_EQ(d.rows(), 859);
  EXPECT_EQ(d.num_labels, 2'812'281);
  EXPECT_NEAR(summarize(d).mean_labels_per_row, 36.04, 4.0);
  append_random_labels(d, 18'000'000 - d.num_labels);  // ELMO's largest point in its memory figure
  EXPECT_EQ(d.num_labels, 18'000'000);
  EXPECT_NO_THROW(d.validate());
}

}  // namespace
}  // namespace lobench::data
