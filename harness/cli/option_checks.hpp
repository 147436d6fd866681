// The option checks of harness/config/option_checks.hpp under the command line's names (lobench::cli),
// for the command line's own files. The engine (harness/sweep, the applications) includes
// harness/config/option_checks.hpp itself: no include below harness/cli names a file in it
// (scripts/check_layers.py).
#pragma once

#include "harness/config/option_checks.hpp"

namespace lobench::cli {

using config::OptionError;
using config::kMaxThreads;
using config::kMaxMemoryLimit;
using config::default_threads;
using config::check_threads;
using config::parse_memory_limit;
using config::default_memory_limit;
using config::memory_limit_or_default;
using config::check_block_size;
using config::check_positive;
using config::check_non_negative;
using config::check_fraction;
using config::check_positive_real;
using config::check_finite;
using config::check_range;
using config::checked_mul;
using config::check_problem_shape;
using config::parse_size;

}  // namespace lobench::cli
