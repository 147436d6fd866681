#include "datasets/parse_error.hpp"

#include <fmt/format.h>

namespace lobench::data {

namespace {

std::string format_message(const std::string& file, int64_t line, const std::string& detail) {
  if (line > 0) return fmt::format("{}:{}: {}", file, line, detail);
  return fmt::format("{}: {}", file, detail);
}

}  // namespace

ParseError::ParseError(std::string file, int64_t line, std::string detail)
    : std::runtime_error(format_message(file, line, detail)),
      file_(std::move(file)),
      line_(line),
      detail_(std::move(detail)) {}

std::string quote_token(std::string_view token, size_t max_chars) {
  std::string out = "'";
  size_t shown = 0;
  for (char c : token) {
    if (shown == max_chars) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
    ++shown;
  }
  out += "'";
  return out;
}

}  // namespace lobench::data
