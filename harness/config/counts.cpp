#include "harness/config/counts.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "harness/config/option_checks.hpp"

namespace lobench::config {
namespace {

constexpr const char* kCountExamples = "counts are whole numbers: 100000, 1e5, 100k, 1.5M (k = 10^3, M = 10^6, G = 10^9)";

}  // namespace

bool all_digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

namespace {

// The decimal digits and power of ten of `text` (sign dropped), or the reason it is not a count.
struct Decimal {
  bool negative = false;
  std::string digits;  // no leading zeros; "" for zero
  int64_t exponent = 0;
};

std::optional<std::string> split_decimal(const std::string& text, Decimal& d) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) d.negative = text[i++] == '-';
  std::string whole, frac;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) whole += text[i++];
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) frac += text[i++];
  }
  if (whole.empty() && frac.empty()) return fmt::format("'{}' is not a number ({})", text, kCountExamples);
  int64_t exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    size_t start = i;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    const std::string e = text.substr(start, i - start);
    const auto r = std::from_chars(e.data() + (e[0] == '+'), e.data() + e.size(), exponent);
    if (!all_digits(e.substr(e[0] == '+' || e[0] == '-')) || r.ec != std::errc() || std::llabs(exponent) > 1000)
      return fmt::format("'{}' has a bad exponent ({})", text, kCountExamples);
  }
  const std::string suffix = text.substr(i);
  if (suffix == "k" || suffix == "K") exponent += 3;
  else if (suffix == "M") exponent += 6;
  else if (suffix == "G") exponent += 9;
  else if (!suffix.empty())
    return fmt::format("'{}' has an unknown suffix '{}' ({})", text, suffix, kCountExamples);
  d.digits = whole + frac;
  d.exponent = exponent - int64_t(frac.size());
  d.digits.erase(0, d.digits.find_first_not_of('0'));
  if (d.digits.find_first_not_of('0') == std::string::npos) d.digits.clear();
  return std::nullopt;
}

}  // namespace

std::optional<std::string> count_value(const std::string& text, int64_t& value) {
  Decimal d;
  if (auto why = split_decimal(text, d)) return why;
  while (d.exponent < 0 && !d.digits.empty() && d.digits.back() == '0') d.digits.pop_back(), ++d.exponent;
  if (d.digits.empty()) return value = 0, std::nullopt;
  if (d.exponent < 0) return fmt::format("'{}' is not a whole number ({})", text, kCountExamples);
  if (int64_t(d.digits.size()) + d.exponent > 19)
    return fmt::format("'{}' is too large (at most {})", text, INT64_MAX);
  const std::string all = (d.negative ? "-" : "") + d.digits + std::string(size_t(d.exponent), '0');
  const auto r = std::from_chars(all.data(), all.data() + all.size(), value);
  if (r.ec != std::errc()) return fmt::format("'{}' is too large (at most {})", text, INT64_MAX);
  return std::nullopt;
}

namespace {

[[noreturn]] void refuse(const std::string& option, const std::string& msg) {
  throw OptionError(fmt::format("{}: {}", option, msg));
}

}  // namespace

int64_t parse_count(const std::string& option, const std::string& text) {
  int64_t v = 0;
  if (auto why = count_value(text, v)) refuse(option, *why);
  return v;
}

std::string canonical_count(const std::string& option, const std::string& text) {
  return std::to_string(parse_count(option, text));
}

}  // namespace lobench::config
