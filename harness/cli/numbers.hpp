// The numbers users write on every command line, parsed in one place (docs/options.md, "Numbers").
//
// Counts (--V, --B, --steps, --epochs, --threads, ...) are exact integers written plainly (100000), in
// exponent notation (1e5) or with a decimal suffix k = 10^3, M = 10^6, G = 10^9 (100k, 1.5k = 1500, 1M).
// A value that is not a whole number (1e-3, 1.5, 0.1k) is refused, never rounded.
//
// Sizes (--mem-limit, --gpu-mem-limit) always carry a unit, binary and case-insensitive: B, K/KB/KiB,
// M/MB/MiB, G/GB/GiB, T/TB/TiB (K = 1024). A bare number is refused: `--mem-limit 2` once meant two bytes,
// which skipped every row of a run that then exited 0.
#pragma once

#include <cstdint>
#include <string>

#include "harness/cli/cli_fwd.hpp"
#include "harness/config/counts.hpp"
#include "harness/config/option_checks.hpp"

namespace lobench::cli {

// Counts: harness/config/counts.hpp (the sweep axes parse them there too).
using config::parse_count;
using config::canonical_count;

// A size in bytes (see above): config::parse_size (harness/config/option_checks.hpp), where the engine's
// memory limits are checked.
using config::parse_size;

// Every option of `app` and its subcommands whose value is an integer (CLI11's type INT or UINT) takes
// counts as above: a transform rewrites "100k" to "100000" before CLI11 converts it. One whose value is
// a real number (FLOAT) refuses hexadecimal, which CLI11 would read (0x0.8 as 0.5).
void accept_count_notation(CLI::App& app);

}  // namespace lobench::cli
