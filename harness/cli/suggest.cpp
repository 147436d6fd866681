#include "harness/cli/suggest.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>

namespace lobench {
namespace {

// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of neighbours
// ("rnu" is one swap from "run") each cost 1.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::vector<std::string> long_options(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options())
    for (const auto& n : o->get_lnames()) names.push_back("--" + n);
  return names;
}

}  // namespace

std::optional<std::string> nearest_name(const std::string& typed, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  size_t best_d = std::max<size_t>(1, typed.size() / 3) + 1;
  for (const auto& c : candidates) {
    const size_t d = edit_distance(typed, c);
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

std::optional<std::string> typo_hint(const CLI::App& app, const std::vector<std::string>& args) {
  if (args.empty()) return std::nullopt;
  std::vector<std::string> subcommands;
  const CLI::App* sub = nullptr;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) {
    subcommands.push_back(s->get_name());
    if (s->get_name() == args.front()) sub = s;
  }
  if (!sub) {
    if (args.front().rfind("-", 0) == 0) return std::nullopt;
    const auto near = nearest_name(args.front(), subcommands);
    return fmt::format("unknown subcommand '{}'{}", args.front(), near ? fmt::format("; did you mean '{}'?", *near) : "");
  }
  const std::vector<std::string> known = long_options(*sub);
  for (size_t i = 1; i < args.size(); ++i) {
    std::string a = args[i];
    if (a.rfind("--", 0) != 0) continue;
    a = a.substr(0, a.find('='));
    if (std::find(known.begin(), known.end(), a) != known.end()) continue;
    const auto near = nearest_name(a, known);
    return fmt::format("{}: unknown option '{}'{}", sub->get_name(), a,
                       near ? fmt::format("; did you mean '{}'?", *near) : "");
  }
  return std::nullopt;
}

}  // namespace lobench
