// Named sweeps: an argument `@path` is replaced by the whitespace-separated words of that file
// (lines starting with # are comments), so `lobench run @harness/sweeps/table2.args` replays a sweep.
#pragma once

#include <string>
#include <vector>

namespace lobench {

// Expands every @file argument (not recursively). Throws std::runtime_error if a file can't be read.
std::vector<std::string> expand_args_files(int argc, char** argv);

}  // namespace lobench
