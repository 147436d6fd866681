#include "datasets/arff.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <unordered_map>

#include <fmt/format.h>

#include "datasets/line_reader.hpp"
#include "datasets/parse_error.hpp"
#include "datasets/tokens.hpp"

namespace lobench::data {

namespace {

enum class ColumnType { binary, numeric };

struct Attribute {
  std::string name;  // unescaped
  ColumnType type;
  int64_t line;
};

// Where a column goes: a feature or a label, and its index there.
struct ColumnSlot {
  bool is_label;
  int32_t index;
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool iequals(std::string_view a, std::string_view b) { return lower(a) == lower(b); }

// Splits a quoted or bare name off the front of s. Quoted names end at the matching unescaped quote;
// bare names at whitespace (or, inside {...} lists, at ',' / '}').
std::string take_name(std::string_view& s, const LineReader& reader, std::string_view stops) {
  s = trim(s);
  if (s.empty()) return {};
  if (s.front() == '\'' || s.front() == '"') {
    const char quote = s.front();
    size_t k = 1;
    while (k < s.size() && s[k] != quote) k += (s[k] == '\\' && k + 1 < s.size()) ? 2 : 1;
    if (k >= s.size()) reader.fail(fmt::format("expected the closing {} of the quoted name {}", quote, quote_token(s)));
    std::string name = arff_unescape(s.substr(1, k - 1));
    s.remove_prefix(k + 1);
    return name;
  }
  size_t k = 0;
  while (k < s.size() && s[k] != ' ' && s[k] != '\t' && stops.find(s[k]) == std::string_view::npos) {
    k += (s[k] == '\\' && k + 1 < s.size()) ? 2 : 1;
  }
  k = std::min(k, s.size());
  std::string name = arff_unescape(s.substr(0, k));
  s.remove_prefix(k);
  return name;
}

ColumnType parse_type(std::string_view type, const LineReader& reader, const std::string& name) {
  type = trim(type);
  if (type.empty()) reader.fail(fmt::format("expected a type after the attribute name {}", quote_token(name)));
  if (type.front() == '{') {
    if (type.back() != '}') reader.fail(fmt::format("expected '}}' closing the nominal values {}", quote_token(type)));
    std::string_view inner = type.substr(1, type.size() - 2);
    std::vector<std::string> values;
    while (true) {
      std::string v = take_name(inner, reader, ",}");
      inner = trim(inner);
      values.push_back(std::move(v));
      if (inner.empty()) break;
      if (inner.front() != ',') reader.fail(fmt::format("expected ',' between nominal values in {}", quote_token(type)));
      inner.remove_prefix(1);
    }
    if (values.size() != 2 || values[0] != "0" || values[1] != "1") {
      reader.fail(fmt::format("expected the nominal type {{0,1}} (the only one supported), got {}", quote_token(type)));
    }
    return ColumnType::binary;
  }
  const std::string t = lower(type);
  if (t == "numeric" || t == "real" || t == "integer") return ColumnType::numeric;
  if (t.starts_with("string") || t.starts_with("date") || t.starts_with("relational")) {
    reader.fail(fmt::format("attribute {} has type {}, which is not supported (only {{0,1}}, numeric, real, integer)",
                            quote_token(name), quote_token(type)));
  }
  reader.fail(fmt::format("expected an attribute type ({{0,1}}, numeric, real or integer), got {}", quote_token(type)));
}

struct Header {
  std::vector<Attribute> attributes;
};

Header parse_header(LineReader& reader) {
  Header h;
  std::unordered_map<std::string, int64_t> seen;  // name -> line
  std::string_view line;
  while (reader.next(line)) {
    const std::string_view t = trim(line);
    if (t.empty() || t.front() == '%') continue;
    std::string_view rest = t;
    const std::string_view keyword = next_token(rest);
    if (iequals(keyword, "@relation")) {
      if (!h.attributes.empty()) reader.fail("expected '@relation' before the first '@attribute'");
      continue;
    }
    if (iequals(keyword, "@attribute")) {
      std::string name = take_name(rest, reader, "{");
      if (name.empty()) reader.fail("expected an attribute name after '@attribute'");
      const ColumnType type = parse_type(rest, reader, name);
      const auto [it, inserted] = seen.emplace(name, reader.line());
      if (!inserted) {
        reader.fail(fmt::format("attribute {} declared twice (first at line {})", quote_token(name), it->second));
      }
      h.attributes.push_back({std::move(name), type, reader.line()});
      continue;
    }
    if (iequals(keyword, "@data")) {
      if (!is_blank(rest)) reader.fail(fmt::format("expected nothing after '@data', got {}", quote_token(rest)));
      if (h.attributes.empty()) reader.fail("expected at least one '@attribute' before '@data'");
      return h;
    }
    reader.fail(fmt::format("expected '@relation', '@attribute' or '@data', got {}", quote_token(t)));
  }
  reader.fail("expected '@data' before the end of the file (missing @data or truncated file?)");
}

std::vector<ColumnSlot> assign_columns(const Header& h, const ArffLabelSpec& spec, const LineReader& reader,
                                       SparseDataset& d) {
  const int64_t ncols = static_cast<int64_t>(h.attributes.size());
  std::vector<char> is_label(static_cast<size_t>(ncols), 0);
  if (spec.count_at_end >= 0) {
    if (spec.count_at_end > ncols) {
      reader.fail(fmt::format("expected at least {} attributes (the number of labels), the header has {}",
                              spec.count_at_end, ncols));
    }
    std::fill(is_label.end() - spec.count_at_end, is_label.end(), 1);
  } else {
    std::unordered_map<std::string, int64_t> column_of;
    for (int64_t c = 0; c < ncols; ++c) column_of.emplace(h.attributes[c].name, c);
    for (const XmlLabel& l : spec.names) {
      const auto it = column_of.find(arff_unescape(l.name));
      if (it == column_of.end()) {
        throw ParseError(spec.names_source, l.line,
                         fmt::format("label {} is not an attribute of {}", quote_token(l.name), reader.source()));
      }
      is_label[it->second] = 1;
    }
  }
  std::vector<ColumnSlot> slots(static_cast<size_t>(ncols));
  for (int64_t c = 0; c < ncols; ++c) {
    const Attribute& a = h.attributes[c];
    if (is_label[c]) {
      if (a.type != ColumnType::binary) {
        reader.fail_at(a.line, fmt::format("expected label attribute {} to have type {{0,1}}", quote_token(a.name)));
      }
      slots[c] = {true, static_cast<int32_t>(d.label_names.size())};
      d.label_names.push_back(a.name);
    } else {
      slots[c] = {false, static_cast<int32_t>(d.feature_names.size())};
      d.feature_names.push_back(a.name);
    }
  }
  d.num_labels = static_cast<int64_t>(d.label_names.size());
  d.num_features = static_cast<int64_t>(d.feature_names.size());
  return slots;
}

std::string_view unquote_value(std::string_view v) {
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) return v.substr(1, v.size() - 2);
  return v;
}

class RowParser {
 public:
  RowParser(const Header& h, const std::vector<ColumnSlot>& slots, const LineReader& reader, SparseDataset& d)
      : h_(h), slots_(slots), reader_(reader), d_(d), seen_(h.attributes.size(), -1) {}

  void parse(std::string_view t) {
    features_.clear();
    labels_.clear();
    ++row_;
    if (t.front() == '{') {
      parse_sparse(t);
    } else {
      parse_dense(t);
    }
    // Each column maps to its own feature or label and set() rejects a repeated column, so no feature
    // index can repeat here.
    d_.append_checked_row(features_, labels_);
  }

 private:
  void set(int64_t column, std::string_view value_token) {
    if (seen_[column] == row_) reader_.fail(fmt::format("column {} repeated in the row", column));
    seen_[column] = row_;
    const Attribute& a = h_.attributes[column];
    const std::string_view token = unquote_value(trim(value_token));
    if (token == "?") reader_.fail(fmt::format("missing value '?' for attribute {} is not supported", quote_token(a.name)));
    const auto value = parse_float(token);
    if (!value) {
      reader_.fail(fmt::format("expected a number for attribute {}, got {}", quote_token(a.name), quote_token(token)));
    }
    if (a.type == ColumnType::binary && *value != 0.0f && *value != 1.0f) {
      reader_.fail(fmt::format("expected 0 or 1 for attribute {} (type {{0,1}}), got {}", quote_token(a.name),
                               quote_token(token)));
    }
    if (*value == 0.0f) return;
    const ColumnSlot slot = slots_[column];
    if (slot.is_label) {
      labels_.push_back(slot.index);
    } else {
      features_.emplace_back(slot.index, *value);
    }
  }

  void parse_sparse(std::string_view t) {
    if (t.back() != '}') reader_.fail("expected '}' at the end of the sparse row (truncated file?)");
    std::string_view inner = t.substr(1, t.size() - 2);
    if (is_blank(inner)) return;
    const int64_t ncols = static_cast<int64_t>(h_.attributes.size());
    while (true) {
      const size_t comma = inner.find(',');
      const std::string_view item = comma == std::string_view::npos ? inner : inner.substr(0, comma);
      std::string_view rest = item;
      const std::string_view index_token = next_token(rest);
      const std::string_view value_token = next_token(rest);
      const auto index = parse_int(index_token);
      if (!index || value_token.empty() || !is_blank(rest)) {
        reader_.fail(fmt::format("expected 'index value' inside {{...}}, got {}", quote_token(trim(item))));
      }
      if (*index < 0 || *index >= ncols) {
        reader_.fail(fmt::format("column index {} outside [0, {}) (the header's attributes)", *index, ncols));
      }
      set(*index, value_token);
      if (comma == std::string_view::npos) break;
      inner.remove_prefix(comma + 1);
    }
  }

  void parse_dense(std::string_view t) {
    const int64_t ncols = static_cast<int64_t>(h_.attributes.size());
    int64_t column = 0;
    while (true) {
      const size_t comma = t.find(',');
      const std::string_view item = comma == std::string_view::npos ? t : t.substr(0, comma);
      if (column < ncols) set(column, item);
      ++column;
      if (comma == std::string_view::npos) break;
      t.remove_prefix(comma + 1);
    }
    if (column != ncols) {
      reader_.fail(fmt::format("expected {} comma-separated values (a dense row) or '{{...}}', got {} values", ncols,
                               column));
    }
  }

  const Header& h_;
  const std::vector<ColumnSlot>& slots_;
  const LineReader& reader_;
  SparseDataset& d_;
  std::vector<int64_t> seen_;  // row number that last set each column
  int64_t row_ = 0;
  std::vector<std::pair<int32_t, float>> features_;
  std::vector<int32_t> labels_;
};

}  // namespace

std::string arff_unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] == '\\' && k + 1 < s.size()) {
      const char c = s[k + 1];
      switch (c) {
        case '\\': out += '\\'; ++k; continue;
        case '\'': out += '\''; ++k; continue;
        case '"': out += '"'; ++k; continue;
        case '%': out += '%'; ++k; continue;
        case 't': out += '\t'; ++k; continue;
        case 'n': out += '\n'; ++k; continue;
        case 'r': out += '\r'; ++k; continue;
        default: break;  // unknown escapes stay as written (delicious has TAG_dise\~no)
      }
    }
    out += s[k];
  }
  return out;
}

ArffLabelSpec ArffLabelSpec::from_xml(const std::filesystem::path& xml) {
  ArffLabelSpec spec;
  spec.names = read_mulan_labels(xml);
  spec.names_source = xml.string();
  return spec;
}

ArffLabelSpec ArffLabelSpec::last(int64_t num_labels) {
  if (num_labels < 0) throw std::invalid_argument("ArffLabelSpec::last: negative number of labels");
  ArffLabelSpec spec;
  spec.count_at_end = num_labels;
  return spec;
}

SparseDataset parse_arff(std::istream& in, const std::string& source, const ArffLabelSpec& labels) {
  LineReader reader(in, source);
  const Header header = parse_header(reader);
  SparseDataset d;
  const std::vector<ColumnSlot> slots = assign_columns(header, labels, reader, d);
  RowParser rows(header, slots, reader, d);
  std::string_view line;
  while (reader.next(line)) {
    const std::string_view t = trim(line);
    if (t.empty() || t.front() == '%') continue;
    rows.parse(t);
  }
  return d;
}

SparseDataset read_arff(const std::filesystem::path& arff, const ArffLabelSpec& labels) {
  std::ifstream in = open_input_file(arff);
  return parse_arff(in, arff.string(), labels);
}

SparseDataset read_arff(const std::filesystem::path& arff, const std::filesystem::path& xml) {
  return read_arff(arff, ArffLabelSpec::from_xml(xml));
}

TrainTest read_mulan(const std::filesystem::path& dir, const std::string& name) {
  const ArffLabelSpec spec = ArffLabelSpec::from_xml(dir / (name + ".xml"));
  TrainTest tt{read_arff(dir / (name + "-train.arff"), spec), read_arff(dir / (name + "-test.arff"), spec)};
  const std::string test_file = (dir / (name + "-test.arff")).string();
  const auto compare = [&](const std::vector<std::string>& a, const std::vector<std::string>& b, const char* what) {
    if (a == b) return;
    size_t k = 0;
    while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
    throw ParseError(test_file, 0,
                     fmt::format("{}s differ from the train file's: {} {} is {} here, {} in the train file", what,
                                 what, k, k < b.size() ? quote_token(b[k]) : std::string("absent"),
                                 k < a.size() ? quote_token(a[k]) : std::string("absent")));
  };
  compare(tt.train.feature_names, tt.test.feature_names, "feature");
  compare(tt.train.label_names, tt.test.label_names, "label");
  return tt;
}

}  // namespace lobench::data
