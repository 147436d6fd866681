// A direct meter of a busy machine: how long this process's threads were ready to run but waited for a
// CPU (the scheduler's run-queue delay, /proc/self/task/*/schedstat, second field). A step timed while
// other work held the cores waited; one timed on an idle machine hardly did. The local yardstick's drift
// (the `busy` flag's other test) misses a machine that was equally loaded before and after the point.
#pragma once

namespace lobench::meters {

// Seconds the threads of this process have waited in the run queue since they started, summed over the
// threads; NaN where the kernel does not keep the count (no schedstat).
double run_queue_wait_seconds();

// The share of the steps' thread time spent waiting for a CPU: waited seconds over (wall seconds ×
// threads); NaN when either is not measured.
double run_queue_wait_fraction(double waited_s, double wall_s, int threads);

}  // namespace lobench::meters
