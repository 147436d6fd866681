// Isolation: one row of `lobench run` measured in a child process, so that a variant that crashes
// (SIGSEGV, abort), exits (exit(), sys.exit, os._exit), hangs past --row-timeout or runs out of memory
// costs its row, not the sweep. The parent keeps the run file: the child measures and scores the row and
// sends the measured columns and samples back through a pipe; the parent records the row through the one
// run-file writer, as it records a row measured in-process (a crashed child's row as `failed`, its reason
// naming the signal or what happened).
//
// The child is the same program started again (posix_spawn, i.e. fork + exec) with the same command line
// and LOBENCH_ISOLATED_ROW naming the row; it parses the options, loads the plug-ins and Python variants
// again and measures that one row. Not a bare fork(): the parent by then has OpenMP, OpenBLAS and maybe
// XLA thread pools, and with an embedded interpreter a GIL and Python threads, none of which exist in a
// forked child; their locks can be held forever there (GNU libgomp is not fork-safe: a parallel region in
// a forked child of a process that used one hangs; JAX warns that os.fork deadlocks), and a child that
// ran Python in a copy of the parent's interpreter would share its half-initialised frameworks. exec
// gives a clean process at the cost of starting one per row (docs/plugins.md has the measured cost).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/io/result_row.hpp"

namespace lobench::sweep {

// The command line that starts this command again (the program first): set by main() (the C++
// program: /proc/self/exe and its arguments) and by `python -m lobench` (the interpreter, -m lobench and
// its arguments). Empty: isolation is not available (a test's in-process sweep).
void set_row_command(std::vector<std::string> argv);
const std::vector<std::string>& row_command();

// What the parent asks of a child: the row (its index among the sweep's points), whether the float64
// reference fits beside it, and the run's host memory limit (the child maps at most that plus a margin).
struct IsolatedRequest {
  int64_t point_index = 0;
  bool want_reference = false;
  int64_t mem_limit = 0;
  int fd = -1;  // where the result goes
};

// In the child: the request of LOBENCH_ISOLATED_ROW (removed from the environment, so that nothing the
// variant starts takes it for its own); nothing in a process the user started. Throws
// std::invalid_argument for a malformed value.
std::optional<IsolatedRequest> isolated_row_request();

// In the child: the measured row (its measurement and score columns, status and reason), its samples and
// the share of its steps' thread time the child's threads waited for a CPU (meters/run_queue_wait.hpp,
// read in the child: the parent's threads only wait for the pipe), written to the request's fd. Returns
// false when the pipe is gone (the parent died).
bool send_row(const IsolatedRequest& r, const io::ResultRow& row, const std::vector<double>& samples,
              double cpu_wait_fraction);

// What came back from a child.
struct IsolatedResult {
  bool complete = false;  // a whole row arrived: `row` and `samples` hold it
  io::ResultRow row;
  std::vector<double> samples;
  // The child's run-queue wait over its timed steps (kNotMeasured: not measured there): the row's `busy`
  // flag, as an in-process row's (sweep/measure_row.hpp, trust_flags).
  double cpu_wait_fraction = io::kNotMeasured;
  std::string failure;  // !complete: why (the signal, the exit status, the timeout)
  // Ctrl-C, SIGTERM or SIGHUP to this process (io::interrupt_signal) before the row came whole: the child
  // was killed at once, or died of the same signal, or was never started (!complete, no failure); the
  // sweep stops there and --resume makes the row again.
  int stopped_by = 0;
  std::string note;     // complete, but the process then died or hung on its way out
};

// In the parent: `bytes` read from a child's pipe into r.row, r.samples and r.cpu_wait_fraction; false
// unless they are one whole message (a child that died mid-write sent less).
bool decode_row_message(const std::string& bytes, IsolatedResult& r);

// In the parent: starts the child for `r` (r.fd unused) and waits for its row, at most `timeout_s`
// seconds (0: no limit) and only until a signal stops this process (stopped_by), after which the child and
// whatever it started are killed.
IsolatedResult run_isolated(const IsolatedRequest& r, double timeout_s);

}  // namespace lobench::sweep
