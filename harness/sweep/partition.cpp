#include "harness/sweep/partition.hpp"

#include <fmt/format.h>

#include <charconv>
#include <stdexcept>

namespace lobench::sweep {

Partition Partition::parse(const std::string& text) {
  const auto slash = text.find('/');
  Partition p;
  auto num = [&](const std::string& t, int64_t& v) {
    const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    return r.ec == std::errc() && r.ptr == t.data() + t.size();
  };
  if (slash == std::string::npos || !num(text.substr(0, slash), p.index) || !num(text.substr(slash + 1), p.count) ||
      p.count < 1 || p.index < 0 || p.index >= p.count)
    throw std::invalid_argument(
        fmt::format("--partition: '{}' is not K/N with 0 <= K < N (e.g. 0/4 for the first of four)", text));
  return p;
}

std::string Partition::str() const { return fmt::format("{}/{}", index, count); }

}  // namespace lobench::sweep
