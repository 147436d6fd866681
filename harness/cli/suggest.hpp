// "Did you mean": the nearest known name to a mistyped option or subcommand.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/cli/cli_fwd.hpp"

namespace lobench {

// The candidate closest to `typed` by edit distance, when it is close enough to be a typo
// (distance ≤ max(1, a third of its length)).
std::optional<std::string> nearest_name(const std::string& typed, const std::vector<std::string>& candidates);

// For an argument list (without argv[0]) that CLI11 refused: a message naming the first unknown
// subcommand or --option and the nearest valid one, if any.
std::optional<std::string> typo_hint(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace lobench
