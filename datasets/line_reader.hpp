// Line-by-line reading with line numbers, shared by the text loaders: strips a trailing '\r' (files
// written on Windows), counts lines from 1, and turns "this line is wrong" into a ParseError that names
// the source and the line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <istream>
#include <string>
#include <string_view>

#include "datasets/parse_error.hpp"

namespace lobench::data {

class LineReader {
 public:
  // source: the name errors carry (usually the file path).
  LineReader(std::istream& in, std::string source) : in_(in), source_(std::move(source)) {}

  // The next line without its end-of-line characters; false at end of input (line() then stays at the
  // last line read). Throws std::runtime_error on a read error.
  bool next(std::string_view& line);

  int64_t line() const { return line_; }
  const std::string& source() const { return source_; }

  // Throws ParseError(source, line(), detail).
  [[noreturn]] void fail(std::string detail) const;
  [[noreturn]] void fail_at(int64_t line, std::string detail) const;

 private:
  std::istream& in_;
  std::string source_;
  std::string buffer_;
  int64_t line_ = 0;
};

// Opens a file for reading (binary mode, large buffer); throws std::runtime_error naming the file and
// the reason when it cannot be opened or is not a regular file (a FIFO would block, a directory would
// read as empty).
std::ifstream open_input_file(const std::filesystem::path& path);

}  // namespace lobench::data
