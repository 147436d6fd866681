// The one place where the numeric options of every command get their ranges checked. Each function
// takes the option's name as the user typed it and throws OptionError("--threads: ...") naming it, the
// value and the valid range; the command line turns that into exit status 2. Shapes are checked with
// overflow-checked products (variants/checked_math.hpp) before anything is sized from them.
//
// Part of the engine's configuration (harness/config): the sweep driver and the applications check
// their settings here without depending on the command line; harness/cli/option_checks.hpp gives the
// command line the same names in namespace lobench::cli.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace lobench::config {

struct OptionError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

constexpr int kMaxThreads = 1024;
// No machine has a PiB of memory: a limit above it is a typo (1e30G), not a wish.
constexpr int64_t kMaxMemoryLimit = int64_t(1) << 50;

// Every core of this machine (omp_get_num_procs): the default of every command's --threads.
int default_threads();
// 1 <= value <= kMaxThreads.
int check_threads(const std::string& option, int64_t value);

// A size in bytes, always with a unit, binary and case-insensitive: B, K/KB/KiB, M/MB/MiB, G/GB/GiB,
// T/TB/TiB (K = 1024) (docs/options.md, "Numbers"): finite, > 0, at most kMaxMemoryLimit. nan, inf, 0,
// negatives, 1e30G, an unknown unit and trailing garbage are refused, and so is a bare number, with the
// unit it probably meant ("2" -> "did you mean 2G?"): `--mem-limit 2` once meant two bytes, which
// skipped every row of a run that then exited 0. Throws OptionError naming `option`.
int64_t parse_size(const std::string& option, const std::string& text);
// parse_size, for a memory limit option.
int64_t parse_memory_limit(const std::string& option, const std::string& text);
// The default limit: memory available now minus max(1 GiB, 10 %) (at least 1 byte, so that every
// prediction is compared with something).
int64_t default_memory_limit();
// parse_memory_limit, or default_memory_limit() when text is empty.
int64_t memory_limit_or_default(const std::string& option, const std::string& text);

int64_t check_block_size(const std::string& option, int64_t value);  // >= 0 (0: the variant chooses)
int64_t check_positive(const std::string& option, int64_t value);    // >= 1
int64_t check_non_negative(const std::string& option, int64_t value);  // >= 0
double check_fraction(const std::string& option, double value);      // finite, in [0, 1]
double check_positive_real(const std::string& option, double value); // finite, > 0
double check_finite(const std::string& option, double value);        // finite
// finite, in [lo, hi]
double check_range(const std::string& option, double value, double lo, double hi);

// a·b, or OptionError naming `what` (e.g. "P = B·N") when it overflows int64.
int64_t checked_mul(const std::string& what, int64_t a, int64_t b);

// A problem shape from options: B, N, V, D, L >= 1; P = B·N and every size the run derives from them
// (P·D, P·V, V·D, P·L, and their bytes at 8 per element) fit in int64; V and every target id fit in
// int32. Throws OptionError naming the product that overflows.
void check_problem_shape(int64_t B, int64_t N, int64_t V, int64_t D, int64_t L);

}  // namespace lobench::config
