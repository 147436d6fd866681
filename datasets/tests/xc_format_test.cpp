#include "datasets/xc_format.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "datasets/synthetic_xmc.hpp"
#include "datasets/tests/test_support.hpp"

namespace lobench::data {
namespace {

using testing::expect_parse_error;

SparseDataset parse(const std::string& text) {
  std::istringstream in(text);
  return parse_xc(in, "t.txt");
}

void expect_error(const std::string& text, int64_t line, const std::string& fragment) {
  expect_parse_error([&] { parse(text); }, "t.txt", line, fragment);
}

TEST(DatasetsXcFormat, ParsesRowsWithAndWithoutLabels) {
  const SparseDataset d = parse(
      "4 10 5\n"
      "3,1 4:0.5 0:2\n"
      " 9:1.25\n"
      "\n"
      "4 2:1e-3\r\n");
  ASSERT_EQ(d.rows(), 4);
  EXPECT_EQ(d.num_features, 10);
  EXPECT_EQ(d.num_labels, 5);
  EXPECT_EQ(d.labels.offsets, (std::vector<int64_t>{0, 2, 2, 2, 3}));
  EXPECT_EQ(d.labels.ids, (std::vector<int32_t>{1, 3, 4}));
  EXPECT_EQ(d.features.offsets, (std::vector<int64_t>{0, 2, 3, 3, 4}));
  EXPECT_EQ(d.features.indices, (std::vector<int32_t>{0, 4, 9, 2}));
  EXPECT_EQ(d.features.values, (std::vector<float>{2.0f, 0.5f, 1.25f, 1e-3f}));
  EXPECT_NO_THROW(d.validate());
}

TEST(DatasetsXcFormat, RowStartingWithAFeatureHasNoLabelsAndRepeatedLabelsCountOnce) {
  const SparseDataset d = parse("2 3 3\n1:1\n2,2,0\n\n\n");
  EXPECT_EQ(d.labels.offsets, (std::vector<int64_t>{0, 0, 2}));
  EXPECT_EQ(d.labels.ids, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(d.features.indices, (std::vector<int32_t>{1}));
}

TEST(DatasetsXcFormat, RoundTripThroughWriterIsExact) {
  SyntheticXmcConfig c;
  c.rows = 300;
  c.num_features = 500;
  c.num_labels = 200;
  c.seed = 11;
  SparseDataset d = generate_synthetic_xmc(c);
  d.add_row({}, {}, {});                                   // empty row
  d.add_row(std::vector<int32_t>{7}, std::vector<float>{1.0e-7f}, {});  // features only
  d.add_row({}, {}, std::vector<int32_t>{0, 199});          // labels only
  std::stringstream buffer;
  write_xc(d, buffer);
  const SparseDataset back = parse_xc(buffer, "roundtrip");
  EXPECT_EQ(back.num_features, d.num_features);
  EXPECT_EQ(back.num_labels, d.num_labels);
  EXPECT_EQ(back.features.offsets, d.features.offsets);
  EXPECT_EQ(back.features.indices, d.features.indices);
  EXPECT_EQ(back.features.values, d.features.values);  // bit-exact floats
  EXPECT_EQ(back.labels.offsets, d.labels.offsets);
  EXPECT_EQ(back.labels.ids, d.labels.ids);
}

TEST(DatasetsXcFormat, RoundTripThroughFile) {
  SparseDataset d;
  d.num_features = 3;
  d.num_labels = 2;
  d.add_row(std::vector<int32_t>{2, 0}, std::vector<float>{0.1f, 3.0f}, std::vector<int32_t>{1});
  const auto path = std::filesystem::temp_directory_path() / "lobench_datasets_xc_roundtrip.txt";
  write_xc(d, path);
  const SparseDataset back = read_xc(path);
  std::filesystem::remove(path);
  EXPECT_EQ(back.features.indices, d.features.indices);
  EXPECT_EQ(back.features.values, d.features.values);
  EXPECT_EQ(back.labels.ids, d.labels.ids);
}

TEST(DatasetsXcFormat, MissingFileIsARuntimeErrorNamingIt) {
  try {
    read_xc("/nonexistent/lobench/train.txt");
    FAIL() << "no exception";
  } catch (const ParseError&) {
    FAIL() << "a missing file is not a parse error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/lobench/train.txt"), std::string::npos);
  }
}

TEST(DatasetsXcFormat, BadHeader) {
  expect_error("", 1, "expected header 'rows features labels'");
  expect_error("3 10\n", 1, "expected header");
  expect_error("3 10 5 7\n1 0:1\n", 1, "expected header");
  expect_error("3 ten 5\n", 1, "got '3 ten 5'");
  expect_error("-3 10 5\n", 1, "expected header");
  expect_error("1 10 3000000000\n", 1, "below 2^31");
}

TEST(DatasetsXcFormat, LabelErrors) {
  expect_error("2 10 5\n1 0:1\n5 0:1\n", 3, "label id 5 outside [0, 5)");
  expect_error("1 10 5\n1,,2 0:1\n", 2, "expected a label id (non-negative integer) in the label list, got nothing");
  expect_error("1 10 5\n1,x 0:1\n", 2, "got 'x'");
  expect_error("1 10 5\n1, 0:1\n", 2, "got nothing");
  expect_error("1 10 5\n-1 0:1\n", 2, "label id -1 outside");
}

TEST(DatasetsXcFormat, FeatureErrors) {
  expect_error("1 10 5\n1 3\n", 2, "expected 'feature:value', got '3'");
  expect_error("1 10 5\n1 10:1\n", 2, "feature index 10 outside [0, 10)");
  expect_error("1 10 5\n1 a:1\n", 2, "expected a feature index");
  expect_error("1 10 5\n1 3:abc\n", 2, "expected a finite number after ':' in '3:abc'");
  expect_error("1 10 5\n1 3:\n", 2, "expected a finite number");
  expect_error("1 10 5\n1 3:nan\n", 2, "expected a finite number");
  expect_error("1 10 5\n1 3:1.5x\n", 2, "expected a finite number");
  expect_error("1 10 5\n1 3:1 3:2\n", 2, "feature index 3 repeated");
}

TEST(DatasetsXcFormat, RowCountMismatchAndTruncation) {
  expect_error("3 10 5\n1 0:1\n2 1:1\n", 3, "expected 3 rows as the header says, the file ends after 2");
  expect_error("1 10 5\n1 0:1\n2 1:1\n", 3, "found more");
  expect_error("1 10 5\n", 1, "the file ends after 0");
}

}  // namespace
}  // namespace lobench::data
