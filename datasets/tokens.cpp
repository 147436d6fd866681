#include "datasets/tokens.hpp"

#include <charconv>
#include <cmath>
#include <type_traits>

namespace lobench::data {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

// Strict from_chars: an optional leading '+' (not followed by another sign), all of the token consumed,
// floats finite.
template <class T>
std::optional<T> parse_number(std::string_view token) {
  if (!token.empty() && token.front() == '+') {
    token.remove_prefix(1);
    if (!token.empty() && (token.front() == '-' || token.front() == '+')) return std::nullopt;
  }
  if (token.empty()) return std::nullopt;
  T value{};
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || ptr != token.data() + token.size()) return std::nullopt;
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(value)) return std::nullopt;
  }
  return value;
}

}  // namespace

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool is_blank(std::string_view s) { return trim(s).empty(); }

std::optional<int64_t> parse_int(std::string_view token) { return parse_number<int64_t>(token); }
std::optional<float> parse_float(std::string_view token) { return parse_number<float>(token); }
std::optional<double> parse_double(std::string_view token) { return parse_number<double>(token); }

std::string_view next_token(std::string_view& s) {
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  size_t j = i;
  while (j < s.size() && !is_space(s[j])) ++j;
  const std::string_view token = s.substr(i, j - i);
  s.remove_prefix(j);
  return token;
}

}  // namespace lobench::data
