// The one error type of the loaders: malformed input, reported as "FILE:LINE: what was expected, got
// what". Callers can read the parts back (file, line, detail) to build their own messages.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace lobench::data {

class ParseError : public std::runtime_error {
 public:
  // line is 1-based; 0 means "the file as a whole" (the message is then "FILE: detail").
  ParseError(std::string file, int64_t line, std::string detail);

  const std::string& file() const { return file_; }
  int64_t line() const { return line_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string file_;
  int64_t line_;
  std::string detail_;
};

// A token as it appears in an error message: quoted, control characters escaped, cut to max_chars.
std::string quote_token(std::string_view token, size_t max_chars = 40);

}  // namespace lobench::data
