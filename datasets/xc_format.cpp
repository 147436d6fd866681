#include "datasets/xc_format.hpp"

#include <algorithm>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "datasets/line_reader.hpp"
#include "datasets/tokens.hpp"

namespace lobench::data {

namespace {

constexpr const char* kHeader = "header 'rows features labels' (three non-negative integers)";

// Scratch for one row: parsed, then sorted and appended to the dataset.
struct RowScratch {
  std::vector<int32_t> labels;
  std::vector<std::pair<int32_t, float>> features;
};

void parse_labels(std::string_view token, const SparseDataset& d, const LineReader& reader,
                  RowScratch& row) {
  size_t start = 0;
  while (true) {
    const size_t comma = token.find(',', start);
    const std::string_view item = token.substr(start, comma == std::string_view::npos ? comma : comma - start);
    const auto id = parse_int(item);
    if (!id) {
      reader.fail(fmt::format("expected a label id (non-negative integer) in the label list, got {}",
                              item.empty() ? std::string("nothing") : quote_token(item)));
    }
    if (*id < 0 || *id >= d.num_labels) {
      reader.fail(fmt::format("label id {} outside [0, {}) (labels from the header)", *id, d.num_labels));
    }
    row.labels.push_back(static_cast<int32_t>(*id));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

void parse_feature(std::string_view token, const SparseDataset& d, const LineReader& reader, RowScratch& row) {
  const size_t colon = token.find(':');
  if (colon == std::string_view::npos) {
    reader.fail(fmt::format("expected 'feature:value', got {}", quote_token(token)));
  }
  const auto index = parse_int(token.substr(0, colon));
  if (!index) {
    reader.fail(fmt::format("expected a feature index (non-negative integer) before ':', got {}",
                            quote_token(token)));
  }
  if (*index < 0 || *index >= d.num_features) {
    reader.fail(fmt::format("feature index {} outside [0, {}) (features from the header)", *index,
                            d.num_features));
  }
  const auto value = parse_float(token.substr(colon + 1));
  if (!value) {
    reader.fail(fmt::format("expected a finite number after ':' in {}", quote_token(token)));
  }
  row.features.emplace_back(static_cast<int32_t>(*index), *value);
}

}  // namespace

SparseDataset parse_xc(std::istream& in, const std::string& source) {
  LineReader reader(in, source);
  std::string_view line;
  if (!reader.next(line)) reader.fail_at(1, fmt::format("expected {}, got an empty file", kHeader));
  SparseDataset d;
  int64_t rows = 0;
  {
    std::string_view rest = line;
    int64_t values[3];
    for (int64_t& v : values) {
      const std::string_view token = next_token(rest);
      const auto parsed = parse_int(token);
      if (!parsed || *parsed < 0) reader.fail(fmt::format("expected {}, got {}", kHeader, quote_token(line)));
      v = *parsed;
    }
    if (!is_blank(rest)) reader.fail(fmt::format("expected {}, got {}", kHeader, quote_token(line)));
    if (values[1] > INT32_MAX || values[2] > INT32_MAX) {
      reader.fail(fmt::format("features and labels must be below 2^31, got {}", quote_token(line)));
    }
    rows = values[0];
    d.num_features = values[1];
    d.num_labels = values[2];
  }
  d.features.offsets.reserve(static_cast<size_t>(std::min<int64_t>(rows, int64_t{1} << 16)) + 1);
  d.labels.offsets.reserve(d.features.offsets.capacity());

  RowScratch row;
  for (int64_t r = 0; r < rows; ++r) {
    if (!reader.next(line)) {
      reader.fail(fmt::format("expected {} rows as the header says, the file ends after {} (truncated file?)",
                              rows, r));
    }
    row.labels.clear();
    row.features.clear();
    std::string_view rest = line;
    if (!rest.empty() && rest.front() != ' ' && rest.front() != '\t') {
      std::string_view first = rest;
      const std::string_view token = next_token(first);
      if (token.find(':') == std::string_view::npos) {
        parse_labels(token, d, reader, row);
        rest = first;
      }
    }
    for (std::string_view token = next_token(rest); !token.empty(); token = next_token(rest)) {
      parse_feature(token, d, reader, row);
    }
    if (const auto repeated = d.append_checked_row(row.features, row.labels)) {
      reader.fail(fmt::format("feature index {} repeated in the row", *repeated));
    }
  }
  while (reader.next(line)) {
    if (!is_blank(line)) {
      reader.fail(fmt::format("expected {} rows as the header says, found more (got {})", rows,
                              quote_token(line)));
    }
  }
  return d;
}

SparseDataset read_xc(const std::filesystem::path& path) {
  std::ifstream in = open_input_file(path);
  return parse_xc(in, path.string());
}

void write_xc(const SparseDataset& d, std::ostream& out) {
  std::string line;
  out << d.rows() << ' ' << d.num_features << ' ' << d.num_labels << '\n';
  for (int64_t r = 0; r < d.rows(); ++r) {
    line.clear();
    const auto labels = d.labels.row(r);
    // fmt::format appended, not fmt::format_to(std::back_inserter(line), ...): fmt 9 compiles its formatting
    // engine into every file that formats into an iterator (about 2 CPU-s), fmt::format is in libfmt.
    for (size_t k = 0; k < labels.size(); ++k) {
      if (k > 0) line += ',';
      line += fmt::format("{}", labels[k]);
    }
    const auto idx = d.features.row_indices(r);
    const auto val = d.features.row_values(r);
    for (size_t k = 0; k < idx.size(); ++k) line += fmt::format(" {}:{}", idx[k], val[k]);
    line += '\n';
    out << line;
  }
  if (!out) throw std::runtime_error("write_xc: write failed");
}

void write_xc(const SparseDataset& d, const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(fmt::format("cannot open '{}' for writing", path.string()));
  write_xc(d, out);
  out.close();
  if (!out) throw std::runtime_error(fmt::format("write to '{}' failed", path.string()));
}

}  // namespace lobench::data
