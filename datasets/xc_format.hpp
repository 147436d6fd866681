// The Extreme Classification Repository's sparse text format (BoW files such as train.txt/test.txt):
//
//   ROWS FEATURES LABELS                 header: three non-negative integers
//   l1,l2,... f:v f:v ...                one line per row
//
// Label ids and feature indices are 0-based. A row without labels starts with a space (" f:v ..."); a
// row that starts with a "f:v" token is read the same way (label tokens never contain ':'). An empty
// line is a row with neither. Features within a row may come in any order (they are sorted); a
// repeated feature index is an error; a repeated label counts once. After the header's number of rows
// only blank lines may follow.
#pragma once

#include <filesystem>
#include <istream>
#include <ostream>
#include <string>

#include "datasets/sparse_dataset.hpp"

namespace lobench::data {

// Throws ParseError (file, line, what was expected) on malformed input, std::runtime_error when the
// file cannot be opened.
SparseDataset read_xc(const std::filesystem::path& path);
// source: the name errors carry.
SparseDataset parse_xc(std::istream& in, const std::string& source);

// Writes the format above; values with the shortest decimal form that reads back to the same float.
void write_xc(const SparseDataset& d, std::ostream& out);
void write_xc(const SparseDataset& d, const std::filesystem::path& path);

}  // namespace lobench::data
