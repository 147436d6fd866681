#include "datasets/line_reader.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace lobench::data {

bool LineReader::next(std::string_view& line) {
  if (!std::getline(in_, buffer_)) {
    if (in_.bad()) throw std::runtime_error(fmt::format("{}: read error after line {}", source_, line_));
    return false;
  }
  ++line_;
  if (!buffer_.empty() && buffer_.back() == '\r') buffer_.pop_back();
  // A UTF-8 byte-order mark (what some Windows editors put first) is not text a loader knows: named
  // here, where it is, rather than shown as a mangled first token ("got '1'").
  if (line_ == 1 && buffer_.rfind("\xEF\xBB\xBF", 0) == 0)
    fail("the file starts with a UTF-8 byte-order mark (bytes EF BB BF); save it without one (plain UTF-8 or ASCII)");
  line = buffer_;
  return true;
}

void LineReader::fail(std::string detail) const { throw ParseError(source_, line_, std::move(detail)); }

void LineReader::fail_at(int64_t line, std::string detail) const {
  throw ParseError(source_, line, std::move(detail));
}

std::ifstream open_input_file(const std::filesystem::path& path) {
  // Only regular files: opening a FIFO for reading blocks until a writer comes (forever, for a user who
  // mistyped a path), and a directory opens but reads as an empty file.
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    const char* what = std::filesystem::is_directory(st) ? "a directory"
                       : std::filesystem::is_fifo(st)    ? "a FIFO (named pipe)"
                       : std::filesystem::is_character_file(st) || std::filesystem::is_block_file(st) ? "a device"
                                                                                                       : "not a regular file";
    throw std::runtime_error(fmt::format("cannot read '{}': it is {}, not a regular file", path.string(), what));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error(
        fmt::format("cannot open '{}' for reading: {}", path.string(), std::strerror(errno)));
  }
  return in;
}

}  // namespace lobench::data
