#include "datasets/arff.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "datasets/tests/test_support.hpp"

namespace lobench::data {
namespace {

using testing::expect_parse_error;

// 4 features (f0, 'f 1', f2 numeric, "f\'3") and 3 labels (L0, L1, L2), labels not all at the end.
const char* kHeader =
    "% a comment\n"
    "@RELATION 'toy: -C 3'\n"
    "\n"
    "@attribute f0 {0,1}\n"        // line 4  column 0
    "@attribute L0 {0,1}\n"        // line 5  column 1
    "@attribute 'f 1' {0, 1}\n"    // line 6  column 2
    "@attribute f2 numeric\n"      // line 7  column 3
    "@attribute L1 {0,1}\n"        // line 8  column 4
    "@attribute \"f\\'3\" REAL\n"  // line 9  column 5
    "@attribute L2 {0,1}\n"        // line 10 column 6
    "@data\n";                     // line 11

ArffLabelSpec toy_labels() {
  ArffLabelSpec s;
  s.names = {{"L0", 2}, {"L1", 3}, {"L2", 4}};
  s.names_source = "toy.xml";
  return s;
}

SparseDataset parse(const std::string& data, const ArffLabelSpec& spec = toy_labels()) {
  std::istringstream in(std::string(kHeader) + data);
  return parse_arff(in, "toy.arff", spec);
}

void expect_error(const std::string& text, int64_t line, const std::string& fragment,
                  const ArffLabelSpec& spec = toy_labels()) {
  expect_parse_error(
      [&] {
        std::istringstream in(text);
        parse_arff(in, "toy.arff", spec);
      },
      "toy.arff", line, fragment);
}

void expect_data_error(const std::string& data, int64_t line, const std::string& fragment) {
  expect_error(std::string(kHeader) + data, line, fragment);
}

TEST(DatasetsArff, SparseAndDenseRowsWithLabelsAnywhere) {
  const SparseDataset d = parse(
      "{0 1,1 1,3 2.5,6 1}\n"   // f0=1, L0, f2=2.5, L2
      "% comment in data\n"
      "{}\n"
      "\n"
      "{5 -0.5, 4 1 ,2 0}\n"    // out of order, spaces, a stored zero
      "1,0,1,0.25,1,0,0\r\n");  // dense
  ASSERT_EQ(d.rows(), 4);
  EXPECT_EQ(d.num_features, 4);
  EXPECT_EQ(d.num_labels, 3);
  EXPECT_EQ(d.feature_names, (std::vector<std::string>{"f0", "f 1", "f2", "f'3"}));
  EXPECT_EQ(d.label_names, (std::vector<std::string>{"L0", "L1", "L2"}));
  EXPECT_EQ(d.features.offsets, (std::vector<int64_t>{0, 2, 2, 3, 6}));
  EXPECT_EQ(d.features.indices, (std::vector<int32_t>{0, 2, 3, 0, 1, 2}));
  EXPECT_EQ(d.features.values, (std::vector<float>{1, 2.5f, -0.5f, 1, 1, 0.25f}));
  EXPECT_EQ(d.labels.offsets, (std::vector<int64_t>{0, 2, 2, 3, 4}));
  EXPECT_EQ(d.labels.ids, (std::vector<int32_t>{0, 2, 1, 1}));
  EXPECT_NO_THROW(d.validate());
}

TEST(DatasetsArff, LabelsCanBeTheLastNColumns) {
  std::istringstream in(
      "@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute y0 {0,1}\n@attribute y1 {0,1}\n"
      "@data\n{0 3,3 1}\n");
  const SparseDataset d = parse_arff(in, "r.arff", ArffLabelSpec::last(2));
  EXPECT_EQ(d.num_features, 2);
  EXPECT_EQ(d.num_labels, 2);
  EXPECT_EQ(d.labels.ids, (std::vector<int32_t>{1}));
  EXPECT_EQ(d.features.indices, (std::vector<int32_t>{0}));
  EXPECT_EQ(d.features.values, (std::vector<float>{3}));
}

TEST(DatasetsArff, XmlNamesWithEscapesMatchTheHeader) {
  // delicious: the header has TAG_m\'usica (bare, escaped quote) and TAG_dise\~no (unknown escape);
  // its xml writes the same text.
  std::istringstream in(
      "@relation r\n@attribute w {0,1}\n@attribute TAG_m\\'usica {0,1}\n@attribute TAG_dise\\~no {0,1}\n"
      "@data\n{1 1,2 1}\n");
  ArffLabelSpec spec;
  spec.names = {{"TAG_m\\'usica", 3}, {"TAG_dise\\~no", 4}};
  spec.names_source = "r.xml";
  const SparseDataset d = parse_arff(in, "r.arff", spec);
  EXPECT_EQ(d.label_names, (std::vector<std::string>{"TAG_m'usica", "TAG_dise\\~no"}));
  EXPECT_EQ(d.labels.ids, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(arff_unescape("a\\'b\\\\c\\td\\%e\\q"), "a'b\\c\td%e\\q");
}

TEST(DatasetsArff, UnknownLabelInXmlNamesTheXmlFileAndLine) {
  ArffLabelSpec spec = toy_labels();
  spec.names.push_back({"L9", 7});
  expect_parse_error([&] { parse("{}\n", spec); }, "toy.xml", 7, "label 'L9' is not an attribute of toy.arff");
}

TEST(DatasetsArff, HeaderErrors) {
  expect_error("", 0 + 0, "expected '@data' before the end of the file");  // line 0: empty input, nothing read
  expect_error("@relation r\n@attribute a {0,1}\n", 2, "missing @data");
  expect_error("@relation r\n@attribute a {0,1}\n{0 1}\n", 3, "expected '@relation', '@attribute' or '@data', got '{0 1}'");
  expect_error("@relation r\n@attribute\n@data\n", 2, "expected an attribute name after '@attribute'");
  expect_error("@relation r\n@attribute a\n@data\n", 2, "expected a type after the attribute name 'a'");
  expect_error("@relation r\n@attribute a string\n@data\n", 2, "not supported");
  expect_error("@relation r\n@attribute a date 'yyyy'\n@data\n", 2, "not supported");
  expect_error("@relation r\n@attribute a {x,y}\n@data\n", 2, "expected the nominal type {0,1}");
  expect_error("@relation r\n@attribute a {0,1\n@data\n", 2, "expected '}' closing the nominal values");
  expect_error("@relation r\n@attribute a flaot\n@data\n", 2, "expected an attribute type ({0,1}, numeric, real or integer), got 'flaot'");
  expect_error("@relation r\n@attribute 'a b {0,1}\n@data\n", 2, "expected the closing ' of the quoted name");
  expect_error("@relation r\n@attribute a {0,1}\n@attribute a {0,1}\n@data\n", 3, "attribute 'a' declared twice (first at line 2)");
  expect_error("@relation r\n@data\n", 2, "expected at least one '@attribute' before '@data'");
  expect_error("@relation r\n@attribute a {0,1}\n@data x\n", 3, "expected nothing after '@data'");
  expect_error("@attribute a {0,1}\n@relation r\n@data\n", 2, "expected '@relation' before the first '@attribute'");
  expect_error("@relation r\n@attribute a {0,1}\n@attribute L0 numeric\n@data\n", 3,
               "expected label attribute 'L0' to have type {0,1}", [] {
                 ArffLabelSpec s;
                 s.names = {{"L0", 1}};
                 s.names_source = "x.xml";
                 return s;
               }());
  expect_error("@relation r\n@attribute a {0,1}\n@data\n", 3, "expected at least 2 attributes (the number of labels), the header has 1",
               ArffLabelSpec::last(2));
}

TEST(DatasetsArff, DataErrors) {
  expect_data_error("{0 1,1 1\n", 12, "expected '}' at the end of the sparse row (truncated file?)");
  expect_data_error("{0 1}\n{0 1,abc}\n", 13, "expected 'index value' inside {...}, got 'abc'");
  expect_data_error("{0 1,}\n", 12, "expected 'index value' inside {...}, got ''");
  expect_data_error("{0 1 2}\n", 12, "expected 'index value' inside {...}, got '0 1 2'");
  expect_data_error("{x 1}\n", 12, "expected 'index value'");
  expect_data_error("{7 1}\n", 12, "column index 7 outside [0, 7)");
  expect_data_error("{-1 1}\n", 12, "column index -1 outside");
  expect_data_error("{3 abc}\n", 12, "expected a number for attribute 'f2', got 'abc'");
  expect_data_error("{3 ?}\n", 12, "missing value '?' for attribute 'f2' is not supported");
  expect_data_error("{1 2}\n", 12, "expected 0 or 1 for attribute 'L0' (type {0,1}), got '2'");
  expect_data_error("{0 0.5}\n", 12, "expected 0 or 1 for attribute 'f0'");
  expect_data_error("{3 1,3 2}\n", 12, "column 3 repeated in the row");
  expect_data_error("1,0,1\n", 12, "expected 7 comma-separated values (a dense row) or '{...}', got 3 values");
  expect_data_error("1,0,1,0,0,0,0,0\n", 12, "got 8 values");
  expect_data_error("\n\n{0 1}\n{0 1,2 1", 15, "truncated file?");
}

TEST(DatasetsArff, ReadMulanChecksThatTrainAndTestShareAttributes) {
  const auto dir = std::filesystem::temp_directory_path() / "lobench_datasets_mulan_test";
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
  };
  write("toy.xml", "<labels>\n<label name=\"y\"/>\n</labels>\n");
  write("toy-train.arff", "@relation t\n@attribute a numeric\n@attribute y {0,1}\n@data\n{0 1,1 1}\n{0 2}\n");
  write("toy-test.arff", "@relation t\n@attribute a numeric\n@attribute y {0,1}\n@data\n{1 1}\n");
  const TrainTest tt = read_mulan(dir, "toy");
  EXPECT_EQ(tt.train.rows(), 2);
  EXPECT_EQ(tt.test.rows(), 1);
  EXPECT_EQ(tt.test.labels.ids, (std::vector<int32_t>{0}));
  write("toy-test.arff", "@relation t\n@attribute b numeric\n@attribute y {0,1}\n@data\n{1 1}\n");
  expect_parse_error([&] { read_mulan(dir, "toy"); }, (dir / "toy-test.arff").string(), 0,
                     "features differ from the train file's");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lobench::data
