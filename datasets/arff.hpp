// Mulan's multi-label ARFF files (Weka ARFF, sparse or dense rows) as a SparseDataset.
//
//   @relation NAME
//   @attribute NAME {0,1}          one line per column; the type is {0,1}, numeric, real or integer
//   @attribute 'a name' numeric    names may be quoted ('...' or "...") with backslash escapes
//   @data
//   {0 1,5 1,1840 1}               sparse row: "column value" pairs, 0-based columns, absent = 0
//   0,1,0,...                      dense row: one value per column
//
// Which columns are labels comes from Mulan's .xml file (mulan_xml.hpp) — label attributes may sit
// anywhere — or, when given explicitly, is "the last N columns". Features are the other columns, in
// column order, renumbered from 0; labels likewise. Label columns must be {0,1}; a label value of 1 is a
// positive. Feature values of 0 are not stored. '%' starts a comment line; keywords are
// case-insensitive. Unsupported: string/date/relational attributes, nominal attributes other than
// {0,1}, missing values ('?'), instance weights.
//
// Names: a name is unescaped as Weka does (\' \" \\ \t \n \r \% and \uXXXX-free), and the xml's names
// are unescaped the same way before matching (delicious.xml writes TAG_m\'usica as in the ARFF header).
#pragma once

#include <cstdint>
#include <filesystem>
#include <istream>
#include <string>
#include <vector>

#include "datasets/mulan_xml.hpp"
#include "datasets/sparse_dataset.hpp"

namespace lobench::data {

struct ArffLabelSpec {
  // Labels named by Mulan's xml (names_source is the xml's name, for errors) ...
  std::vector<XmlLabel> names;
  std::string names_source;
  // ... or, when >= 0, the last count_at_end columns.
  int64_t count_at_end = -1;

  static ArffLabelSpec from_xml(const std::filesystem::path& xml);
  static ArffLabelSpec last(int64_t num_labels);
};

// Throws ParseError naming the file (the .arff, or the .xml for a label it does not know), the line and
// what was expected; std::runtime_error when a file cannot be opened.
SparseDataset parse_arff(std::istream& in, const std::string& source, const ArffLabelSpec& labels);
SparseDataset read_arff(const std::filesystem::path& arff, const ArffLabelSpec& labels);
SparseDataset read_arff(const std::filesystem::path& arff, const std::filesystem::path& xml);

// Mulan's fixed split: DIR/NAME-train.arff, DIR/NAME-test.arff and DIR/NAME.xml. Throws ParseError when
// the two files' attributes (names and kinds) differ.
TrainTest read_mulan(const std::filesystem::path& dir, const std::string& name);

// Weka's unescaping of attribute names (exposed for tests).
std::string arff_unescape(std::string_view s);

}  // namespace lobench::data
