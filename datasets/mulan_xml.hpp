// Mulan's label file (the .xml beside each .arff): which ARFF attributes are labels.
//
//   <?xml version="1.0" encoding="utf-8"?>
//   <labels xmlns="http://mulan.sourceforge.net/labels">
//   <label name="TAG_2005"></label>
//   <label name="TAG_m\'usica"/>        (names are written as in the ARFF header, escapes included)
//   </labels>
//
// A minimal XML reader for exactly this: declarations, comments and DOCTYPE are skipped; the root must
// be <labels>; every <label> element (nested ones too: Mulan's hierarchical label files) contributes its
// name attribute, with XML entities decoded; anything else is an error. Names are returned in file order.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace lobench::data {

struct XmlLabel {
  std::string name;  // entities decoded, otherwise as written
  int64_t line = 0;  // 1-based line of the <label> tag, for error messages
};

// Throws ParseError (file, line, what was expected): no <labels> root, a <label> without name, unknown
// elements or entities, unterminated tags, a name listed twice, a missing </labels>.
std::vector<XmlLabel> read_mulan_labels(const std::filesystem::path& path);
std::vector<XmlLabel> parse_mulan_labels(std::string_view text, const std::string& source);

}  // namespace lobench::data
