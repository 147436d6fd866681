// lobench's one timing rule: every measured number (a sweep's rows, the yardsticks and meters, the
// instruction-rate probes of the kernels, the GPU's GEMM rate, the benches' interleaved comparisons)
// is a list of samples collected by collect_samples, the caller choosing only how each sample is timed
// (a steady clock around a CPU call, process CPU time, or a device's own clock) and when to stop (a
// fixed count, a time budget, or nvbench-style: until the spread is small enough). Here, at the bottom
// of the layers, so that the kernels' own probes (variants/cpu) use it as the engine does. Google
// Benchmark's loops (the benches) and the tests are the only other timing loops.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace lobench {

struct Samples {
  std::vector<double> seconds;  // every timed repeat, in order
  double median() const;
  double min() const;
  double max() const;
  double total() const;
  double cv() const;  // coefficient of variation (sample standard deviation / mean); NaN below 2 samples
};

// Seconds one call of `fn` takes on a steady clock.
double seconds_of(const std::function<void()>& fn);

// Process CPU seconds so far, all threads (CLOCK_PROCESS_CPUTIME_ID): beside wall time on a shared
// machine, where a step's wall time is mostly the other processes'.
double process_cpu_seconds();

// How many timed runs a measurement gets. Adaptive by default, as Google Benchmark's min time: at least
// min_reps, and more until their total reaches min_time_s and their CV is at most cv_target, at most
// max_reps, and no more once the total passes max_time_s (a step of 20 s stops at min_reps). A fixed
// count (`--reps N`) overrides it.
struct RepPolicy {
  int fixed_reps = 0;  // > 0: exactly this many
  int min_reps = 4;  // 4 against 4 is the fewest `lobench compare` can test (smallest p 0.029; 3 against 3: 0.1)
  int max_reps = 20;
  double min_time_s = 1.0;
  double max_time_s = 30.0;
  double cv_target = 0.05;
  bool enough(const Samples& s) const;
  // What a plan assumes before anything is timed (progress and ETA).
  int expected_reps() const { return fixed_reps > 0 ? fixed_reps : min_reps; }
  // Exactly `n` timed runs (what `--reps N` asks; a meter's fixed count).
  static RepPolicy fixed(int n) {
    RepPolicy p;
    p.fixed_reps = n;
    return p;
  }
  // Runs until their timed seconds add up to `seconds` (at least one): the instruction-rate probes, which
  // keep the fastest of many short bursts so that a loaded machine's sharing hardly enters.
  static RepPolicy budget(double seconds) {
    RepPolicy p;
    p.min_reps = 1;
    p.max_reps = 1 << 30;
    p.min_time_s = p.max_time_s = seconds;
    p.cv_target = -1;  // never "settled" by the spread: the budget alone stops it
    return p;
  }
};

// How many calls of something that takes `one_call_s` seconds make one sample of about `target_s`
// (at least 1, at most `max_calls`): a short call repeated inside each sample, so that the clock's
// resolution and the call's overhead stay small beside what is timed.
int calls_per_sample(double one_call_s, double target_s, int max_calls);

// Runs `timed_run` warmup times (results dropped), then as the policy says; `timed_run` returns the
// seconds of one run (a steady clock around a CPU step, or a device's own clock).
Samples collect_samples(const std::function<double()>& timed_run, int warmup, const RepPolicy& policy);

// One contender of an interleaved comparison (time_interleaved): what it runs, and its samples.
struct Contender {
  std::string name;
  std::function<void()> run;
  Samples wall, cpu;  // per timed repetition: wall seconds and process CPU seconds (all threads)
};

// The contenders timed in one run, interleaved round-robin (each repetition runs every contender once,
// in order), so that a shared machine's drift slows all alike: the benches' comparisons. Repetitions
// follow collect_samples: `warmup` rounds dropped, then rounds until `policy` has enough of them (a
// round's time: the sum of its contenders' wall times).
void time_interleaved(std::vector<Contender>& contenders, int warmup, const RepPolicy& policy);

}  // namespace lobench
