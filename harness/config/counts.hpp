// Counts as users write them on every command line (docs/options.md, "Numbers"): exact integers written
// plainly (100000), in exponent notation (1e5) or with a decimal suffix k = 10^3, M = 10^6, G = 10^9
// (100k, 1.5k = 1500, 1M). A value that is not a whole number (1e-3, 1.5, 0.1k) is refused, never
// rounded. Part of the engine's configuration, so that the sweep axes (harness/sweep/axes.cpp) parse them
// without the command line; harness/cli/numbers.hpp gives the command line the same names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace lobench::config {

// The count `text` as an integer; throws OptionError naming `option` and the value when it is not an
// exact integer in int64 (garbage, a fraction, an unknown suffix, overflow).
int64_t parse_count(const std::string& option, const std::string& text);

// parse_count, then written back as plain decimal digits ("100k" -> "100000"), for a value that is kept
// as text (a sweep axis) or handed on to another parser.
std::string canonical_count(const std::string& option, const std::string& text);

// The count `text` into `value`, or the reason it is not one (without an option's name).
std::optional<std::string> count_value(const std::string& text, int64_t& value);

// Nonempty and only the digits 0-9.
bool all_digits(const std::string& s);

}  // namespace lobench::config
