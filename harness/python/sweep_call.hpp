// `lobench run` as a library call, for lobench.run() (lobench/sweep_api.py): the same command (its options,
// checks, plan, measurer, memory limit, isolation, run file) parsed and run in this process, but with its
// errors raised as Python exceptions instead of exit statuses and everything it prints handed to Python
// line by line instead of written to the process's stdout and stderr.
#pragma once

#include <nanobind/nanobind.h>

namespace lobench::python {

// Adds to the module `_engine`:
//   sweep(args, provenance_argv, row_command, on_line) -> int
//     runs `lobench ARGS` (args[0] is "run"); `provenance_argv` is what the run file's argv attribute
//     records; `row_command` starts one isolated row again (sweep/isolated_row.hpp); on_line(stream, line)
//     gets every line the command prints, stream "out" or "err". Returns 0, or 1 when rows failed.
//     Raises ValueError for invalid input (the CLI's exit status 2, with the CLI's message),
//     KeyboardInterrupt when a signal stopped the sweep (its message says what was kept), RuntimeError
//     for other failures.
//   run_options() -> [(name, is_flag)]: every option of `lobench run` ("--B", "--weighted", ...).
//   result_units() -> [(column, unit)]: the /results columns in file order and their units ("" for none).
void bind_sweep_call(nanobind::module_& m);

}  // namespace lobench::python
