#include "precision_sim/rounding.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <utility>

#include "precision_sim/format.hpp"

namespace lobench::precision {

namespace {

const std::vector<std::pair<std::string, Rounding>>& rounding_table() {
  static const std::vector<std::pair<std::string, Rounding>> table = {
      {"nearest_even", Rounding::nearest_even}, {"rne", Rounding::nearest_even},
      {"nearest", Rounding::nearest_even},      {"nearest_away", Rounding::nearest_away},
      {"rna", Rounding::nearest_away},          {"toward_zero", Rounding::toward_zero},
      {"rz", Rounding::toward_zero},            {"truncate", Rounding::toward_zero},
      {"up", Rounding::up},                     {"ru", Rounding::up},
      {"down", Rounding::down},                 {"rd", Rounding::down},
      {"stochastic", Rounding::stochastic},     {"sr", Rounding::stochastic},
      {"stochastic_exact", Rounding::stochastic_exact}, {"sr_exact", Rounding::stochastic_exact},
  };
  return table;
}

}  // namespace

Rounding parse_rounding(std::string_view name) {
  std::string s(name);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::replace(s.begin(), s.end(), '-', '_');
  for (const auto& [n, m] : rounding_table())
    if (s == n) return m;
  std::string msg = "unknown rounding mode '" + std::string(name) + "'. Valid: ";
  const auto names = rounding_names();
  for (size_t i = 0; i < names.size(); ++i) msg += (i ? ", " : "") + names[i];
  throw std::invalid_argument(msg);
}

std::string_view rounding_name(Rounding mode) {
  switch (mode) {
    case Rounding::nearest_even: return "nearest_even";
    case Rounding::nearest_away: return "nearest_away";
    case Rounding::toward_zero: return "toward_zero";
    case Rounding::up: return "up";
    case Rounding::down: return "down";
    case Rounding::stochastic: return "stochastic";
    case Rounding::stochastic_exact: return "stochastic_exact";
  }
  return "?";
}

std::vector<std::string> rounding_names() {
  std::vector<std::string> out;
  for (const auto& [n, m] : rounding_table()) out.push_back(n);
  return out;
}

int default_sr_bits(const Format& f) { return f.mantissa_bits < 23 ? 23 - f.mantissa_bits : 1; }

}  // namespace lobench::precision
