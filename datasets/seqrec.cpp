#include "datasets/seqrec.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "datasets/line_reader.hpp"
#include "datasets/parse_error.hpp"
#include "datasets/tokens.hpp"

namespace lobench::data {

SequenceDataset parse_sequences(std::istream& in, const std::string& source) {
  LineReader reader(in, source);
  SequenceDataset d;
  std::unordered_map<int64_t, int64_t> line_of_user;
  std::string_view line;
  while (reader.next(line)) {
    if (is_blank(line)) continue;
    std::string_view rest = line;
    const std::string_view user_token = next_token(rest);
    const auto user = parse_int(user_token);
    if (!user) reader.fail(fmt::format("expected a user id (integer) at the start of the line, got {}", quote_token(user_token)));
    const auto [it, inserted] = line_of_user.emplace(*user, reader.line());
    if (!inserted) reader.fail(fmt::format("user {} listed twice (first at line {})", *user, it->second));
    int64_t count = 0;
    for (std::string_view token = next_token(rest); !token.empty(); token = next_token(rest)) {
      const auto item = parse_int(token);
      if (!item) reader.fail(fmt::format("expected an item id (integer), got {}", quote_token(token)));
      if (*item < 1 || *item > INT32_MAX) {
        reader.fail(fmt::format("expected an item id in [1, 2^31) (0 is padding), got {}", *item));
      }
      d.items.push_back(static_cast<int32_t>(*item));
      d.num_items = std::max(d.num_items, static_cast<int32_t>(*item));
      ++count;
    }
    if (count == 0) reader.fail(fmt::format("expected at least one item after user id {}", *user));
    d.user_ids.push_back(*user);
    d.offsets.push_back(d.num_interactions());
  }
  return d;
}

SequenceDataset read_sequences(const std::filesystem::path& path) {
  std::ifstream in = open_input_file(path);
  SequenceDataset d = parse_sequences(in, path.string());
  // Said here, not later as "V must count at least one item": the file itself is the problem.
  if (d.num_users() == 0)
    throw std::runtime_error(fmt::format("'{}': the file is empty (no 'USER ITEM ITEM ...' line{})", path.string(),
                                         std::filesystem::file_size(path) > 0 ? ", only blank lines" : ""));
  return d;
}

std::span<const int32_t> train_sequence(const SequenceDataset& d, int64_t u) {
  const auto s = d.sequence(u);
  return s.size() < 3 ? s : s.first(s.size() - 2);
}

std::optional<NextItemExample> valid_example(const SequenceDataset& d, int64_t u) {
  const auto s = d.sequence(u);
  if (s.size() < 3) return std::nullopt;
  return NextItemExample{u, s.first(s.size() - 2), s[s.size() - 2]};
}

std::optional<NextItemExample> test_example(const SequenceDataset& d, int64_t u) {
  const auto s = d.sequence(u);
  if (s.size() < 3) return std::nullopt;
  return NextItemExample{u, s.first(s.size() - 1), s[s.size() - 1]};
}

std::vector<NextItemExample> valid_examples(const SequenceDataset& d) {
  std::vector<NextItemExample> out;
  for (int64_t u = 0; u < d.num_users(); ++u) {
    if (auto e = valid_example(d, u)) out.push_back(*e);
  }
  return out;
}

std::vector<NextItemExample> test_examples(const SequenceDataset& d) {
  std::vector<NextItemExample> out;
  for (int64_t u = 0; u < d.num_users(); ++u) {
    if (auto e = test_example(d, u)) out.push_back(*e);
  }
  return out;
}

std::vector<int32_t> left_pad(std::span<const int32_t> history, int64_t max_len) {
  if (max_len < 0) throw std::invalid_argument("left_pad: negative max_len");
  std::vector<int32_t> out(static_cast<size_t>(max_len), 0);
  const size_t n = std::min(history.size(), static_cast<size_t>(max_len));
  std::copy(history.end() - static_cast<std::ptrdiff_t>(n), history.end(), out.end() - static_cast<std::ptrdiff_t>(n));
  return out;
}

}  // namespace lobench::data
