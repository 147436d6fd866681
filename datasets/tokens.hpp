// Strict token parsing for the loaders: a token is a number only if all of it is (no trailing junk, no
// silent truncation), floats must be finite, integers must fit. Empty optional = not a valid number.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace lobench::data {

std::string_view trim(std::string_view s);  // drops leading/trailing spaces, tabs, '\r', '\n'
bool is_blank(std::string_view s);

// Decimal integer, optional leading '+' or '-'.
std::optional<int64_t> parse_int(std::string_view token);
// Decimal or scientific notation, optional leading '+'; inf and nan are rejected.
std::optional<float> parse_float(std::string_view token);
std::optional<double> parse_double(std::string_view token);

// Splits off the next whitespace-separated token of s (advancing s past it); empty at the end.
std::string_view next_token(std::string_view& s);

}  // namespace lobench::data
