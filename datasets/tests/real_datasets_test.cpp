// The real datasets in ../shared/datasets (skipped when the folder is absent): shapes as published.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <sstream>

#include <fmt/format.h>

#include "datasets/arff.hpp"
#include "datasets/ranking_metrics.hpp"
#include "datasets/propensity.hpp"
#include "datasets/seqrec.hpp"
#include "datasets/xc_format.hpp"
#include "datasets/tests/test_support.hpp"

namespace lobench::data {
namespace {

using testing::shared_datasets;

// Mean labels per row over train and test together (the published figure is over the whole set).
double mean_labels(const TrainTest& tt) {
  return static_cast<double>(tt.train.labels.nnz() + tt.test.labels.nnz()) /
         static_cast<double>(tt.train.rows() + tt.test.rows());
}

TEST(DatasetsRealXmc, Bibtex) {
  LOBENCH_REQUIRE_SHARED_FILE("xmc/bibtex-train.arff");
  const TrainTest tt = read_mulan(shared_datasets() / "xmc", "bibtex");
  for (const SparseDataset* d : {&tt.train, &tt.test}) {
    EXPECT_NO_THROW(d->validate());
    EXPECT_EQ(d->num_features, 1836);
    EXPECT_EQ(d->num_labels, 159);
  }
  EXPECT_EQ(tt.train.rows(), 4880);
  EXPECT_EQ(tt.test.rows(), 2515);
  EXPECT_NEAR(mean_labels(tt), 2.40, 0.005);  // 2.402 (train 2.380, test 2.444)
  EXPECT_EQ(tt.train.label_names.front(), "TAG_2005");
  EXPECT_EQ(tt.train.label_names.back(), "TAG_wiki");
  EXPECT_EQ(tt.train.feature_names.front(), "0");
  // Binary features: every stored value is 1.
  for (float v : tt.train.features.values) ASSERT_EQ(v, 1.0f);
  std::cout << "bibtex train: " << to_string(summarize(tt.train)) << "\n"
            << "bibtex test:  " << to_string(summarize(tt.test)) << "\n";
}

TEST(DatasetsRealXmc, Delicious) {
  LOBENCH_REQUIRE_SHARED_FILE("xmc/delicious-train.arff");
  const TrainTest tt = read_mulan(shared_datasets() / "xmc", "delicious");
  for (const SparseDataset* d : {&tt.train, &tt.test}) {
    EXPECT_NO_THROW(d->validate());
    EXPECT_EQ(d->num_features, 500);
    EXPECT_EQ(d->num_labels, 983);
  }
  EXPECT_EQ(tt.train.rows(), 12920);
  EXPECT_EQ(tt.test.rows(), 3185);
  EXPECT_NEAR(mean_labels(tt), 19.02, 0.01);  // XC repository: 19.03 (train 19.047, test 18.910)
  // Names with escapes survive: the header's TAG_m\'usica is TAG_m'usica.
  EXPECT_NE(std::find(tt.train.label_names.begin(), tt.train.label_names.end(), "TAG_m'usica"),
            tt.train.label_names.end());
  std::cout << "delicious train: " << to_string(summarize(tt.train)) << "\n"
            << "delicious test:  " << to_string(summarize(tt.test)) << "\n";
}

TEST(DatasetsRealXmc, BibtexSurvivesTheXcFormatRoundTrip) {
  LOBENCH_REQUIRE_SHARED_FILE("xmc/bibtex-test.arff");
  const SparseDataset d = read_arff(shared_datasets() / "xmc/bibtex-test.arff", shared_datasets() / "xmc/bibtex.xml");
  std::stringstream buffer;
  write_xc(d, buffer);
  const SparseDataset back = parse_xc(buffer, "bibtex-test.txt");
  EXPECT_EQ(back.features.indices, d.features.indices);
  EXPECT_EQ(back.features.offsets, d.features.offsets);
  EXPECT_EQ(back.labels.ids, d.labels.ids);
  EXPECT_EQ(back.labels.offsets, d.labels.offsets);
}

TEST(DatasetsRealXmc, MostPopularLabelBaselineOnBibtex) {
  // Predicting the 5 most frequent training labels for every test row: a sanity floor for P@k and a
  // check that metrics and propensities run on real data (PSP of a popularity ranking is low).
  LOBENCH_REQUIRE_SHARED_FILE("xmc/bibtex-train.arff");
  const TrainTest tt = read_mulan(shared_datasets() / "xmc", "bibtex");
  const auto freq = label_frequencies(tt.train);
  std::vector<int32_t> order(freq.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return freq[a] > freq[b]; });
  std::vector<int32_t> top;
  for (int64_t r = 0; r < tt.test.rows(); ++r) top.insert(top.end(), order.begin(), order.begin() + 5);
  const auto w = inverse_propensities(freq, tt.train.rows());
  const RankingMetrics m = ranking_metrics(top, 5, tt.test.labels, tt.test.num_labels, w);
  std::cout << fmt::format("bibtex popularity baseline: P@1/3/5 {:.4f} {:.4f} {:.4f}, PSP@1/3/5 {:.4f} {:.4f} {:.4f}\n",
                           m.precision[0], m.precision[1], m.precision[2], m.psp[0], m.psp[1], m.psp[2]);
  EXPECT_GT(m.precision[0], 0.05);
  EXPECT_LT(m.precision[0], 0.40);  // far below the published 61-62 %
  EXPECT_LT(m.psp[0], m.precision[0]);
}

struct SeqrecShape {
  const char* file;
  int64_t users, items, interactions;
};

TEST(DatasetsRealSeqrec, ShapesAsPublished) {
  LOBENCH_REQUIRE_SHARED_FILE("seqrec/Beauty.txt");
  for (const SeqrecShape& s : {SeqrecShape{"Beauty.txt", 22363, 12101, 198502},
                               SeqrecShape{"Sports_and_Outdoors.txt", 35598, 18357, 296337},
                               SeqrecShape{"Toys_and_Games.txt", 19412, 11924, 167597},
                               SeqrecShape{"LastFM.txt", 1090, 3646, 52551}}) {
    const SequenceDataset d = read_sequences(shared_datasets() / "seqrec" / s.file);
    EXPECT_EQ(d.num_users(), s.users) << s.file;
    EXPECT_EQ(d.num_items, s.items) << s.file;
    EXPECT_EQ(d.num_interactions(), s.interactions) << s.file;
    // 5-core: every user has valid and test examples.
    EXPECT_EQ(static_cast<int64_t>(test_examples(d).size()), s.users) << s.file;
    EXPECT_EQ(static_cast<int64_t>(valid_examples(d).size()), s.users) << s.file;
  }
}

}  // namespace
}  // namespace lobench::data
