// Named sweeps: an argument `@path` is replaced by the whitespace-separated words of that file (`#`
// starts a comment), so `lobench run @harness/sweeps/table2.args` replays a sweep. A relative `@path`
// is found against the working directory, else against the repository (so named sweeps work from any
// folder); an `@other` inside a file resolves against that file's folder.
#pragma once

#include <string>
#include <vector>

namespace lobench {

// Expands every @file argument, recursively (at most 8 levels). Throws std::runtime_error naming the
// file when it is missing, unreadable or not a regular file (a directory or FIFO is refused, not read).
std::vector<std::string> expand_args_files(int argc, char** argv);

// A relative path of the repository (a default data folder, a sweep file) made absolute against the
// source tree this binary was built from; absolute paths are returned as they are.
std::string repository_path(const std::string& relative);

}  // namespace lobench
