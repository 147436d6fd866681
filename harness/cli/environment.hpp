// The environment variables lobench reads, listed once: for `lobench --help` (its epilog) and for the
// check at start, so that a malformed value is a usage error before any command runs instead of being
// ignored (or failing every row later).
#pragma once

#include <string>

namespace lobench::cli {

// The epilog of `lobench --help`: every variable, what it changes, its valid values.
std::string environment_help();

// Throws std::invalid_argument naming the variable and its valid values when OMP_NUM_THREADS,
// LOBENCH_NO_VERIFY, LOBENCH_DATA or LOBENCH_PRODUCTS is set to something lobench would misread. (LOBENCH_GEMM and
// LOBENCH_ISA are checked by their own readers, variants/cpu/sgemm.hpp and precision_sim/cpu_dispatch.hpp,
// which main calls first.)
void check_environment();

}  // namespace lobench::cli
