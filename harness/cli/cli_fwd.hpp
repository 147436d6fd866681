// The CLI11 names that the command line's headers mention, declared without CLI11 itself.
//
// CLI11 2.1 (Debian 12) is header-only: <CLI/CLI.hpp> costs about 4 s of CPU in every translation unit
// that includes it, and a file that only passes a CLI::App& along does not need its definition. Headers
// under harness/cli include this file; the .cpp files that declare options or parse (the commands,
// options.cpp, numbers.cpp, ...) include <CLI/CLI.hpp> themselves. The build-time report is
// scripts/compile_times.py.
#pragma once

namespace CLI {
class App;
class Option;
}  // namespace CLI
