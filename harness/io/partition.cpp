#include "harness/io/partition.hpp"

#include <fmt/format.h>

#include <charconv>
#include <map>
#include <stdexcept>

namespace lobench::io {

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

void check_partitions(const std::vector<std::pair<std::string, Partition>>& parts, int64_t required) {
  if (parts.empty()) return;
  const auto& [first_name, first] = parts.front();
  std::map<int64_t, std::string> seen;
  for (const auto& [name, p] : parts) {
    if (p.count != first.count)
      throw std::invalid_argument(fmt::format("merge: '{}' is partition {} but '{}' is {}", name, p.str(), first_name,
                                              first.str()));
    if (!seen.emplace(p.index, name).second)
      throw std::invalid_argument(fmt::format("merge: '{}' and '{}' are both partition {}", seen[p.index], name,
                                              p.str()));
  }
  for (int64_t k = 0; k < required; ++k)
    if (!seen.count(k)) throw std::invalid_argument(fmt::format("merge: partition {}/{} is missing (a gap)", k, first.count));
}

}  // namespace lobench::io
